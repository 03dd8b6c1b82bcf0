package storage

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// growLog commits n transactions that each insert a padded row and delete
// the previous one, so the log grows while the database stays small. An
// hour's CompactInterval keeps compaction out of the way meanwhile.
func growLog(t *testing.T, path string, n int) {
	t.Helper()
	s := open(t, path, Options{CompactMinSize: 1, CompactInterval: time.Hour})
	defer s.Close()
	pad := strings.Repeat("x", 200)
	for i := 0; i < n; i++ {
		transact(t, s.Database(), fmt.Sprintf(`[{"op":"delete","table":"Other","where":[]},{"op":"insert","table":"Other","row":{"name":"%d%s"}}]`, i, pad))
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// A log that grew lots (Open vSwitch's rule: at least 100 records, over
// the minimum size and twice its size after the last compaction) is
// compacted right after Open, with nothing lost; one that did not grow
// enough, or holds too few records, is left as it is.
func TestGrownLogIsCompactedAtOpen(t *testing.T) {
	const minSize = 20 << 10
	path := create(t, richSchema)
	growLog(t, path, 300)
	grown := fileSize(t, path)
	if grown < 2*minSize {
		t.Fatalf("test log is only %d bytes", grown)
	}
	d, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := dump(d)

	// Not over the minimum size: kept.
	s := open(t, path, Options{CompactMinSize: grown, CompactInterval: time.Hour})
	s.Close()
	if n := recordCount(t, path); n != 301 {
		t.Fatalf("a log under the minimum size was compacted: %d records", n)
	}

	s = open(t, path, Options{CompactMinSize: minSize, CompactInterval: time.Hour})
	s.Close() // waits for the compaction
	if n := recordCount(t, path); n != 2 {
		t.Fatalf("grown log has %d records after open, want a compacted 2", n)
	}
	if size := fileSize(t, path); size >= grown/10 {
		t.Fatalf("compacted file is %d bytes (from %d)", size, grown)
	}
	s = open(t, path, Options{CompactMinSize: minSize, CompactInterval: time.Hour})
	if got := dump(s.Database()); got != want {
		t.Fatalf("after compaction at open:\n%s\nwant:\n%s", got, want)
	}
	s.Close()

	// Too few records, however large.
	few := create(t, richSchema)
	growLog(t, few, 98) // with the schema: 99 records
	s = open(t, few, Options{CompactMinSize: 1, CompactInterval: time.Hour})
	s.Close()
	if n := recordCount(t, few); n != 99 {
		t.Fatalf("a log of 99 records was compacted: %d records", n)
	}
}

// After a compaction the log must grow to twice its compacted size before
// the next one: a large snapshot followed by a little growth is kept.
func TestCompactedLogMustDoubleBeforeTheNextCompaction(t *testing.T) {
	path := create(t, richSchema)
	s := open(t, path, Options{CompactMinSize: 1, CompactInterval: time.Hour})
	pad := strings.Repeat("y", 500)
	for i := 0; i < 200; i++ {
		transact(t, s.Database(), fmt.Sprintf(`[{"op":"insert","table":"Other","row":{"name":"%d%s"}}]`, i, pad))
	}
	if err := s.Compact(); err != nil {
		t.Fatal(err)
	}
	compacted := fileSize(t, path)
	for i := 0; i < 120; i++ {
		transact(t, s.Database(), fmt.Sprintf(`[{"op":"insert","table":"Root","row":{"name":"r%d"}}]`, i))
	}
	s.Close()
	if size := fileSize(t, path); size >= 2*compacted {
		t.Fatalf("test setup: log grew from %d to %d bytes", compacted, size)
	}
	s = open(t, path, Options{CompactMinSize: 1, CompactInterval: time.Hour})
	s.Close()
	if n := recordCount(t, path); n != 122 {
		t.Fatalf("a log that did not double since its compaction was compacted: %d records", n)
	}

	// Past twice (but not four times, the factor before Open vSwitch 2.10)
	// its compacted size, it is compacted.
	s = open(t, path, Options{CompactMinSize: 1, CompactInterval: time.Hour})
	for i := 0; fileSize(t, path) <= 2*compacted+compacted/4; i++ {
		transact(t, s.Database(), fmt.Sprintf(`[{"op":"insert","table":"Root","row":{"name":"more%d%s"}}]`, i, pad))
	}
	s.Close()
	if size := fileSize(t, path); size >= 4*compacted {
		t.Fatalf("test setup: log grew from %d to %d bytes", compacted, size)
	}
	s = open(t, path, Options{CompactMinSize: 1, CompactInterval: time.Hour})
	s.Close()
	if n := recordCount(t, path); n != 2 {
		t.Fatalf("a log that more than doubled since its compaction was not compacted: %d records", n)
	}
}

// countingHandler counts log records at level Error.
type countingHandler struct {
	slog.Handler
	errors *atomic.Int32
}

func (h countingHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelError {
		h.errors.Add(1)
	}
	return nil
}

// A failed automatic compaction is retried after a tenth of the interval,
// as ovsdb-server does, not at every later commit.
func TestFailedCompactionIsNotRetriedAtEveryCommit(t *testing.T) {
	path := create(t, richSchema)
	growLog(t, path, 300)
	// A directory where the compaction's temporary file goes makes it fail.
	if err := os.Mkdir(path+".tmp", 0o755); err != nil {
		t.Fatal(err)
	}
	var failures atomic.Int32
	logger := slog.New(countingHandler{slog.NewTextHandler(io.Discard, nil), &failures})
	s, err := Open(path, logger, Options{CompactMinSize: 1, CompactInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	s.wg.Wait() // the compaction at open, which fails
	s.mu.Lock()
	s.lastCompaction = s.lastCompaction.Add(-time.Hour) // as if the interval had passed
	s.mu.Unlock()
	for i := 0; i < 50; i++ {
		transact(t, s.Database(), fmt.Sprintf(`[{"op":"insert","table":"Root","row":{"name":"r%d"}}]`, i))
		s.wg.Wait()
	}
	s.Close()
	if n := failures.Load(); n != 2 {
		t.Fatalf("%d failed compactions logged, want 2 (at open, then once after the interval)", n)
	}
	if n := recordCount(t, path); n != 301+50 {
		t.Fatalf("%d records after failed compactions, want all %d kept", n, 301+50)
	}
}

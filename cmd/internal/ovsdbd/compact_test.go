package ovsdbd

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"gvs/cmd/internal/daemontest"
	"gvs/ovsdb/db"
	"gvs/ovsdb/storage"
)

// growLog commits 150 transactions of about 1 kB each to the database file
// at path, rewriting one row, so the log grows to about 150 kB.
func growLog(t *testing.T, path string) {
	t.Helper()
	s, err := storage.Open(path, nil, storage.Options{CompactInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	pad := strings.Repeat("p", 1000)
	for i := 0; i < 150; i++ {
		ops := []json.RawMessage{
			json.RawMessage(`{"op":"delete","table":"Item","where":[]}`),
			json.RawMessage(fmt.Sprintf(`{"op":"insert","table":"Item","row":{"name":"%d%s"}}`, i, pad)),
		}
		if r := s.Database().Transact(ops, db.TxnEnv{}); r.Commit == nil {
			t.Fatalf("transaction %d failed: %v", i, r.Results)
		}
	}
}

func records(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, _, err := storage.ReadRecords(f)
	if err != nil {
		t.Fatal(err)
	}
	return len(recs)
}

// Config.CompactMinSize is the size over which a grown log is compacted:
// a 150 kB log of 151 records is left alone with Open vSwitch's 10 MB
// default and compacted at start with a 100 kB threshold.
func TestCompactMinSize(t *testing.T) {
	e := daemontest.NewEnv(t)
	dbFile := e.Path("conv.db")
	if err := storage.Create(dbFile, []byte(convertSchemaV1)); err != nil {
		t.Fatal(err)
	}
	growLog(t, dbFile)
	if n := records(t, dbFile); n != 151 {
		t.Fatalf("test log has %d records", n)
	}
	_, stop := startServer(t, e, dbFile)
	stop() // closing waits for a running compaction
	if n := records(t, dbFile); n != 151 {
		t.Fatalf("a 150 kB log was compacted under the default threshold: %d records", n)
	}
	_, stop = startServer(t, e, dbFile, "100000")
	stop()
	if n := records(t, dbFile); n != 2 {
		t.Fatalf("a 150 kB log was not compacted over a 100 kB threshold: %d records", n)
	}
}

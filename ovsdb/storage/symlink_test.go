package storage

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func isSymlink(t *testing.T, path string) bool {
	t.Helper()
	st, err := os.Lstat(path)
	return err == nil && st.Mode()&os.ModeSymlink != 0
}

func recordCount(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, _, err := ReadRecords(f)
	if err != nil {
		t.Fatal(err)
	}
	return len(recs)
}

// Debian's layout: conf.db is a link (here through a second, relative
// link) to a file that does not exist yet. Create makes the target, Open,
// commits, Compact and Rewrite write it, and the links stay links.
func TestCreateAndCompactThroughDanglingLinks(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"etc", "lib"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(dir, "etc", "conf.db")
	middle := filepath.Join(dir, "etc", "middle.db")
	target := filepath.Join(dir, "lib", "conf.db")
	if err := os.Symlink(middle, link); err != nil { // absolute
		t.Fatal(err)
	}
	if err := os.Symlink("../lib/conf.db", middle); err != nil { // relative to etc/
		t.Fatal(err)
	}
	if err := Create(link, []byte(richSchema)); err != nil {
		t.Fatalf("Create through a dangling link: %v", err)
	}
	if !isSymlink(t, link) || !isSymlink(t, middle) {
		t.Fatal("Create replaced a link")
	}
	if recordCount(t, target) != 1 {
		t.Fatal("the link's target holds no schema")
	}
	if err := Create(link, []byte(richSchema)); !errors.Is(err, os.ErrExist) {
		t.Fatalf("second Create: %v, want it to exist", err)
	}

	s := open(t, link, Options{})
	if s.Path() != target {
		t.Errorf("Path() = %s, want the target %s", s.Path(), target)
	}
	if _, err := os.Stat(filepath.Join(dir, "lib", ".conf.db.~lock~")); err != nil {
		t.Errorf("lock file not beside the target: %v", err)
	}
	for i := 0; i < 5; i++ {
		transact(t, s.Database(), `[{"op":"insert","table":"Other","row":{"name":"`+string(rune('a'+i))+`"}}]`)
	}
	want := dump(s.Database())
	if err := s.Compact(); err != nil {
		t.Fatal(err)
	}
	transact(t, s.Database(), `[{"op":"insert","table":"Root","row":{"name":"after"}}]`)
	want2 := dump(s.Database())
	s.Close()
	if !isSymlink(t, link) || !isSymlink(t, middle) {
		t.Fatal("compaction replaced a link")
	}
	if n := recordCount(t, target); n != 3 {
		t.Fatalf("target holds %d records after compaction and one commit, want 3", n)
	}
	if want2 == want {
		t.Fatal("the commit after compaction changed nothing")
	}
	d, err := Load(link, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := dump(d); got != want2 {
		t.Fatalf("read back through the link:\n%s\nwant:\n%s", got, want2)
	}
	if err := Rewrite(link, d, "rewritten"); err != nil {
		t.Fatal(err)
	}
	if !isSymlink(t, link) || recordCount(t, target) != 2 {
		t.Fatal("Rewrite replaced the link or did not write the target")
	}
}

// A link to a missing file in a missing directory, a loop of links and a
// link whose target is gone fail with errors naming what is wrong.
func TestBadLinks(t *testing.T) {
	dir := t.TempDir()
	noDir := filepath.Join(dir, "conf.db")
	os.Symlink("nodir/conf.db", noDir)
	if err := Create(noDir, []byte(richSchema)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Create through a link into a missing directory: %v", err)
	}
	a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	os.Symlink(b, a)
	os.Symlink(a, b)
	if err := Create(a, []byte(richSchema)); err == nil || !strings.Contains(err.Error(), "too many levels of symbolic links") {
		t.Errorf("Create through a loop of links: %v", err)
	}
	gone := filepath.Join(dir, "gone.db")
	os.Symlink("missing.db", gone)
	_, err := Open(gone, quietLogger(), Options{})
	var pe *os.PathError
	if !errors.As(err, &pe) || pe.Path != gone || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open of a dangling link: %v, want a not-exist error naming %s", err, gone)
	}
}

package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClientBackupRestore takes a backup with ovsdb-client backup, reads it
// with ovsdb-tool, changes the database, restores the backup (which
// re-inserts every row under its old UUID) and compares each step. One
// normaliser per side spans the steps, so a restore that loses UUIDs shows.
func TestClientBackupRestore(t *testing.T) {
	p := startPair(t, clientPath, vsctlPath)
	populate(t, p)
	nref, nours := newNormalizer(p.ref), newNormalizer(p.ours)
	compare := func(what string, run func(s *server) result) {
		t.Helper()
		ref, ours := run(p.ref), run(p.ours)
		for _, r := range []*result{&ref, &ours} {
			r.stdout = sortResultRows(r.stdout)
			if strings.HasSuffix(what, "show") {
				r.stdout = sortRecords(r.stdout, "tree")
			}
		}
		compareResults(t, what, nref.result(ref), nours.result(ours))
	}
	query := `["Open_vSwitch",{"op":"select","table":"Bridge","where":[],"columns":["_uuid","name","other_config","external_ids","ports"]},{"op":"select","table":"Port","where":[],"columns":["_uuid","name","tag","interfaces"]}]`

	compare("backup", func(s *server) result {
		r := s.client(t, nil, "backup")
		path := filepath.Join(s.dir, "backup.db")
		if err := os.WriteFile(path, []byte(r.stdout), 0o644); err != nil {
			t.Fatal(err)
		}
		// The file itself carries dates and a checksum: compare what
		// ovsdb-tool reads from it instead.
		return result{stderr: r.stderr, exit: r.exit}
	})
	for _, args := range [][]string{{"db-name"}, {"db-version"}, {"query"}} {
		compare("ovsdb-tool "+args[0]+" backup", func(s *server) result {
			full := append(args[:1:1], filepath.Join(s.dir, "backup.db"))
			if args[0] == "query" {
				full = append(full, query)
			}
			return s.run(t, "", toolPath, full...)
		})
	}
	compare("change", func(s *server) result {
		return s.vsctl(t, "--no-wait", "add-br", "br9", "--", "del-port", "p1", "--", "set", "Bridge", "br0", "other_config:after=backup")
	})
	compare("restore", func(s *server) result { return s.restoreBackup(t, "restore") })
	compare("forced restore", func(s *server) result { return s.restoreBackup(t, "--force", "restore") })
	compare("query after restore", func(s *server) result { return s.client(t, nil, "query", query) })
	compare("after restore: show", func(s *server) result { return s.vsctl(t, "--no-wait", "show") })
}

// restoreBackup runs ovsdb-client restore with backup.db on stdin (a file:
// restore seeks on it); args are options and the command, the server's
// remote follows them.
func (s *server) restoreBackup(t *testing.T, args ...string) result {
	t.Helper()
	f, err := os.Open(filepath.Join(s.dir, "backup.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := runToolInput(s, f, clientPath, append(append([]string{"--timeout=5"}, args...), s.remote)...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// noStorageNotice is what gvs-ovsdb-server logs while it keeps changes in
// memory only; TestStorage skips (saying so) until that notice is gone.
const noStorageNotice = "changes are kept in memory only"

// TestStorage checks what survives the server: after changes and a clean
// exit, ovsdb-tool reads the database file, and a restarted server serves
// the same rows under the same UUIDs.
func TestStorage(t *testing.T) {
	p := startPair(t, vsctlPath, clientPath)
	if log, _ := os.ReadFile(filepath.Join(p.ours.dir, "ovsdb-server.log")); strings.Contains(string(log), noStorageNotice) {
		t.Skipf("our server logs %q: storage is not implemented yet", noStorageNotice)
	}
	nref, nours := newNormalizer(p.ref), newNormalizer(p.ours)
	// compare runs one command on both servers; rows in hash order are
	// sorted first (normalisation 5).
	compare := func(what string, run func(s *server) result) {
		t.Helper()
		ref, ours := run(p.ref), run(p.ours)
		for _, r := range []*result{&ref, &ours} {
			r.stdout = sortResultRows(r.stdout)
			if strings.HasPrefix(what, "show") {
				r.stdout = sortRecords(r.stdout, "tree")
			}
		}
		compareResults(t, what, nref.result(ref), nours.result(ours))
	}
	vsctl := func(args ...string) func(*server) result {
		return func(s *server) result { return s.vsctl(t, append([]string{"--no-wait"}, args...)...) }
	}
	tool := func(args ...string) func(*server) result {
		return func(s *server) result {
			full := make([]string, len(args))
			for i, a := range args {
				full[i] = strings.ReplaceAll(a, "DB", s.db)
			}
			return s.run(t, "", toolPath, full...)
		}
	}
	compare("populate", vsctl("init", "--", "add-br", "br0", "--", "add-port", "br0", "p1",
		"--", "set", "Bridge", "br0", "other_config:k=v", "--", "set", "Port", "p1", "tag=7"))
	compare("modify", vsctl("del-port", "p1", "--", "add-port", "br0", "p2", "--", "set", "Open_vSwitch", ".", "external_ids:a=b"))
	compare("show before restart", vsctl("show"))
	for _, s := range p.both() {
		s.restart(t)
	}
	compare("show after restart", vsctl("show"))
	compare("dump after restart", func(s *server) result { return s.client(t, nil, "dump", "Open_vSwitch") })
	for _, s := range p.both() {
		s.stop(t)
	}
	compare("ovsdb-tool db-name", tool("db-name", "DB"))
	compare("ovsdb-tool db-version", tool("db-version", "DB"))
	compare("ovsdb-tool db-cksum", tool("db-cksum", "DB"))
	compare("ovsdb-tool query", tool("query", "DB", `["Open_vSwitch",{"op":"select","table":"Bridge","where":[],"columns":["_uuid","name","other_config","ports"]},{"op":"select","table":"Port","where":[],"columns":["name","tag"]}]`))
	compare("ovsdb-tool check-cluster is not for standalone", tool("db-is-standalone", "DB"))
}

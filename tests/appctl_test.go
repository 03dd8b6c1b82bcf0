package tests

import (
	"strings"
	"testing"
)

// TestAppctl drives the server's control socket with ovs-appctl: the
// ovsdb-server/* commands operators and ovs-ctl use, and an unknown
// command. "DIR" in an argument is the server's own directory. (version
// and list-commands are not compared: they name the implementation.)
func TestAppctl(t *testing.T) {
	p := startPair(t, vsctlPath)
	steps := [][]string{
		{"ovsdb-server/list-dbs"},
		{"ovsdb-server/list-remotes"},
		{"ovsdb-server/add-remote", "punix:DIR/extra.sock"},
		{"ovsdb-server/list-remotes"},
		{"VSCTL", "--db=unix:DIR/extra.sock", "--no-wait", "--timeout=5", "init"},
		{"ovsdb-server/remove-remote", "punix:DIR/extra.sock"},
		{"ovsdb-server/remove-remote", "punix:DIR/extra.sock"},
		{"ovsdb-server/list-remotes"},
		{"nosuch-command"},
	}
	nref, nours := newNormalizer(p.ref), newNormalizer(p.ours)
	for _, step := range steps {
		t.Run(strings.Join(step, "_"), func(t *testing.T) {
			var res [2]result
			for i, s := range p.both() {
				args := make([]string, len(step))
				for j, a := range step {
					args[j] = strings.ReplaceAll(a, "DIR", s.dir)
				}
				if args[0] == "VSCTL" {
					res[i] = s.run(t, "", vsctlPath, args[1:]...)
				} else {
					res[i] = s.run(t, "", appctlPath, append([]string{"--timeout=5", "-t", s.ctl}, args...)...)
				}
			}
			compareResults(t, strings.Join(step, " "), nref.result(res[0]), nours.result(res[1]))
		})
	}
}

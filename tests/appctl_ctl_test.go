package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testDBSchema is a second database for ovsdb-server/add-db.
const testDBSchema = `{"name":"T","tables":{"X":{"columns":{"a":{"type":"integer"},"m":{"type":{"key":"string","value":"string","min":0,"max":"unlimited"}}}}}}`

// TestAppctlControlCommands drives the rest of ovsdb-server's control
// commands with ovs-appctl against Debian's ovsdb-server and ours, and
// compares replies, errors and exit codes: add-db and remove-db (with
// their errors), db: remotes (validated, listed), a remote that cannot
// listen (configured anyway), reconnect, disable-monitor-cond (after
// which monitor_cond is an unknown method), perf counters, the
// replication status of a standalone server and memory/show.
func TestAppctlControlCommands(t *testing.T) {
	p := startPair(t, vsctlPath, clientPath)
	for _, s := range p.both() {
		schema := filepath.Join(s.dir, "t.ovsschema")
		if err := os.WriteFile(schema, []byte(testDBSchema), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"t.db", "t2.db"} {
			if r := s.run(t, "", toolPath, "create", filepath.Join(s.dir, name), schema); r.exit != 0 {
				t.Fatalf("ovsdb-tool create: %v", r)
			}
		}
		if r := s.run(t, "", toolPath, "create", filepath.Join(s.dir, "dup.db"), vswitchSchema); r.exit != 0 {
			t.Fatalf("ovsdb-tool create: %v", r)
		}
	}
	steps := [][]string{
		{"ovsdb-server/list-dbs"},
		{"ovsdb-server/add-db", "DIR/t.db"},
		{"ovsdb-server/add-db", "DIR/t.db"},
		{"ovsdb-server/add-db", "DIR/nope.db"},
		{"ovsdb-server/list-dbs"},
		{"CLIENT", "list-dbs"},
		{"CLIENT", "transact", `["T",{"op":"insert","table":"X","row":{"a":7,"m":["map",[["k","v"],["k2","v2"]]]}}]`},
		{"VSCTL", "--no-wait", "add-br", "br0", "--", "set", "bridge", "br0", "external_ids:a=b"},
		{"memory/show"},
		{"ovsdb-server/remove-db", "T"},
		{"ovsdb-server/remove-db", "T"},
		{"ovsdb-server/remove-db", "_Server"},
		{"ovsdb-server/list-dbs"},
		{"memory/show"},
		{"ovsdb-server/add-remote", "db:Open_vSwitch,Open_vSwitch,manager_options"},
		{"ovsdb-server/add-remote", "db:Nope,Open_vSwitch,manager_options"},
		{"ovsdb-server/add-remote", "db:Open_vSwitch,Nope,manager_options"},
		{"ovsdb-server/add-remote", "db:Open_vSwitch,Open_vSwitch,nope"},
		{"ovsdb-server/add-remote", "db:x"},
		{"ovsdb-server/add-remote", "ptcp:bogus"},
		{"ovsdb-server/list-remotes"},
		{"ovsdb-server/remove-remote", "ptcp:bogus"},
		{"ovsdb-server/remove-remote", "db:Open_vSwitch,Open_vSwitch,manager_options"},
		{"ovsdb-server/list-remotes"},
		{"ovsdb-server/reconnect"},
		{"ovsdb-server/reconnect", "extra"},
		{"ovsdb-server/perf-counters-show"},
		{"ovsdb-server/perf-counters-clear"},
		{"ovsdb-server/sync-status"},
		{"ovsdb-server/get-active-ovsdb-server"},
		{"ovsdb-server/get-sync-exclude-tables"},
		{"CLIENT", "monitor-cond", `[]`, "Open_vSwitch", "bridges"},
		{"ovsdb-server/disable-monitor-cond"},
		{"CLIENT", "monitor-cond", `[]`, "Open_vSwitch", "bridges"},
		{"CLIENT", "list-dbs"},
		{"ovsdb-server/add-db", "DIR/t.db"},
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
				switch args[0] {
				case "VSCTL":
					res[i] = s.vsctl(t, args[1:]...)
				case "CLIENT":
					if args[1] == "monitor-cond" {
						// Runs until killed: one initial update, or the error.
						res[i] = s.run(t, "", clientPath, "--timeout=1", args[1], s.remote, "Open_vSwitch", args[2], args[3]+","+args[4])
						if res[i].exit == 128+14 { // SIGALRM from --timeout: it was monitoring
							res[i].exit, res[i].stderr = 0, ""
						}
					} else {
						res[i] = s.client(t, nil, args[1], args[2:]...)
					}
				default:
					res[i] = s.run(t, "", appctlPath, append([]string{"--timeout=5", "-t", s.ctl}, args...)...)
				}
				res[i].stdout = strings.ReplaceAll(res[i].stdout, s.dir, "DIR")
				res[i].stderr = strings.ReplaceAll(res[i].stderr, s.dir, "DIR")
			}
			compareResults(t, strings.Join(step, " "), nref.result(res[0]), nours.result(res[1]))
		})
	}
	// A second database of a name already served: Debian's 3.1 refuses it
	// but then stops serving the first one too and aborts on exit, so only
	// ours is run, against ovsdb-server.c's error text.
	for _, c := range []struct{ file, want string }{
		{"t2.db", "ovsdb error: T: duplicate database name\n"},
		{"dup.db", "ovsdb error: Open_vSwitch: duplicate database name\n"},
	} {
		r := p.ours.run(t, "", appctlPath, "--timeout=5", "-t", p.ours.ctl, "ovsdb-server/add-db", filepath.Join(p.ours.dir, c.file))
		if r.exit != 2 || !strings.HasPrefix(r.stderr, c.want) {
			t.Errorf("add-db %s: %v", c.file, r)
		}
	}
	if r := p.ours.client(t, nil, "list-dbs"); r.stdout != "Open_vSwitch\nT\n_Server\n" {
		t.Errorf("after refused add-db: %v", r)
	}
}

// memory/show counts what ovsdb-server counts: cells, atoms, weak
// references (a mirror's ports), sessions, and monitors shared by
// sessions that monitor the same columns (two "monitor Bridge" clients
// make one).
func TestMemoryShow(t *testing.T) {
	p := startPair(t, vsctlPath, clientPath)
	var out [2]string
	for i, s := range p.both() {
		if r := s.vsctl(t, "--no-wait", "add-br", "br0", "--", "add-port", "br0", "p1", "--",
			"--id=@p", "get", "port", "p1", "--", "--id=@m", "create", "mirror", "name=m", "select-src-port=@p", "select-dst-port=@p",
			"--", "add", "bridge", "br0", "mirrors", "@m"); r.exit != 0 {
			t.Fatalf("%s: ovs-vsctl: %v", s.kind.name, r)
		}
		for _, args := range [][]string{
			{"monitor", s.remote, "Open_vSwitch", "Bridge"},
			{"monitor", s.remote, "Open_vSwitch", "Bridge"},
			{"monitor-cond", s.remote, "Open_vSwitch", "[]", "Port"},
		} {
			c := exec.Command(clientPath, args...)
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Process.Kill(); c.Wait() })
		}
		waitFor(5*time.Second, func() bool {
			out[i] = s.run(t, "", appctlPath, "-t", s.ctl, "memory/show").stdout
			return strings.Contains(out[i], "sessions:3") && strings.Contains(out[i], "monitors:2")
		})
	}
	if out[0] != out[1] || !strings.Contains(out[1], "n-weak-refs:2") {
		t.Errorf("memory/show:\ndebian: %s\nours:   %s", out[0], out[1])
	}
}

package storagetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

func sortedLines(s string) string {
	lines := strings.Split(s, "\n")
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// vsctl runs ovs-vsctl --no-wait against a server.
func vsctl(t *testing.T, s *server, args ...string) string {
	t.Helper()
	return run(t, nil, ovsVsctl, append([]string{"--db=unix:" + s.sock, "--no-wait", "--timeout=20"}, args...)...)
}

func dumpDB(t *testing.T, s *server) string {
	t.Helper()
	return run(t, nil, ovsdbClient, "--timeout=20", "dump", "unix:"+s.sock, "Open_vSwitch")
}

// TestRoundTripWithDebian moves one database file back and forth between
// Debian's ovsdb-server and gvs-ovsdb-server, changing it on each side
// (gvs also compacts it), and requires the same `ovsdb-client dump` from
// both servers after every move, and ovsdb-tool to read what gvs wrote.
func TestRoundTripWithDebian(t *testing.T) {
	needTools(t, debianServer, ovsdbTool, ovsdbClient, ovsVsctl, ovsAppctl, vswitchSchema)
	dir := newDir(t)
	dbFile := filepath.Join(dir, "conf.db")
	run(t, nil, ovsdbTool, "create", dbFile, vswitchSchema)

	// Debian's server creates the contents.
	deb := startServer(t, debianServer, dir, dbFile)
	vsctl(t, deb, "init")
	vsctl(t, deb, "add-br", "br0", "--", "add-port", "br0", "p1", "--", "set", "Port", "p1", "tag=7")
	vsctl(t, deb, "add-port", "br0", "p2", "--", "set", "Interface", "p2", "type=internal")
	vsctl(t, deb, "set", "Open_vSwitch", ".", "external_ids:system-id=abc", "other_config:x=y")
	vsctl(t, deb, "set", "Bridge", "br0", "other_config:a=b", "other_config:c=d", "--", "add-bond", "br0", "bond0", "e1", "e2")
	vsctl(t, deb, "del-port", "p1", "--", "remove", "Bridge", "br0", "other_config", "a")
	want := dumpDB(t, deb)
	deb.stop(t)

	// gvs serves the same contents from Debian's file.
	ours := startServer(t, bin.server, dir, dbFile)
	if got := dumpDB(t, ours); got != want {
		t.Fatalf("gvs serves Debian's file differently:\n%s\nwant:\n%s", got, want)
	}
	// gvs changes it, compacts it, and changes it again.
	vsctl(t, ours, "add-br", "br1", "--", "set", "Bridge", "br1", "fail_mode=secure")
	vsctl(t, ours, "add-port", "br1", "p3", "--", "set", "Interface", "p3", "options:remote_ip=198.18.0.1")
	run(t, nil, ovsAppctl, "-t", filepath.Join(dir, "server.ctl"), "ovsdb-server/compact")
	vsctl(t, ours, "del-port", "p2", "--", "set", "Port", "p3", "trunks=1,2,3", "--", "set", "Bridge", "br0", "other_config:c=changed")
	vsctl(t, ours, "--", "--id=@m", "create", "Mirror", "name=m0", "--", "add", "Bridge", "br1", "mirrors", "@m")
	want = dumpDB(t, ours)
	ours.stop(t)

	// Open vSwitch's tool reads what gvs wrote.
	showLog := run(t, nil, ovsdbTool, "-m", "show-log", dbFile)
	if !strings.Contains(showLog, `"compacting database online"`) || !strings.Contains(showLog, `insert row "m0"`) {
		t.Fatalf("ovsdb-tool show-log -m:\n%s", showLog)
	}
	if v := strings.TrimSpace(run(t, nil, ovsdbTool, "db-version", dbFile)); v != "8.3.1" {
		t.Fatalf("ovsdb-tool db-version: %q", v)
	}
	run(t, nil, ovsdbTool, "db-cksum", dbFile)
	query := run(t, nil, ovsdbTool, "query", dbFile, `["Open_vSwitch",{"op":"select","table":"Port","where":[],"columns":["name","trunks"]}]`)
	if !strings.Contains(query, `"trunks":["set",[1,2,3]]`) {
		t.Fatalf("ovsdb-tool query: %s", query)
	}

	// Debian's server serves what gvs wrote, and writes on.
	deb = startServer(t, debianServer, dir, dbFile)
	if got := dumpDB(t, deb); got != want {
		t.Fatalf("Debian serves gvs's file differently:\n%s\nwant:\n%s", got, want)
	}
	vsctl(t, deb, "del-br", "br1")
	want = dumpDB(t, deb)
	deb.stop(t)
	ours = startServer(t, bin.server, dir, dbFile)
	if got := dumpDB(t, ours); got != want {
		t.Fatalf("second move to gvs:\n%s\nwant:\n%s", got, want)
	}
	ours.stop(t)
}

// TestToolsAgree runs gvs-ovsdb-tool and ovsdb-tool on the same files and
// requires the same output.
func TestToolsAgree(t *testing.T) {
	needTools(t, ovsdbTool, vswitchSchema)
	dir := newDir(t)
	theirs, ours := filepath.Join(dir, "theirs.db"), filepath.Join(dir, "ours.db")
	run(t, nil, ovsdbTool, "create", theirs, vswitchSchema)
	run(t, nil, bin.tool, "create", ours, vswitchSchema)
	txn := `["Open_vSwitch",{"op":"insert","table":"Open_vSwitch","row":{"external_ids":["map",[["a","b"]]]}}]`
	run(t, nil, ovsdbTool, "transact", theirs, txn)
	run(t, nil, bin.tool, "transact", ours, txn)
	for _, file := range []string{theirs, ours} {
		for _, args := range [][]string{
			{"db-name", file}, {"db-version", file}, {"db-cksum", file},
			{"schema-name", vswitchSchema}, {"schema-version", vswitchSchema}, {"schema-cksum", vswitchSchema},
			{"needs-conversion", file, vswitchSchema},
			{"query", file, `["Open_vSwitch",{"op":"select","table":"Open_vSwitch","where":[],"columns":["external_ids","next_cfg"]}]`},
		} {
			want, wantErr := runErr(nil, ovsdbTool, args...)
			got, gotErr := runErr(nil, bin.tool, args...)
			if got != want || (wantErr == nil) != (gotErr == nil) {
				t.Errorf("%v: gvs-ovsdb-tool %q (%v), ovsdb-tool %q (%v)", args, got, gotErr, want, wantErr)
			}
		}
	}
	// show-log prints the same records; Open vSwitch lists a record's rows
	// in hash order, so with -m the lines are compared sorted.
	run(t, nil, ovsdbTool, "transact", theirs, `["Open_vSwitch",{"op":"update","table":"Open_vSwitch","where":[],"row":{"external_ids":["map",[["a","b"],["c","d e"]]],"next_cfg":3}},{"op":"comment","comment":"second"}]`)
	for _, verbosity := range []string{"", "-m", "-mm"} {
		args := []string{"show-log", theirs}
		if verbosity != "" {
			args = []string{verbosity, "show-log", theirs}
		}
		want := run(t, nil, ovsdbTool, args...)
		got := run(t, nil, bin.tool, args...)
		if verbosity != "" {
			want, got = sortedLines(want), sortedLines(got)
		}
		if got != want {
			t.Errorf("%v:\ngvs-ovsdb-tool:\n%s\novsdb-tool:\n%s", args, got, want)
		}
	}
	// Creating over an existing file fails in both.
	if _, err := runErr(nil, bin.tool, "create", ours, vswitchSchema); err == nil || !strings.Contains(err.Error(), "File exists") {
		t.Errorf("create over an existing file: %v", err)
	}
	// Compaction by either tool reads back in the other.
	run(t, nil, bin.tool, "compact", theirs)
	run(t, nil, ovsdbTool, "compact", ours)
	for _, file := range []string{theirs, ours} {
		out := run(t, nil, ovsdbTool, "query", file, `["Open_vSwitch",{"op":"select","table":"Open_vSwitch","where":[],"columns":["external_ids"]}]`)
		if !strings.Contains(out, `["a","b"]`) {
			t.Errorf("%s after compaction: %s", file, out)
		}
		out = run(t, nil, bin.tool, "query", file, `["Open_vSwitch",{"op":"select","table":"Open_vSwitch","where":[],"columns":["external_ids"]}]`)
		if !strings.Contains(out, `["a","b"]`) {
			t.Errorf("%s after compaction, read by gvs: %s", file, out)
		}
	}
}

// TestUpgradeLikeOvsdbTool converts a database made with an older schema
// with gvs-ovsdb-tool and with ovsdb-tool and requires the same contents.
func TestUpgradeLikeOvsdbTool(t *testing.T) {
	needTools(t, ovsdbTool, vswitchSchema)
	dir := newDir(t)
	current, _ := os.ReadFile(vswitchSchema)
	old := strings.Replace(string(current), `"version": "8.3.1"`, `"version": "8.2.0"`, 1)
	old = strings.Replace(old, `"datapath_version": {`, `"old_column": {"type": "string"}, "datapath_version": {`, 1)
	if old == string(current) {
		t.Fatal("could not derive an older schema")
	}
	oldSchema := filepath.Join(dir, "old.ovsschema")
	os.WriteFile(oldSchema, []byte(old), 0o644)
	txn := `["Open_vSwitch",{"op":"insert","table":"Bridge","row":{"name":"br0","old_column":"gone"},"uuid-name":"b"},` +
		`{"op":"insert","table":"Open_vSwitch","row":{"bridges":["named-uuid","b"]}}]`
	files := map[string]string{"gvs": filepath.Join(dir, "gvs.db"), "ovs": filepath.Join(dir, "ovs.db")}
	for _, f := range files {
		run(t, nil, ovsdbTool, "create", f, oldSchema)
		run(t, nil, ovsdbTool, "transact", f, txn)
	}
	if out := run(t, nil, bin.tool, "needs-conversion", files["gvs"], vswitchSchema); out != "yes\n" {
		t.Fatalf("needs-conversion: %q", out)
	}
	run(t, nil, bin.tool, "convert", files["gvs"], vswitchSchema)
	run(t, nil, ovsdbTool, "convert", files["ovs"], vswitchSchema)
	q := `["Open_vSwitch",{"op":"select","table":"Bridge","where":[],"columns":["name","datapath_version"]}]`
	got := run(t, nil, ovsdbTool, "query", files["gvs"], q)
	want := run(t, nil, ovsdbTool, "query", files["ovs"], q)
	if got != want || !strings.Contains(got, "br0") {
		t.Fatalf("after convert: gvs %s, ovsdb-tool %s", got, want)
	}
	if out := run(t, nil, ovsdbTool, "needs-conversion", files["gvs"], vswitchSchema); out != "no\n" {
		t.Fatalf("ovsdb-tool needs-conversion after gvs's convert: %q", out)
	}
}

// TestOneServerPerFile: a second server, gvs's or Debian's, cannot open a
// database file a gvs server holds, and gvs cannot open one Debian's holds.
func TestOneServerPerFile(t *testing.T) {
	needTools(t, debianServer, ovsdbTool, ovsAppctl)
	dir := newDir(t)
	dbFile := filepath.Join(dir, "conf.db")
	os.WriteFile(filepath.Join(dir, "k.ovsschema"), []byte(killSchema), 0o644)
	run(t, nil, ovsdbTool, "create", dbFile, filepath.Join(dir, "k.ovsschema"))
	second := func(binary string) error {
		other := newDir(t)
		cmd := exec.Command(binary, dbFile, "--remote=punix:"+filepath.Join(other, "db.sock"),
			"--pidfile="+filepath.Join(other, "pid"), "--unixctl="+filepath.Join(other, "ctl"))
		cmd.Env = append(os.Environ(), "OVS_RUNDIR="+other, "OVS_LOGDIR="+other, "OVS_DBDIR="+other)
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Fatalf("%s served a database another server holds", binary)
		}
		if !strings.Contains(string(out), "lock") {
			t.Errorf("%s: %s, want a lock error", binary, out)
		}
		return err
	}
	ours := startServer(t, bin.server, dir, dbFile)
	second(bin.server)
	second(debianServer)
	ours.stop(t)
	deb := startServer(t, debianServer, dir, dbFile)
	second(bin.server)
	deb.stop(t)
}

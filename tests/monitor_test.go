package tests

import (
	"strings"
	"testing"
	"time"
)

const updateTimeout = 5 * time.Second

// monitorChange is one ovs-vsctl change and how many updates each monitor
// must print for it.
type monitorChange struct {
	args   []string
	all    int // monitor Bridge name,other_config
	cond   int // monitor-cond other_config:watch=yes
	insdel int // monitor Bridge name,!modify; monitor-cond-since Bridge name
}

// monitorChanges exercise insert, modify, delete, a change to an
// unmonitored column (no update), and rows entering and leaving a
// monitor-cond condition. The last change is seen by every monitor that
// sees modifications, so an update that should not have been sent shows up
// before it.
var monitorChanges = []monitorChange{
	{[]string{"set", "Bridge", "br0", "other_config:a=1"}, 1, 0, 0},
	{[]string{"set", "Bridge", "br1", "other_config:b=2"}, 1, 1, 0},
	{[]string{"add-br", "br2", "--", "set", "Bridge", "br2", "other_config:c=3"}, 1, 0, 1},
	{[]string{"set", "Bridge", "br2", "stp_enable=true"}, 0, 0, 0},
	{[]string{"remove", "Bridge", "br1", "other_config", "watch"}, 1, 1, 0},
	{[]string{"set", "Bridge", "br1", "other_config:watch=yes"}, 1, 1, 0},
	{[]string{"set", "Bridge", "br2", "other_config:watch=yes"}, 1, 1, 0},
	{[]string{"del-br", "br2"}, 1, 1, 1},
	{[]string{"set", "Bridge", "br1", "other_config:end=1", "--", "set", "Bridge", "br0", "other_config:end=1"}, 1, 1, 0},
}

// monitorSpec is one ovsdb-client monitor run against each server.
type monitorSpec struct {
	name   string
	args   []string // the command line, with REMOTE for the server's remote
	count  func(out string) int
	expect func(monitorChange) int
	json   bool
}

// JSON output prints one object per update (monitor-cond-since prefixes
// it with "last_id: ...").
func countJSONUpdates(out string) int { return strings.Count(out, `{"data":`) }

// Table output prints one block per update, each headed by a "row" line.
func countTableUpdates(out string) int {
	n := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "row ") {
			n++
		}
	}
	return n
}

var monitorSpecs = []monitorSpec{
	{"monitor-json", []string{"--format=json", "monitor", "REMOTE", "Open_vSwitch", "Bridge", "name,other_config"},
		countJSONUpdates, func(c monitorChange) int { return c.all }, true},
	{"monitor-cond-json", []string{"--format=json", "monitor-cond", "REMOTE", "Open_vSwitch", `[["other_config","includes",["map",[["watch","yes"]]]]]`, "Bridge", "name,other_config"},
		countJSONUpdates, func(c monitorChange) int { return c.cond }, true},
	{"monitor-cond-since-json", []string{"--format=json", "monitor-cond-since", "REMOTE", "Open_vSwitch", "[true]", "Bridge", "name"},
		countJSONUpdates, func(c monitorChange) int { return c.insdel }, true},
	{"monitor-table-no-modify", []string{"monitor", "REMOTE", "Open_vSwitch", "Bridge", "name,!modify"},
		countTableUpdates, func(c monitorChange) int { return c.insdel }, false},
}

// TestMonitor runs ovsdb-client monitor and monitor-cond while ovs-vsctl
// changes the database, and compares the streams of updates.
func TestMonitor(t *testing.T) {
	p := startPair(t, clientPath, vsctlPath)
	var streams [2][]result
	for side, s := range p.both() {
		if r := s.vsctl(t, "--no-wait", "init", "--", "add-br", "br0", "--", "add-br", "br1", "--", "set", "Bridge", "br1", "other_config:watch=yes"); r.exit != 0 {
			t.Fatalf("%s: setup: %s", s.kind.name, r)
		}
		streams[side] = runMonitors(t, s)
	}
	nref, nours := newNormalizer(p.ref), newNormalizer(p.ours)
	for i, m := range monitorSpecs {
		t.Run(m.name, func(t *testing.T) {
			ref, ours := streams[0][i], streams[1][i]
			sortRows := sortTableBlocks
			if m.json {
				sortRows = sortJSONTable
			}
			ref.stdout, ours.stdout = sortRows(ref.stdout), sortRows(ours.stdout)
			compareResults(t, "ovsdb-client "+strings.Join(m.args, " "), nref.result(ref), nours.result(ours))
		})
	}
}

// sortTableBlocks sorts the rows of each update block of table output
// (normalisation 5: rows within one update come in hash order).
func sortTableBlocks(out string) string {
	blocks := strings.Split(strings.TrimRight(out, "\n"), "\n\n")
	for i, b := range blocks {
		blocks[i] = strings.TrimRight(sortTable(b+"\n"), "\n")
	}
	return strings.Join(blocks, "\n\n") + "\n"
}

// runMonitors starts every monitor, waits for each one's initial rows (so
// it is in place), applies the changes one by one waiting for the updates
// each should cause, and returns what the monitors printed.
func runMonitors(t *testing.T, s *server) []result {
	procs := make([]*background, len(monitorSpecs))
	want := make([]int, len(monitorSpecs))
	for i, m := range monitorSpecs {
		args := append([]string(nil), m.args...)
		for j, a := range args {
			if a == "REMOTE" {
				args[j] = s.remote
			}
		}
		procs[i] = s.startTool(t, clientPath, args...)
		want[i] = 1
		if !procs[i].waitStdout(updateTimeout, func(out string) bool { return m.count(out) >= 1 }) {
			t.Fatalf("%s: %s printed no initial rows within %v: %q", s.kind.name, m.name, updateTimeout, procs[i].stdout.String())
		}
	}
	for _, change := range monitorChanges {
		if r := s.vsctl(t, append([]string{"--no-wait"}, change.args...)...); r.exit != 0 {
			t.Fatalf("%s: ovs-vsctl %v: %s", s.kind.name, change.args, r)
		}
		for i, m := range monitorSpecs {
			want[i] += m.expect(change)
			if !procs[i].waitStdout(updateTimeout, func(out string) bool { return m.count(out) >= want[i] }) {
				t.Errorf("%s: %s: after ovs-vsctl %v: %d updates within %v, want %d", s.kind.name, m.name, change.args, m.count(procs[i].stdout.String()), updateTimeout, want[i])
			}
		}
	}
	results := make([]result, len(procs))
	for i, proc := range procs {
		results[i] = proc.stop(t)
	}
	return results
}

// TestMonitorAll monitors every column of every table (table output, with
// _version) while ovs-vsctl adds and removes a bridge and ports. Updates
// arrive in commit order, so once the last change (external_ids:end on
// Open_vSwitch) is printed, everything before it is too.
func TestMonitorAll(t *testing.T) {
	p := startPair(t, clientPath, vsctlPath)
	changes := [][]string{
		{"add-br", "br1", "--", "add-port", "br1", "p1", "--", "set", "Port", "p1", "tag=5"},
		{"set", "Interface", "p1", "type=internal", "--", "set", "Bridge", "br1", "other_config:x=y"},
		{"del-port", "p1"},
		{"del-br", "br1"},
		{"set", "Open_vSwitch", ".", "external_ids:end=1"},
	}
	var out [2]result
	for side, s := range p.both() {
		if r := s.vsctl(t, "--no-wait", "init", "--", "add-br", "br0"); r.exit != 0 {
			t.Fatalf("%s: setup: %s", s.kind.name, r)
		}
		mon := s.startTool(t, clientPath, "monitor", s.remote, "Open_vSwitch", "ALL")
		if !mon.waitStdout(updateTimeout, func(o string) bool { return strings.Contains(o, "Port\n") }) {
			t.Fatalf("%s: monitor ALL printed no initial Port rows within %v: %q", s.kind.name, updateTimeout, mon.stdout.String())
		}
		for _, c := range changes {
			if r := s.vsctl(t, append([]string{"--no-wait"}, c...)...); r.exit != 0 {
				t.Fatalf("%s: ovs-vsctl %v: %s", s.kind.name, c, r)
			}
		}
		if !mon.waitStdout(updateTimeout, func(o string) bool { return strings.Contains(o, `{end="1"}`) }) {
			t.Errorf("%s: monitor ALL: last change not seen within %v", s.kind.name, updateTimeout)
		}
		out[side] = mon.stop(t)
		out[side].stdout = sortTableBlocks(out[side].stdout)
	}
	compareResults(t, "ovsdb-client monitor Open_vSwitch ALL", newNormalizer(p.ref).result(out[0]), newNormalizer(p.ours).result(out[1]))
}

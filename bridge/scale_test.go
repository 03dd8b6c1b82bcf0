package bridge_test

import (
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"testing"
	"time"

	"gvs/ovsdb/db"
)

// TestManyPorts adds 500 ports in one ovs-vsctl transaction and reports
// how long ovs-vsctl (waiting for cur_cfg) took, then deletes them.
func TestManyPorts(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	e := newEnv(t)
	e.startReconciler()
	args := []string{"add-br", "br0"}
	for i := range 500 {
		name := fmt.Sprintf("s%d", i)
		e.dp.AddDevice(name)
		args = append(args, "--", "add-port", "br0", name)
	}
	start := time.Now()
	e.vsctl(args...)
	t.Logf("500 ports applied and reported in %v", time.Since(start))
	if n := len(e.dp.Ports()); n != 501 {
		t.Fatalf("%d ports in the datapath", n)
	}
	if got := e.get("Interface", "s499", "ofport"); got == "-1" || got == "[]" {
		t.Fatalf("s499 ofport = %s", got)
	}
	start = time.Now()
	e.vsctl("del-br", "br0")
	t.Logf("deleted in %v", time.Since(start))
	if n := len(e.dp.Ports()); n != 0 {
		t.Fatalf("%d ports left", n)
	}
}

// TestOneChangeTouchesOnePort: with 1,000 ports in place, adding one port
// opens one device (one AddPorts call, of one spec), reads the state of
// that port only (no other port's state, no statistics), and writes back
// that Interface row and cur_cfg, nothing else.
func TestOneChangeTouchesOnePort(t *testing.T) {
	e := newEnvLogging(t, slog.LevelWarn)
	e.startReconciler()
	// No statistics pass may fall into the measurement.
	e.vsctl("set", "Open_vSwitch", ".", "other_config:stats-update-interval=3600000")
	args := []string{"add-br", "br0"}
	for i := range 1000 {
		name := fmt.Sprintf("s%d", i)
		e.dp.AddDevice(name)
		args = append(args, "--", "add-port", "br0", name)
	}
	e.vsctl(args...)
	if n := len(e.dp.Ports()); n != 1001 {
		t.Fatalf("%d ports in the datapath", n)
	}
	e.dp.AddDevice("new0")
	time.Sleep(100 * time.Millisecond) // the pass the device's link event asked for
	e.dp.ResetCalls()
	recorded := e.recordCommits()

	e.vsctl("add-port", "br0", "new0")

	calls := e.dp.Calls()
	if got := e.dp.CallCount("AddPorts "); got != 1 || e.dp.CallCount("AddPort ") != 1 || !slices.Contains(calls, "AddPort br0 new0 system") {
		t.Errorf("%d AddPorts calls, want one adding new0: %v", got, calls)
	}
	if got := e.dp.CallCount("PortState "); got != 1 || !slices.Contains(calls, "PortState new0") {
		t.Errorf("%d port states read, want new0's only: %v", got, calls)
	}
	if got := e.dp.CallCount("PortStats "); got != 0 {
		t.Errorf("%d port statistics read by a configuration change", got)
	}
	if len(calls) != 3 {
		t.Errorf("datapath calls %v, want AddPorts, AddPort and PortState only", calls)
	}
	if got := e.get("Interface", "new0", "ofport"); got != "1001" {
		t.Errorf("new0 ofport = %s", got)
	}

	newUUID := db.UUID(e.get("Interface", "new0", "_uuid"))
	ovsUUID := db.UUID(e.get("Open_vSwitch", ".", "_uuid"))
	commits := recorded()
	if len(commits) != 2 {
		for _, c := range commits {
			t.Log(touched(c), c.Comment)
		}
		t.Fatalf("%d transactions, want 2 (ovs-vsctl's and the write-back)", len(commits))
	}
	wb := commits[1]
	if len(wb.Tables) != 2 || len(wb.Tables["Interface"]) != 1 || len(wb.Tables["Open_vSwitch"]) != 1 {
		t.Fatalf("write-back touched %v", touched(wb))
	}
	if _, ok := wb.Tables["Interface"][newUUID]; !ok {
		t.Fatalf("write-back updated Interface rows %v, not new0's %s", touched(wb), newUUID)
	}
	ch, ok := wb.Tables["Open_vSwitch"][ovsUUID]
	if !ok || ch.Old == nil || ch.New == nil {
		t.Fatalf("write-back did not update the Open_vSwitch row: %v", touched(wb))
	}
	diff := 0
	for i := range ch.New.Columns {
		if !reflect.DeepEqual(ch.Old.Columns[i], ch.New.Columns[i]) {
			diff++
		}
	}
	if diff != 1 {
		t.Errorf("write-back changed %d columns of Open_vSwitch, want 1 (cur_cfg)", diff)
	}
	if cur, next := e.get("Open_vSwitch", ".", "cur_cfg"), e.get("Open_vSwitch", ".", "next_cfg"); cur != next {
		t.Errorf("cur_cfg %s, next_cfg %s", cur, next)
	}
}

// touched lists a commit's rows as TABLE:UUID.
func touched(c *db.Commit) []string {
	var out []string
	for table, rows := range c.Tables {
		for id := range rows {
			out = append(out, table+":"+string(id))
		}
	}
	return out
}

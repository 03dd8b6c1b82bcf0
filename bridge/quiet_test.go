package bridge_test

import (
	"sync/atomic"
	"testing"
	"time"

	"gvs/ovsdb/db"
)

// TestQuietWhenNothingChanges: once a change is applied the reconciler
// writes nothing more (its own writes come back as updates and must not
// cause further writes), and a stats tick writes only when counters moved.
func TestQuietWhenNothingChanges(t *testing.T) {
	e := newEnv(t)
	e.startReconciler()
	for _, n := range []string{"q1", "q2", "q3"} {
		e.dp.AddDevice(n)
	}
	e.vsctl("add-br", "br0", "--", "add-port", "br0", "q1", "--", "add-port", "br0", "q2", "--", "add-port", "br0", "q3")
	time.Sleep(200 * time.Millisecond) // let the first write-back settle

	var commits atomic.Int64
	cancel := e.db.Subscribe(func(*db.Commit) { commits.Add(1) })
	defer cancel()
	for range 20 {
		e.rec.Kick() // as link events would
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	if n := commits.Load(); n != 0 {
		t.Fatalf("%d transactions while nothing changed", n)
	}

	// One change: exactly one transaction from ovs-vsctl and one
	// write-back (cur_cfg, and the new tag does not touch Interface rows).
	e.vsctl("set", "Port", "q1", "tag=5")
	time.Sleep(300 * time.Millisecond)
	if n := commits.Load(); n != 2 {
		t.Fatalf("%d transactions for one ovs-vsctl set, want 2 (its own and cur_cfg)", n)
	}
}

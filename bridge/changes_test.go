package bridge_test

import (
	"fmt"
	"testing"
	"time"

	"gvs/netdev"
)

// TestFailedInterfaceRetriedOnLinkEventOnly: an interface whose device is
// missing is not tried again on every pass, only when a link event names
// it (the device appearing) or on a full resync.
func TestFailedInterfaceRetriedOnLinkEventOnly(t *testing.T) {
	e := newEnv(t)
	e.startReconciler()
	e.vsctl("add-br", "br0", "--", "add-port", "br0", "late1")
	if got := e.get("Interface", "late1", "ofport"); got != "-1" {
		t.Fatalf("late1 ofport = %s", got)
	}
	tries := e.dp.CallCount("AddPort br0 late1 ")
	for i := range 5 {
		e.vsctl("set", "Bridge", "br0", fmt.Sprintf("other_config:mac-aging-time=%d", 100+i))
	}
	if got := e.dp.CallCount("AddPort br0 late1 "); got != tries {
		t.Fatalf("late1 tried %d more times by passes that did not concern it", got-tries)
	}
	e.rec.ResyncPorts()
	e.eventually("a resync to try late1 again", func() bool { return e.dp.CallCount("AddPort br0 late1 ") == tries+1 })
	e.dp.AddDevice("late1") // its link event
	e.eventually("late1 to be added", func() bool { return e.get("Interface", "late1", "ofport") == "1" })
}

// TestStatisticsOnTheirTimer: counters are read only by the statistics
// pass, which writes every port's in one transaction.
func TestStatisticsOnTheirTimer(t *testing.T) {
	e := newEnv(t)
	e.startReconciler()
	e.vsctl("set", "Open_vSwitch", ".", "other_config:stats-update-interval=3600000")
	names := []string{"c1", "c2", "c3"}
	for _, n := range names {
		e.dp.AddDevice(n)
	}
	e.vsctl("add-br", "br0", "--", "add-port", "br0", "c1", "--", "add-port", "br0", "c2", "--", "add-port", "br0", "c3")
	e.vsctl("set", "Bridge", "br0", "other_config:mac-aging-time=100")
	if n := e.dp.CallCount("PortStats "); n != 0 {
		t.Fatalf("%d statistics reads by configuration passes", n)
	}
	for i, n := range names {
		e.dp.SetStats(n, netdev.Stats{RxPackets: uint64(10 + i)})
	}
	time.Sleep(100 * time.Millisecond) // nothing written before the timer
	commits := e.recordCommits()
	if got := e.get("Interface", "c1", "statistics:rx_packets"); got != "0" {
		t.Fatalf("statistics written before their timer: rx_packets %s", got)
	}
	e.vsctl("--no-wait", "set", "Open_vSwitch", ".", "other_config:stats-update-interval=100")
	e.eventually("statistics to be written", func() bool { return e.get("Interface", "c3", "statistics:rx_packets") == "12" })
	for _, c := range commits() {
		if len(c.Tables["Interface"]) > 0 {
			if len(c.Tables["Interface"]) != 3 {
				t.Fatalf("statistics written in a transaction of %d Interface rows, want all 3: %v", len(c.Tables["Interface"]), touched(c))
			}
			break
		}
	}
}

// TestCarrierChanges: a port's carrier going down and up shows in
// link_state and counts in link_resets, read for that port only.
func TestCarrierChanges(t *testing.T) {
	e := newEnv(t)
	e.startReconciler()
	e.dp.AddDevice("k1")
	e.dp.AddDevice("k2")
	e.vsctl("add-br", "br0", "--", "add-port", "br0", "k1", "--", "add-port", "br0", "k2")
	if got := e.get("Interface", "k1", "link_resets"); got != "0" {
		t.Fatalf("link_resets = %s", got)
	}
	e.dp.ResetCalls()
	e.dp.SetCarrier("k1", false)
	e.eventually("k1 down", func() bool { return e.get("Interface", "k1", "link_state") == "down" })
	e.dp.SetCarrier("k1", true)
	e.eventually("k1 up after two transitions", func() bool {
		return e.get("Interface", "k1", "link_state") == "up" && e.get("Interface", "k1", "link_resets") == "2"
	})
	if n := e.dp.CallCount("PortState k2"); n != 0 {
		t.Errorf("k2's state read %d times for k1's carrier", n)
	}
	if got := e.get("Interface", "k2", "link_resets"); got != "0" {
		t.Errorf("k2 link_resets = %s", got)
	}
}

package dpif

import (
	"slices"
	"testing"
	"time"

	"gvs/netdev/netdevtest"
)

func TestAssignQueues(t *testing.T) {
	loads := []int64{100, 10, 10, 10, 10}
	for _, c := range []struct {
		alg  string
		want []int
	}{
		{RxqAssignRoundRobin, []int{0, 1, 0, 1, 0}},
		{RxqAssignCycles, []int{0, 1, 1, 0, 0}}, // up-down: 0 1 1 0 0
		{RxqAssignGroup, []int{0, 1, 1, 1, 1}},  // the heavy queue gets a PMD to itself
	} {
		if got := assignQueues(c.alg, loads, 2); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.alg, got, c.want)
		}
	}
	if got := assignQueues(RxqAssignGroup, loads, 1); !slices.Equal(got, make([]int, 5)) {
		t.Errorf("one PMD: %v", got)
	}
}

// planQueues returns, per PMD, the ports of the queues its plan polls.
func planQueues(dp *Datapath) [][]uint32 {
	var out [][]uint32
	for _, p := range dp.pmdList() {
		var ports []uint32
		for _, q := range p.plan.Load().rxqs {
			ports = append(ports, q.port.no)
		}
		out = append(out, ports)
	}
	return out
}

// TestRebalanceByLoad: two busy queues on one PMD are split; a second
// rebalance with the same loads moves nothing.
func TestRebalanceByLoad(t *testing.T) {
	fx := newFixture(t, Config{manual: true, PMDs: 2, RxqAssign: RxqAssignGroup}, 4)
	if got := planQueues(fx.dp); !slices.Equal(got[0], []uint32{1, 3}) || !slices.Equal(got[1], []uint32{2, 4}) {
		t.Fatalf("initial assignment %v", got)
	}
	ports := fx.dp.ports.Load()
	ports.list[0].rxqs[0].busyNs.Store(uint64(100 * time.Millisecond))
	ports.list[2].rxqs[0].busyNs.Store(uint64(90 * time.Millisecond))
	moves, err := fx.dp.RebalanceRxQueues()
	if err != nil {
		t.Fatal(err)
	}
	if got := planQueues(fx.dp); !slices.Equal(got[0], []uint32{1}) || !slices.Equal(got[1], []uint32{2, 3, 4}) {
		t.Fatalf("after rebalance %v (moves %v)", got, moves)
	}
	if len(moves) != 1 || moves[0].Port != 3 || moves[0].From != 0 || moves[0].To != 1 {
		t.Fatalf("moves %v", moves)
	}
	for _, pi := range fx.dp.Ports() {
		want := map[uint32]int{1: 0, 2: 1, 3: 1, 4: 1}[pi.No]
		if pi.RxQueuePMDs[0] != want {
			t.Fatalf("port %d on pmd %d, want %d", pi.No, pi.RxQueuePMDs[0], want)
		}
	}
	if again, _ := fx.dp.RebalanceRxQueues(); len(again) != 0 {
		t.Fatalf("second rebalance moved %v", again)
	}
	if err := fx.dp.SetRxqAssign("bogus"); err == nil {
		t.Fatal("bogus pmd-rxq-assign accepted")
	}
}

// TestRebalanceUnderTraffic: with real PMDs forwarding, moving queues
// loses no packet that was received, never has two PMDs poll a queue
// (the fake device counts overlapping calls), and pmd-rxq-show's usage
// reflects the busy queues.
func TestRebalanceUnderTraffic(t *testing.T) {
	fx := newFixture(t, Config{PMDs: 2, RxqAssign: RxqAssignGroup, RevalidateInterval: 10 * time.Millisecond,
		RxqInterval: 20 * time.Millisecond}, 0)
	for _, name := range []string{"a", "b", "c", "sink"} {
		fx.addPort(netdevtest.Config{Name: name, Discard: true})
	}
	fx.dp.SetUpcallHandler(handlerFunc(func(u *Upcall) UpcallResult {
		u.Mask = l2Mask()
		u.Actions = append(u.Actions, Output(4))
		return UpcallInstall
	}))
	// a (port 1) and c (port 3) share PMD 0; b and sink sit on PMD 1.
	frames := flowFrames(4)
	fx.devs[1].Loop(0, frames)
	fx.devs[3].Loop(0, frames)
	waitFor(t, "a measured load", func() bool {
		for _, s := range fx.dp.RxQueueStats() {
			if s.Port == 3 && s.Usage > 1 {
				return true
			}
		}
		return false
	})
	moves, err := fx.dp.RebalanceRxQueues()
	if err != nil || len(moves) == 0 {
		t.Fatalf("moves %v, %v", moves, err)
	}
	var pmdOf [5]int
	for _, s := range fx.dp.RxQueueStats() {
		pmdOf[s.Port] = s.PMD
	}
	if pmdOf[1] == pmdOf[3] {
		t.Fatalf("busy queues still share a PMD: %v (moves %v)", pmdOf, moves)
	}
	before := fx.devs[4].Stats().TxPackets
	waitFor(t, "traffic after the move", func() bool { return fx.devs[4].Stats().TxPackets > before+10000 })
	fx.devs[1].Loop(0, nil)
	fx.devs[3].Loop(0, nil)
	for no, d := range fx.devs {
		if v := d.Violations(); v != 0 {
			t.Fatalf("port %d: %d overlapping or late calls", no, v)
		}
	}
}

// TestRxqUsageWindow: usage is busy time over the sampled intervals, the
// newest first when fewer are asked for.
func TestRxqUsageWindow(t *testing.T) {
	fx := newFixture(t, Config{manual: true, PMDs: 1, RevalidateInterval: time.Hour, RxqInterval: time.Second}, 1)
	p := fx.dp.ports.Load().list[0]
	busy := &p.rxqs[0].busyNs
	sec := int64(time.Second)
	fx.dp.sampleRxqLoad(1 * sec) // interval 1: the queue was idle
	busy.Store(uint64(sec / 2))
	fx.dp.sampleRxqLoad(2 * sec)   // interval 2: busy half the time
	fx.dp.sampleRxqLoad(2*sec + 1) // too soon: no new interval
	for _, c := range []struct {
		d    time.Duration
		want float64
	}{{0, 25}, {time.Second, 50}, {time.Hour, 25}} {
		s := fx.dp.RxQueueStatsOver(c.d)
		if len(s) != 1 || s[0].Usage != c.want || s[0].BusyNs != uint64(sec/2) {
			t.Errorf("over %v: %+v, want usage %v", c.d, s, c.want)
		}
	}
}

package dpif

import (
	"sync/atomic"
	"testing"
	"time"

	"gvs/netdev/netdevtest"
	"gvs/packet"
)

// TestPortDelWhileTrafficFlows: port 1 floods endless traffic to ports 2
// and 3 while port 3 is deleted; port 2 keeps receiving, port 3's device
// is closed only after no PMD uses it (run with -race).
func TestPortDelWhileTrafficFlows(t *testing.T) {
	fx := newFixture(t, Config{PMDs: 2}, 0)
	in, src := fx.addPort(netdevtest.Config{Name: "in", Discard: true})
	a, devA := fx.addPort(netdevtest.Config{Name: "a", Discard: true})
	b, devB := fx.addPort(netdevtest.Config{Name: "b", Discard: true})
	fx.dp.SetUpcallHandler(handlerFunc(func(u *Upcall) UpcallResult {
		u.Mask = l2Mask()
		u.Actions = append(u.Actions, Output(a), Output(b))
		return UpcallInstall
	}))
	var frames [][]byte
	for i := range 8 {
		frames = append(frames, udpFrame(mac(2), mac(byte(i)), 0, [4]byte{1, 1, 1, 1}, [4]byte{2, 2, 2, 2}, 1, 2))
	}
	src.Loop(0, frames)
	waitFor(t, "traffic on b", func() bool { return devB.Stats().TxPackets > 1000 })
	if err := fx.dp.PortDel(b); err != nil {
		t.Fatal(err)
	}
	if !devB.Closed() {
		t.Fatal("device of deleted port not closed")
	}
	sentB := devB.Stats().TxPackets
	before := devA.Stats().TxPackets
	waitFor(t, "traffic on a after PortDel", func() bool { return devA.Stats().TxPackets > before+1000 })
	if devB.Stats().TxPackets != sentB {
		t.Fatal("packets sent to a deleted port")
	}
	if err := fx.dp.PortDel(b); err == nil {
		t.Fatal("second PortDel succeeded")
	}
	// Deleting the input port deletes the flows that match on it.
	if err := fx.dp.PortDel(in); err != nil {
		t.Fatal(err)
	}
	for _, f := range fx.dp.Dump() {
		if f.Key.InPort == in {
			t.Fatalf("flow from deleted port %d survives: %+v", in, f.Key)
		}
	}
	if !src.Closed() || src.Violations() != 0 {
		t.Fatal("input device not closed, or used after Close")
	}
	in, src = fx.addPort(netdevtest.Config{Name: "in2", Discard: true})
	src.Loop(0, frames)
	// Re-adding a port takes effect while traffic flows.
	c, devC := fx.addPort(netdevtest.Config{Name: "c", Discard: true})
	fx.dp.Flush()
	fx.dp.SetUpcallHandler(handlerFunc(func(u *Upcall) UpcallResult {
		u.Mask = l2Mask()
		u.Actions = append(u.Actions, Output(a), Output(c))
		return UpcallInstall
	}))
	fx.dp.Flush()
	waitFor(t, "traffic on c", func() bool { return devC.Stats().TxPackets > 1000 })
	src.Loop(0, nil)
	if v := src.Violations() + devA.Violations() + devB.Violations() + devC.Violations(); v != 0 {
		t.Fatalf("%d overlapping calls on a queue", v)
	}
}

func TestPMDStatsMove(t *testing.T) {
	fx := newFixture(t, Config{PMDs: 1, EMCInsertInvProb: 1}, 2)
	fx.dp.SetUpcallHandler(hubHandler(1, 2))
	before := fx.totals()
	for i := range 100 {
		fx.devs[1].Inject(0, udpFrame(mac(2), mac(1), 0, [4]byte{1, 1, 1, 1}, [4]byte{2, 2, 2, 2}, uint16(i%2), 2))
	}
	waitFor(t, "100 packets", func() bool { s := fx.totals(); return s.TxPackets == 100 && s.Packets == before.Packets+100 })
	s := fx.totals()
	if s.Packets != before.Packets+100 || s.BusyNs == before.BusyNs || s.Iterations == before.Iterations {
		t.Fatalf("stats did not move: %+v", s)
	}
	if s.EMCHits+s.MegaflowHits+s.Misses != 100 || s.Upcalls != 1 {
		t.Fatalf("hits %d+%d misses %d upcalls %d", s.EMCHits, s.MegaflowHits, s.Misses, s.Upcalls)
	}
	p := fx.dp.PMDStats()[0]
	if p.Batches == 0 || p.Batches > 100 || p.RxQueues != 2 {
		t.Fatalf("pmd %+v", p)
	}
	st := fx.dp.Stats()
	if st.Hit != 99 || st.Missed != 1 || st.Flows != 1 {
		t.Fatalf("datapath stats %+v", st)
	}
}

// slowHandler sends everything to the slow path, which forwards to out
// after blocking on gate.
type slowHandler struct {
	out   uint32
	gate  chan struct{}
	calls atomic.Int64
}

func (h *slowHandler) Upcall(u *Upcall) UpcallResult { return UpcallSlow }

func (h *slowHandler) SlowUpcall(u *Upcall) UpcallResult {
	<-h.gate
	h.calls.Add(1)
	u.Actions = append(u.Actions, Output(h.out))
	return UpcallExecute
}

func TestSlowUpcallQueueBoundsAndCounts(t *testing.T) {
	fx := newFixture(t, Config{PMDs: 1, SlowQueueLen: 4}, 2)
	h := &slowHandler{out: 2, gate: make(chan struct{})}
	fx.dp.SetUpcallHandler(h)
	for i := range 20 {
		fx.devs[1].Inject(0, udpFrame(mac(2), mac(1), 0, [4]byte{1, 1, 1, 1}, [4]byte{2, 2, 2, 2}, uint16(i), 2))
	}
	waitFor(t, "20 misses", func() bool { return fx.totals().Misses == 20 })
	close(h.gate)
	// One upcall may be inside SlowUpcall, four queued; the rest lost.
	waitFor(t, "slow upcalls done", func() bool { return uint64(h.calls.Load())+fx.totals().LostUpcalls == 20 })
	s := fx.totals()
	calls := h.calls.Load()
	if calls > 5 || s.LostUpcalls != uint64(20-calls) || s.Upcalls != 20 {
		t.Fatalf("slow calls %d lost %d upcalls %d", calls, s.LostUpcalls, s.Upcalls)
	}
	if n := len(fx.devs[2].WaitSent(int(calls), 5*time.Second)); n != int(calls) {
		t.Fatalf("slow path sent %d, want %d", n, calls)
	}
}

// TestUpcallsAbsorb20kNewFlows: 20,000 packets of 20,000 new flows, all
// delivered and installed, none lost.
func TestUpcallsAbsorb20kNewFlows(t *testing.T) {
	const n = 20000
	fx := newFixture(t, Config{PMDs: 1, PoolBuffers: 1024}, 0)
	fx.addPort(netdevtest.Config{Name: "in", RxQueueLen: n, Discard: true})
	_, out := fx.addPort(netdevtest.Config{Name: "out", Discard: true})
	fx.dp.SetUpcallHandler(hubHandler(1, 2))
	start := time.Now()
	for i := range n {
		src := [6]byte{0x02, 0, 0, byte(i >> 16), byte(i >> 8), byte(i)}
		fx.devs[1].Inject(0, udpFrame(mac(2), src, 0, [4]byte{1, 1, 1, 1}, [4]byte{2, 2, 2, 2}, 1, 2))
	}
	waitFor(t, "all delivered", func() bool { return out.Stats().TxPackets == n })
	el := time.Since(start)
	s := fx.totals()
	if s.LostUpcalls != 0 || s.Upcalls != n || fx.dp.NumFlows() != n {
		t.Fatalf("lost %d upcalls %d flows %d", s.LostUpcalls, s.Upcalls, fx.dp.NumFlows())
	}
	t.Logf("%d new flows in %v: %.0f flows/s", n, el, n/el.Seconds())
}

func TestVLANRestoredBeforeClassification(t *testing.T) {
	fx := newFixture(t, Config{PMDs: 1}, 2)
	var seen packet.Key
	fx.dp.SetUpcallHandler(handlerFunc(func(u *Upcall) UpcallResult {
		seen = *u.Key
		u.Actions = append(u.Actions, Output(2))
		return UpcallExecute
	}))
	frame := udpFrame(mac(2), mac(1), 0, [4]byte{1, 1, 1, 1}, [4]byte{2, 2, 2, 2}, 1, 2)
	fx.devs[1].InjectStripped(0, frame, packet.VLANTag{TPID: packet.EtherTypeVLAN, TCI: 42})
	got := fx.devs[2].WaitSent(1, 5*time.Second)
	if len(got) != 1 || len(got[0].Data) != len(frame)+4 {
		t.Fatalf("sent %v", got)
	}
	if seen.VLANs[0].VID() != 42 || seen.InPort != 1 {
		t.Fatalf("upcall key %+v", seen)
	}
}

func TestSetPMDConfigWithoutPorts(t *testing.T) {
	fx := newFixture(t, Config{PMDs: 1}, 0)
	fx.dp.Put(FlowSpec{Mask: packet.Mask{InPort: ^uint32(0)}})
	if err := fx.dp.SetPMDConfig(PMDConfig{CPUMask: "zz"}); err == nil {
		t.Fatal("bad mask accepted")
	}
	if err := fx.dp.SetPMDConfig(PMDConfig{PMDs: 1, RxqAssign: "fastest"}); err == nil {
		t.Fatal("bad pmd-rxq-assign accepted")
	}
	if c := fx.dp.PMDConfig(); c.PMDs != 1 || c.RxqAssign != RxqAssignCycles || c.MaxSleep != time.Millisecond {
		t.Fatalf("config after refused changes: %+v", c)
	}
	if err := fx.dp.SetPMDConfig(PMDConfig{PMDs: 3, MaxSleep: 5 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if fx.dp.NumPMDs() != 3 || fx.dp.NumFlows() != 1 {
		t.Fatalf("%d PMDs, %d flows", fx.dp.NumPMDs(), fx.dp.NumFlows())
	}
	fx.dp.Flush()
	// The new PMDs forward.
	fx.addPort(netdevtest.Config{Name: "a", RxQueues: 3})
	fx.addPort(netdevtest.Config{Name: "b"})
	fx.dp.SetUpcallHandler(hubHandler(1, 2))
	for q := range 3 {
		fx.devs[1].Inject(q, udpFrame(mac(2), mac(1), 0, [4]byte{1, 1, 1, 1}, [4]byte{2, 2, 2, 2}, uint16(q), 2))
	}
	if got := fx.devs[2].WaitSent(3, 5*time.Second); len(got) != 3 {
		t.Fatalf("sent %d of 3", len(got))
	}
	// Each of the 3 PMDs polls one of a's queues (port b's queue makes a
	// PMD poll 2), so each forwards one packet.
	waitFor(t, "one packet per PMD", func() bool {
		for _, s := range fx.dp.PMDStats() {
			if s.Packets != 1 {
				return false
			}
		}
		return true
	})
}

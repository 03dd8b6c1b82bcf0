package dpif

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gvs/netdev/netdevtest"
	"gvs/packet"
)

// pollCounts returns, for every receive queue of every port, how many
// PMD plans list it, and checks each PMD has taken its plan.
func (fx *fixture) pollCounts() map[rxqID]int {
	fx.t.Helper()
	n := map[rxqID]int{}
	for _, p := range fx.dp.pmdList() {
		pl := p.plan.Load()
		if p.seen.Load() < pl.epoch {
			fx.t.Fatalf("PMD %d has not taken plan %d", p.id, pl.epoch)
		}
		for _, q := range pl.rxqs {
			n[rxqID{q.port.no, q.q}]++
		}
	}
	return n
}

// checkEachQueueOnce fails unless every receive queue is polled by
// exactly one PMD and Ports and PMDStats agree.
func (fx *fixture) checkEachQueueOnce() {
	fx.t.Helper()
	polls := fx.pollCounts()
	total := 0
	for _, pi := range fx.dp.Ports() {
		for q, pmd := range pi.RxQueuePMDs {
			total++
			if polls[rxqID{pi.No, q}] != 1 {
				fx.t.Errorf("port %s queue %d polled by %d PMDs", pi.Name, q, polls[rxqID{pi.No, q}])
			}
			if pmd < 0 || pmd >= fx.dp.NumPMDs() {
				fx.t.Errorf("port %s queue %d assigned to PMD %d of %d", pi.Name, q, pmd, fx.dp.NumPMDs())
			}
		}
	}
	listed := 0
	cpus := map[int]int{}
	for _, s := range fx.dp.PMDStats() {
		listed += s.RxQueues
		cpus[s.PMD] = s.CPU
	}
	// What pmd-rxq-show prints: each queue with its PMD and that PMD's CPU.
	for _, q := range fx.dp.RxQueueStats() {
		if cpu, ok := cpus[q.PMD]; !ok || cpu != q.CPU {
			fx.t.Errorf("pmd-rxq-show: port %s queue %d on PMD %d CPU %d; PMDs %v", q.Name, q.Queue, q.PMD, q.CPU, cpus)
		}
	}
	if listed != total {
		fx.t.Errorf("PMDs poll %d queues, ports have %d", listed, total)
	}
	for no, d := range fx.devs {
		if v := d.Violations(); v != 0 {
			fx.t.Errorf("port %d: %d overlapping Recv/Send calls", no, v)
		}
	}
}

// inPortFlow installs in_port=from -> output(to).
func (fx *fixture) inPortFlow(from, to uint32) {
	fx.t.Helper()
	err := fx.dp.Put(FlowSpec{Key: packet.Key{InPort: from}, Mask: packet.Mask{InPort: ^uint32(0)}, Actions: Actions{Output(to)}})
	if err != nil {
		fx.t.Fatal(err)
	}
}

func (fx *fixture) flowPackets(in uint32) uint64 {
	fx.t.Helper()
	e, ok := fx.dp.Get(packet.Key{InPort: in}, packet.Mask{InPort: ^uint32(0)})
	if !ok {
		fx.t.Fatalf("flow in_port=%d is gone", in)
	}
	return e.Stats.Packets
}

// TestSetPMDConfigLive changes the PMDs under traffic, with ports and
// flows in place: nothing is reopened, nothing lost, no queue is polled
// twice.
func TestSetPMDConfigLive(t *testing.T) {
	fx := newFixture(t, Config{PMDs: 2}, 0)
	a, da := fx.addPort(netdevtest.Config{Name: "a", RxQueues: 4, TxQueues: 2, Discard: true})
	b, db := fx.addPort(netdevtest.Config{Name: "b", RxQueues: 2, TxQueues: 8, Discard: true})
	c, dc := fx.addPort(netdevtest.Config{Name: "c"})
	fx.inPortFlow(a, b)
	fx.inPortFlow(b, a)
	// Port c has no flow and there is no handler: each frame from it is a
	// lost upcall in its port counters, which must survive.
	frame := udpFrame(mac(2), mac(1), 0, [4]byte{198, 18, 0, 1}, [4]byte{198, 18, 0, 2}, 1, 2)
	dc.Inject(0, frame)
	waitFor(t, "lost upcall on c", func() bool { s, _ := fx.dp.PortStats(c); return s.LostUpcalls == 1 })

	var sent atomic.Int64 // frames injected on a and b
	burst := func() {
		for q := range 4 {
			da.Inject(q, frame)
		}
		for q := range 2 {
			db.Inject(q, frame)
		}
		sent.Add(6)
	}
	delivered := func() int64 { return int64(da.Stats().TxPackets + db.Stats().TxPackets) }
	burst()
	waitFor(t, "first burst", func() bool { return delivered() == 6 })
	fx.checkEachQueueOnce()

	// Traffic keeps coming during every change below.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			burst()
			time.Sleep(200 * time.Microsecond)
		}
	})
	// So do the lock-free readers and the non-PMD context (for -race).
	var executed atomic.Int64
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			fx.dp.PortStats(c)
			fx.dp.Stats()
			fx.dp.Lookup(&packet.Key{InPort: a})
			fx.dp.Dump()
			if err := fx.dp.Execute(frame, c, Actions{Output(c)}); err != nil {
				t.Error(err)
				return
			}
			executed.Add(1)
			time.Sleep(500 * time.Microsecond)
		}
	})

	steps := []PMDConfig{
		{PMDs: 3, MaxSleep: 3 * time.Millisecond, RxqAssign: RxqAssignRoundRobin}, // grow
		{PMDs: 3, MaxSleep: 3 * time.Millisecond, RxqAssign: RxqAssignGroup},      // assignment only
		{PMDs: 1}, // shrink, defaults back
		{CPUMask: "0x1"},
	}
	if runtime.NumCPU() >= 2 {
		steps = append(steps, PMDConfig{CPUMask: "3"}, PMDConfig{CPUMask: "2"})
	}
	steps = append(steps, PMDConfig{PMDs: 4})
	for _, step := range steps {
		before := fx.flowPackets(a) + fx.flowPackets(b)
		old := fx.dp.pmdList()
		start := time.Now()
		if err := fx.dp.SetPMDConfig(step); err != nil {
			t.Fatalf("%+v: %v", step, err)
		}
		t.Logf("%+v: applied in %v", step, time.Since(start))
		got := fx.dp.PMDConfig()
		want, _ := parseCPUMask(step.CPUMask)
		if n := fx.dp.NumPMDs(); len(want) > 0 && n != len(want) || len(want) == 0 && n != step.PMDs {
			t.Fatalf("%+v: %d PMDs", step, n)
		}
		for i, s := range fx.dp.PMDStats() {
			if len(want) > 0 && s.CPU != want[i] || len(want) == 0 && s.CPU != -1 {
				t.Fatalf("%+v: PMD %d on CPU %d", step, i, s.CPU)
			}
		}
		if step.MaxSleep != 0 && got.MaxSleep != step.MaxSleep || time.Duration(fx.dp.maxSleep.Load()) != got.MaxSleep {
			t.Fatalf("%+v: max sleep %v (PMDs use %v)", step, got.MaxSleep, time.Duration(fx.dp.maxSleep.Load()))
		}
		if step.RxqAssign != "" && got.RxqAssign != step.RxqAssign {
			t.Fatalf("%+v: rxq assign %q", step, got.RxqAssign)
		}
		// A PMD is kept exactly when it keeps its index and CPU.
		for i, p := range fx.dp.pmdList() {
			if kept := i < len(old) && old[i] == p; kept != (i < len(old) && old[i].cpu == p.cpu) {
				t.Fatalf("%+v: PMD %d kept=%v", step, i, kept)
			}
		}
		fx.checkEachQueueOnce()
		if fx.dp.NumFlows() != 2 {
			t.Fatalf("%+v: %d flows", step, fx.dp.NumFlows())
		}
		if after := fx.flowPackets(a) + fx.flowPackets(b); after < before {
			t.Fatalf("%+v: flow packets went from %d to %d", step, before, after)
		}
		if s, _ := fx.dp.PortStats(c); s.LostUpcalls != 1 {
			t.Fatalf("%+v: port c lost upcalls %d, want 1", step, s.LostUpcalls)
		}
		// Frames flow through the new PMDs: every queue is served.
		target := delivered() + 6
		waitFor(t, "traffic after the change", func() bool { return delivered() >= target })
	}
	close(stop)
	wg.Wait()
	// Flows installed, no upcalls: nothing was dropped, only delayed.
	waitFor(t, "every frame delivered", func() bool { return delivered() == sent.Load() })
	if got := int64(dc.Stats().TxPackets); got != executed.Load() {
		t.Fatalf("port c sent %d of %d executed frames", got, executed.Load())
	}
	if drops := da.Stats().RxKernelDrops + db.Stats().RxKernelDrops; drops != 0 {
		t.Fatalf("%d frames found a full receive queue", drops)
	}
	if got := fx.flowPackets(a) + fx.flowPackets(b); got != uint64(sent.Load()) {
		t.Fatalf("flows counted %d packets, %d forwarded", got, sent.Load())
	}
	if st := fx.dp.Stats(); st.Hit != uint64(sent.Load()) || st.Lost != 1 {
		t.Fatalf("stats %+v, want %d hits and 1 lost (retired PMDs included)", st, sent.Load())
	}
	for _, pi := range fx.dp.Ports() {
		if pi.Name == "a" && !pi.SharedTx || pi.Name == "b" && pi.SharedTx {
			t.Fatalf("port %s: shared tx %v with %d PMDs", pi.Name, pi.SharedTx, fx.dp.NumPMDs())
		}
	}
	fx.checkEachQueueOnce()
}

// TestSetPMDConfigInvalidKeepsPMDs: a refused mask changes nothing.
func TestSetPMDConfigInvalidKeepsPMDs(t *testing.T) {
	fx := newFixture(t, Config{PMDs: 2}, 2)
	fx.inPortFlow(1, 2)
	old := fx.dp.pmdList()
	for _, bad := range []PMDConfig{{CPUMask: "0xzz"}, {PMDs: 1, RxqAssign: "fastest"}} {
		if err := fx.dp.SetPMDConfig(bad); err == nil {
			t.Fatalf("%+v accepted", bad)
		}
	}
	if now := fx.dp.pmdList(); len(now) != 2 || now[0] != old[0] || now[1] != old[1] {
		t.Fatal("PMDs replaced by a refused configuration")
	}
	fx.devs[1].Inject(0, udpFrame(mac(2), mac(1), 0, [4]byte{198, 18, 0, 1}, [4]byte{198, 18, 0, 2}, 1, 2))
	if got := fx.devs[2].WaitSent(1, 5*time.Second); len(got) != 1 {
		t.Fatalf("sent %d after refused change", len(got))
	}
	fx.checkEachQueueOnce()
}

// blockingSlow sends every miss to the slow path, where SlowUpcall
// blocks until release is closed.
type blockingSlow struct {
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (h *blockingSlow) Upcall(*Upcall) UpcallResult { return UpcallSlow }
func (h *blockingSlow) SlowUpcall(*Upcall) UpcallResult {
	h.once.Do(func() { close(h.entered) })
	<-h.release
	return UpcallDrop
}

// TestSetPMDConfigCountsDroppedSlowUpcalls: packets waiting in a retired
// PMD's slow queue are dropped and counted, on the port and in Stats.
func TestSetPMDConfigCountsDroppedSlowUpcalls(t *testing.T) {
	fx := newFixture(t, Config{PMDs: 2}, 0)
	// One port, two queues: queue 1 belongs to PMD 1, which goes.
	no, d := fx.addPort(netdevtest.Config{Name: "a", RxQueues: 2})
	if pmds := fx.dp.Ports()[0].RxQueuePMDs; pmds[1] != 1 {
		t.Fatalf("queue 1 on PMD %d", pmds[1])
	}
	h := &blockingSlow{entered: make(chan struct{}), release: make(chan struct{})}
	fx.dp.SetUpcallHandler(h)
	for i := range 4 {
		d.Inject(1, udpFrame(mac(2), mac(1), 0, [4]byte{198, 18, 0, 1}, [4]byte{198, 18, 0, 2}, uint16(i), 2))
	}
	<-h.entered // one packet in the handler, three queued behind it
	waitFor(t, "4 upcalls", func() bool { return fx.totals().Upcalls == 4 })
	done := make(chan error, 1)
	go func() { done <- fx.dp.SetPMDConfig(PMDConfig{PMDs: 1}) }()
	time.Sleep(20 * time.Millisecond) // SetPMDConfig waits for the handler
	close(h.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	s, _ := fx.dp.PortStats(no)
	if s.LostUpcalls != 3 || fx.dp.RetiredPMDStats().LostUpcalls != 3 || fx.dp.Stats().Lost != 3 {
		t.Fatalf("lost upcalls: port %d, retired %d, stats %d; want 3", s.LostUpcalls,
			fx.dp.RetiredPMDStats().LostUpcalls, fx.dp.Stats().Lost)
	}
	if r := fx.dp.RetiredPMDStats(); r.Upcalls != 4 || r.Packets != 4 {
		t.Fatalf("retired PMD counters %+v", r)
	}
	fx.checkEachQueueOnce()
}

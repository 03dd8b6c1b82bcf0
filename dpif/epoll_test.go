package dpif

import (
	"fmt"
	"testing"
	"time"

	"gvs/netdev"
	"gvs/netdev/netdevtest"
)

// idleFixture is a datapath with one PMD and n idle ports, forwarding
// port 1 to port 2 and back; the others send nothing. Unless cfg says
// otherwise, the PMD never sweeps all its queues (sweepInterval) during
// a test.
func idleFixture(t *testing.T, cfg Config, n int) *fixture {
	cfg.PMDs = 1
	if cfg.SpinTime == 0 {
		// Sleep after the first empty pass: the tests count the passes
		// a wake-up costs, and a 2 µs spin is several passes over fake
		// queues when the machine is fast (not under -race).
		cfg.SpinTime = time.Nanosecond
	}
	if cfg.sweep == 0 {
		cfg.sweep = time.Hour
	}
	fx := newFixture(t, cfg, 0)
	for i := range n {
		fx.addPort(netdevtest.Config{Name: fmt.Sprintf("idle%d", i), Discard: true})
	}
	fx.dp.SetUpcallHandler(hubHandler(1, 2))
	return fx
}

// recvCalls returns every port's Recv count by port number.
func (fx *fixture) recvCalls() map[uint32]uint64 {
	m := map[uint32]uint64{}
	for no, d := range fx.devs {
		m[no] = d.RecvCalls()
	}
	return m
}

// TestSleepingPMDPollsOnlyTheReadyQueue: a PMD with many idle queues,
// asleep, is woken by a frame on one of them and polls that queue only
// (the frame, then once more to find it empty); with few queues, the
// others at most twice. Its timer wake-ups (IdleWakeup) poll nothing.
func TestSleepingPMDPollsOnlyTheReadyQueue(t *testing.T) {
	for _, n := range []int{8, 3 * directPollMax} { // polled one by one while busy, and through epoll
		t.Run(fmt.Sprint(n, " ports"), func(t *testing.T) {
			fx := idleFixture(t, Config{}, n)
			frame := udpFrame(mac(2), mac(1), 0, [4]byte{198, 18, 0, 1}, [4]byte{198, 18, 0, 2}, 1, 2)
			time.Sleep(20 * time.Millisecond) // the PMD polled the new plan once and fell asleep

			before := fx.recvCalls()
			time.Sleep(IdleWakeup*3 + IdleWakeup/2)
			for no, c := range fx.recvCalls() {
				if c != before[no] {
					t.Errorf("idle for %v: port %d polled %d times", IdleWakeup*3, no, c-before[no])
				}
			}

			for round := range 3 {
				before = fx.recvCalls()
				if err := fx.devs[1].Inject(0, frame); err != nil {
					t.Fatal(err)
				}
				waitFor(t, "the frame forwarded", func() bool { return fx.devs[2].Stats().TxPackets == uint64(round+1) })
				time.Sleep(10 * time.Millisecond) // asleep again
				after := fx.recvCalls()
				if got := after[1] - before[1]; got < 1 || got > 2 {
					t.Errorf("round %d: the ready queue was polled %d times, want 1 or 2", round, got)
				}
				// With few queues a busy PMD reads them all (directPollMax):
				// once or twice after the woken iteration, before it sleeps.
				most := uint64(0)
				if n <= directPollMax {
					most = 2
				}
				for no := range after {
					if no != 1 && after[no]-before[no] > most {
						t.Errorf("round %d: idle port %d polled %d times after a frame on port 1", round, no, after[no]-before[no])
					}
				}
			}
		})
	}
}

// TestBusyPMDWithManyQueuesPollsReadyOnes: while one queue keeps a PMD
// with more than directPollMax queues busy, the idle queues are not
// polled at all, and a frame arriving on one of them is served within
// two iterations.
func TestBusyPMDWithManyQueuesPollsReadyOnes(t *testing.T) {
	fx := newFixture(t, Config{manual: true, PMDs: 1}, 0)
	for i := range 2 * directPollMax {
		fx.addPort(netdevtest.Config{Name: fmt.Sprintf("q%d", i), Discard: true})
	}
	fx.devs[1].Loop(0, flowFrames(1))
	fx.dp.SetUpcallHandler(hubHandler(1, 2))
	p := fx.dp.pmdList()[0]
	plan := p.takePlan(nil)
	p.poll(plan) // the first pass on a plan polls every queue
	if !p.ready.sparse {
		t.Fatal("a PMD with many queues does not switch to the queues epoll reports")
	}
	before := fx.recvCalls()
	const iters = 100
	for range iters {
		if p.poll(plan) == 0 {
			t.Fatal("the busy queue delivered nothing")
		}
	}
	after := fx.recvCalls()
	if got := after[1] - before[1]; got != iters {
		t.Errorf("busy queue polled %d times in %d iterations", got, iters)
	}
	for no := range after {
		if no != 1 && after[no] != before[no] {
			t.Errorf("idle port %d polled %d times while another kept the PMD busy", no, after[no]-before[no])
		}
	}

	late := fx.devs[40]
	if err := late.Inject(0, flowFrames(1)[0]); err != nil {
		t.Fatal(err)
	}
	p.poll(plan)
	p.poll(plan)
	if late.Pending(0) != 0 {
		t.Fatal("a frame on an idle queue waits while another queue keeps the PMD busy")
	}
}

// TestReadyQueuePollingAllocatesNothing: polling through epoll (asking
// which queues are ready, polling those) allocates nothing, busy or
// asleep.
func TestReadyQueuePollingAllocatesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("alloc counts are meaningful in full runs only")
	}
	fx := newFixture(t, Config{manual: true, PMDs: 1}, 0)
	for i := range 2 * directPollMax {
		fx.addPort(netdevtest.Config{Name: fmt.Sprintf("q%d", i), Discard: true})
	}
	fx.devs[1].Loop(0, flowFrames(4))
	fx.dp.SetUpcallHandler(hubHandler(1, 2))
	p := fx.dp.pmdList()[0]
	plan := p.takePlan(nil)
	for range 4 {
		p.poll(plan) // install flows
	}
	if n := testing.AllocsPerRun(200, func() { p.poll(plan) }); n != 0 {
		t.Errorf("%v allocations per busy iteration", n)
	}
	fx.devs[1].Loop(0, nil)
	for p.poll(plan) != 0 {
	}
	// A queue that stays ready wakes every sleep at once; the PMD's own
	// wake-up eventfd does too.
	fx.devs[3].Loop(0, flowFrames(1))
	if n := testing.AllocsPerRun(50, func() {
		p.sleep(time.Second)
		if p.poll(plan) == 0 {
			t.Fatal("the queue that woke the PMD was not polled")
		}
	}); n != 0 {
		t.Errorf("%v allocations per wake-up by a queue", n)
	}
	fx.devs[3].Loop(0, nil)
	for p.poll(plan) != 0 {
	}
	if n := testing.AllocsPerRun(50, func() {
		p.wake()
		p.sleep(time.Second)
		p.poll(plan)
	}); n != 0 {
		t.Errorf("%v allocations per wake-up through the eventfd", n)
	}
}

// TestReusedDescriptorIsRegisteredAgain: a device closed while the PMD
// still had it in its epoll set (the kernel drops the registration) and
// a new device given the same descriptor number: the PMD registers the
// new one, and a frame on it wakes the PMD.
func TestReusedDescriptorIsRegisteredAgain(t *testing.T) {
	fx := newFixture(t, Config{manual: true, PMDs: 1}, 0)
	oldNo, old := fx.addPort(netdevtest.Config{Name: "old", Discard: true})
	p := fx.dp.pmdList()[0]
	p.takePlan(nil)
	fd := old.PollFD(0)
	// Manual PMDs do not take plans by themselves: PortDel closes the
	// device while the PMD's set still holds its descriptor.
	if err := fx.dp.PortDel(oldNo); err != nil {
		t.Fatal(err)
	}
	_, dev := fx.addPort(netdevtest.Config{Name: "new", Discard: true})
	if dev.PollFD(0) != fd {
		t.Skipf("the new device got descriptor %d, not %d again", dev.PollFD(0), fd)
	}
	plan := p.takePlan(nil)
	p.sleeper.wait(0) // consumes the wake-ups PortAdd sent
	if err := dev.Inject(0, flowFrames(1)[0]); err != nil {
		t.Fatal(err)
	}
	if slept := p.sleep(time.Second); slept > IdleWakeup {
		t.Fatalf("a frame on the new device did not wake the PMD (slept %v)", slept)
	}
	p.poll(plan)
	if dev.Pending(0) != 0 {
		t.Fatal("the new device's queue was not polled after the wake-up")
	}
}

// TestQueuesThatFlushTxArePolledOnEveryWakeup: a queue whose Recv also
// pushes out transmits a Send left behind (AF_XDP) is polled on every
// wake-up of a PMD with many idle queues, timer wake-ups included, while
// the other idle queues are not; it still wakes the PMD when a frame
// arrives.
func TestQueuesThatFlushTxArePolledOnEveryWakeup(t *testing.T) {
	fx := idleFixture(t, Config{}, 2*directPollMax)
	no, flusher := fx.addPort(netdevtest.Config{Name: "xsk", Discard: true, Caps: netdev.Capabilities{RecvFlushesTx: true}})
	time.Sleep(20 * time.Millisecond)
	before := fx.recvCalls()
	time.Sleep(IdleWakeup*3 + IdleWakeup/2)
	after := fx.recvCalls()
	if got := after[no] - before[no]; got < 3 {
		t.Errorf("queue that flushes transmits polled %d times in %v asleep, want at least 3", got, IdleWakeup*3)
	}
	for n := range after {
		if n != no && after[n] != before[n] {
			t.Errorf("idle port %d polled %d times", n, after[n]-before[n])
		}
	}
	start := time.Now()
	if err := flusher.Inject(0, flowFrames(1)[0]); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the frame received", func() bool { return flusher.Pending(0) == 0 })
	if d := time.Since(start); d > IdleWakeup/2 {
		t.Errorf("a frame on the queue waited %v: it does not wake the PMD", d)
	}
}

// TestIdleQueuesAreSweptNowAndThen: a PMD that polls only the queues
// epoll reports still polls every queue once per sweep interval, asleep,
// so a device's housekeeping in Recv (a ring resize waiting for the ring
// to drain) does not wait for a packet.
func TestIdleQueuesAreSweptNowAndThen(t *testing.T) {
	const sweep = 150 * time.Millisecond
	fx := idleFixture(t, Config{sweep: sweep}, 2*directPollMax)
	time.Sleep(20 * time.Millisecond)
	before := fx.recvCalls()
	time.Sleep(4*sweep + sweep/2)
	for no, c := range fx.recvCalls() {
		// A sweep runs on the first wake-up (IdleWakeup) after each
		// interval: at least every 250 ms here.
		if got := c - before[no]; got < 2 || got > 5 {
			t.Errorf("idle port %d polled %d times in %v with a %v sweep", no, got, 4*sweep+sweep/2, sweep)
		}
	}
}

// TestRenewedDescriptorStillWakesThePMD: a device that puts a new socket
// under a queue's PollFD inside Recv (an afpacket ring resize) is
// registered again before the PMD sleeps, so a frame after the renewal
// still wakes it at once (with the sweep off, nothing else would poll
// the queue again).
func TestRenewedDescriptorStillWakesThePMD(t *testing.T) {
	fx := idleFixture(t, Config{}, 3*directPollMax)
	frame := udpFrame(mac(2), mac(1), 0, [4]byte{198, 18, 0, 1}, [4]byte{198, 18, 0, 2}, 1, 2)
	time.Sleep(20 * time.Millisecond) // asleep
	var _ netdev.PollFDRenewer = fx.devs[1]
	for round := range 3 {
		fx.devs[1].RenewPollFDOnNextRecv(0)
		if err := fx.devs[1].Inject(0, frame); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the frame that renewed the descriptor forwarded", func() bool { return fx.devs[2].Stats().TxPackets == uint64(2*round+1) })
		if got := fx.devs[1].PollFDGeneration(0); got != uint64(round+1) {
			t.Fatalf("round %d: generation %d", round, got)
		}
		time.Sleep(10 * time.Millisecond) // asleep again
		if err := fx.devs[1].Inject(0, frame); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(IdleWakeup / 2)
		for fx.devs[2].Stats().TxPackets != uint64(2*round+2) {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: a frame after the renewal was not forwarded within %v", round, IdleWakeup/2)
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// TestIdleQueuesGetHousekeeping: a device with upkeep on its queues
// (netdev.Housekeeper: afpacket's ring sizing) has Housekeep called on
// idle queues at each sweep, not at timer wake-ups in between.
func TestIdleQueuesGetHousekeeping(t *testing.T) {
	for _, n := range []int{4, 3 * directPollMax} {
		t.Run(fmt.Sprint(n, " ports"), func(t *testing.T) {
			fx := idleFixture(t, Config{sweep: 3 * IdleWakeup}, n)
			var _ netdev.Housekeeper = fx.devs[1]
			time.Sleep(20 * time.Millisecond)
			before := map[uint32]uint64{}
			for no, d := range fx.devs {
				before[no] = d.HousekeepCalls()
			}
			time.Sleep(10 * IdleWakeup)
			for no, d := range fx.devs {
				// About three sweeps in ten wake-ups.
				if got := d.HousekeepCalls() - before[no]; got < 2 || got > 5 {
					t.Errorf("port %d: %d housekeeping calls in %v with a sweep every %v", no, got, 10*IdleWakeup, 3*IdleWakeup)
				}
			}
		})
	}
}

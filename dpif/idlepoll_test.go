package dpif

import (
	"testing"

	"gvs/netdev"
	"gvs/netdev/netdevtest"
)

// TestSlowQueueBackoff: a busy PMD polls an empty queue whose Recv is a
// system call less and less often (at most every 32nd iteration), keeps
// polling ring-like queues every time, and serves the slow queue's first
// packet within 32 iterations.
func TestSlowQueueBackoff(t *testing.T) {
	fx := newFixture(t, Config{manual: true, PMDs: 1}, 0)
	busyNo, busy := fx.addPort(netdevtest.Config{Name: "busy", Discard: true})
	ringNo, ring := fx.addPort(netdevtest.Config{Name: "ring", Discard: true})
	_, tap := fx.addPort(netdevtest.Config{Name: "tap", Discard: true, Caps: netdev.Capabilities{RecvSyscall: true}})
	busy.Loop(0, flowFrames(1)) // keeps the PMD busy, as traffic would
	fx.dp.SetUpcallHandler(hubHandler(busyNo, ringNo))
	p := fx.dp.pmdList()[0]
	plan := p.takePlan(nil)

	const iters = 320
	ring0, tap0 := ring.RecvCalls(), tap.RecvCalls()
	for range iters {
		p.pollOnce(plan)
	}
	if got := ring.RecvCalls() - ring0; got != iters {
		t.Errorf("ring queue polled %d times in %d iterations, want every time", got, iters)
	}
	// 1+2+4+8+16 iterations to reach the longest skip, then one poll per 32.
	if got := tap.RecvCalls() - tap0; got < iters/32 || got > iters/32+6 {
		t.Errorf("slow queue polled %d times in %d busy iterations, want about %d", got, iters, iters/32)
	}

	// A frame on the slow queue is served within the longest skip.
	if err := tap.Inject(0, flowFrames(1)[0]); err != nil {
		t.Fatal(err)
	}
	served := -1
	for i := range 1 << maxIdleShift {
		p.pollOnce(plan)
		if tap.Pending(0) == 0 {
			served = i
			break
		}
	}
	if served < 0 {
		t.Fatalf("frame on the slow queue still waiting after %d iterations", 1<<maxIdleShift)
	}
	// Once it delivered, the back-off starts again from the shortest
	// skip: polled on the next iteration, then every other one.
	tap1 := tap.RecvCalls()
	p.pollOnce(plan)
	p.pollOnce(plan)
	p.pollOnce(plan)
	if got := tap.RecvCalls() - tap1; got != 2 {
		t.Errorf("slow queue polled %d times in the 3 iterations after a packet, want 2", got)
	}
}

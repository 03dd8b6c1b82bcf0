package connmgr

import (
	"strconv"
	"testing"
	"time"

	"gvs/ofproto/ofp"
)

func TestPinschedTokenBucket(t *testing.T) {
	now := time.Unix(1000, 0)
	ps := newPinsched(100, 0, now) // burst 25
	if ps.burst != 25 {
		t.Fatalf("burst %d, want 25 (a quarter of the rate)", ps.burst)
	}
	sent := 0
	for i := range 100 {
		if ps.send(uint32(i%2), []byte{byte(i)}, now) {
			sent++
		}
	}
	// The burst goes at once; 25 wait; the other 50 were dropped, each
	// time from the longer queue.
	if sent != 25 || ps.queued != 25 || ps.dropped != 50 || ps.normal != 25 || ps.limited != 75 {
		t.Fatalf("sent %d queued %d dropped %d normal %d limited %d", sent, ps.queued, ps.dropped, ps.normal, ps.limited)
	}
	if d := len(ps.queues[0]) - len(ps.queues[1]); d < -1 || d > 1 {
		t.Errorf("queues %d and %d: the longer one should have lost", len(ps.queues[0]), len(ps.queues[1]))
	}
	// 100 ms later there are tokens for 10, served round robin.
	out := ps.run(now.Add(100 * time.Millisecond))
	if len(out) != 10 {
		t.Fatalf("ran %d after 100 ms, want 10", len(out))
	}
	for i := 1; i < len(out); i++ {
		if out[i][0]%2 == out[i-1][0]%2 {
			t.Fatalf("not round robin: %v", out)
		}
	}
	if len(ps.run(now.Add(100*time.Millisecond))) != 0 {
		t.Error("tokens spent twice")
	}
	if got := ps.drain(); len(got) != 15 || ps.queued != 0 {
		t.Errorf("drained %d, %d left", len(got), ps.queued)
	}
}

func TestControllerRateLimit(t *testing.T) {
	m := newTestManager(t, newFakeBridge())
	tc := newTestController(t)
	m.SetControllers(map[string]ControllerConfig{tc.target(): {Type: Primary, RateLimit: 100, BurstLimit: 25}})
	nc, v := tc.accept(1 << OF13)
	rc := &rawConn{t: t, nc: nc, version: v}
	rc.barrier()
	start := time.Now()
	for range 200 {
		m.PacketIn(&ofp.PacketIn{Packet: make([]byte, 60), Reason: ReasonNoMatch})
	}
	n := 0
	for n < 50 {
		if _, msg, _ := rc.recv(); msg != nil {
			if _, ok := msg.(*ofp.PacketIn); ok {
				n++
			}
		}
	}
	// 25 at once, 25 more at 100 a second.
	if d := time.Since(start); d < 150*time.Millisecond || d > 6*time.Second {
		t.Errorf("50 packet-ins took %v, want about 250 ms", d)
	}
	if got := rc.barrier(); len(got) != 0 {
		t.Errorf("more than burst+queue delivered: %d more", len(got))
	}
	st := m.ControllerInfo()[tc.target()].Status
	if st["packet-in-miss-bypassed"] != "25" || st["packet-in-miss-queued"] != "175" || st["packet-in-miss-backlog"] != "0" {
		t.Errorf("status %v", st)
	}
	if d, _ := strconv.Atoi(st["packet-in-miss-dropped"]); d != 150 {
		t.Errorf("dropped %d, want 150", d)
	}
	if _, ok := st["packet-in-action-bypassed"]; !ok {
		t.Errorf("no action scheduler status: %v", st)
	}
}

package ofproto

import (
	"sync"
	"testing"
	"time"

	"gvs/dpif"
)

// fakeClock is a bridge clock tests move by hand (the aging goroutine
// may read it concurrently).
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

// TestFloodKeepsOtherPortsUnicast: the datapath acceptance failure end
// to end. Hosts B (port 2) and D (port 3) are learned, then port 1 sends
// from 200 new source addresses to B through an 8-entry table. B and D
// stay learned, so every frame to B leaves on port 2 only and D's
// traffic to B is never flooded; only port 1's own entries are evicted.
// Then aging still expires what is idle, and only that.
func TestFloodKeepsOtherPortsUnicast(t *testing.T) {
	const size, flood = 8, 200
	clock := &fakeClock{now: time.Now()}
	fx := newFixture(t, dpif.Config{}, BridgeConfig{MACTableSize: size, Now: clock.Now, AgingInterval: time.Hour},
		PortConfig{}, PortConfig{}, PortConfig{})
	B, D := mac(0xb), mac(0xd)
	fx.send(2, frame(broadcast, B, 0, false))
	fx.send(3, frame(broadcast, D, 0, false))
	for i := range flood {
		clock.advance(time.Millisecond)
		fx.expect("flood to B", fx.send(1, frame(B, srcMAC(i), 0, false)), map[uint32]uint16{2: 0})
	}
	fx.expect("D to B", fx.send(3, frame(B, D, 0, false)), map[uint32]uint16{2: 0})
	fx.expect("B to D", fx.send(2, frame(D, B, 0, false)), map[uint32]uint16{3: 0})
	s := fx.br.MACStats()
	if s.Entries != size || s.Evicted != flood-(size-2) || s.Learned != flood+2 {
		t.Fatalf("stats %+v", s)
	}
	perPort := map[uint32]int{}
	for _, e := range fx.br.MACs() {
		perPort[e.Port]++
	}
	if perPort[1] != size-2 || perPort[2] != 1 || perPort[3] != 1 {
		t.Fatalf("per port %v", perPort)
	}

	// B talks again later (to a new destination: an upcall, so a
	// refresh); everything else idles past the aging time.
	clock.advance(DefaultMACAgingTime / 2)
	fx.send(2, frame(mac(0xe), B, 0, false))
	now := clock.advance(DefaultMACAgingTime/2 + time.Second)
	if n := fx.br.RunAging(now); n != size-1 {
		t.Fatalf("expired %d, want %d", n, size-1)
	}
	if macs := fx.br.MACs(); len(macs) != 1 || [6]byte(macs[0].MAC) != B || macs[0].Port != 2 {
		t.Fatalf("after aging %+v", macs)
	}
	fx.br.mu.Lock()
	checkTable(t, fx.br.macs)
	if len(fx.br.macs.ports) != 1 {
		t.Fatalf("empty ports kept: %d", len(fx.br.macs.ports))
	}
	fx.br.mu.Unlock()
	// D expired: traffic to it floods again.
	fx.expect("D forgotten", fx.send(2, frame(D, B, 0, false)), map[uint32]uint16{1: 0, 3: 0})
}

// TestShrinkEvictsFairly: lowering mac-table-size evicts from the
// fullest port first.
func TestShrinkEvictsFairly(t *testing.T) {
	fx := newFixture(t, dpif.Config{}, BridgeConfig{MACTableSize: 16}, PortConfig{}, PortConfig{})
	fx.send(2, frame(broadcast, mac(0xb), 0, false))
	for i := range 10 {
		fx.send(1, frame(broadcast, srcMAC(i), 0, false))
	}
	fx.br.SetConfig(BridgeConfig{MACTableSize: 4})
	s := fx.br.MACStats()
	if s.Entries != 4 || s.Evicted != 7 {
		t.Fatalf("stats %+v", s)
	}
	if no, ok := func() (uint32, bool) {
		fx.br.mu.Lock()
		defer fx.br.mu.Unlock()
		return fx.br.macs.lookup(0, mac(0xb))
	}(); !ok || no != 2 {
		t.Fatal("port 2's host evicted by the shrink")
	}
}

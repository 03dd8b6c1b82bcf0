package afxdp

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"gvs/packet"
)

// TestSharedCloseMemberWhileForwarding closes two members of a group (a
// veth pair passing frames) while two others forward TCP: the forwarding
// goes on without a stall, the closed members' chunks go back to the
// free list, and members that join again afterwards work.
func TestSharedCloseMemberWhileForwarding(t *testing.T) {
	tp := newFwdTopo(t)
	g := newGroupT(t, GroupConfig{})
	cfg := Config{XDPMode: ModeNative, UMEM: g}
	a, b := openPair(t, tp, cfg)
	f := startForwarder(t, a, b)
	p0, p1 := tp.e.IfName("p0"), tp.e.IfName("p1")
	tp.e.VethQueues(p0, "", p1, "", 1)
	open := func() (*Device, *Device) {
		x, err := Open(Config{Name: p0, XDPMode: ModeNative, UMEM: g})
		if err != nil {
			t.Fatal(err)
		}
		y, err := Open(Config{Name: p1, XDPMode: ModeNative, UMEM: g})
		if err != nil {
			x.Close()
			t.Fatal(err)
		}
		return x, y
	}
	x, y := open()
	pool := newTestPool(t)
	frame := buildFrame(frameSpec{payload: 500})
	type result struct {
		gbps  float64
		zeros int
		err   error
	}
	done := make(chan result, 1)
	go func() {
		r, err := tp.e.IperfTCP(tp.nsB, tp.nsA, tp.addrB, 3*time.Second, stallProbe...)
		done <- result{r.Gbps, r.ZeroIntervals, err}
	}()
	time.Sleep(time.Second)
	// Frames between x and y, some left unread in y's rx ring, then both
	// closed while a and b forward.
	sendFrames(t, x, 0, pool, frame, frame, frame, frame)
	if got := recvFrames(t, y, 0, pool, 2); len(got) < 2 {
		t.Fatalf("y received %d frames", len(got))
	}
	sendFrames(t, x, 0, pool, frame, frame)
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if err := y.Close(); err != nil {
		t.Fatal(err)
	}
	if gs := g.Stats(); gs.Members != 2 || gs.Reserved != 4*DefaultRingSize {
		t.Errorf("after closing two members: %+v", gs)
	}
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Logf("TCP %.2f Gbit/s across the close", r.gbps)
	if r.zeros > 0 {
		t.Errorf("TCP stalled for %d intervals across the close", r.zeros)
	}
	// Join again and pass frames, while a and b still forward.
	x, y = open()
	defer x.Close()
	defer y.Close()
	sendFrames(t, x, 0, pool, frame, frame, frame)
	if got := recvFrames(t, y, 0, pool, 3); len(got) != 3 || !bytes.Equal(got[2], frame) {
		t.Fatalf("after rejoining, y received %d frames", len(got))
	}
	if _, err := ping(tp.nsA, tp.addrB, 3, 56); err != nil {
		t.Fatal(err)
	}
	f.Stop()
	gs := g.Stats()
	t.Logf("group %+v", gs)
	if gs.Lost != 0 {
		t.Errorf("%d chunks lost when members closed", gs.Lost)
	}
}

// TestCloseWithLoansOut closes devices (and the group) while buffers
// still hold received frames in place: the frames stay readable, the
// memory is unmapped only when the last buffer goes back to its pool,
// and a group member's close leaves the other members working.
func TestCloseWithLoansOut(t *testing.T) {
	for _, shared := range []bool{false, true} {
		t.Run(fmt.Sprintf("shared=%v", shared), func(t *testing.T) {
			cfg := Config{XDPMode: ModeNative}
			var g *UMEMGroup
			if shared {
				g = newGroupT(t, GroupConfig{})
				cfg.UMEM = g
			}
			_, a, b := loopPair(t, cfg, 1)
			pool := newTestPool(t)
			frame := buildFrame(frameSpec{payload: 700})
			sendFrames(t, a, 0, pool, frame, frame, frame)
			var held packet.Batch
			fds := time.Now().Add(time.Second)
			for held.Len() < 3 && time.Now().Before(fds) {
				b.Recv(0, &held, pool)
			}
			if held.Len() != 3 || !held.At(0).Borrowed() {
				t.Fatalf("received %d frames (lent %v)", held.Len(), held.Len() > 0 && held.At(0).Borrowed())
			}
			grp := b.group
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			if shared {
				g.Close()
				// a is still a member: it sends and receives.
				sendFrames(t, a, 0, pool, frame)
			}
			for _, buf := range held.Buffers() {
				if !bytes.Equal(buf.Data(), frame) {
					t.Fatal("a lent frame changed after Close")
				}
			}
			grp.mu.Lock()
			mapped, orphans := grp.mem != nil, grp.orphans
			grp.mu.Unlock()
			if !mapped || orphans != 3 {
				t.Fatalf("with 3 loans out: mapped %v, orphans %d", mapped, orphans)
			}
			pool.PutBatch(&held)
			if shared {
				a.Close() // the last member
			}
			grp.mu.Lock()
			mapped, orphans = grp.mem != nil, grp.orphans
			grp.mu.Unlock()
			if mapped || orphans != 0 {
				t.Fatalf("after the last loan came back: mapped %v, orphans %d", mapped, orphans)
			}
		})
	}
}

// TestSharedRegisteringMemberCloses closes the socket that registered
// the UMEM: the kernel keeps the UMEM for the other members, which go on
// passing frames in place, and a new member binds to one of them.
func TestSharedRegisteringMemberCloses(t *testing.T) {
	g := newGroupT(t, GroupConfig{})
	cfg := Config{XDPMode: ModeNative, UMEM: g}
	d := fourPorts(t, cfg)
	pool := newTestPool(t)
	frame := buildFrame(frameSpec{payload: 300})
	name0 := d[0].Name()
	if err := d[0].Close(); err != nil {
		t.Fatal(err)
	}
	sendFrames(t, d[2], 0, pool, frame, frame)
	if got := recvFrames(t, d[3], 0, pool, 2); len(got) != 2 || !bytes.Equal(got[1], frame) {
		t.Fatalf("after the registering member closed: %d frames", len(got))
	}
	// p1 -> p2 in place, with the first member gone.
	sendFrames(t, d[3], 0, pool, frame)
	var batch packet.Batch
	for end := time.Now().Add(time.Second); batch.Len() == 0 && time.Now().Before(end); {
		d[2].Recv(0, &batch, pool)
	}
	if batch.Len() != 1 {
		t.Fatal("p2 received nothing")
	}
	if err := d[1].Send(0, &batch); err != nil {
		t.Fatal(err)
	}
	if c := d[1].CustomStats(); c["tx_zero_copy"] != 1 {
		t.Errorf("p1 sent %d frames in place, want 1", c["tx_zero_copy"])
	}
	again := openT(t, name0, Config{Name: name0, XDPMode: ModeNative, UMEM: g})
	if again.Status()["shared-umem"] != "true" {
		t.Fatalf("rejoined member: %v", again.Status())
	}
	sendFrames(t, again, 0, pool, frame)
	if got := recvFrames(t, d[1], 0, pool, 1); len(got) != 1 || !bytes.Equal(got[0], frame) {
		t.Fatal("the rejoined member's frame did not arrive")
	}
}

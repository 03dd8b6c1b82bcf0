package afxdp

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"

	"gvs/packet"
)

// newGroupT returns a group closed in cleanup (after the devices opened
// later in the test, cleanups running last-in first-out).
func newGroupT(t testing.TB, cfg GroupConfig) *UMEMGroup {
	t.Helper()
	g, err := NewUMEMGroup(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// TestSharedForward bridges two veths whose afxdp ports share one UMEM:
// ping and TCP get through, and frames cross from one port to the other
// as descriptors (tx_zero_copy), not copies.
func TestSharedForward(t *testing.T) {
	for _, mode := range []XDPMode{ModeGeneric, ModeNative} {
		t.Run(string(mode), func(t *testing.T) {
			tp := newFwdTopo(t)
			g := newGroupT(t, GroupConfig{})
			a, b := openPair(t, tp, Config{XDPMode: mode, UMEM: g})
			for _, d := range []*Device{a, b} {
				if st := d.Status(); st["shared-umem"] != "true" {
					t.Fatalf("%s: status %v", d.Name(), st)
				}
			}
			if gs := g.Stats(); gs.Members != 2 || gs.Reserved != 4*DefaultRingSize {
				t.Fatalf("group %+v, want 2 members reserving %d chunks", gs, 4*DefaultRingSize)
			}
			f := startForwarder(t, a, b)
			if _, err := ping(tp.nsA, tp.addrB, 5, 56); err != nil {
				t.Fatal(err)
			}
			r, err := tp.e.IperfTCP(tp.nsB, tp.nsA, tp.addrB, 3*time.Second, stallProbe...)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("TCP %.2f Gbit/s, %d retransmits, intervals %.2f", r.Gbps, r.Retransmits, r.Intervals)
			if r.Gbps < 0.05 || r.ZeroIntervals > 0 {
				t.Errorf("TCP stalled: %.3f Gbit/s, %d zero intervals", r.Gbps, r.ZeroIntervals)
			}
			if f.RecvErrors.Load() != 0 || f.SendErrors.Load() != 0 {
				t.Errorf("forwarder errors: recv %d send %d", f.RecvErrors.Load(), f.SendErrors.Load())
			}
			f.Stop()
			ca, cb := a.CustomStats(), b.CustomStats()
			t.Logf("a %v", ca)
			t.Logf("b %v", cb)
			t.Logf("group %+v", g.Stats())
			// A->B data: received (lent) on a, sent on b.
			if cb["tx_zero_copy"] == 0 || ca["rx_lent"] == 0 {
				t.Errorf("no frame moved without a copy: b tx_zero_copy %d, a rx_lent %d", cb["tx_zero_copy"], ca["rx_lent"])
			}
			// Native veth XDP sees MTU-sized frames only: every one is
			// lent and sent in place. Generic XDP sees TSO super-frames,
			// which Recv cuts into free chunks: sent in place too.
			if cb["tx_copied"]*100 > cb["tx_zero_copy"] || ca["tx_copied"]*100 > ca["tx_zero_copy"] {
				t.Errorf("frames copied on transmit: a %d (vs %d in place), b %d (vs %d)",
					ca["tx_copied"], ca["tx_zero_copy"], cb["tx_copied"], cb["tx_zero_copy"])
			}
			if mode == ModeGeneric && ca["rx_tso_frames_cut"] == 0 {
				t.Error("generic: no TSO frame cut")
			}
		})
	}
}

// TestSharedFreeListConcurrent has goroutines take chunks through their
// caches, own them for a while (stamping them), and give them back, as
// PMDs do; under -race this also checks the locking. No chunk may be
// held by two goroutines at once, and none may be lost.
func TestSharedFreeListConcurrent(t *testing.T) {
	const chunks, workers, rounds = 1024, 6, 3000
	g := newGroupT(t, GroupConfig{Chunks: chunks})
	mem, err := g.reserve(chunks)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := newChunkCache(256)
			var held []uint64
			for r := range rounds {
				n := c.ensure(g, 1+(r*7+w)%40)
				for range n {
					a := c.get()
					mem[a] = byte(w + 1)
					held = append(held, a)
				}
				for _, a := range held {
					if mem[a] != byte(w+1) {
						errs <- fmt.Errorf("worker %d: chunk %#x stamped %d by another", w, a, mem[a])
						return
					}
				}
				keep := len(held) / 3
				for _, a := range held[keep:] {
					mem[a] = 0
					c.put(g, a)
				}
				held = held[:keep]
			}
			for _, a := range held {
				mem[a] = 0
				c.put(g, a)
			}
			c.drain(g)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	gs := g.Stats()
	seen := map[uint64]bool{}
	g.mu.Lock()
	for _, a := range g.free {
		if seen[a] || a%smallChunk != 0 || a >= chunks*smallChunk {
			t.Errorf("chunk %#x twice or not a chunk start", a)
		}
		seen[a] = true
	}
	g.mu.Unlock()
	if len(seen) != chunks {
		t.Errorf("%d chunks back on the free list, want %d", len(seen), chunks)
	}
	t.Logf("%d batch takes, %d gives for %d rounds of %d workers", gs.Takes, gs.Gives, rounds, workers)
	if gs.Takes+gs.Gives > workers*rounds {
		t.Errorf("the free list was locked %d times for %d rounds: not per batch", gs.Takes+gs.Gives, workers*rounds)
	}
}

// fourPorts is two veth pairs, p0-p1 and p2-p3, every end an afxdp port
// in one group: p0 -> p1 | p2 -> p3 moves a frame received on p1 out of
// p2 as a descriptor.
func fourPorts(t testing.TB, cfg Config) [4]*Device {
	e := newEnv(t)
	n := [4]string{e.IfName("p0"), e.IfName("p1"), e.IfName("p2"), e.IfName("p3")}
	e.VethQueues(n[0], "", n[1], "", 1)
	e.VethQueues(n[2], "", n[3], "", 1)
	var d [4]*Device
	for i := range d {
		d[i] = openT(t, n[i], cfg)
	}
	return d
}

// TestSharedRecvSendNoAllocs: the shared path (Recv lends, Send moves the
// descriptor, completion gives the chunk back) allocates nothing, and
// every frame goes from p1 to p2 without a copy, intact.
func TestSharedRecvSendNoAllocs(t *testing.T) {
	for _, mode := range []XDPMode{ModeGeneric, ModeNative} {
		t.Run(string(mode), func(t *testing.T) {
			g := newGroupT(t, GroupConfig{})
			d := fourPorts(t, Config{XDPMode: mode, UMEM: g})
			pool := newTestPool(t)
			frame := buildFrame(frameSpec{payload: 1000})
			var batch packet.Batch
			lost := 0
			var last []byte
			relay := func(from, to *Device, want int) int {
				got := 0
				for tries := 0; got < want && tries < 100000; tries++ {
					n, err := from.Recv(0, &batch, pool)
					if err != nil {
						t.Fatal(err)
					}
					got += n
					if to == nil {
						if n > 0 {
							last = append(last[:0], batch.At(n-1).Data()...)
						}
						pool.PutBatch(&batch)
					} else if n > 0 {
						if err := to.Send(0, &batch); err != nil {
							t.Fatal(err)
						}
					}
				}
				return got
			}
			round := func() {
				for range 16 {
					buf := pool.Get()
					copy(buf.Room(), frame)
					buf.SetLen(len(frame))
					batch.Append(buf)
				}
				if err := d[0].Send(0, &batch); err != nil {
					t.Fatal(err)
				}
				lost += 16 - relay(d[1], d[2], 16)
				lost += 16 - relay(d[3], nil, 16)
			}
			last = make([]byte, 0, 2048)
			round()
			allocs := testing.AllocsPerRun(200, round)
			if allocs != 0 {
				t.Errorf("Recv+Send on the shared path allocate %.1f times per round", allocs)
			}
			if lost != 0 {
				t.Errorf("%d frames lost", lost)
			}
			if !bytes.Equal(last, frame) {
				t.Error("the frame arrived altered")
			}
			c1, c2 := d[1].CustomStats(), d[2].CustomStats()
			if c2["tx_zero_copy"] == 0 || c2["tx_copied"] != 0 || c2["tx_zero_copy"] != c1["rx_lent"] {
				t.Errorf("p2 zero-copy %d copied %d, p1 lent %d: want every frame moved in place",
					c2["tx_zero_copy"], c2["tx_copied"], c1["rx_lent"])
			}
			if c0 := d[0].CustomStats(); c0["tx_copied"] == 0 || c0["tx_zero_copy"] != 0 {
				t.Errorf("p0 sent pool buffers: copied %d, zero-copy %d", c0["tx_copied"], c0["tx_zero_copy"])
			}
		})
	}
}

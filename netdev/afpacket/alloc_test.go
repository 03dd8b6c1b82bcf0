package afpacket

import (
	"testing"

	"gvs/netdev/internal/nettest"
	"gvs/packet"
)

// TestRecvSendNoAllocs sends frames out of one veth end and receives them
// on the other: in steady state neither Send nor Recv allocates.
func TestRecvSendNoAllocs(t *testing.T) { eachMode(t, testRecvSendNoAllocs) }

func testRecvSendNoAllocs(t *testing.T, cfg Config) {
	env := nettest.New(t)
	a, b := env.IfName("a"), env.IfName("b")
	env.Veth(a, "", b, "")
	// A ring that takes a round's frames from the start: a resize (it
	// allocates the new ring's loan marks) is not steady state. adapt
	// still runs every adaptEvery calls.
	cfg.MinRingSize = 1 << 20
	in, out := openT(t, a, cfg), openT(t, b, cfg)
	pool, err := packet.NewPool(packet.PoolConfig{Buffers: 128})
	if err != nil {
		t.Fatal(err)
	}
	template := udpFrame(t, pool, []packet.VLANTag{{TPID: packet.EtherTypeVLAN, TCI: 5}})
	var tx, rx packet.Batch
	received := 0
	round := func() {
		for range 8 {
			tx.Append(pool.Clone(template))
		}
		if err := in.Send(0, &tx); err != nil {
			t.Fatal(err)
		}
		for got := 0; got < 8; { // spin until the ring block retires
			n, err := out.Recv(0, &rx, pool)
			if err != nil {
				t.Fatal(err)
			}
			got += n
			received += n
			pool.PutBatch(&rx)
		}
	}
	round() // warm up
	if allocs := testing.AllocsPerRun(50, round); allocs != 0 {
		t.Errorf("Send+Recv allocate %v times per round", allocs)
	}
	if received < 8*51 {
		t.Errorf("received %d frames, want %d", received, 8*51)
	}
	pool.Put(template)
}

// TestRecvUnderPressureNoAllocs overflows a ring that may not grow: Recv
// sees the drops (TP_STATUS_LOSING), adapt runs on every call and finds
// nothing to do, and none of it allocates.
func TestRecvUnderPressureNoAllocs(t *testing.T) {
	env := nettest.New(t)
	a, b := env.IfName("a"), env.IfName("b")
	env.Veth(a, "", b, "")
	// Three GSO-sized slots, fixed.
	cfg := Config{RxMode: RxRingV2, MinRingSize: 256 << 10, MaxRingSize: 256 << 10, V2FrameSize: V2GSOFrameSize}
	in, out := openT(t, a, Config{}), openT(t, b, cfg)
	pool, err := packet.NewPool(packet.PoolConfig{Buffers: 128})
	if err != nil {
		t.Fatal(err)
	}
	template := udpFrame(t, pool, nil)
	var tx, rx packet.Batch
	round := func() {
		for range 16 {
			tx.Append(pool.Clone(template))
		}
		if err := in.Send(0, &tx); err != nil {
			t.Fatal(err)
		}
		for range 4 {
			if _, err := out.Recv(0, &rx, pool); err != nil {
				t.Fatal(err)
			}
			pool.PutBatch(&rx)
		}
	}
	round()
	if allocs := testing.AllocsPerRun(100, round); allocs != 0 {
		t.Errorf("Recv under pressure allocates %v times per round", allocs)
	}
	if out.Stats().RxKernelDrops == 0 || out.queues[0].resizes.Load() != 0 {
		t.Errorf("no pressure seen (drops %d) or a fixed ring resized (%d)", out.Stats().RxKernelDrops, out.queues[0].resizes.Load())
	}
	pool.Put(template)
}

package afpacket

import (
	"bytes"
	"testing"
	"time"

	"gvs/netdev/internal/nettest"
	"gvs/packet"
)

// recvN receives until n frames are in batch (or a second passes).
func recvN(t *testing.T, d *Device, batch *packet.Batch, pool *packet.Pool, n int) {
	t.Helper()
	for end := time.Now().Add(time.Second); batch.Len() < n && time.Now().Before(end); time.Sleep(time.Millisecond) {
		if _, err := d.Recv(0, batch, pool); err != nil {
			t.Fatal(err)
		}
	}
	if batch.Len() != n {
		t.Fatalf("received %d frames, want %d", batch.Len(), n)
	}
}

// TestLentSlotsHoldTheRing: frames received from a TPACKET_V2 ring live
// in its slots until their buffers go back to the pool; fewer than half
// the slots are lent at once, the frames beyond are copied. While the
// slot the kernel would write next is lent, nothing more is received (the
// kernel counts drops), and nothing is read twice; once the buffers are
// put back, receiving resumes.
func TestLentSlotsHoldTheRing(t *testing.T) {
	env := nettest.New(t)
	a, b := env.IfName("a"), env.IfName("b")
	env.Veth(a, "", b, "")
	// One 1 MiB block of 68 KiB slots: 15 slots.
	in, out := openT(t, a, Config{}), openT(t, b, Config{RxMode: RxRingV2, MinRingSize: V2BlockSize, MaxRingSize: V2BlockSize, V2FrameSize: V2GSOFrameSize})
	slots := out.queues[0].ring2.frames
	txPool, _ := packet.NewPool(packet.PoolConfig{Buffers: 64})
	rxPool, _ := packet.NewPool(packet.PoolConfig{Buffers: 64})

	flood(t, in, txPool, slots)
	var held packet.Batch
	recvN(t, out, &held, rxPool, slots)
	maxLent := slots/2 - 1
	for i, buf := range held.Buffers() {
		if buf.Borrowed() != (i < maxLent) {
			t.Fatalf("frame %d of %d: lent %v, want the first %d lent, the rest copied", i, slots, buf.Borrowed(), maxLent)
		}
	}
	flood(t, in, txPool, 5)
	time.Sleep(20 * time.Millisecond)
	var more packet.Batch
	if n, err := out.Recv(0, &more, rxPool); err != nil || n != 0 {
		t.Fatalf("Recv with every slot lent = %d, %v; want 0", n, err)
	}
	if s := out.Stats(); s.RxKernelDrops < 5 {
		t.Errorf("kernel drops %d with the ring held, want >= 5", s.RxKernelDrops)
	}
	want := append([]byte(nil), held.Buffers()[0].Data()...)
	rxPool.PutBatch(&held)
	if o := out.queues[0].ring2.loans.outstanding.Load(); o != 0 {
		t.Fatalf("%d loans outstanding after PutBatch", o)
	}
	flood(t, in, txPool, 3)
	recvN(t, out, &more, rxPool, 3)
	if !bytes.Equal(more.Buffers()[0].Data(), want) {
		t.Error("a frame received after the ring was released differs from the one sent")
	}
	rxPool.PutBatch(&more)
}

// TestCloseWithLentBuffers: buffers still holding lent frames stay
// readable after the device is closed; the ring is unmapped (and the
// socket closed) when the last one goes back.
func TestCloseWithLentBuffers(t *testing.T) {
	env := nettest.New(t)
	a, b := env.IfName("a"), env.IfName("b")
	env.Veth(a, "", b, "")
	in := openT(t, a, Config{})
	cfg := Config{Name: b, RxMode: RxRingV2, MinRingSize: 1 << 20}
	out, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	txPool, _ := packet.NewPool(packet.PoolConfig{Buffers: 64})
	rxPool, _ := packet.NewPool(packet.PoolConfig{Buffers: 64})
	flood(t, in, txPool, 4)
	var held packet.Batch
	recvN(t, out, &held, rxPool, 4)
	loans := out.queues[0].ring2.loans
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	if loans.unmapped.Load() {
		t.Fatal("ring unmapped with frames still lent")
	}
	sum := 0
	for _, buf := range held.Buffers() {
		for _, c := range buf.Data() { // would fault if unmapped
			sum += int(c)
		}
	}
	if sum == 0 {
		t.Error("lent frames read back as zeroes")
	}
	rxPool.PutBatch(&held)
	if !loans.unmapped.Load() {
		t.Fatal("ring still mapped after the last lent frame went back")
	}
}

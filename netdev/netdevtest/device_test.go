package netdevtest

import (
	"bytes"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"gvs/packet"
)

func readable(t *testing.T, fd int) bool {
	t.Helper()
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	if err != nil {
		t.Fatal(err)
	}
	return n == 1
}

func TestRecvSendRoundTrip(t *testing.T) {
	a := MustNew(Config{Name: "a"})
	b := MustNew(Config{Name: "b"})
	defer a.Close()
	defer b.Close()
	pool, _ := packet.NewPool(packet.PoolConfig{Buffers: 8, FrameSize: 2048})
	if readable(t, a.PollFD(0)) {
		t.Fatal("empty queue readable")
	}
	frames := [][]byte{[]byte("0123456789abcdef-one"), []byte("0123456789abcdef-two"), {}}
	for _, f := range frames {
		a.Inject(0, f)
	}
	a.InjectStripped(0, frames[0], packet.VLANTag{TPID: packet.EtherTypeVLAN, TCI: 7})
	if !readable(t, a.PollFD(0)) || a.Pending(0) != 4 {
		t.Fatal("queue with frames not readable")
	}
	var batch packet.Batch
	if n, err := a.Recv(0, &batch, pool); n != 4 || err != nil {
		t.Fatalf("Recv = %d, %v", n, err)
	}
	if !bytes.Equal(batch.At(1).Data(), frames[1]) || batch.At(2).Len() != 0 || batch.At(3).StrippedVLAN.TCI != 7 {
		t.Fatal("wrong frames received")
	}
	if n, _ := a.Recv(0, &batch, pool); n != 0 || readable(t, a.PollFD(0)) {
		t.Fatal("drained queue still readable")
	}
	// A buffer received on a is sent on b, which frees it to its pool.
	if err := b.Send(0, &batch); err != nil {
		t.Fatal(err)
	}
	if batch.Len() != 0 || pool.Stats().Free != 8 {
		t.Fatalf("Send kept buffers: batch %d, pool %d free", batch.Len(), pool.Stats().Free)
	}
	sent := b.WaitSent(4, time.Second)
	if len(sent) != 4 || !bytes.Equal(sent[0].Data, frames[0]) {
		t.Fatalf("captured %v", sent)
	}
	if s := b.Stats(); s.TxPackets != 4 || a.Stats().RxPackets != 4 {
		t.Fatalf("stats %+v", s)
	}
	if len(b.TakeSent()) != 4 || len(b.Sent()) != 0 {
		t.Fatal("TakeSent did not clear")
	}
}

func TestLoopAndQueueBound(t *testing.T) {
	d := MustNew(Config{RxQueueLen: 2, Discard: true})
	defer d.Close()
	pool, _ := packet.NewPool(packet.PoolConfig{Buffers: 64, FrameSize: 2048})
	for range 3 {
		d.Inject(0, []byte("x"))
	}
	if d.Stats().RxKernelDrops != 1 {
		t.Fatal("overflow not counted")
	}
	d.Loop(0, [][]byte{[]byte("l1"), []byte("l2")})
	var batch packet.Batch
	if n, _ := d.Recv(0, &batch, pool); n != packet.BatchSize {
		t.Fatalf("loop gave %d", n)
	}
	if string(batch.At(0).Data()) != "x" || string(batch.At(2).Data()) != "l1" || string(batch.At(3).Data()) != "l2" {
		t.Fatal("wrong order")
	}
	allocs := testing.AllocsPerRun(100, func() {
		d.Send(0, &batch)
		d.Recv(0, &batch, pool)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per Recv+Send", allocs)
	}
	d.Send(0, &batch)
	if pool.Stats().Free != 64 {
		t.Fatal("leak")
	}
}

func TestDoubleFreePanics(t *testing.T) {
	d := MustNew(Config{Discard: true})
	defer d.Close()
	pool, _ := packet.NewPool(packet.PoolConfig{Buffers: 2, FrameSize: 128})
	b := pool.Get()
	pool.Put(b)
	var batch packet.Batch
	batch.Append(b)
	defer func() {
		if recover() == nil {
			t.Fatal("a double free went unnoticed")
		}
	}()
	d.Send(0, &batch)
}

func TestClosedDevice(t *testing.T) {
	d := MustNew(Config{})
	pool, _ := packet.NewPool(packet.PoolConfig{Buffers: 2, FrameSize: 128})
	d.Close()
	var batch packet.Batch
	if _, err := d.Recv(0, &batch, pool); err == nil {
		t.Fatal("Recv on a closed device")
	}
	batch.Append(pool.Get())
	if err := d.Send(0, &batch); err == nil || pool.Stats().Free != 2 {
		t.Fatal("Send on a closed device must fail and still free")
	}
}

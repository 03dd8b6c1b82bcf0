package packet

import (
	"runtime"
	"testing"
)

func smallPool(t testing.TB, n int) *Pool {
	t.Helper()
	p, err := NewPool(PoolConfig{Buffers: n, FrameSize: 2048})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPoolGetPut(t *testing.T) {
	p := smallPool(t, 3)
	var got []*Buffer
	for range 3 {
		b := p.Get()
		if b == nil {
			t.Fatal("pool ran out early")
		}
		if b.Headroom() != DefaultHeadroom || b.Tailroom() != 2048 || b.Len() != 0 {
			t.Fatalf("buffer headroom %d tailroom %d len %d", b.Headroom(), b.Tailroom(), b.Len())
		}
		got = append(got, b)
	}
	if p.Get() != nil || p.Get() != nil {
		t.Fatal("empty pool returned a buffer")
	}
	if s := p.Stats(); s != (PoolStats{Buffers: 3, Free: 0, Exhausted: 2}) || p.Exhausted() != 2 {
		t.Fatalf("stats %+v", s)
	}
	// Buffers do not overlap.
	for i, b := range got {
		b.SetLen(1)
		b.Data()[0] = byte(i)
		b.InPort = 5
	}
	for i, b := range got {
		if b.Data()[0] != byte(i) {
			t.Fatal("buffers share memory")
		}
		p.Put(b)
	}
	b := p.Get()
	if b.Len() != 0 || b.InPort != 0 {
		t.Error("Get returned a buffer that was not reset")
	}
	mustPanic(t, "double Put", func() { p.Put(b); p.Put(b) })
	mustPanic(t, "Put into another pool", func() { smallPool(t, 1).Put(p.Get()) })
	mustPanic(t, "Put of a NewBuffer", func() { p.Put(NewBuffer(0, 64)) })
}

func TestPoolConfig(t *testing.T) {
	if _, err := NewPool(PoolConfig{Buffers: -1}); err == nil {
		t.Error("negative size accepted")
	}
	if _, err := NewPool(PoolConfig{Buffers: 1, FrameSize: 10}); err == nil {
		t.Error("frame smaller than an Ethernet header accepted")
	}
	p, err := NewPool(PoolConfig{Buffers: 2})
	if err != nil {
		t.Fatal(err)
	}
	b := p.Get()
	if b.Headroom() != DefaultHeadroom || b.Tailroom() != DefaultFrameSize {
		t.Errorf("default sizes: headroom %d tailroom %d", b.Headroom(), b.Tailroom())
	}
	// A 64 KiB GSO frame plus two VLAN tags and a vnet header fits.
	if b.Tailroom() < 65535+EthHeaderLen+2*VLANHeaderLen || b.Headroom() < VnetHdrLen+2*VLANHeaderLen {
		t.Error("default buffer too small for a GSO frame")
	}
}

func TestPoolBatch(t *testing.T) {
	p := smallPool(t, 40)
	var batch Batch
	if n := p.GetBatch(&batch, 100); n != BatchSize || !batch.Full() {
		t.Fatalf("GetBatch = %d", n)
	}
	if batch.Append(NewBuffer(0, 64)) {
		t.Error("append to a full batch succeeded")
	}
	p.PutBatch(&batch)
	if batch.Len() != 0 || p.Stats().Free != 40 {
		t.Fatalf("after PutBatch: batch %d, free %d", batch.Len(), p.Stats().Free)
	}
	for i := range 5 {
		batch.Append(p.Get())
		if batch.At(i) != batch.Buffers()[i] {
			t.Fatal("At and Buffers disagree")
		}
	}
	if n := p.GetBatch(&batch, 3); n != 3 || batch.Len() != 8 {
		t.Fatalf("GetBatch into a partly full batch = %d, len %d", n, batch.Len())
	}
	// Drain the pool: GetBatch stops short.
	var other Batch
	if n := p.GetBatch(&other, BatchSize); n != BatchSize {
		t.Fatalf("got %d", n)
	}
	var third Batch
	if n := p.GetBatch(&third, BatchSize); n != 0 || p.Exhausted() != 1 {
		t.Fatalf("GetBatch from an empty pool = %d, exhausted %d", n, p.Exhausted())
	}
	p.PutBatch(&batch)
	p.PutBatch(&other)
	if p.Stats().Free != 40 {
		t.Errorf("free %d", p.Stats().Free)
	}
}

func TestBatchReset(t *testing.T) {
	var batch Batch
	b := NewBuffer(0, 64)
	batch.Append(b)
	batch.Reset()
	if batch.Len() != 0 || batch.bufs[0] != nil {
		t.Error("Reset kept a pointer")
	}
}

func TestPoolClone(t *testing.T) {
	p := smallPool(t, 2)
	src := p.Get()
	src.SetLen(copy(src.Room(), "abc"))
	c := p.Clone(src)
	if c == nil || string(c.Data()) != "abc" || c == src {
		t.Fatal("clone")
	}
	if p.Clone(src) != nil {
		t.Error("clone from an empty pool")
	}
	big := NewBuffer(0, 4096)
	big.SetLen(4096)
	p.Put(c)
	if p.Clone(big) != nil || p.Stats().Free != 1 {
		t.Error("clone of an oversized frame, or it leaked a buffer")
	}
}

// TestPoolFramesOutsideGoHeap: a pool's frame memory is not on the Go
// heap (it would raise the collector's heap goal by its whole size) and
// its pages are not resident until frames are written.
func TestPoolFramesOutsideGoHeap(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	p, err := NewPool(PoolConfig{Buffers: 1024, FrameSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 8<<20 {
		t.Errorf("a 64 MiB pool grew the Go heap by %d bytes", grew)
	}
	b := p.Get()
	b.SetLen(copy(b.Room(), []byte("frame")))
	if string(b.Data()) != "frame" {
		t.Fatalf("frame %q", b.Data())
	}
	p.Put(b)
	runtime.KeepAlive(p)
}

package packet

import "testing"

func TestFreeReturnsToOrigin(t *testing.T) {
	a, _ := NewPool(PoolConfig{Buffers: 2, FrameSize: 256})
	b, _ := NewPool(PoolConfig{Buffers: 2, FrameSize: 256})
	var batch Batch
	batch.Append(a.Get())
	batch.Append(b.Get())
	batch.Append(NewBuffer(16, 64)) // from no pool: left to the GC
	FreeBatch(&batch)
	if batch.Len() != 0 {
		t.Fatalf("batch not emptied: %d", batch.Len())
	}
	if a.Stats().Free != 2 || b.Stats().Free != 2 {
		t.Fatalf("buffers not back in their pools: a=%d b=%d", a.Stats().Free, b.Stats().Free)
	}
	buf := a.Get()
	buf.Free()
	mustPanic(t, "double free", func() { buf.Free() })
}

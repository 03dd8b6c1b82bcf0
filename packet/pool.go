package packet

import (
	"errors"
	"runtime"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// PoolConfig sizes a Pool; zero fields take the defaults.
type PoolConfig struct {
	Buffers   int // number of buffers; default 1024
	Headroom  int // bytes in front of each frame; default DefaultHeadroom
	FrameSize int // largest frame; default DefaultFrameSize
}

// DefaultPoolBuffers is the default number of buffers per pool: enough for
// a few batches in flight on every port a PMD serves.
const DefaultPoolBuffers = 1024

// PoolStats is a snapshot of a pool's counters.
type PoolStats struct {
	Buffers   int    // total buffers
	Free      int    // buffers in the pool now
	Exhausted uint64 // Get calls that found the pool empty
}

// Pool is a free list of preallocated buffers for one PMD goroutine. All
// frame memory is one allocation made by NewPool; Get and Put never
// allocate. A Pool has no locks: only its owner goroutine may call Get,
// Put, GetBatch, PutBatch and Stats. Exhausted may be read from anywhere.
type Pool struct {
	bufs      []Buffer  // all buffers, for their storage
	free      []*Buffer // stack of free buffers; cap == len(bufs)
	exhausted atomic.Uint64
}

// NewPool allocates a pool and all its buffers.
func NewPool(cfg PoolConfig) (*Pool, error) {
	if cfg.Buffers == 0 {
		cfg.Buffers = DefaultPoolBuffers
	}
	if cfg.Headroom == 0 {
		cfg.Headroom = DefaultHeadroom
	}
	if cfg.FrameSize == 0 {
		cfg.FrameSize = DefaultFrameSize
	}
	if cfg.Buffers < 0 || cfg.Headroom < 0 || cfg.FrameSize < EthHeaderLen {
		return nil, errors.New("packet: invalid pool configuration")
	}
	size := cfg.Headroom + cfg.FrameSize
	slab := allocSlab(cfg.Buffers * size)
	p := &Pool{
		bufs: make([]Buffer, cfg.Buffers),
		free: make([]*Buffer, cfg.Buffers),
	}
	if slab.mapped {
		runtime.AddCleanup(p, func(mem []byte) { unix.Munmap(mem) }, slab.mem)
	}
	for i := range p.bufs {
		b := &p.bufs[i]
		b.init(slab.mem[i*size:(i+1)*size:(i+1)*size], cfg.Headroom, p)
		b.inPool = true
		p.free[i] = b
	}
	return p, nil
}

// slab is the frame memory of a pool.
type slab struct {
	mem    []byte
	mapped bool // mem is an anonymous mapping, unmapped when the pool is collected
}

// allocSlab returns n zeroed bytes for frames: an anonymous mapping
// outside the Go heap where possible, so that
//   - pages are backed only once a frame is written into them (a pool of
//     64 KiB GSO-sized buffers costs what its busy buffers touch), and
//   - the garbage collector's heap goal (twice the live heap with the
//     default GOGC) is not inflated by the pools: with them on the heap,
//     garbage from configuration work grew up to the pools' size before
//     a collection ran, and was resident.
//
// The mapping is released by a cleanup once the Pool is unreachable,
// which needs every Buffer unreachable first (each points to its pool).
func allocSlab(n int) slab {
	if n > 0 {
		mem, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
		if err == nil {
			return slab{mem: mem, mapped: true}
		}
	}
	// One pointer-free slab: the garbage collector never scans frame bytes.
	return slab{mem: make([]byte, n)}
}

// Get returns an empty, reset buffer owned by the caller, or nil if the
// pool is empty (counted in Exhausted; the caller drops the packet).
func (p *Pool) Get() *Buffer {
	n := len(p.free)
	if n == 0 {
		p.exhausted.Add(1)
		return nil
	}
	b := p.free[n-1]
	p.free = p.free[:n-1]
	b.inPool = false
	b.Reset()
	return b
}

// Put returns a buffer to the pool it came from. It panics if b belongs to
// another pool (or to none) or is already in the pool: both are ownership
// bugs that would otherwise corrupt packets later, far from the cause.
func (p *Pool) Put(b *Buffer) {
	if b.pool != p {
		panic("packet: Put of a buffer from another pool")
	}
	if b.inPool {
		panic("packet: buffer put twice")
	}
	b.endLoan()
	b.inPool = true
	p.free = append(p.free, b) // never grows: cap(p.free) == len(p.bufs)
}

// GetBatch appends up to n fresh buffers to batch (fewer if the batch or the
// pool runs out) and returns how many it added.
func (p *Pool) GetBatch(batch *Batch, n int) int {
	added := 0
	for added < n && !batch.Full() {
		b := p.Get()
		if b == nil {
			break
		}
		batch.Append(b)
		added++
	}
	return added
}

// PutBatch returns every buffer in batch to the pool and empties the batch.
func (p *Pool) PutBatch(batch *Batch) {
	for _, b := range batch.Buffers() {
		p.Put(b)
	}
	batch.Reset()
}

// Clone returns a pool buffer holding a copy of src, or nil if the pool is
// empty or src does not fit.
func (p *Pool) Clone(src *Buffer) *Buffer {
	b := p.Get()
	if b == nil {
		return nil
	}
	if !b.CopyFrom(src) {
		p.Put(b)
		return nil
	}
	return b
}

// Stats returns the pool's counters. Owner goroutine only.
func (p *Pool) Stats() PoolStats {
	return PoolStats{Buffers: len(p.bufs), Free: len(p.free), Exhausted: p.exhausted.Load()}
}

// Exhausted returns how many Get calls found the pool empty. Safe from any
// goroutine.
func (p *Pool) Exhausted() uint64 { return p.exhausted.Load() }

// Free returns b to the pool it came from; a buffer made by NewBuffer is
// left to the garbage collector. Whoever owns a buffer last (a device's
// Send, a drop) frees it, on the goroutine that owns its pool.
func (b *Buffer) Free() {
	if b.pool != nil {
		b.pool.Put(b)
	}
}

// FreeBatch frees every buffer in batch and empties it.
func FreeBatch(batch *Batch) {
	for _, b := range batch.Buffers() {
		b.Free()
	}
	batch.Reset()
}

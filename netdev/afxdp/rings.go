package afxdp

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ring is the shared part of an AF_XDP single-producer single-consumer
// ring mapped from the kernel: the two indices, the flags word and the
// size. Indices run freely and wrap at 2^32; entry i lives at i & mask.
// Each side keeps a cached copy of the other side's index and refreshes it
// only when the cache says the ring is full (producer) or empty
// (consumer), so the common path touches the shared cache line once per
// batch.
//
// The indices are read and written with sync/atomic: Go's atomics are
// sequentially consistent, which gives the acquire/release ordering the
// kernel's smp_load_acquire/smp_store_release pair with.
type ring struct {
	mem      []byte // the whole mmap'd ring
	producer *uint32
	consumer *uint32
	flags    *uint32
	mask     uint32
	size     uint32
	// cachedProd/cachedCons: for a producer ring, prod is ours and cons
	// cached; for a consumer ring the other way round.
	cachedProd uint32
	cachedCons uint32
}

// mapRing maps one ring of n entries of entrySize bytes from the socket at
// the page offset pgoff, with the layout the kernel reported.
func mapRing(fd int, off unix.XDPRingOffset, pgoff int64, n, entrySize int) (ring, error) {
	length := int(off.Desc) + n*entrySize
	mem, err := unix.Mmap(fd, pgoff, length, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return ring{}, fmt.Errorf("mmap ring at %#x: %w", pgoff, err)
	}
	r := ring{
		mem:      mem,
		producer: (*uint32)(unsafe.Pointer(&mem[off.Producer])),
		consumer: (*uint32)(unsafe.Pointer(&mem[off.Consumer])),
		flags:    (*uint32)(unsafe.Pointer(&mem[off.Flags])),
		mask:     uint32(n - 1),
		size:     uint32(n),
	}
	r.cachedProd = atomic.LoadUint32(r.producer)
	r.cachedCons = atomic.LoadUint32(r.consumer)
	return r, nil
}

func (r *ring) unmap() {
	if r.mem != nil {
		_ = unix.Munmap(r.mem)
		r.mem = nil
	}
}

// needWakeup reports whether the kernel asked to be kicked (the
// XDP_RING_NEED_WAKEUP flag of a socket bound with XDP_USE_NEED_WAKEUP).
func (r *ring) needWakeup() bool {
	return atomic.LoadUint32(r.flags)&unix.XDP_RING_NEED_WAKEUP != 0
}

// free returns how many entries a producer may write, looking at the
// kernel's consumer index only when the cache says fewer than want.
func (r *ring) free(want uint32) uint32 {
	f := r.size - (r.cachedProd - r.cachedCons)
	if f >= want {
		return f
	}
	r.cachedCons = atomic.LoadUint32(r.consumer)
	return r.size - (r.cachedProd - r.cachedCons)
}

// submit publishes n entries written after the producer index.
func (r *ring) submit(n uint32) {
	r.cachedProd += n
	atomic.StoreUint32(r.producer, r.cachedProd)
}

// outstanding returns how many entries a producer wrote that the kernel
// has not consumed yet.
func (r *ring) outstanding() uint32 {
	r.cachedCons = atomic.LoadUint32(r.consumer)
	return r.cachedProd - r.cachedCons
}

// available returns how many entries a consumer may read, up to max,
// looking at the kernel's producer index only when the cache is short.
func (r *ring) available(max uint32) uint32 {
	n := r.cachedProd - r.cachedCons
	if n < max {
		r.cachedProd = atomic.LoadUint32(r.producer)
		n = r.cachedProd - r.cachedCons
	}
	return min(n, max)
}

// release gives n consumed entries back to the kernel.
func (r *ring) release(n uint32) {
	r.cachedCons += n
	atomic.StoreUint32(r.consumer, r.cachedCons)
}

// addrRing is a fill or completion ring: entries are UMEM addresses.
type addrRing struct {
	ring
	addrs []uint64
}

func mapAddrRing(fd int, off unix.XDPRingOffset, pgoff int64, n int) (addrRing, error) {
	r, err := mapRing(fd, off, pgoff, n, 8)
	if err != nil {
		return addrRing{}, err
	}
	return addrRing{ring: r, addrs: unsafe.Slice((*uint64)(unsafe.Pointer(&r.mem[off.Desc])), n)}, nil
}

// descRing is an rx or tx ring: entries are descriptors.
type descRing struct {
	ring
	descs []unix.XDPDesc
}

func mapDescRing(fd int, off unix.XDPRingOffset, pgoff int64, n int) (descRing, error) {
	r, err := mapRing(fd, off, pgoff, n, int(unsafe.Sizeof(unix.XDPDesc{})))
	if err != nil {
		return descRing{}, err
	}
	return descRing{ring: r, descs: unsafe.Slice((*unix.XDPDesc)(unsafe.Pointer(&r.mem[off.Desc])), n)}, nil
}

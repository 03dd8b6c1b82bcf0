package afxdp

import (
	"fmt"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// xsk is one AF_XDP socket bound to one device queue, a member of a
// UMEMGroup (shared, or the device's private one), with its own four
// rings. Receive-side fields (fill, rx, lender) belong to the goroutine
// calling Recv for the queue, transmit-side fields (tx, comp, txCache,
// txInflight) to the one calling Send; the counters are atomics read by
// Stats.
type xsk struct {
	fd      int
	ifindex int
	queue   int
	group   *UMEMGroup
	reserve int    // chunks reserved in the group for this socket
	mem     []byte // the group's memory
	chunk   uint64 // chunk size
	joined  bool   // bound and listed in the group's members
	sg      bool   // multi-buffer frames (XDP_USE_SG, or inherited with the UMEM)

	fill addrRing
	rx   descRing
	// lender lends received chunks to buffers and holds the receive
	// side's free chunks.
	lender *rxLender
	// fillShort: the last top-up found too few free chunks; Recv tries
	// again even without new frames.
	fillShort bool
	// fillGiven and rxTaken count chunks put in the fill ring and
	// descriptors taken from the rx ring: Close works out from them how
	// many chunks the kernel kept.
	fillGiven, rxTaken uint64
	// seg reassembles multi-buffer frames and cuts oversized TCP ones.
	seg segmenter

	_    [64]byte // keep the receive and transmit sides on separate cache lines
	tx   descRing
	comp addrRing
	// txCache holds free chunks for copies; completions land in it.
	txCache chunkCache
	// txInflight counts descriptors submitted and not yet completed.
	txInflight int
	// txStuck is set by Send when it left descriptors in the tx ring that
	// the kernel had not taken yet; Recv then kicks, so they cannot wait
	// for the next Send (the stall Open vSwitch's afxdp ports suffered).
	// It holds stuckMark|producer index, or 0.
	txStuck atomic.Uint64

	counters counters
}

// counters are one queue's software counters.
type counters struct {
	rxPackets, rxBytes atomic.Uint64
	rxErrors           atomic.Uint64 // frames too big for the pool's buffers, bad descriptors
	csumFixed          atomic.Uint64 // partial checksums completed on receive
	rxSegmented        atomic.Uint64 // oversized TCP frames cut to the MTU
	rxLent             atomic.Uint64 // frames delivered in their UMEM chunk (no copy)
	_                  [64]byte      // Recv and Send may run on different CPUs
	txPackets, txBytes atomic.Uint64
	txDrops            atomic.Uint64 // oversize frames, no chunk or ring room
	txKicks            atomic.Uint64 // sendto calls
	txKickErrors       atomic.Uint64 // sendto failures other than EAGAIN/EBUSY/ENOBUFS
	txZeroCopy         atomic.Uint64 // frames sent from the chunk they were received in
	txCopied           atomic.Uint64 // frames copied into chunks
}

// socketSpec is what openXSK needs besides the queue number.
type socketSpec struct {
	ifindex   int
	ringSize  int
	bindFlags uint16
}

// openXSK creates a socket for queue q in group g: reservation of 2 ×
// RingSize chunks, UMEM registration (the group's first socket) or
// XDP_SHARED_UMEM with a member on another device or queue, ring sizes,
// ring mappings, the fill ring filled, bind. The caller inserts it into
// the XSKMAP afterwards (the kernel refuses an unbound socket there).
func openXSK(spec socketSpec, q int, g *UMEMGroup) (_ *xsk, err error) {
	n := spec.ringSize
	mem, err := g.reserve(2 * n)
	if err != nil {
		return nil, err
	}
	g.joinMu.Lock()
	defer g.joinMu.Unlock()
	peer, err := g.shareWith(spec.ifindex, q)
	if err != nil {
		g.unreserve(2 * n)
		return nil, err
	}
	fd, err := unix.Socket(unix.AF_XDP, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		g.unreserve(2 * n)
		return nil, fmt.Errorf("socket(AF_XDP): %w", err)
	}
	s := &xsk{fd: fd, ifindex: spec.ifindex, queue: q, group: g, reserve: 2 * n, mem: mem, chunk: g.chunkSize,
		seg: newSegmenter(), txCache: newChunkCache(n)}
	s.lender = &rxLender{group: g, mem: mem, chunk: g.chunkSize, cache: newChunkCache(n)}
	s.seg.lender = s.lender
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	if peer == nil {
		if err = g.register(fd); err != nil {
			return nil, err
		}
	}
	for _, opt := range []int{unix.XDP_UMEM_FILL_RING, unix.XDP_UMEM_COMPLETION_RING, unix.XDP_RX_RING, unix.XDP_TX_RING} {
		if err = unix.SetsockoptInt(fd, unix.SOL_XDP, opt, n); err != nil {
			return nil, fmt.Errorf("ring size option %d = %d: %w", opt, n, err)
		}
	}
	var off unix.XDPMmapOffsets
	if err = getsockopt(fd, unix.XDP_MMAP_OFFSETS, unsafe.Pointer(&off), unsafe.Sizeof(off)); err != nil {
		return nil, fmt.Errorf("XDP_MMAP_OFFSETS: %w", err)
	}
	if s.fill, err = mapAddrRing(fd, off.Fr, unix.XDP_UMEM_PGOFF_FILL_RING, n); err != nil {
		return nil, err
	}
	if s.comp, err = mapAddrRing(fd, off.Cr, unix.XDP_UMEM_PGOFF_COMPLETION_RING, n); err != nil {
		return nil, err
	}
	if s.rx, err = mapDescRing(fd, off.Rx, unix.XDP_PGOFF_RX_RING, n); err != nil {
		return nil, err
	}
	if s.tx, err = mapDescRing(fd, off.Tx, unix.XDP_PGOFF_TX_RING, n); err != nil {
		return nil, err
	}
	// The fill ring starts full (as far as the group's free list goes);
	// Recv tops it up from loans coming back and the group.
	s.topUpFill()
	sa := &unix.SockaddrXDP{Flags: spec.bindFlags, Ifindex: uint32(spec.ifindex), QueueID: uint32(q)}
	if peer != nil {
		// The kernel refuses flags here: the socket inherits copy or
		// zero-copy, need-wakeup and multi-buffer from the UMEM.
		sa.Flags, sa.SharedUmemFD = unix.XDP_SHARED_UMEM, uint32(peer.fd)
	}
	if err = bindRetry(fd, sa); err != nil {
		if peer != nil {
			return nil, fmt.Errorf("bind queue %d sharing the UMEM of ifindex %d queue %d: %w", q, peer.ifindex, peer.queue, err)
		}
		return nil, fmt.Errorf("bind queue %d (flags %#x): %w", q, spec.bindFlags, err)
	}
	if peer == nil {
		g.sg = spec.bindFlags&unix.XDP_USE_SG != 0
	}
	s.sg = g.sg
	s.joined = true
	g.joined(s)
	return s, nil
}

// bindBusyTimeout bounds how long bindRetry waits out EBUSY: the kernel
// releases a closed socket's hold on its device queue from a work queue,
// so a queue closed a moment ago (a port reopened, a member rejoining)
// may still look taken.
const bindBusyTimeout = 500 * time.Millisecond

// bindRetry binds, retrying while the queue is still held (EBUSY).
func bindRetry(fd int, sa *unix.SockaddrXDP) error {
	deadline := time.Now().Add(bindBusyTimeout)
	for {
		err := unix.Bind(fd, sa)
		if err != unix.EBUSY || time.Now().After(deadline) {
			return err
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// close gives the socket's chunks back to the group (those the kernel
// still holds are counted lost until the group's last member leaves),
// unmaps the rings, closes the socket and leaves the group. A socket in
// an XSKMAP must have been taken out of the redirect path first (the
// program detached and rcuFence called): else the kernel could still
// write into a chunk given back.
func (s *xsk) close() {
	g := s.group
	if !s.joined {
		// Open failed: nothing was received or sent, the fill ring holds
		// what topUpFill put there (the kernel never saw it).
		s.reclaimUnbound()
	} else {
		s.reclaim()
	}
	s.fill.unmap()
	s.comp.unmap()
	s.rx.unmap()
	s.tx.unmap()
	if s.fd >= 0 {
		_ = unix.Close(s.fd)
		s.fd = -1
	}
	if s.joined {
		s.joined = false
		g.joinMu.Lock()
		g.left(s)
		g.joinMu.Unlock()
	}
	if s.reserve != 0 {
		g.unreserve(s.reserve)
		s.reserve = 0
	}
}

// statistics reads the kernel's counters for the socket (XDP_STATISTICS);
// they are cumulative, not reset by reading.
func (s *xsk) statistics() (unix.XDPStatistics, error) {
	var st unix.XDPStatistics
	err := getsockopt(s.fd, unix.XDP_STATISTICS, unsafe.Pointer(&st), unsafe.Sizeof(st))
	return st, err
}

// kickTx asks the kernel to transmit what the tx ring holds. In copy mode
// transmission happens inside this call, up to the kernel's per-call
// budget. EAGAIN (budget used up, completion ring or socket send buffer
// full), EBUSY (another CPU transmitting) and ENOBUFS (skb allocation)
// are transient: the caller looks at the ring to see what went out.
func (s *xsk) kickTx() {
	s.counters.txKicks.Add(1)
	_, _, e := unix.Syscall6(unix.SYS_SENDTO, uintptr(s.fd), 0, 0, unix.MSG_DONTWAIT, 0, 0)
	switch e {
	case 0, unix.EAGAIN, unix.EBUSY, unix.ENOBUFS, unix.ENETDOWN:
	default:
		s.counters.txKickErrors.Add(1)
	}
}

// kickRx wakes the kernel's receive side when it asked for it (zero-copy
// drivers set need_wakeup on the fill ring when it ran dry).
func (s *xsk) kickRx() {
	_, _, _ = unix.Syscall6(unix.SYS_RECVFROM, uintptr(s.fd), 0, 0, unix.MSG_DONTWAIT, 0, 0)
}

func setsockopt(fd, opt int, val unsafe.Pointer, size uintptr) error {
	_, _, e := unix.Syscall6(unix.SYS_SETSOCKOPT, uintptr(fd), unix.SOL_XDP, uintptr(opt), uintptr(val), size, 0)
	return errnoErr(e)
}

func getsockopt(fd, opt int, val unsafe.Pointer, size uintptr) error {
	l := uint32(size)
	_, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(fd), unix.SOL_XDP, uintptr(opt), uintptr(val), uintptr(unsafe.Pointer(&l)), 0)
	if e == 0 && uintptr(l) != size {
		return fmt.Errorf("getsockopt %d returned %d bytes, want %d", opt, l, size)
	}
	return errnoErr(e)
}

func errnoErr(e syscall.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

package afxdp

import (
	"fmt"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// xsk is one AF_XDP socket bound to one device queue, with its own UMEM
// and four rings. Receive-side fields (fill, rx) belong to the goroutine
// calling Recv for the queue, transmit-side fields (tx, comp, txFree) to
// the one calling Send; the counters are atomics read by Stats.
type xsk struct {
	fd    int
	queue int
	umem  umem

	fill addrRing
	rx   descRing
	// fillPending counts chunks Recv wrote after the fill producer index
	// and has yet to submit.
	fillPending uint32
	// seg reassembles multi-buffer frames and cuts oversized TCP ones.
	seg segmenter

	_    [64]byte // keep the receive and transmit sides on separate cache lines
	tx   descRing
	comp addrRing

	// txFree is a stack of transmit chunks not in flight.
	txFree []uint64
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
	_                  [64]byte      // Recv and Send may run on different CPUs
	txPackets, txBytes atomic.Uint64
	txDrops            atomic.Uint64 // oversize frames, no chunk or ring room
	txKicks            atomic.Uint64 // sendto calls
	txKickErrors       atomic.Uint64 // sendto failures other than EAGAIN/EBUSY/ENOBUFS
}

// socketSpec is what openXSK needs besides the queue number.
type socketSpec struct {
	ifindex   int
	ringSize  int
	chunkSize int
	bindFlags uint16
}

// openXSK creates a socket for queue q: UMEM registration, ring sizes,
// ring mappings, the fill ring filled with every receive chunk, bind.
// The caller inserts it into the XSKMAP afterwards (the kernel refuses an
// unbound socket there).
func openXSK(spec socketSpec, q int) (_ *xsk, err error) {
	fd, err := unix.Socket(unix.AF_XDP, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socket(AF_XDP): %w", err)
	}
	s := &xsk{fd: fd, queue: q, seg: newSegmenter()}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	n := spec.ringSize
	if s.umem, err = newUMEM(n, n, spec.chunkSize); err != nil {
		return nil, err
	}
	if err = s.umem.register(fd); err != nil {
		return nil, err
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
	// Every receive chunk starts in the fill ring; Recv puts each back as
	// soon as it has copied the frame out.
	for i := range n {
		s.fill.addrs[i] = s.umem.rxChunk(i)
	}
	s.fill.submit(uint32(n))
	s.txFree = make([]uint64, n)
	for i := range n {
		s.txFree[i] = s.umem.txChunk(i)
	}
	sa := &unix.SockaddrXDP{Flags: spec.bindFlags, Ifindex: uint32(spec.ifindex), QueueID: uint32(q)}
	if err = unix.Bind(fd, sa); err != nil {
		return nil, fmt.Errorf("bind queue %d (flags %#x): %w", q, spec.bindFlags, err)
	}
	return s, nil
}

// close unmaps everything and closes the socket, which also removes it
// from any XSKMAP.
func (s *xsk) close() {
	s.fill.unmap()
	s.comp.unmap()
	s.rx.unmap()
	s.tx.unmap()
	if s.fd >= 0 {
		_ = unix.Close(s.fd)
		s.fd = -1
	}
	s.umem.unmap()
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

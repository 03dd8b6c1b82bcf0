package afpacket

import (
	"sync/atomic"

	"golang.org/x/sys/unix"

	"gvs/packet"
)

// ringLoans lends the frame slots of one TPACKET_V2 ring mapping to
// buffers (packet.Buffer.Lend), so a received frame is forwarded from
// where the kernel wrote it instead of being copied into a pool buffer
// first. A lent slot keeps its TP_STATUS_USER status, so the kernel leaves
// it alone, until the buffer goes back to its pool, whichever goroutine
// does that: Return hands the slot back. The polling goroutine skips lent
// slots (a slot it reaches while still lent means the ring is full).
//
// The mapping must outlive every loan. A ring resize waits for
// outstanding to reach zero (ringDrained); Close with loans still out
// leaves the munmap, and the socket's close, to the last Return (closing
// the socket first would make the kernel free a ring that is still
// mapped, and complain: "packet_mmap: vma is busy").
type ringLoans struct {
	ring        rxRingV2      // the mapping's geometry (a copy: its own fields never change)
	lent        []atomic.Bool // by slot
	outstanding atomic.Int64
	orphaned    atomic.Bool // the device closed; unmap at the last Return
	unmapped    atomic.Bool
	fd          int // the socket, closed after the unmap (set by release)
}

var _ packet.Lender = (*ringLoans)(nil)

func newRingLoans(r *rxRingV2) *ringLoans {
	return &ringLoans{ring: *r, lent: make([]atomic.Bool, r.frames)}
}

// lend marks slot i lent (polling goroutine).
func (l *ringLoans) lend(i int) {
	l.outstanding.Add(1)
	l.lent[i].Store(true)
}

// Return gives slot i back to the kernel: the status first, then the
// mark, so the polling goroutine never sees an unmarked slot that still
// holds the old frame as ready. Any goroutine.
func (l *ringLoans) Return(i int) {
	atomic.StoreUint32(l.ring.status(l.ring.slot(i)), unix.TP_STATUS_KERNEL)
	l.lent[i].Store(false)
	if l.outstanding.Add(-1) == 0 && l.orphaned.Load() {
		l.unmap()
	}
}

// release is Close's part: it unmaps the ring and closes the socket fd at
// once when nothing is lent, else leaves that to the last Return.
func (l *ringLoans) release(fd int) {
	l.fd = fd
	l.orphaned.Store(true)
	if l.outstanding.Load() == 0 {
		l.unmap()
	}
}

func (l *ringLoans) unmap() {
	if l.unmapped.CompareAndSwap(false, true) {
		closeSocket(l.fd, l.ring.mem)
	}
}

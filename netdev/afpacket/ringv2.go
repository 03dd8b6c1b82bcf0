package afpacket

import (
	"encoding/binary"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"gvs/packet"
)

// Layout of struct tpacket2_hdr (linux/if_packet.h), at the start of
// every frame slot of a TPACKET_V2 ring.
const (
	v2Status   = 0
	v2Len      = 4
	v2Snaplen  = 8
	v2Mac      = 12
	v2VlanTCI  = 24
	v2VlanTPID = 26
	v2HdrLen   = 32
)

// rxRingV2 walks the frame slots of one socket's TPACKET_V2 ring. Each
// slot carries its own status word: the kernel sets TP_STATUS_USER once it
// has written the frame, so a frame is readable at once, with no block to
// wait for. Only the goroutine polling the queue touches it.
type rxRingV2 struct {
	mem            []byte
	frameSize      int
	framesPerBlock int
	blockSize      int
	frames         int
	next           int // the slot to read next
	// loans tracks slots lent to buffers (nil: every frame is copied).
	loans *ringLoans
	// maxLent bounds the slots lent at once, to fewer than half the
	// ring: buffers held for a while (an upcall, a queue) must not
	// leave the kernel without slots. Beyond it frames are copied; a
	// small ring (an idle port's three GSO slots) copies every frame.
	maxLent int64
}

func newRxRingV2(mem []byte, s ringShape) rxRingV2 {
	fpb := s.blockSize / s.frameSize
	frames := fpb * s.blocks
	return rxRingV2{mem: mem, frameSize: s.frameSize, framesPerBlock: fpb, blockSize: s.blockSize, frames: frames,
		maxLent: int64(frames/2 - 1)}
}

// slot returns the memory of frame slot i (blocks hold framesPerBlock
// slots and may end in unused bytes).
func (r *rxRingV2) slot(i int) []byte {
	off := i/r.framesPerBlock*r.blockSize + i%r.framesPerBlock*r.frameSize
	return r.mem[off : off+r.frameSize : off+r.frameSize]
}

func (r *rxRingV2) status(s []byte) *uint32 {
	return (*uint32)(unsafe.Pointer(&s[v2Status]))
}

// closeForHandover makes the kernel drop, and count as drops, every frame
// that comes for this ring from now on, by taking the next slot (the
// kernel's head when the ring is drained) from it: the kernel writes
// only into a slot whose status is TP_STATUS_KERNEL. It fails when that
// slot holds a frame already (one came since the drain check).
func (r *rxRingV2) closeForHandover() bool {
	return atomic.CompareAndSwapUint32(r.status(r.slot(r.next)), unix.TP_STATUS_KERNEL, unix.TP_STATUS_USER)
}

// reopenAfterHandover undoes closeForHandover (the handover failed and
// the ring stays in use).
func (r *rxRingV2) reopenAfterHandover() {
	atomic.StoreUint32(r.status(r.slot(r.next)), unix.TP_STATUS_KERNEL)
}

// ready reports whether the next slot holds a frame for user space, and
// its status word.
func (r *rxRingV2) ready() (uint32, bool) { return r.readyAt(r.next) }

// readyAt is ready for slot i.
func (r *rxRingV2) readyAt(i int) (uint32, bool) {
	if r.loans != nil && r.loans.lent[i].Load() {
		return 0, false // still lent: the ring is full up to here
	}
	st := atomic.LoadUint32(r.status(r.slot(i)))
	return st, st&unix.TP_STATUS_USER != 0
}

// peek decodes the frame in the next slot (which must be ready); ok is
// false when its header points outside the slot.
func (r *rxRingV2) peek(st uint32) (f frame, ok bool) {
	s := r.slot(r.next)
	mac := int(binary.NativeEndian.Uint16(s[v2Mac:]))
	snap := int(binary.NativeEndian.Uint32(s[v2Snaplen:]))
	if mac-packet.VnetHdrLen < v2HdrLen || mac+snap > len(s) {
		return f, false
	}
	return frame{
		data:     s[mac : mac+snap],
		slotOff:  mac,
		vnet:     s[mac-packet.VnetHdrLen : mac],
		wire:     int(binary.NativeEndian.Uint32(s[v2Len:])),
		status:   st,
		vlanTCI:  binary.NativeEndian.Uint16(s[v2VlanTCI:]),
		vlanTPID: binary.NativeEndian.Uint16(s[v2VlanTPID:]),
	}, true
}

// release hands the next slot back to the kernel and moves on.
func (r *rxRingV2) release() {
	atomic.StoreUint32(r.status(r.slot(r.next)), unix.TP_STATUS_KERNEL)
	r.advance()
}

// lendNext lends the next slot's frame to buf in place and moves on; the
// slot goes back to the kernel when buf goes back to its pool. The
// buffer's headroom stops short of the slot's status word (the first 8
// bytes), which must stay TP_STATUS_USER until then.
func (r *rxRingV2) lendNext(buf *packet.Buffer, f frame) {
	const keep = v2Len + 4
	s := r.slot(r.next)
	buf.Lend(s[keep:], f.slotOff-keep, len(f.data), r.loans, r.next)
	r.loans.lend(r.next)
	r.advance()
}

func (r *rxRingV2) advance() {
	if r.next++; r.next == r.frames {
		r.next = 0
	}
}

// recvRingV2 is Recv for RxRingV2: it takes every ready frame (up to the
// batch's room and the pool's buffers), lending its slot to the buffer
// when lend is set and the ring has loans, else copying the frame and
// releasing the slot at once.
func (d *Device) recvRingV2(qu *queue, batch *packet.Batch, pool *packet.Pool, lend bool) int {
	r := &qu.ring2
	lend = lend && r.loans != nil
	added, bytes, bad := 0, 0, 0
	for !batch.Full() {
		st, ok := r.ready()
		if !ok {
			if r.loans != nil && r.loans.lent[r.next].Load() {
				qu.ad.pressure = true // come round to a slot still lent: the ring is full
			}
			break
		}
		if st&unix.TP_STATUS_LOSING != 0 {
			qu.kdrops.collect(qu.fd)
			qu.ad.pressure = true
		}
		f, ok := r.peek(st)
		if !ok {
			bad++
			r.release()
			continue
		}
		buf := pool.Get()
		if buf == nil {
			break
		}
		var filled bool
		switch {
		case st&unix.TP_STATUS_COPY != 0:
			filled = fillCopied(qu.fd, buf, f)
			r.release()
			qu.ad.bigFrames = true
		case len(f.data) < f.wire:
			// Too large for its slot, and the kernel's copy found the
			// receive buffer full: lost, and pressure.
			qu.ad.pressure, qu.ad.bigFrames = true, true
			r.release()
		case lend && len(f.data) == f.wire && r.loans.outstanding.Load() < r.maxLent:
			r.lendNext(buf, f)
			filled = fillLent(buf, f)
		default:
			filled = fill(buf, f)
			r.release()
		}
		if !filled {
			bad++
			pool.Put(buf)
			continue
		}
		batch.Append(buf)
		added++
		bytes += buf.Len()
	}
	if batch.Full() {
		// Half the ring or more still waiting behind a full batch
		// (the kernel fills slots in order) is pressure too.
		qu.ad.busy = true
		if _, ok := r.readyAt((r.next + r.frames/2) % r.frames); ok {
			qu.ad.pressure = true
		}
	}
	qu.count(added, bytes, bad)
	return added
}

// maxStaleCopies bounds how many queued copies fillCopied skips looking
// for the one that belongs to a slot.
const maxStaleCopies = 64

// fillCopied reads the whole of a frame that was too large for its slot
// (TP_STATUS_COPY): the kernel queued a copy on the socket, in slot order,
// and the slot holds only its head. read(2) puts the virtio_net_hdr first
// (PACKET_VNET_HDR). The VLAN tag the kernel stripped is in the slot's
// header. A copy whose length is not the slot's belongs to an earlier
// slot that was given back unread (a frame Recv could not decode): it is
// skipped, so the queue and the ring line up again.
func fillCopied(fd int, buf *packet.Buffer, f frame) bool {
	room := buf.Room()
	for range maxStaleCopies {
		n, err := unix.Read(fd, room)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= packet.VnetHdrLen || n == len(room) {
			return false // no copy (the kernel could not make one) or too large for buf
		}
		if n-packet.VnetHdrLen != f.wire {
			continue
		}
		buf.SetLen(n)
		if !buf.PullVnetHdr() {
			return false
		}
		return restoreVLAN(buf, f)
	}
	return false
}

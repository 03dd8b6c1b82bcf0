package afpacket

import (
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"gvs/netdev/internal/rawsock"
)

// A ring mode's receive ring changes size at run time (adapt.go). The
// kernel cannot resize a ring in place, and replacing the ring of a live
// socket (unmap, free, set a new one) leaves it deaf: the kernel unhooks
// the socket for two RCU grace periods and purges what queued meanwhile,
// besides allocating the new ring — milliseconds to tens of milliseconds
// of frames lost. So a resize replaces the socket instead:
//
//  1. prepare, on a goroutine of its own (the allocation is the slow
//     part, and must not stall the PMD): a new socket with the new ring,
//     mapped and set up like the first but not bound, so it receives
//     nothing yet;
//  2. handover (one queue in a fanout group: see handover), on the
//     polling goroutine, in its Recv, once the old ring is drained (no frame ready, no slot lent: while a resize is pending
//     Recv copies frames instead of lending slots, so the loans run out):
//     bind the new socket (and join the fanout group), then dup3 it onto
//     the old socket's descriptor, so PollFD and Send keep their number;
//     from then on Recv reads the new ring. Between the bind and the old
//     socket's release both receive every frame; only the new one is
//     read, so nothing is delivered twice. A V2 ring is closed just before
//     the bind (closeForHandover: its next slot taken from the kernel), so
//     a frame that comes in the microseconds between the drain and the
//     bind is dropped by the old socket and counted in its
//     PACKET_STATISTICS, read after the bind, instead of lost uncounted
//     in a ring nobody reads (a V3 ring still can lose one so);
//  3. the old ring is unmapped on another goroutine: that drops the last
//     reference to the old socket, whose release waits for an RCU grace
//     period.
//
// For a moment both rings exist (the budget counts the larger). Status
// shows the ring in effect and the pending one until the handover.

// errRingLost is what Recv returns on a queue whose ring is gone (kept
// for callers that test for it; a failed resize keeps the old ring).
var errRingLost = errors.New("receive ring lost")

// preparedRing is a new socket with its ring, made by prepare.
type preparedRing struct {
	fd    int
	mem   []byte
	shape ringShape
	bufs  int64 // the socket buffer size it was given (sockBufAsk)
	err   error
}

// ringDrained reports whether user space holds no frame of the ring now:
// no V3 block is open and the next block or V2 slot is still the
// kernel's, and no slot is lent (polling goroutine).
func (qu *queue) ringDrained() bool {
	switch qu.mode {
	case RxRing:
		return qu.ring.left == 0 && atomic.LoadUint32(qu.ring.status())&unix.TP_STATUS_USER == 0
	case RxRingV2:
		_, ready := qu.ring2.ready()
		return !ready && (qu.ring2.loans == nil || qu.ring2.loans.outstanding.Load() == 0)
	}
	return false
}

// setRing installs a freshly mapped ring of the given shape.
func (qu *queue) setRing(mem []byte, s ringShape, cfg Config) {
	qu.mem = mem
	qu.shape = s
	switch qu.mode {
	case RxRing:
		qu.ring = rxRing{mem: mem, blockSize: s.blockSize, blocks: s.blocks}
	case RxRingV2:
		qu.ring2 = newRxRingV2(mem, s)
		if mem != nil && !cfg.copyRx {
			qu.ring2.loans = newRingLoans(&qu.ring2)
		}
	}
	if mem != nil {
		qu.inEffect.Store(s.pack())
	}
}

// resizeWanted reports whether adapt asked for another ring (polling
// goroutine).
func (qu *queue) resizeWanted() bool {
	w := qu.wantShape.Load()
	return w != 0 && w != qu.shape.pack()
}

// resizeStep moves a wanted resize on (polling goroutine): it starts the
// preparation of the new ring, or hands over to a prepared one once the
// ring is drained.
func (d *Device) resizeStep(qu *queue) {
	if p := qu.prep.Load(); p != nil {
		if p.err == nil && p.shape.pack() != qu.wantShape.Load() {
			// Prepared for a size no longer wanted (the budget's limit
			// fell, or a shrink came first): closing it waits for an
			// RCU grace period, so not here. The next call prepares
			// the wanted one, if any.
			qu.prep.Store(nil)
			qu.preparing = false
			go closePrepared(p)
			return
		}
		if (p.err != nil || qu.ringDrained()) && d.handover(qu, p) {
			qu.prep.Store(nil)
			qu.preparing = false
		}
		return
	}
	if qu.preparing || !qu.resizeWanted() {
		return
	}
	qu.preparing = true
	want := unpackShape(qu.wantShape.Load())
	d.prepWG.Add(1)
	go d.prepare(qu, want)
}

// prepare makes the new socket and ring for qu (its own goroutine), a few
// at a time machine-wide (MemoryBudget.StartResize).
func (d *Device) prepare(qu *queue, want ringShape) {
	defer d.prepWG.Done()
	d.cfg.Budget.StartResize()
	defer d.cfg.Budget.EndResize()
	start := time.Now()
	p := &preparedRing{shape: want, fd: -1}
	p.fd, p.mem, p.err = newSocket(d.ifindex, d.cfg, want)
	if p.err == nil {
		if p.bufs = d.sockBufAsk.Load(); p.bufs != 0 {
			if _, err := rawsock.SetBuffers(p.fd, int(p.bufs), d.log, d.name); err != nil {
				p.err = err
				closeSocket(p.fd, p.mem)
			}
		}
	}
	d.log.Debug("receive ring prepared", "device", d.name, "bytes", want.bytes(), "slot", want.frameSize, "took", time.Since(start), "err", p.err)
	qu.prep.Store(p)
}

// handover puts the prepared socket in the old one's place (polling
// goroutine, ring drained) and reports whether it is done with p; false:
// try again later.
//
// A queue in a fanout group (more than one queue) cannot overlap the two
// sockets: the group would hand the old one its share of the frames,
// which nobody reads any more. So there the old socket goes first — its
// share goes to the other queues until the new one joins
// (finishHandover) — and one queue of the device at a time, so that the
// group never empties.
func (d *Device) handover(qu *queue, p *preparedRing) bool {
	err := p.err
	if err == nil && d.fanout && !d.fanoutBusy.CompareAndSwap(false, true) {
		return false
	}
	closed := false
	if err == nil && !d.fanout {
		if qu.mode == RxRingV2 {
			if !qu.ring2.closeForHandover() {
				return false // a frame came after the drain check: read it first
			}
			closed = true
		}
		err = bindSocket(p.fd, d.ifindex)
	}
	if err == nil {
		// The old socket's last drops, those of the moment between
		// closing its ring and binding the new one among them (and
		// perhaps a frame of the microseconds since the bind, which the
		// new ring has too: counted once too often rather than lost
		// uncounted).
		qu.kdrops.collect(qu.fd)
		if err = unix.Dup3(p.fd, qu.fd, unix.O_CLOEXEC); err != nil {
			err = fmt.Errorf("dup3: %w", err)
		}
	}
	if err != nil {
		if closed {
			qu.ring2.reopenAfterHandover()
		}
		if p.err == nil {
			closeSocket(p.fd, p.mem)
		}
		if d.fanout && p.err == nil {
			d.fanoutBusy.Store(false)
		}
		old := qu.shape
		qu.wantShape.Store(old.pack())
		d.settle(qu)
		qu.ad.lastGrow = int64(time.Since(d.epoch)) + int64(time.Second) // no retry at once
		d.log.Warn("receive ring resize failed; kept the old ring", "device", d.name,
			"bytes", p.shape.bytes(), "err", err)
		return true
	}
	unix.Close(p.fd) // qu.fd is the new socket now
	if b := d.sockBufAsk.Load(); b != p.bufs && b != 0 {
		rawsock.SetBuffers(qu.fd, int(b), d.log, d.name)
	}
	oldMem, oldShape := qu.mem, qu.shape
	qu.setRing(p.mem, p.shape, d.cfg)
	qu.resizes.Add(1)
	d.settle(qu)
	// The mapping holds the last reference to the old socket: unmapping
	// it releases the socket (leaving the fanout group at once, then
	// waiting for an RCU grace period), off the polling goroutine.
	if d.fanout {
		qu.joinPending = true
		qu.oldReleased.Store(false)
		go func() {
			unix.Munmap(oldMem)
			qu.oldReleased.Store(true)
		}()
	} else {
		go unix.Munmap(oldMem)
	}
	d.log.Debug("receive ring resized", "device", d.name, "from", oldShape.bytes(), "to", p.shape.bytes(),
		"slot_from", oldShape.frameSize, "slot_to", p.shape.frameSize)
	return true
}

// finishHandover binds a fanout queue's new socket and joins it to the
// group once the old one has left (polling goroutine).
func (d *Device) finishHandover(qu *queue) {
	if !qu.oldReleased.Load() {
		return
	}
	qu.joinPending = false
	err := bindSocket(qu.fd, d.ifindex)
	if err == nil {
		err = joinFanout(qu.fd, d.fanoutID)
	}
	d.fanoutBusy.Store(false)
	if err != nil {
		// The socket stays out of the group (bound, it would take
		// every frame); the other queues receive its share.
		d.log.Warn("receive ring resize: new socket cannot join its fanout group", "device", d.name, "err", err)
	}
}

// dropPrepared closes a prepared socket nobody will take (Close, after
// the preparations ended).
func (qu *queue) dropPrepared() {
	if p := qu.prep.Swap(nil); p != nil {
		closePrepared(p)
	}
}

func closePrepared(p *preparedRing) {
	if p.err == nil {
		closeSocket(p.fd, p.mem)
	}
}

// ringStatus adds the receive ring's sizes to a Status map.
func (d *Device) ringStatus(st map[string]string) {
	qu := d.queues[0]
	if qu.mode != RxRing && qu.mode != RxRingV2 {
		return
	}
	now := unpackShape(qu.inEffect.Load())
	st["rx_ring_size"] = strconv.Itoa(now.bytes())
	if w := qu.wantShape.Load(); w != 0 && w != now.pack() {
		want := unpackShape(w)
		st["rx_ring_size_pending"] = strconv.Itoa(want.bytes())
		if qu.mode == RxRingV2 {
			st["rx_ring_slot_size_pending"] = strconv.Itoa(want.frameSize)
		}
	}
	st["rx_ring_resizes"] = strconv.FormatUint(qu.resizes.Load(), 10)
	if qu.mode == RxRingV2 {
		st["rx_ring_slot_size"] = strconv.Itoa(now.frameSize)
	}
}

// pack encodes a shape in one word (block size in 4 KiB pages, slot
// size, blocks), so that adapt can publish it at once for Status.
func (s ringShape) pack() int64 {
	return int64(s.blockSize>>12)<<44 | int64(s.frameSize)<<24 | int64(s.blocks)
}

func unpackShape(w int64) ringShape {
	return ringShape{blockSize: int(w>>44) << 12, frameSize: int(w>>24) & (1<<20 - 1), blocks: int(w) & (1<<24 - 1)}
}

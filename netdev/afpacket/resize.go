package afpacket

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// A ring mode's receive ring changes size at run time (adapt.go). The
// kernel cannot resize a ring in place: a new PACKET_RX_RING is refused
// (EBUSY) while the old one exists or is still mapped. So a resize unmaps
// the ring, frees it (a request for zero blocks) and sets and maps a new
// one; the kernel keeps the socket bound (and in its fanout group) across
// the swap. That must not race Recv, which reads the mapping without
// locks, so adapt only records the wanted shape and Recv does the swap
// itself, on the polling goroutine, once the ring is drained: while a
// swap is pending, Recv copies frames instead of lending their slots, so
// the loans run out. Frames that arrive during the swap land in the
// socket's receive queue (up to its receive buffer); Recv delivers them
// before it reads the new ring (queue.leftovers). Until the swap, Status
// shows the size in effect and the pending one.

// errRingLost is what Recv returns on a queue whose ring could be neither
// resized nor restored (the kernel refused memory for both).
var errRingLost = errors.New("receive ring lost in a failed resize")

// ringDrained reports whether user space holds no frame of the ring now:
// no V3 block is open and the next block or V2 slot is still the
// kernel's. Only then is a swap free of loss (polling goroutine).
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
	if mem != nil { // Status keeps showing the old ring during a swap
		qu.inEffect.Store(s.pack())
	}
}

// resizeWanted reports whether adapt asked for another ring (polling
// goroutine).
func (qu *queue) resizeWanted() bool {
	w := qu.wantShape.Load()
	return w != 0 && w != qu.shape.pack()
}

// resizeRing swaps qu's ring for one of the wanted size. On failure it
// puts back a ring of the old size; only if that fails too is the queue
// left without a ring, and an error returned.
func (d *Device) resizeRing(qu *queue) error {
	old := qu.shape
	want := unpackShape(qu.wantShape.Load())
	start := time.Now()
	if err := unix.Munmap(qu.mem); err != nil {
		qu.wantShape.Store(old.pack())
		d.log.Warn("receive ring resize failed", "device", d.name, "err", err)
		return nil
	}
	qu.setRing(nil, ringShape{blockSize: old.blockSize, frameSize: old.frameSize}, d.cfg)
	if err := freeRing(qu.fd, qu.mode); err != nil {
		// The old ring is still there: map it again.
		mem, merr := unix.Mmap(qu.fd, 0, old.bytes(), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
		if merr != nil {
			return fmt.Errorf("%s: %w: %v; %w", d.name, errRingLost, err, os.NewSyscallError("mmap", merr))
		}
		qu.setRing(mem, old, d.cfg)
		qu.wantShape.Store(old.pack())
		d.settle(qu)
		d.log.Warn("receive ring resize failed; kept the old ring", "device", d.name, "err", err)
		return nil
	}
	mem, err := mapRing(qu.fd, d.cfg, want)
	if err != nil {
		d.log.Warn("receive ring resize failed; keeping the old size", "device", d.name,
			"bytes", want.bytes(), "err", err)
		qu.wantShape.Store(old.pack())
		if mem, err = mapRing(qu.fd, d.cfg, old); err != nil {
			return d.ringLost(qu, old, err)
		}
		want = old
		qu.ad.lastGrow = int64(time.Since(d.epoch)) + int64(time.Second) // do not retry at once
	}
	qu.setRing(mem, want, d.cfg)
	qu.resizes.Add(1)
	qu.leftovers = true
	d.settle(qu)
	d.log.Debug("receive ring resized", "device", d.name, "from", old.bytes(), "to", want.bytes(),
		"slot_from", old.frameSize, "slot_to", want.frameSize, "took", time.Since(start))
	return nil
}

// ringLost tries to restore a ring of the old shape after a failed swap.
func (d *Device) ringLost(qu *queue, old ringShape, cause error) error {
	if mem, err := mapRing(qu.fd, d.cfg, old); err == nil {
		qu.setRing(mem, old, d.cfg)
		qu.wantShape.Store(old.pack())
		d.settle(qu)
		d.log.Warn("receive ring resize failed; kept the old size", "device", d.name, "err", cause)
		return nil
	}
	qu.wantShape.Store(0) // nothing more to try
	return fmt.Errorf("%s: %w: %w", d.name, errRingLost, cause)
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

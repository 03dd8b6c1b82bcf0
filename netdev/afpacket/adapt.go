package afpacket

import (
	"time"
)

// A receive ring is sized from what its queue needs, not fixed: it opens
// at Config.MinRingSize (reserved from the budget whatever is left, so
// the port can receive), and the queue's polling goroutine adapts it:
//
//   - pressure (the kernel dropped frames: a slot or block marked
//     TP_STATUS_LOSING, or more PACKET_STATISTICS drops than last time;
//     or the reader found the ring at least half full after a full batch,
//     or came round to a slot still lent, or a frame too large for its
//     slot found the receive buffer full) makes it four times as large
//     (growFactor), at most once per growInterval and not while a resize
//     is pending, so a burst that starts on an idle port reaches a few MiB
//     within tens of milliseconds;
//   - userspace-sock-buf-size (SetSocketBuffers, or Config.SocketBuffer at
//     Open) makes it grow straight to that size, at most an equal share of
//     the budget (every ring asks at once), and pressure grows it straight
//     there again after a shrink;
//   - IdleShrink without pressure or a full batch shrinks it back to the
//     minimum, as does a budget whose limit was lowered below what is
//     reserved.
//
// Growth beyond the minimum is reserved from Config.Budget first and may
// be granted in part (the ring then grows as far as the grant goes); no
// ring exceeds Config.MaxRingSize. The resize itself is resize.go's: a
// new socket prepared on a goroutine of its own (a few at a time
// machine-wide, MemoryBudget.StartResize) and handed over on the polling
// goroutine.

// growFactor is how much a ring grows per step under pressure: four
// times, so that a TCP stream starting on an idle port (256 KiB) has the
// 16 MiB it may need within three steps; each step costs a burst of
// drops, which TCP pays in retransmits.
const growFactor = 4

// growInterval is the least time between two growths of one ring: long
// enough for the new ring to show whether it is enough.
const growInterval = 10 * time.Millisecond

// adaptEvery is how many Recv calls pass between two checks of a ring's
// size when nothing pressing happened.
const adaptEvery = 64

// adaptState is one queue's sizing state (polling goroutine only, and
// Close once polling stopped).
type adaptState struct {
	ask       int    // userspace-sock-buf-size the ring follows (0: unset)
	reserved  int    // bytes this ring holds in the budget
	seenDrops uint64 // kernel drops at the last check
	pressure  bool   // set by Recv: the ring overflowed or nearly did
	busy      bool   // set by Recv: a batch came back full
	bigFrames bool   // set by Recv: frames larger than a slot came (GSO)
	polls     uint32
	// lastActive is the last pressure, full batch or size change, and
	// lastGrow the last growth (ns since Device.epoch).
	lastActive, lastGrow int64
}

// wantAdapt reports whether Recv should call adapt now.
func (d *Device) wantAdapt(qu *queue) bool {
	a := &qu.ad
	a.polls++
	return a.pressure || a.polls%adaptEvery == 0 || int(d.sockBufAsk.Load()) != a.ask
}

// targetShape is the ring the queue has or is about to have.
func (qu *queue) targetShape() ringShape {
	if qu.resizeWanted() {
		return unpackShape(qu.wantShape.Load())
	}
	return qu.shape
}

// adapt decides the queue's ring size (see above) and, when it changes,
// reserves the growth and asks for the resize (wantShape).
func (d *Device) adapt(qu *queue) {
	a := &qu.ad
	now := int64(time.Since(d.epoch))
	if k := qu.kdrops.total(); k != a.seenDrops {
		a.seenDrops, a.pressure = k, true
	}
	ask := int(d.sockBufAsk.Load())
	cur := qu.targetShape()
	lo := d.cfg.ringBytes(d.cfg.MinRingSize, true)
	target := cur.bytes()
	switch {
	case ask != a.ask:
		// Every ring asks at once: each gets at most an equal share
		// of the budget.
		a.ask = ask
		share := d.cfg.ringBytes(int(min(int64(ask), int64(d.cfg.MaxRingSize), d.cfg.Budget.Share())), false)
		target = max(target, share)
		a.lastActive = now
	case a.pressure:
		// Not while a resize is pending: the pressure was measured on
		// the ring it replaces.
		if now-a.lastGrow >= int64(growInterval) && !qu.resizeWanted() {
			target = max(growFactor*target, min(ask, d.cfg.MaxRingSize))
			a.lastGrow = now
		}
		a.lastActive = now
	case d.cfg.Budget.Over() && target > lo:
		target = lo
	case a.busy:
		a.lastActive = now
	case target > lo && now-a.lastActive >= int64(d.cfg.IdleShrink):
		target = lo
		a.lastActive = now
	}
	bulk := a.bigFrames || cur.frameSize == V2GSOFrameSize
	a.pressure, a.busy, a.bigFrames = false, false, false
	target = d.cfg.ringBytes(target, true)
	if need := target - a.reserved; need > 0 {
		a.reserved += int(d.cfg.Budget.Reserve(int64(need)))
		if a.reserved < target { // a partial grant: as far as it goes
			target = d.cfg.ringBytes(a.reserved, false)
		}
	}
	if want := d.cfg.shapeFor(max(target, lo), ask, bulk); want != cur {
		qu.wantShape.Store(want.pack())
	}
	d.settle(qu)
}

// settle gives back to the budget what the queue reserved beyond the ring
// in effect and the one it waits for.
func (d *Device) settle(qu *queue) {
	keep := max(qu.shape.bytes(), qu.targetShape().bytes())
	if extra := qu.ad.reserved - keep; extra > 0 && qu.mem != nil {
		d.cfg.Budget.Release(int64(extra))
		qu.ad.reserved = keep
	}
}

package afpacket

import (
	"fmt"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"gvs/packet"
)

// Recv appends up to the batch's free room of frames from queue q (its
// ring, or recvmmsg in RxRecvmmsg mode) in buffers from pool. It never
// blocks. When pool runs dry the rest stay queued for the next call. The
// ring's size is adapted here, on the polling goroutine (adapt.go), and a
// resize handed over here once the ring has been drained (resize.go).
func (d *Device) Recv(q int, batch *packet.Batch, pool *packet.Pool) (int, error) {
	qu := d.queues[q]
	if qu.mode == RxRecvmmsg {
		return d.recvMmsg(qu, batch, pool)
	}
	if qu.mem == nil {
		return 0, fmt.Errorf("%s: %w", d.name, errRingLost)
	}
	if qu.joinPending {
		d.finishHandover(qu)
	}
	var n int
	if qu.mode == RxRingV2 {
		n = d.recvRingV2(qu, batch, pool, !qu.resizeWanted())
	} else {
		n = d.recvRingV3(qu, batch, pool)
	}
	if n == 0 {
		qu.clearErrorSometimes()
	} else {
		qu.idle = 0
	}
	if d.wantAdapt(qu) {
		d.adapt(qu)
	}
	if qu.preparing || qu.resizeWanted() {
		d.resizeStep(qu)
	}
	return n, nil
}

// Housekeep implements netdev.Housekeeper: the ring-size decision and
// resize step Recv makes every adaptEvery calls, for a queue the polling
// goroutine calls Recv on only now and then because it is idle (so an
// idle ring shrinks, and follows a lowered budget or a new
// userspace-sock-buf-size, within a few calls).
func (d *Device) Housekeep(q int) {
	qu := d.queues[q]
	if qu.mode == RxRecvmmsg || qu.mem == nil {
		return
	}
	if qu.joinPending {
		d.finishHandover(qu)
	}
	d.adapt(qu)
	if qu.preparing || qu.resizeWanted() {
		d.resizeStep(qu)
	}
}

// count adds one Recv's figures to the queue's counters.
func (qu *queue) count(added, bytes, bad int) {
	if added > 0 {
		qu.ctr.rxPackets.Add(uint64(added))
		qu.ctr.rxBytes.Add(uint64(bytes))
	}
	if bad > 0 {
		qu.ctr.rxErrors.Add(uint64(bad))
	}
}

// recvRingV3 is Recv for RxRing: it walks the blocks the kernel handed
// over, copying each frame.
func (d *Device) recvRingV3(qu *queue, batch *packet.Batch, pool *packet.Pool) int {
	r := &qu.ring
	added, bytes, bad := 0, 0, 0
	for !batch.Full() {
		if r.left == 0 {
			ok, losing := r.open()
			if !ok {
				break
			}
			if losing {
				qu.kdrops.collect(qu.fd)
				qu.ad.pressure = true
			}
			continue
		}
		f, ok := r.peek()
		if !ok {
			bad += r.left
			r.release()
			continue
		}
		buf := pool.Get()
		if buf == nil {
			break
		}
		if !fill(buf, f) {
			bad++
			pool.Put(buf)
			r.next()
			continue
		}
		batch.Append(buf)
		added++
		bytes += buf.Len()
		r.next()
	}
	if batch.Full() {
		// Half the ring or more still waiting behind a full batch is
		// pressure too (blocks are handed over in order).
		qu.ad.busy = true
		half := (r.block + r.blocks/2) % r.blocks
		if atomic.LoadUint32(r.statusOf(half))&unix.TP_STATUS_USER != 0 {
			qu.ad.pressure = true
		}
	}
	qu.count(added, bytes, bad)
	return added
}

// errorCheckInterval is how many empty ring reads pass between reads of
// SO_ERROR (see clearErrorSometimes).
const errorCheckInterval = 64

// clearErrorSometimes reads (and so clears) the socket's pending error
// every errorCheckInterval empty reads of the ring. The kernel sets one
// (ENETDOWN) when the link goes down; it keeps poll(2) reporting POLLERR
// until a system call consumes it, and ring reads make none: without
// this, a PMD sleeping in poll would spin after every link flap.
func (qu *queue) clearErrorSometimes() {
	if qu.idle++; qu.idle%errorCheckInterval == 0 {
		_, _ = unix.GetsockoptInt(qu.fd, unix.SOL_SOCKET, unix.SO_ERROR)
	}
}

package afxdp

import (
	"fmt"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"gvs/packet"
)

// maxTxBatch bounds options:tx-batch-size: a Send never carries more.
const maxTxBatch = packet.BatchSize

// txKickAttempts bounds how often Send kicks a sub-batch that the kernel
// has not fully taken (EAGAIN: completion ring or send buffer full)
// before it leaves the rest to Recv's kick and moves on.
const txKickAttempts = 4

// Send copies the batch's frames into transmit chunks and has the kernel
// send them, about tx-batch-size descriptors per kick, kicking until each
// sub-batch has left the ring. A frame longer than a chunk spans several
// (multi-buffer, XDP_PKT_CONTD). Frames larger than
// Capabilities().MaxFrame and frames that find no chunk or ring slot are
// dropped and counted in TxDrops. It takes ownership of every buffer: all
// go back to their pools before it returns, and the batch is left empty.
func (d *Device) Send(q int, batch *packet.Batch) error {
	if q < 0 || q >= len(d.socks) {
		n := batch.Len()
		packet.FreeBatch(batch)
		if len(d.socks) > 0 {
			d.socks[0].counters.txDrops.Add(uint64(n))
		}
		return fmt.Errorf("%s: transmit queue %d out of range", d.name, q)
	}
	s := d.socks[q]
	maxFrame := int(d.maxFrame.Load())
	bufs := batch.Buffers()
	var sent, bytes, drops uint64
	i, idle := 0, 0
	for i < len(bufs) && idle < txIdleRounds {
		s.reap()
		var produced uint32
		for i < len(bufs) {
			data := bufs[i].Data()
			if len(data) > maxFrame || len(data) == 0 {
				drops++
				i++
				continue
			}
			need := s.descsFor(len(data))
			if produced > 0 && produced+need > d.txBatch ||
				s.tx.free(produced+need) < produced+need || uint32(len(s.txFree)) < need {
				break
			}
			s.produce(produced, data)
			produced += need
			sent++
			bytes += uint64(len(data))
			i++
		}
		if produced == 0 {
			if i < len(bufs) {
				// No chunk or slot: push the ring out and reap; give up
				// after a few rounds without progress.
				s.flush()
				idle++
			}
			continue
		}
		idle = 0
		s.tx.submit(produced)
		s.flush()
	}
	drops += uint64(len(bufs) - i)
	packet.FreeBatch(batch)
	c := &s.counters
	c.txPackets.Add(sent)
	c.txBytes.Add(bytes)
	if drops != 0 {
		c.txDrops.Add(drops)
	}
	return nil
}

// txIdleRounds bounds how many times Send waits for a chunk or ring slot
// in a row before it drops the rest of the batch.
const txIdleRounds = 8

// maxTxDescs bounds the chunks one frame may span: the kernel builds an
// skb of at most MAX_SKB_FRAGS (17) fragments plus its head.
const maxTxDescs = 16

// descsFor returns how many chunks a frame of n bytes spans.
func (s *xsk) descsFor(n int) uint32 {
	return uint32((uint64(n) + s.umem.chunkSize - 1) / s.umem.chunkSize)
}

// produce copies data into free chunks and writes their descriptors at
// offset off past the producer index, all but the last marked
// XDP_PKT_CONTD. The caller checked there is room.
func (s *xsk) produce(off uint32, data []byte) {
	for {
		addr := s.txFree[len(s.txFree)-1]
		s.txFree = s.txFree[:len(s.txFree)-1]
		n := copy(s.umem.mem[addr:addr+s.umem.chunkSize], data)
		data = data[n:]
		var opts uint32
		if len(data) > 0 {
			opts = unix.XDP_PKT_CONTD
		}
		s.tx.descs[(s.tx.cachedProd+off)&s.tx.mask] = unix.XDPDesc{Addr: addr, Len: uint32(n), Options: opts}
		off++
		if len(data) == 0 {
			return
		}
	}
}

// flush kicks the kernel until the tx ring is empty, reaping completions
// in between so a full completion ring cannot hold it up. It reports
// whether the ring emptied. If it did not, it marks the socket so the
// next Recv on the queue kicks again: descriptors left in the ring are
// otherwise only sent by the next Send, which for a quiet TCP flow may
// never come.
func (s *xsk) flush() bool {
	for range txKickAttempts {
		if s.tx.outstanding() == 0 {
			s.txStuck.Store(0)
			return true
		}
		s.kickTx()
		s.reap()
	}
	if s.tx.outstanding() == 0 {
		s.txStuck.Store(0)
		return true
	}
	s.txStuck.Store(stuckMark | uint64(s.tx.cachedProd))
	return false
}

// stuckMark tags a txStuck value as set, so producer index 0 is not
// mistaken for "clear".
const stuckMark = 1 << 32

// kickStuck is Recv's side of flush: if Send left descriptors behind,
// kick, and clear the mark once the kernel's consumer index has passed
// the producer index Send recorded (unless Send recorded a newer one
// meanwhile). It only reads the tx ring's indices, atomically.
func (s *xsk) kickStuck() {
	mark := s.txStuck.Load()
	if mark == 0 {
		return
	}
	s.kickTx()
	if int32(atomic.LoadUint32(s.tx.consumer)-uint32(mark)) >= 0 {
		s.txStuck.CompareAndSwap(mark, 0)
	}
}

// reap moves completed transmit chunks back to the free stack. The stack
// has room for every chunk, so it never grows.
func (s *xsk) reap() {
	n := s.comp.available(s.comp.size)
	if n == 0 {
		return
	}
	for i := range n {
		s.txFree = append(s.txFree, s.umem.chunkOf(s.comp.addrs[(s.comp.cachedCons+i)&s.comp.mask]))
	}
	s.comp.release(n)
}

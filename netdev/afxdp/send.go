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

// Send has the kernel send the batch's frames, about tx-batch-size
// descriptors per kick, kicking until each sub-batch has left the ring.
// A frame lent by a member of the device's UMEM group goes into the tx
// ring as a descriptor of the chunk it is in (no copy): the loan is taken
// over (packet.Buffer.TakeLoan) and the completion ring gives the chunk
// back. Other frames are copied into free chunks; one longer than a
// chunk spans several (multi-buffer, XDP_PKT_CONTD). Frames larger than
// Capabilities().MaxFrame and frames that find no chunk or ring slot are
// dropped and counted in TxDrops. It takes ownership of every buffer:
// all go back to their pools before it returns, and the batch is left
// empty.
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
	var sent, bytes, drops, zeroCopy uint64
	i, idle := 0, 0
	for i < len(bufs) && idle < txIdleRounds {
		s.reap()
		var produced uint32
		for i < len(bufs) {
			buf := bufs[i]
			size := buf.Len()
			if size > maxFrame || size == 0 {
				drops++
				i++
				continue
			}
			addr, inPlace := s.inPlace(buf)
			need := uint32(1)
			if !inPlace {
				need = s.descsFor(size)
			}
			if produced > 0 && produced+need > d.txBatch || s.tx.free(produced+need) < produced+need ||
				!inPlace && s.txCache.ensure(s.group, int(need)) < int(need) {
				break
			}
			if inPlace {
				l, _ := buf.TakeLoan()
				l.(*rxLender).handedOver()
				s.tx.descs[(s.tx.cachedProd+produced)&s.tx.mask] = unix.XDPDesc{Addr: addr, Len: uint32(size)}
				zeroCopy++
			} else {
				s.produce(produced, buf.Data())
			}
			produced += need
			sent++
			bytes += uint64(size)
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
		s.txInflight += int(produced)
		s.flush()
	}
	drops += uint64(len(bufs) - i)
	packet.FreeBatch(batch)
	c := &s.counters
	c.txPackets.Add(sent)
	c.txBytes.Add(bytes)
	if zeroCopy != 0 {
		c.txZeroCopy.Add(zeroCopy)
	}
	if sent != zeroCopy {
		c.txCopied.Add(sent - zeroCopy)
	}
	if drops != 0 {
		c.txDrops.Add(drops)
	}
	return nil
}

// inPlace reports whether buf's frame is in a chunk of this socket's
// UMEM, lent by a member's Recv, and its descriptor address: the chunk
// plus the frame's offset in it (aligned mode takes any offset as long as
// the frame ends inside the chunk, which Lend's bounds guarantee).
func (s *xsk) inPlace(buf *packet.Buffer) (uint64, bool) {
	l, token := buf.Loan()
	rl, ok := l.(*rxLender)
	if !ok || rl.group != s.group {
		return 0, false
	}
	return uint64(token) + uint64(buf.Headroom()), true
}

// txIdleRounds bounds how many times Send waits for a chunk or ring slot
// in a row before it drops the rest of the batch.
const txIdleRounds = 8

// maxTxDescs bounds the chunks one frame may span: the kernel builds an
// skb of at most MAX_SKB_FRAGS (17) fragments plus its head.
const maxTxDescs = 16

// descsFor returns how many chunks a frame of n bytes spans.
func (s *xsk) descsFor(n int) uint32 {
	return uint32((uint64(n) + s.chunk - 1) / s.chunk)
}

// produce copies data into free chunks from the transmit cache and writes
// their descriptors at offset off past the producer index, all but the
// last marked XDP_PKT_CONTD. The caller checked there is room.
func (s *xsk) produce(off uint32, data []byte) {
	for {
		addr := s.txCache.getNewest()
		n := copy(s.mem[addr:addr+s.chunk], data)
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

// reap moves completed transmit chunks, copies and frames sent in place
// alike, to the transmit cache, which gives the surplus back to the
// group a batch at a time.
func (s *xsk) reap() {
	n := s.comp.available(s.comp.size)
	if n == 0 {
		return
	}
	for i := range n {
		s.txCache.put(s.group, s.chunkOf(s.comp.addrs[(s.comp.cachedCons+i)&s.comp.mask]))
	}
	s.comp.release(n)
	s.txInflight -= int(n)
}

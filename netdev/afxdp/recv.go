package afxdp

import (
	"fmt"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"gvs/packet"
)

// Recv delivers up to the batch's free room of frames from queue q's rx
// ring in buffers from pool: a frame in one chunk is lent to its buffer
// in place (packet.Buffer.Lend; the chunk comes back through the
// socket's lender when the buffer returns to its pool, or through a
// member's completion ring if a member sends it); multi-buffer frames
// are copied out, and oversized TCP ones cut to the MTU. Partial TCP/UDP
// checksums are completed (see the package documentation). The fill ring
// is topped up from the free chunks once per call. It never blocks. When
// the pool runs dry it stops and leaves the rest in the ring.
func (d *Device) Recv(q int, batch *packet.Batch, pool *packet.Pool) (int, error) {
	if q < 0 || q >= len(d.socks) {
		return 0, fmt.Errorf("%s: receive queue %d out of range", d.name, q)
	}
	s := d.socks[q]
	s.kickStuck()
	avail := s.rx.available(s.rx.size)
	if avail == 0 && !s.seg.active {
		if s.fillShort {
			s.topUpFill()
		}
		if s.fill.needWakeup() {
			s.kickRx()
		}
		return 0, nil
	}
	before := batch.Len()
	var t tally
	if s.seg.active {
		t.add(s.seg.emit(batch, pool))
	}
	mtu := int(d.mtu.Load())
	fastMax := mtu + 14 // an untagged frame this long cannot exceed the MTU
	var used uint32
	for used < avail && !batch.Full() && !s.seg.active {
		desc := &s.rx.descs[(s.rx.cachedCons+used)&s.rx.mask]
		frame := s.frame(desc.Addr, desc.Len)
		if desc.Options&unix.XDP_PKT_CONTD == 0 && withinMTU(frame, fastMax) {
			buf := pool.Get()
			if buf == nil {
				break // pool exhausted (the pool counts it): leave the rest queued
			}
			used++
			base := s.chunkOf(desc.Addr)
			buf.Lend(s.mem[base:base+s.chunk], int(desc.Addr-base), len(frame), s.lender, int(base))
			s.lender.lent++
			if repairChecksum(buf) {
				t.fixed++
			}
			batch.Append(buf)
			t.pkts++
			t.lent++
			t.bytes += uint64(len(frame))
			continue
		}
		k, n := s.gather(used, avail)
		if k == 0 {
			break // the rest of a multi-buffer frame is not there yet
		}
		used += k
		if n < 0 {
			t.bad++
			continue
		}
		s.deliverLarge(s.seg.frame[:n], mtu, batch, pool, &t)
	}
	t.bad += s.seg.abandoned
	s.seg.abandoned = 0
	s.rx.release(used)
	s.rxTaken += uint64(used)
	s.topUpFill()
	if s.fill.needWakeup() {
		s.kickRx()
	}
	t.commit(&s.counters)
	return batch.Len() - before, nil
}

// topUpFill puts free chunks in every slot of the fill ring the kernel
// has emptied: from the receive cache, which loans coming back refill,
// and from the group's free list a batch at a time. Chunks lent to
// buffers or in transmit rings are not available: the fill ring stays
// full as long as the group has free chunks (each queue reserved two
// rings' worth), and a shortfall is retried on the next call.
func (s *xsk) topUpFill() {
	room := int(s.fill.size - (s.fill.cachedProd - atomic.LoadUint32(s.fill.consumer)))
	if room == 0 {
		s.fillShort = false
		return
	}
	c := &s.lender.cache
	n := c.ensure(s.group, room)
	for i := range n {
		s.fill.addrs[(s.fill.cachedProd+uint32(i))&s.fill.mask] = c.get()
	}
	s.fill.submit(uint32(n))
	s.fillGiven += uint64(n)
	s.fillShort = n < room
}

// withinMTU reports, without parsing, that frame cannot carry more than
// the MTU (fastMax is MTU + 14): untagged and at most fastMax long, or
// with one VLAN tag and at most 4 bytes longer. Longer frames (and nil:
// a bad descriptor) take the slow path, which parses.
func withinMTU(frame []byte, fastMax int) bool {
	n := len(frame)
	if n <= fastMax {
		return frame != nil
	}
	if n > fastMax+4 {
		return false
	}
	et := uint16(frame[12])<<8 | uint16(frame[13])
	return et == packet.EtherTypeVLAN || et == packet.EtherTypeQinQ
}

// tally accumulates one Recv call's counts, committed with one atomic add
// each.
type tally struct{ pkts, bytes, bad, fixed, cut, lent uint64 }

func (t *tally) add(pkts, bytes uint64) { t.pkts += pkts; t.bytes += bytes }

func (t *tally) commit(c *counters) {
	if t.pkts != 0 {
		c.rxPackets.Add(t.pkts)
		c.rxBytes.Add(t.bytes)
	}
	if t.bad != 0 {
		c.rxErrors.Add(t.bad)
	}
	if t.fixed != 0 {
		c.csumFixed.Add(t.fixed)
	}
	if t.cut != 0 {
		c.rxSegmented.Add(t.cut)
	}
	if t.lent != 0 {
		c.rxLent.Add(t.lent)
	}
}

// gather copies the frame whose first descriptor is at used into the
// segmenter's scratch buffer and puts its chunks in the receive cache. It
// returns how many descriptors the frame took (0 if its last one is not
// in the ring yet) and its length, or -1 if it is malformed or does not
// fit.
func (s *xsk) gather(used, avail uint32) (k uint32, n int) {
	for k = 0; used+k < avail; k++ {
		if s.rx.descs[(s.rx.cachedCons+used+k)&s.rx.mask].Options&unix.XDP_PKT_CONTD == 0 {
			break
		}
	}
	if used+k == avail {
		return 0, 0
	}
	k++
	for i := range k {
		desc := &s.rx.descs[(s.rx.cachedCons+used+i)&s.rx.mask]
		part := s.frame(desc.Addr, desc.Len)
		if desc.Addr < uint64(len(s.mem)) {
			s.lender.cache.put(s.group, s.chunkOf(desc.Addr))
		}
		if part == nil || n < 0 || n+len(part) > len(s.seg.frame) {
			n = -1
			continue
		}
		n += copy(s.seg.frame[n:], part)
	}
	return k, n
}

// deliverLarge handles a frame longer than an untagged MTU-sized one: a
// VLAN-tagged frame within the MTU goes up as it is, a TCP frame beyond
// it is cut into segments, anything else beyond it is dropped.
func (s *xsk) deliverLarge(frame []byte, mtu int, batch *packet.Batch, pool *packet.Pool, t *tally) {
	if s.seg.start(frame, mtu) {
		t.cut++
		t.add(s.seg.emit(batch, pool))
		return
	}
	// The segmenter's start parsed the frame; where it found no L3
	// header, judge by an untagged Ethernet header.
	l3 := int(s.seg.offs.L3)
	if l3 == 0 {
		l3 = 14
	}
	if len(frame)-l3 > mtu {
		t.bad++
		return
	}
	buf := pool.Get()
	if buf == nil {
		return // counted by the pool
	}
	if len(frame) > len(buf.Room()) {
		pool.Put(buf)
		t.bad++
		return
	}
	copy(buf.Room(), frame)
	buf.SetLen(len(frame))
	if repairChecksum(buf) {
		t.fixed++
	}
	batch.Append(buf)
	t.add(1, uint64(len(frame)))
}

// repairChecksum completes a partial TCP or UDP checksum: AF_XDP gives no
// checksum metadata, and a sender with checksum offload (a veth's default)
// leaves only the pseudo-header sum in the field. The frame is parsed for
// that; the caller re-parses after setting InPort.
func repairChecksum(buf *packet.Buffer) bool {
	if buf.Parse() != packet.StatusOK {
		return false
	}
	return buf.FixPartialChecksum()
}

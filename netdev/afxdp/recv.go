package afxdp

import (
	"fmt"

	"golang.org/x/sys/unix"

	"gvs/packet"
)

// Recv copies up to the batch's free room of frames from queue q's rx
// ring into buffers from pool, hands their chunks straight back to the
// fill ring, completes partial TCP/UDP checksums and cuts oversized TCP
// frames to the MTU (see the package documentation). It never blocks.
// When the pool runs dry it stops and leaves the rest in the ring.
func (d *Device) Recv(q int, batch *packet.Batch, pool *packet.Pool) (int, error) {
	if q < 0 || q >= len(d.socks) {
		return 0, fmt.Errorf("%s: receive queue %d out of range", d.name, q)
	}
	s := d.socks[q]
	s.kickStuck()
	avail := s.rx.available(s.rx.size)
	if avail == 0 && !s.seg.active {
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
		frame := s.umem.frame(desc.Addr, desc.Len)
		if desc.Options&unix.XDP_PKT_CONTD == 0 && withinMTU(frame, fastMax) {
			buf := pool.Get()
			if buf == nil {
				break // pool exhausted (the pool counts it): leave the rest queued
			}
			used++
			s.refill(desc.Addr)
			if frame == nil || len(frame) > len(buf.Room()) {
				pool.Put(buf)
				t.bad++
				continue
			}
			copy(buf.Room(), frame)
			buf.SetLen(len(frame))
			if repairChecksum(buf) {
				t.fixed++
			}
			batch.Append(buf)
			t.pkts++
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
	s.fill.submit(s.fillPending)
	s.fillPending = 0
	if s.fill.needWakeup() {
		s.kickRx()
	}
	t.commit(&s.counters)
	return batch.Len() - before, nil
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
type tally struct{ pkts, bytes, bad, fixed, cut uint64 }

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
}

// gather copies the frame whose first descriptor is at used into the
// segmenter's scratch buffer and queues its chunks for the fill ring. It
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
		s.refill(desc.Addr)
		part := s.umem.frame(desc.Addr, desc.Len)
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

// refill queues the chunk holding addr for the fill ring; Recv submits
// them together. The fill ring has a slot for every receive chunk, so
// there is always room.
func (s *xsk) refill(addr uint64) {
	s.fill.addrs[(s.fill.cachedProd+s.fillPending)&s.fill.mask] = s.umem.chunkOf(addr)
	s.fillPending++
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

package dpif

import "gvs/packet"

// A frame from a port with virtio_net_hdr (AF_PACKET with
// PACKET_VNET_HDR, tap) may ask for segmentation (GSO: a TCP frame of up
// to 64 KiB from a sender with TSO) or carry a partial checksum
// (NEEDS_CSUM). A port without the header (AF_XDP) cannot pass either
// request on, so the datapath does the work before handing the frame
// over, as the kernel's software GSO would: without it TCP from a
// system or internal port to an AF_XDP port stalls.

// segment cuts the GSO frame b for port p (index i) into segments of
// Vnet.GSOSize payload bytes and queues them, taking ownership of b. The
// segments come from the context's pool (the last one is b itself); if
// the pool runs dry part-way the rest are dropped and counted.
func (c *execCtx) segment(b *packet.Buffer, i int32, p *port) {
	pc := &p.stats[c.slot]
	if err := c.seg.Start(b); err != nil {
		pc.txOffloadDrops.Add(1)
		c.txDrops++
		c.pool.Put(b)
		return
	}
	segs := c.seg.Remaining()
	pc.txSegmented.Add(1)
	pc.txSegments.Add(uint64(segs))
	for c.seg.Remaining() > 1 {
		d := c.pool.Get()
		if d == nil || c.seg.Next(d) != nil {
			if d != nil {
				c.pool.Put(d) // too small for a segment: the pool's FrameSize is below the MTU
				pc.txOffloadDrops.Add(uint64(c.seg.Remaining()))
			} else {
				pc.txNoBuffer.Add(uint64(c.seg.Remaining()))
			}
			c.txDrops += uint64(c.seg.Remaining())
			c.seg.Abort()
			c.pool.Put(b)
			return
		}
		c.enqueue(d, i, p)
	}
	c.enqueue(c.seg.Last(), i, p)
}

// completeChecksum resolves a partial checksum of a non-GSO frame for
// port p; it reports false if it dropped b instead.
func (c *execCtx) completeChecksum(b *packet.Buffer, p *port) bool {
	pc := &p.stats[c.slot]
	partial := b.Vnet.Flags&packet.VnetNeedsCsum != 0
	if !b.CompleteVnetChecksum() {
		pc.txOffloadDrops.Add(1)
		c.txDrops++
		c.pool.Put(b)
		return false
	}
	if partial {
		pc.txCsumCompleted.Add(1)
	}
	b.HasVnet = false
	return true
}

package dpif

import (
	"gvs/packet"
)

// execCtx executes actions for one writer of packets: a PMD, or the
// non-PMD context (Execute, slow upcalls) under its mutex. Outputs are
// accumulated per port and sent in batches by flush; nothing here
// allocates once the batch array has grown to the number of ports.
type execCtx struct {
	dp    *Datapath
	slot  int // flow statistics slot and transmit queue identity
	pool  *packet.Pool
	ports *portTable
	out   []packet.Batch // indexed like ports.list
	dirty []int32        // indices of out with packets

	txDrops  uint64 // output to a missing port, clone failure, unresolvable offload
	seg      packet.Segmenter
	txPkts   uint64
	txBatchs uint64
}

// setPorts switches to a new port table; out must be empty (flushed).
func (c *execCtx) setPorts(t *portTable) {
	c.ports = t
	if len(c.out) < len(t.list) {
		c.out = make([]packet.Batch, len(t.list)+4)
		c.dirty = make([]int32, 0, len(t.list)+4)
	}
}

// execute applies actions to b, which it takes ownership of.
func (c *execCtx) execute(b *packet.Buffer, actions Actions) {
	last := actions.lastOutput()
	if last < 0 {
		c.pool.Put(b)
		return
	}
	for i := range actions[:last+1] {
		a := &actions[i]
		switch a.Kind {
		case ActOutput:
			if i == last {
				c.output(b, a.Port)
				return
			}
			if cl := c.pool.Clone(b); cl != nil {
				c.output(cl, a.Port)
			} else {
				c.txDrops++
				if pc := c.ports.counters(a.Port, c.slot); pc != nil {
					pc.txNoBuffer.Add(1)
				} else if pc := c.ports.counters(b.InPort, c.slot); pc != nil {
					pc.txNoPort.Add(1) // no copy, and nowhere to send it anyway
				}
			}
		case ActPushVLAN:
			b.PushVLAN(a.TCI)
		case ActPopVLAN:
			b.PopVLAN()
		case ActSetEthDst:
			if d := b.Data(); len(d) >= packet.EthHeaderLen {
				copy(d[0:6], a.MAC[:])
			}
		case ActSetEthSrc:
			if d := b.Data(); len(d) >= packet.EthHeaderLen {
				copy(d[6:12], a.MAC[:])
			}
		case ActSetVLANTCI:
			if d := b.Data(); len(d) >= packet.EthHeaderLen+packet.VLANHeaderLen {
				if tpid := uint16(d[12])<<8 | uint16(d[13]); tpid == packet.EtherTypeVLAN || tpid == packet.EtherTypeQinQ {
					d[14], d[15] = byte(a.TCI>>8), byte(a.TCI)
				}
			}
		}
	}
}

// output queues b for port portNo, sending the port's batch when full.
func (c *execCtx) output(b *packet.Buffer, portNo uint32) {
	i, ok := c.ports.idx[portNo]
	if !ok {
		if pc := c.ports.counters(b.InPort, c.slot); pc != nil {
			pc.txNoPort.Add(1)
		}
		c.pool.Put(b)
		c.txDrops++
		return
	}
	p := c.ports.list[i]
	if b.HasVnet && !p.caps.VnetHdr {
		// The frame leaves on a port that takes no virtio_net_hdr:
		// what the header asks for is done here (offload.go).
		if b.Vnet.IsGSO() {
			c.segment(b, i, p)
			return
		}
		if !c.completeChecksum(b, p) {
			return
		}
	}
	c.enqueue(b, i, p)
}

// enqueue appends b to port p's (index i) batch, sending it when full.
func (c *execCtx) enqueue(b *packet.Buffer, i int32, p *port) {
	batch := &c.out[i]
	if batch.Len() == 0 {
		c.dirty = append(c.dirty, i)
	}
	batch.Append(b)
	if batch.Full() {
		c.send(p, batch)
	}
}

// flush sends every pending per-port batch.
func (c *execCtx) flush() {
	for _, i := range c.dirty {
		if batch := &c.out[i]; batch.Len() > 0 {
			c.send(c.ports.list[i], batch)
		}
	}
	c.dirty = c.dirty[:0]
}

// send hands batch to the port's device on this context's transmit queue,
// locking it when the device has too few queues to give one to each.
func (c *execCtx) send(p *port, batch *packet.Batch) {
	c.txPkts += uint64(batch.Len())
	c.txBatchs++
	if !p.sharedTx {
		p.dev.Send(c.slot, batch)
	} else {
		q := c.slot % len(p.txLocks)
		p.txLocks[q].Lock()
		p.dev.Send(q, batch)
		p.txLocks[q].Unlock()
	}
	if batch.Len() != 0 { // a device broke the Send contract; don't resend
		batch.Reset()
	}
}

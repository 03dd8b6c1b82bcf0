package dpif

import (
	"gvs/packet"
)

// maxRecircDepth bounds how often one packet is recirculated within
// one pass, as Open vSwitch's MAX_RECIRC_DEPTH: a translation loop
// cannot keep a PMD busy forever. A packet recirculated once more is
// dropped and counted (PMDStats.RecircDrops).
const maxRecircDepth = 6

// execCtx executes actions for one writer of packets: a PMD, or the
// non-PMD context (Execute, slow upcalls) under its mutex. Outputs are
// accumulated per port and sent in batches by flush; nothing here
// allocates once the batch array has grown to the number of ports.
type execCtx struct {
	dp    *Datapath
	pmd   *pmd // nil in the non-PMD context
	slot  int  // flow statistics slot and transmit queue identity
	pool  *packet.Pool
	ports *portTable
	out   []packet.Batch // indexed like ports.list
	dirty []int32        // indices of out with packets

	// depth is how many recirculations deep the packet being executed
	// is; ups is upcall scratch space per depth, since a recirculated
	// packet may miss while the upcall that sent it is still executing
	// its answer.
	depth int
	ups   [maxRecircDepth + 1]Upcall
	// pendingUser holds the non-PMD context's userspace packets until
	// its mutex is released (the handler may call Execute).
	pendingUser []*slowUpcall

	txDrops     uint64 // output to a missing port, clone failure, unresolvable offload
	recircs     uint64 // recirculated packets
	recircDrops uint64 // recirculation deeper than maxRecircDepth
	meterDrops  uint64 // dropped by a meter band
	seg         packet.Segmenter
	txPkts      uint64
	txBatchs    uint64
}

// setPorts switches to a new port table; out must be empty (flushed).
func (c *execCtx) setPorts(t *portTable) {
	c.ports = t
	if len(c.out) < len(t.list) {
		c.out = make([]packet.Batch, len(t.list)+4)
		c.dirty = make([]int32, 0, len(t.list)+4)
	}
}

// lastUse returns the index of the last action that needs the packet
// itself (an output, recirculation, userspace, clone, check_pkt_len or
// ct),
// or -1: the packet goes to that action, and every earlier one of them
// gets a copy. Actions after it could only change a packet nobody sees.
func (as Actions) lastUse() int {
	for i := len(as) - 1; i >= 0; i-- {
		switch as[i].Kind {
		case ActOutput, ActRecirc, ActUserspace, ActClone, ActCheckPktLen, ActCT:
			// ct counts: committing a connection is an effect even
			// when nothing is sent after it.
			return i
		}
	}
	return -1
}

// execute applies actions to b, which it takes ownership of.
func (c *execCtx) execute(b *packet.Buffer, actions Actions) {
	last := actions.lastUse()
	if last < 0 {
		c.pool.Put(b)
		return
	}
	var cut uint32 // trunc: the next output sends at most this many bytes
	for i := range actions[:last+1] {
		a := &actions[i]
		switch a.Kind {
		case ActOutput:
			if i == last {
				c.truncate(b, cut)
				c.output(b, a.Port)
				return
			}
			if cl := c.copyOf(b, a.Port); cl != nil {
				c.truncate(cl, cut)
				c.output(cl, a.Port)
			}
			cut = 0
		case ActRecirc:
			if i == last {
				c.recirculate(b, a.Arg)
				return
			}
			if cl := c.copyOf(b, b.InPort); cl != nil {
				c.recirculate(cl, a.Arg)
			}
		case ActUserspace:
			c.userspace(b, a.Userspace)
			if i == last {
				c.pool.Put(b)
				return
			}
		case ActClone:
			if i == last {
				c.execute(b, a.Nested[0])
				return
			}
			if cl := c.copyOf(b, b.InPort); cl != nil {
				c.execute(cl, a.Nested[0])
			}
		case ActCheckPktLen:
			// The length is what the next output would send.
			branch, n := a.Nested[1], uint32(b.Len())
			if cut != 0 {
				n = min(n, cut)
			}
			if n > a.Arg {
				branch = a.Nested[0]
			}
			if i == last {
				c.execute(b, branch)
				return
			}
			if cl := c.copyOf(b, b.InPort); cl != nil {
				c.execute(cl, branch)
			}
		case ActMeter:
			if !c.dp.meterPass(a.Arg, b.Len(), c.dp.now()) {
				c.meterDrops++
				c.pool.Put(b)
				return
			}
		case ActTrunc:
			cut = a.Arg
		case ActCT:
			if !c.conntrack(b, a, actions[i+1:]) {
				return
			}
			if i == last {
				c.pool.Put(b)
				return
			}
		case ActCTClear:
			clearCT(&b.Key)
		case ActHash:
			b.Key.DPHash = hashL4(&b.Key, a.Arg, a.Hash == HashSymL4)
		case ActSet, ActSetMasked:
			applySet(b, a.Set)
		case ActPushVLAN:
			b.PushVLANTag(packet.VLANTag{TPID: a.pushTPID(), TCI: a.TCI})
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

// copyOf returns a copy of b from the context's pool, or nil (counted
// against port portNo, else b's input port) when the pool is empty.
func (c *execCtx) copyOf(b *packet.Buffer, portNo uint32) *packet.Buffer {
	if cl := c.pool.Clone(b); cl != nil {
		return cl
	}
	c.txDrops++
	if pc := c.ports.counters(portNo, c.slot); pc != nil {
		pc.txNoBuffer.Add(1)
	} else if pc := c.ports.counters(b.InPort, c.slot); pc != nil {
		pc.txNoPort.Add(1) // no copy, and nowhere to send it anyway
	}
	return nil
}

// truncate cuts b to n bytes (trunc) unless n is 0 or b is no longer. A
// cut frame is no longer the GSO frame its virtio_net_hdr describes.
func (c *execCtx) truncate(b *packet.Buffer, n uint32) {
	if n == 0 || uint32(b.Len()) <= n {
		return
	}
	b.SetLen(int(n))
	if b.HasVnet {
		b.Vnet.GSOType, b.Vnet.GSOSize = packet.VnetGSONone, 0
		b.Vnet.Flags &^= packet.VnetNeedsCsum
	}
}

// recirculate sets b's recirc_id and passes it through the flow tables
// again, re-parsed with its metadata kept. It owns b.
func (c *execCtx) recirculate(b *packet.Buffer, id uint32) {
	if c.depth >= maxRecircDepth {
		c.recircDrops++
		c.pool.Put(b)
		return
	}
	c.recircs++
	b.Key.RecircID = id
	b.Parse()
	c.depth++
	if c.pmd != nil {
		c.pmd.classify(b)
	} else {
		c.classifyNonPMD(b)
	}
	c.depth--
}

// userspace hands a copy of b with cookie to the UserspaceHandler: on a
// PMD through its slow queue (a full queue loses it, counted as a lost
// upcall), in the non-PMD context after its mutex is released.
func (c *execCtx) userspace(b *packet.Buffer, cookie *UserspaceCookie) {
	if hb := c.dp.handler.Load(); hb == nil {
		return
	} else if _, ok := hb.h.(UserspaceHandler); !ok {
		return // nobody takes them: no copy
	}
	if c.pmd != nil {
		c.pmd.queueSlow(b, cookie)
		return
	}
	s := &slowUpcall{frame: append([]byte(nil), b.Data()...), meta: b.Meta, key: b.Key, cookie: cookie}
	c.pendingUser = append(c.pendingUser, s)
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

// classifyNonPMD looks a recirculated packet up in the megaflow table
// for the non-PMD context (no EMC) and executes what it finds, asking
// the handler on a miss as a PMD does. A miss the handler sends to the
// slow path is lost (counted): this context is itself the slow path.
func (c *execCtx) classifyNonPMD(b *packet.Buffer) {
	if f, _ := c.dp.cls.lookup(&b.Key); f != nil {
		f.slot(c.slot).hit(1, uint64(b.Len()), c.dp.now(), b.Key.TCPFlags)
		c.execute(b, *f.actions.Load())
		return
	}
	hb := c.dp.handler.Load()
	if hb == nil {
		c.lostUpcall(b)
		return
	}
	u := &c.ups[c.depth]
	u.reset(-1, b)
	defer func() { u.Key, u.Packet = nil, nil }()
	switch hb.h.Upcall(u) {
	case UpcallInstall:
		f := c.dp.install(u)
		f.slot(c.slot).hit(1, uint64(b.Len()), c.dp.now(), b.Key.TCPFlags)
		c.execute(b, *f.actions.Load())
	case UpcallExecute:
		c.execute(b, u.Actions)
	case UpcallSlow:
		c.lostUpcall(b)
	default:
		c.pool.Put(b)
	}
}

// lostUpcall drops a miss nobody could take, counting it for the input
// port, and frees b.
func (c *execCtx) lostUpcall(b *packet.Buffer) {
	if pc := c.ports.counters(b.InPort, c.slot); pc != nil {
		pc.lostUpcalls.Add(1)
	}
	c.pool.Put(b)
}

package conntrack

import (
	"net/netip"
	"runtime"
	"time"

	"gvs/packet"
)

// sweep removes the connections expired at now, a batch of buckets per
// hold of the writer lock so that PMDs creating connections wait little
// (lookups never wait).
func (t *Tracker) sweep(now int64) int {
	removed := 0
	t.mu.Lock()
	tables := t.tbl.chains()
	t.mu.Unlock()
	for _, tbl := range tables {
		// A table replaced meanwhile is still walked: its connections
		// are in the new one too, and removal unlinks from both.
		for i := 0; i < len(tbl.buckets); i += sweepBatch {
			t.mu.Lock()
			for j := i; j < min(i+sweepBatch, len(tbl.buckets)); j++ {
				for n := tbl.buckets[j].Load(); n != nil; n = n.next.Load() {
					if !n.reply && n.c.expired(now) && !n.c.dead.Load() {
						t.removeConn(n.c)
						t.expired++
						removed++
					}
				}
			}
			t.mu.Unlock()
			runtime.Gosched()
		}
	}
	return removed
}

// Dump implements Conntrack: each live connection of zone (AllZones:
// all) as an Entry. The Entry is reused from call to call: fn copies
// what it keeps.
func (t *Tracker) Dump(zone int32, fn func(*Entry) bool) {
	now := t.now()
	var e Entry
	t.tbl.forEach(func(c *conn) bool {
		if c.dead.Load() || c.expired(now) {
			return true
		}
		if zone != AllZones && int32(c.key[0].zone) != zone {
			return true
		}
		c.entry(&e, now)
		return fn(&e)
	})
}

func (c *conn) entry(e *Entry, now int64) {
	*e = Entry{Orig: c.key[0].tuple(), Reply: c.key[1].tuple(), Zone: c.key[0].zone, ID: c.id, Helper: c.helper}
	c.mu.Lock()
	e.Mark, e.Label = c.mark, c.label
	if c.key[0].proto == packet.ProtoTCP {
		e.TCPState = tcpStateName(c.tcp[0].state, c.tcp[1].state)
		e.TCP = TCPInfo{
			StateOrig: tcpStateNames[c.tcp[0].state], StateReply: tcpStateNames[c.tcp[1].state],
			WScaleOrig: c.tcp[0].wscale & wscaleMask, WScaleReply: c.tcp[1].wscale & wscaleMask,
			FlagsOrig: tcpPeerFlags(&c.tcp[0]), FlagsReply: tcpPeerFlags(&c.tcp[1]),
		}
	}
	c.mu.Unlock()
	if left := c.expiration.Load() - now; left > 0 {
		e.Timeout = time.Duration(left) * time.Millisecond
	}
}

// tuple converts a key to the API's Tuple.
func (k *connKey) tuple() Tuple {
	t := Tuple{Proto: k.proto, Zone: k.zone, SrcPort: k.sport, DstPort: k.dport}
	if k.v6 {
		t.Src, t.Dst = netip.AddrFrom16(k.src), netip.AddrFrom16(k.dst)
	} else {
		t.Src, t.Dst = netip.AddrFrom4([4]byte(k.src[:4])), netip.AddrFrom4([4]byte(k.dst[:4]))
	}
	if isICMP(k) {
		t.DstPort = uint16(k.stype) << 8
	}
	return t
}

// tupleKey converts a Tuple to the key of that direction; false for a
// tuple no connection can have.
func tupleKey(t *Tuple, zone uint16) (connKey, bool) {
	k := connKey{proto: t.Proto, zone: zone}
	switch {
	case t.Src.Is4() && t.Dst.Is4():
		s, d := t.Src.As4(), t.Dst.As4()
		copy(k.src[:4], s[:])
		copy(k.dst[:4], d[:])
	case t.Src.Is6() && t.Dst.Is6():
		k.v6 = true
		k.src, k.dst = t.Src.As16(), t.Dst.As16()
	default:
		return k, false
	}
	if isICMP(&k) {
		k.sport, k.dport = t.SrcPort, t.SrcPort
		k.stype = uint8(t.DstPort >> 8)
		if k.v6 {
			k.dtype = reverseICMP6Type(k.stype)
		} else {
			k.dtype = reverseICMPType(k.stype)
		}
	} else {
		k.sport, k.dport = t.SrcPort, t.DstPort
	}
	return k, true
}

// Flush implements Conntrack.
func (t *Tracker) Flush(zone int32, orig *Tuple) int {
	if orig != nil {
		z := orig.Zone
		if zone != AllZones {
			z = uint16(zone)
		}
		k, ok := tupleKey(orig, z)
		if !ok {
			return 0
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		c, _ := t.tbl.lookup(&k, t.now())
		if c == nil {
			return 0
		}
		t.removeConn(c)
		return 1
	}
	n := 0
	var victims []*conn
	t.tbl.forEach(func(c *conn) bool {
		if zone == AllZones || int32(c.key[0].zone) == zone {
			victims = append(victims, c)
		}
		return true
	})
	for i := 0; i < len(victims); i += sweepBatch {
		t.mu.Lock()
		for _, c := range victims[i:min(i+sweepBatch, len(victims))] {
			if !c.dead.Load() {
				t.removeConn(c)
				n++
			}
		}
		t.mu.Unlock()
	}
	return n
}

// Stats implements Conntrack.
func (t *Tracker) Stats() Stats {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := Stats{Conns: t.n.Load(), ConnsByProto: map[uint8]uint32{}, Created: t.created, Expired: t.expired,
		DroppedFull: t.droppedFull.Load(), Invalid: t.invalid.Load()}
	for p, n := range t.byProto {
		if n != 0 {
			s.ConnsByProto[uint8(p)] = n
		}
	}
	return s
}

func tcpPeerFlags(p *tcpPeer) uint8 {
	var f uint8
	if p.wscale&wscaleFlag != 0 {
		f |= TCPFlagWindowScale
	}
	if p.wscale&wscaleUnknown != 0 {
		f |= TCPFlagBeLiberal
	}
	return f
}

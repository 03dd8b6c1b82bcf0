package ofproto

import (
	"net/netip"

	"gvs/dpif/conntrack"
	"gvs/ofproto/connmgr"
	"gvs/ofproto/ofp"
	"gvs/ofproto/xlate"
)

// Conntrack flushes from OpenFlow: NXT_CT_FLUSH_ZONE (ovs-ofctl
// ct-flush-zone) and NXT_CT_FLUSH (ovs-ofctl ct-flush), against the
// tracker of the datapath the bridge is on, as Open vSwitch's
// ofproto-dpif ct_flush and lib/ct-dpif.c's ct_dpif_flush. Like Open
// vSwitch's, a flush always succeeds towards the controller: the
// datapath's result is not reported.

var _ connmgr.CTFlusher = (*ConnBridge)(nil)

// SetConntrack tells the bridge where its datapath's connection tracker
// is (the Switch passes dpif.Datapath.Conntrack); nil, or a source
// returning nil, leaves nothing to flush.
func (b *Bridge) SetConntrack(src func() conntrack.Conntrack) {
	if src == nil {
		b.ctSource.Store(nil)
		return
	}
	b.ctSource.Store(&src)
}

func (b *Bridge) conntrack() conntrack.Conntrack {
	if p := b.ctSource.Load(); p != nil {
		return (*p)()
	}
	return nil
}

// CTFlushZone implements connmgr.Bridge: the connections of zone go.
func (c *ConnBridge) CTFlushZone(zone uint16) error {
	if ct := c.b.conntrack(); ct != nil {
		ct.Flush(int32(zone), nil)
	}
	return nil
}

// CTFlush implements connmgr.CTFlusher: without a protocol or tuple,
// every connection (of the zone, if given) goes; with a whole original
// five-tuple and no reply tuple, that connection (in the zone, zone 0
// when none is given, as Open vSwitch's datapath does); otherwise every
// connection whose non-zero fields equal the match's.
func (c *ConnBridge) CTFlush(m *ofp.CTFlush) error {
	ct := c.b.conntrack()
	if ct == nil {
		return nil
	}
	zone := conntrack.AllZones
	if m.HasZone {
		zone = int32(m.Zone)
	}
	match := newCTFlushMatch(m)
	if match.zero() {
		ct.Flush(zone, nil)
		return nil
	}
	if match.fiveTuple(&m.Orig) && tupleZero(&m.Reply, m.IPProto) {
		t := match.tuple(&m.Orig)
		t.Zone = uint16(max(zone, 0))
		ct.Flush(int32(t.Zone), &t)
		return nil
	}
	var victims []conntrack.Tuple
	ct.Dump(zone, func(e *conntrack.Entry) bool {
		if match.matches(e) {
			t := e.Orig
			t.Zone = e.Zone
			victims = append(victims, t)
		}
		return true
	})
	for i := range victims {
		ct.Flush(int32(victims[i].Zone), &victims[i])
	}
	return nil
}

// ctFlushMatch is NXT_CT_FLUSH's match with its address family (Open
// vSwitch's struct ofp_ct_match: l3_type from the addresses given).
type ctFlushMatch struct {
	m  *ofp.CTFlush
	l3 int // 0: any, 4 or 6
}

func newCTFlushMatch(m *ofp.CTFlush) ctFlushMatch {
	cm := ctFlushMatch{m: m}
	for _, a := range [][16]byte{m.Orig.Src, m.Orig.Dst, m.Reply.Src, m.Reply.Dst} {
		if a != ([16]byte{}) {
			cm.l3 = 6
			if netip.AddrFrom16(a).Is4In6() {
				cm.l3 = 4
			}
			break
		}
	}
	return cm
}

func isICMP(proto uint8) bool { return proto == 1 || proto == 58 }

// zero is Open vSwitch's ofp_ct_match_is_zero.
func (cm ctFlushMatch) zero() bool {
	return cm.m.IPProto == 0 && cm.l3 == 0 && tupleZero(&cm.m.Orig, 0) && tupleZero(&cm.m.Reply, 0)
}

// tupleZero is ofp_ct_tuple_is_zero.
func tupleZero(t *ofp.CTTuple, proto uint8) bool {
	z := t.Src == [16]byte{} && t.Dst == [16]byte{}
	if !isICMP(proto) {
		z = z && t.SrcPort == 0 && t.DstPort == 0
	}
	return z
}

// fiveTuple is ofp_ct_tuple_is_five_tuple.
func (cm ctFlushMatch) fiveTuple(t *ofp.CTTuple) bool {
	ok := t.Src != [16]byte{} && t.Dst != [16]byte{}
	if !isICMP(cm.m.IPProto) {
		ok = ok && t.SrcPort != 0 && t.DstPort != 0
	}
	return ok
}

func (cm ctFlushMatch) addr(a [16]byte) netip.Addr {
	if cm.l3 == 4 {
		return netip.AddrFrom16(a).Unmap()
	}
	return netip.AddrFrom16(a)
}

// tuple is the tracker's tuple for an OpenFlow one (ICMP: the id as
// SrcPort, type and code as DstPort, as conntrack.Tuple has them).
func (cm ctFlushMatch) tuple(t *ofp.CTTuple) conntrack.Tuple {
	out := conntrack.Tuple{Src: cm.addr(t.Src), Dst: cm.addr(t.Dst), Proto: cm.m.IPProto}
	if isICMP(cm.m.IPProto) {
		out.SrcPort, out.DstPort = t.ICMPID, uint16(t.ICMPType)<<8|uint16(t.ICMPCode)
	} else {
		out.SrcPort, out.DstPort = t.SrcPort, t.DstPort
	}
	return out
}

// matches is ct_dpif_entry_cmp: every non-zero field of the match equals
// the entry's (ICMP's id, type and code always compared, as Open
// vSwitch does).
func (cm ctFlushMatch) matches(e *conntrack.Entry) bool {
	m := cm.m
	if cm.l3 == 4 && !e.Orig.Src.Is4() || cm.l3 == 6 && !e.Orig.Src.Is6() {
		return false
	}
	if m.IPProto != 0 && m.IPProto != e.Orig.Proto {
		return false
	}
	return cm.tupleMatches(&e.Orig, &m.Orig) && cm.tupleMatches(&e.Reply, &m.Reply)
}

func (cm ctFlushMatch) tupleMatches(t *conntrack.Tuple, p *ofp.CTTuple) bool {
	if p.Src != ([16]byte{}) && cm.addr(p.Src) != t.Src || p.Dst != ([16]byte{}) && cm.addr(p.Dst) != t.Dst {
		return false
	}
	if isICMP(cm.m.IPProto) {
		return p.ICMPID == t.SrcPort && uint16(p.ICMPType)<<8|uint16(p.ICMPCode) == t.DstPort
	}
	return (p.SrcPort == 0 || p.SrcPort == t.SrcPort) && (p.DstPort == 0 || p.DstPort == t.DstPort)
}

// SetRecircTable tells the bridge its datapath's table of frozen states
// (the upcall handler's), so ofproto/trace resumes the recirc_id of a
// datapath flow and allocates the ids the datapath would.
func (b *Bridge) SetRecircTable(t *xlate.RecircTable) { b.recirc.Store(t) }

// RecircTable is the table SetRecircTable set, or nil.
func (b *Bridge) RecircTable() *xlate.RecircTable { return b.recirc.Load() }

package conntrack

import (
	"net/netip"

	"gvs/packet"
)

// The tracker's calls into the NAT half of the package (nat*.go: the
// reply tuple's allocation and the packet rewrite), which works on the
// API's Tuple; the tracker keys connections by connKey.

// natTuple is k as the NAT code takes it: for ICMP echo both ports hold
// the identifier.
func natTuple(k *connKey) Tuple {
	t := Tuple{Proto: k.proto, Zone: k.zone, SrcPort: k.sport, DstPort: k.dport}
	if k.v6 {
		t.Src, t.Dst = netip.AddrFrom16(k.src), netip.AddrFrom16(k.dst)
	} else {
		t.Src, t.Dst = netip.AddrFrom4([4]byte(k.src[:4])), netip.AddrFrom4([4]byte(k.dst[:4]))
	}
	return t
}

// withTuple returns k with t's addresses and ports (the rest, such as
// the ICMP types, k's).
func withTuple(k connKey, t *Tuple) connKey {
	if k.v6 {
		k.src, k.dst = t.Src.As16(), t.Dst.As16()
	} else {
		s, d := t.Src.As4(), t.Dst.As4()
		copy(k.src[:4], s[:])
		copy(k.dst[:4], d[:])
	}
	k.sport, k.dport = t.SrcPort, t.DstPort
	return k
}

// natBind chooses c's NATed reply key (c.key[1] holds the plain reverse
// of the original) under the writer lock, so that no live connection
// has it, and records which side changes in c.nat. False: the ranges
// are exhausted.
func (t *Tracker) natBind(tbl *connTable, c *conn, n *NAT, now int64) bool {
	plain := c.key[1]
	inUse := func(r Tuple) bool {
		k := withTuple(plain, &r)
		other, _ := tbl.lookup(&k, now)
		return other != nil
	}
	reply, kind, ok := natAllocate(natTuple(&c.key[0]), natTuple(&plain), n, uint32(t.seed), inUse)
	if !ok {
		return false
	}
	c.key[1] = withTuple(plain, &reply)
	switch kind {
	case NATSrc:
		c.nat = natSrc
	case NATDst:
		c.nat = natDst
	default:
		return false
	}
	return true
}

// natRewrite rewrites packet b so that its address on the side action
// names, and its ports, are to's (to is the tuple the packet must
// carry); for an ICMP error (related) the quoted packet the other way
// round.
func natRewrite(b *packet.Buffer, to *connKey, action natAction, related bool) {
	kind := NATDst
	if action&natSrc != 0 {
		kind = NATSrc
	}
	tt := natTuple(to)
	natRewriteTo(b, &tt, kind, related)
}

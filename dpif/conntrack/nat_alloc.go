package conntrack

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"net/netip"

	"gvs/packet"
)

// NAT binding allocation: Open vSwitch's nat_get_unique_tuple,
// find_addr, set_sport_range, set_dport_range and nat_get_unique_l4
// (lib/conntrack.c, as of the release that added persistent and random
// and ICMP identifiers), rewritten.
//
//   - The address is chosen by a hash of the connection and the nat
//     clause within AddrMin..AddrMax (IPv6: within the first 2^32-1
//     addresses of the range, as Open vSwitch limits it); no address
//     keeps the connection's own. With persistent the hash covers only
//     the source address and no per-tracker basis, so a source keeps its
//     address across connections and restarts.
//   - Source ports (SNAT without a port range, and DNAT) start from the
//     connection's own source port, searched within its class: 1-511,
//     600-1023 or 1024-65535. A port range (SNAT: the source port; DNAT:
//     the destination port, then the source port in its class as above)
//     starts at a hashed offset, or a random one with random.
//   - Ports are tried in order from the start, wrapping within the range,
//     at most 128 of them; when the range is larger, rounds of 64, 32, 16
//     and 8 more follow, each from a random port. So a range of up to 128
//     ports is searched whole, and a larger one gives up after 248 tries.
//   - TCP, UDP, SCTP and ICMP (the echo identifier) have ports; ICMPv6
//     and other protocols only the address, which must then be free.
//
// Where Open vSwitch gives up once the hashed address has no free port,
// this goes on to the next addresses of the range, natMaxAddrTries of
// them at most: a range of that many addresses (with small port ranges)
// is exhausted only when all its tuples are taken.

// natMaxAddrTries bounds how many addresses of a range one allocation
// tries; with at most 249 port tries each (twice that for DNAT with a
// port range: destination ports first, then source ports), an
// allocation costs at most natMaxAddrTries*498 lookups.
const natMaxAddrTries = 8

// Port classes for a source port kept when possible (Open vSwitch's
// set_sport_range and MIN/MAX_NAT_EPHEMERAL_PORT).
const (
	natEphemeralMin = 1024
	natEphemeralMax = 65535
)

// natPortAttempts is how many ports one round of the port search tries at
// most; rounds halve it down to natPortAttemptsMin.
const (
	natPortAttempts    = 128
	natPortAttemptsMin = 16
)

// natAllocate picks the reply tuple of a new connection under nat n
// (NATSrc or NATDst): orig is the connection's original tuple, reply the
// plain reverse of it (as the tracker would store it without NAT; for
// ICMP echo SrcPort is the identifier, and DstPort may hold it too),
// basis the tracker's random hash
// basis, and inUse reports whether a reply tuple is taken (in either
// direction of an existing connection of its zone). It returns the NATed
// reply tuple and the side the nat rewrote (n.Kind), or false when the
// range is exhausted, the clause is bare (NATApply) or its addresses are
// of the other family.
func natAllocate(orig, reply Tuple, n *NAT, basis uint32, inUse func(Tuple) bool) (Tuple, NATKind, bool) {
	if n == nil || n.Kind != NATSrc && n.Kind != NATDst {
		return reply, NATApply, false
	}
	r := natResolve(n)
	if r.hasAddr && r.addrMin.Is4() != orig.Src.Is4() {
		return reply, n.Kind, false
	}

	hash := natRangeHash(&orig, &r, n.Persistent, basis)
	var portOff uint32
	switch {
	case n.Random:
		portOff = rand.Uint32()
	case n.Persistent:
		portOff = natRangeHash(&orig, &r, false, basis)
	default:
		portOff = hash
	}

	// Which of the reply tuple's fields hold the rewritten address and
	// the source port of the original direction.
	cand := reply
	icmp := orig.Proto == packet.ProtoICMP && orig.Src.Is4()
	pat := icmp || orig.Proto == packet.ProtoTCP || orig.Proto == packet.ProtoUDP || orig.Proto == packet.ProtoSCTP
	sportField := natReplyDstPort
	if icmp {
		// The echo identifier: SrcPort, and DstPort too when the caller
		// keeps it in both (as Open vSwitch's keys do).
		sportField = natReplySrcPort
		if reply.DstPort == reply.SrcPort {
			sportField = natReplyBothPorts
		}
	}

	sportMin, sportMax, sportCurr := natSportRange(&orig, &r, n.Kind, portOff)
	dportRange := n.Kind == NATDst && r.hasPorts && !icmp
	dportMin, dportMax := r.portMin, r.portMax
	dportCurr := dportMin + uint16(portOff%(uint32(dportMax)-uint32(dportMin)+1))

	addrs := uint64(1)
	var addrOff uint64
	if r.hasAddr {
		addrs = natAddrSpan(r.addrMin, r.addrMax) + 1
		addrOff = uint64(hash) % addrs
	}
	for try := uint64(0); try < min(addrs, natMaxAddrTries); try++ {
		addr := orig.Src
		if n.Kind == NATDst {
			addr = orig.Dst
		}
		if r.hasAddr {
			addr = natAddrAdd(r.addrMin, (addrOff+try)%addrs)
		}
		if n.Kind == NATSrc {
			cand.Dst = addr
		} else {
			cand.Src = addr
		}
		if !pat {
			if !inUse(cand) {
				return cand, n.Kind, true
			}
			continue
		}
		natSetPort(&cand, sportField, sportCurr)
		if dportRange {
			cand.SrcPort = dportCurr
			if natSearchPort(&cand, natReplySrcPort, dportCurr, dportMin, dportMax, inUse) {
				return cand, n.Kind, true
			}
		}
		if natSearchPort(&cand, sportField, sportCurr, sportMin, sportMax, inUse) {
			return cand, n.Kind, true
		}
	}
	return reply, n.Kind, false
}

// natRange is a nat clause with its defaults filled in.
type natRange struct {
	hasAddr          bool
	addrMin, addrMax netip.Addr
	hasPorts         bool
	portMin, portMax uint16
}

// natResolve fills in a clause's defaults: a missing maximum is the
// minimum, and an unspecified (or all-zero) address means none.
func natResolve(n *NAT) natRange {
	var r natRange
	if n.AddrMin.IsValid() && !n.AddrMin.IsUnspecified() {
		r.hasAddr = true
		r.addrMin, r.addrMax = n.AddrMin, n.AddrMax
		if !r.addrMax.IsValid() || r.addrMax.Is4() != r.addrMin.Is4() || r.addrMax.Less(r.addrMin) {
			r.addrMax = r.addrMin
		}
	}
	if n.PortMin != 0 {
		r.hasPorts = true
		r.portMin, r.portMax = n.PortMin, max(n.PortMax, n.PortMin)
	}
	return r
}

// natSportRange returns the range of the original direction's source port
// and where its search starts.
func natSportRange(orig *Tuple, r *natRange, kind NATKind, off uint32) (lo, hi, curr uint16) {
	if kind == NATSrc && r.hasPorts {
		lo, hi = r.portMin, r.portMax
		return lo, hi, lo + uint16(off%(uint32(hi)-uint32(lo)+1))
	}
	curr = orig.SrcPort
	switch {
	case curr < 512:
		return 1, 511, curr
	case curr < 1024:
		return 600, 1023, curr
	}
	return natEphemeralMin, natEphemeralMax, curr
}

// natPortField names a port of a reply tuple.
type natPortField uint8

const (
	natReplySrcPort natPortField = iota
	natReplyDstPort
	natReplyBothPorts
)

func natSetPort(t *Tuple, f natPortField, p uint16) {
	switch f {
	case natReplySrcPort:
		t.SrcPort = p
	case natReplyDstPort:
		t.DstPort = p
	default:
		t.SrcPort, t.DstPort = p, p
	}
}

// natSearchPort tries ports for cand's field from curr, as the file's
// comment describes, and reports whether one is free; cand then holds
// it, else the port it started with.
func natSearchPort(cand *Tuple, field natPortField, curr, lo, hi uint16, inUse func(Tuple) bool) bool {
	span := uint32(hi) - uint32(lo) + 1
	attempts := min(span, natPortAttempts)
	start := curr
	for {
		// The first port may be outside the range (a kept source port
		// of 0 or 512-599): it is tried on top, so that a small range
		// is still searched whole.
		p := curr
		n := attempts
		if p < lo || p > hi {
			n++
		}
		for range n {
			natSetPort(cand, field, p)
			if !inUse(*cand) {
				return true
			}
			if p < lo || p >= hi {
				p = lo
			} else {
				p++
			}
		}
		if attempts >= span || attempts < natPortAttemptsMin {
			break
		}
		attempts /= 2
		curr = lo + uint16(rand.Uint32()%span)
	}
	natSetPort(cand, field, start)
	return false
}

// natAddrSpan returns hi-lo (addresses of one family, lo <= hi), capped as
// Open vSwitch caps an IPv6 range: at 2^32-2.
func natAddrSpan(lo, hi netip.Addr) uint64 {
	const limit = 0xfffffffe
	a, b := lo.As16(), hi.As16()
	ahi, alo := binary.BigEndian.Uint64(a[:8]), binary.BigEndian.Uint64(a[8:])
	bhi, blo := binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
	dlo, borrow := bits.Sub64(blo, alo, 0)
	dhi, _ := bits.Sub64(bhi, ahi, borrow)
	if dhi != 0 || dlo > limit {
		return limit
	}
	return dlo
}

// natAddrAdd returns a+off, in a's family (off stays within a range that
// natAddrSpan measured).
func natAddrAdd(a netip.Addr, off uint64) netip.Addr {
	if a.Is4() {
		b := a.As4()
		v := binary.BigEndian.Uint32(b[:]) + uint32(off)
		binary.BigEndian.PutUint32(b[:], v)
		return netip.AddrFrom4(b)
	}
	b := a.As16()
	lo, carry := bits.Add64(binary.BigEndian.Uint64(b[8:]), off, 0)
	hi, _ := bits.Add64(binary.BigEndian.Uint64(b[:8]), 0, carry)
	binary.BigEndian.PutUint64(b[:8], hi)
	binary.BigEndian.PutUint64(b[8:], lo)
	return netip.AddrFrom16(b)
}

// natRangeHash hashes a connection with its nat range, as Open vSwitch's
// nat_range_hash: persistent hashes only the source address and no
// basis, so it is the same for every connection of a source and across
// trackers; otherwise both endpoints and the tracker's basis.
func natRangeHash(orig *Tuple, r *natRange, persistent bool, basis uint32) uint32 {
	h := natHasher{h: uint64(basis)}
	if persistent {
		h = natHasher{}
		h.addr(orig.Src)
	} else {
		h.addr(orig.Src)
		h.addr(orig.Dst)
		h.word(uint64(orig.SrcPort)<<16 | uint64(orig.DstPort))
	}
	h.addr(r.addrMin)
	h.addr(r.addrMax)
	h.word(uint64(r.portMax)<<16 | uint64(r.portMin))
	v := uint64(4)
	if orig.Src.Is6() {
		v = 6
	}
	h.word(v<<32 | uint64(orig.Proto)<<16 | uint64(orig.Zone))
	return h.sum()
}

// natHasher mixes 64-bit words (wyhash's multiply-fold step).
type natHasher struct{ h uint64 }

func (s *natHasher) word(w uint64) {
	hi, lo := bits.Mul64(s.h^w^0xa0761d6478bd642f, w^0xe7037ed1a0b428db)
	s.h ^= hi ^ lo
}

func (s *natHasher) addr(a netip.Addr) {
	b := a.As16()
	if !a.IsValid() {
		b = [16]byte{}
	}
	s.word(binary.BigEndian.Uint64(b[:8]))
	s.word(binary.BigEndian.Uint64(b[8:]))
}

func (s *natHasher) sum() uint32 {
	hi, lo := bits.Mul64(s.h^0x8ebc6af09c88c6e3, 0x589965cc75374cc3)
	v := hi ^ lo
	return uint32(v ^ v>>32)
}

package conntrack

import (
	"encoding/binary"
	"hash/crc32"
	"net/netip"

	"gvs/packet"
)

// NAT packet rewriting: what Open vSwitch's nat_packet, pat_packet and
// nat_inner_packet (lib/conntrack.c) do to a packet of a NATed
// connection.
//
// A connection is stored as its original tuple and its reply tuple after
// NAT (the reply direction as it is seen on the wire). A packet of the
// connection is rewritten to look like the reverse of the other
// direction's tuple: a packet travelling in the original direction gets
// the addresses and ports the reply tuple expects, a reply gets those of
// the original tuple. Only the NATed address is written (the source for
// src NAT in the original direction, ...), and both L4 ports (TCP, UDP,
// SCTP) or the ICMP echo identifier; an address family, protocol or
// header the packet lacks is left alone. A related ICMP or ICMPv6 error
// has its outer address rewritten the same way and the packet it quotes,
// which travelled the other way, rewritten to the tuple of its own
// direction (the other side's address, both ports or the echo id); the
// outer ICMP checksum is then recomputed, as Open vSwitch does.
//
// Checksums are updated incrementally (RFC 1624): the IPv4 header's, and
// the TCP, UDP, UDP-Lite and ICMPv6 checksums for the pseudo-header. A UDP
// checksum of zero (none) stays zero; an update that would give zero
// gives 0xffff. A partial checksum (virtio NEEDS_CSUM, to be completed on
// output) has its pseudo-header sum updated for address changes and is
// left alone for port changes, which the completion covers; this is Open
// vSwitch's "checksum offloaded: leave it partial". SCTP's CRC32c is
// recomputed keeping any error it had. Nothing here allocates.

// ICMP types whose header carries an identifier (Open vSwitch's
// packet_is_icmpv4_info_message), and ICMPv6 echo.
const (
	natICMPEchoReply      = 0
	natICMPEchoRequest    = 8
	natICMPTimestamp      = 13
	natICMPTimestampReply = 14
	natICMPInfoRequest    = 15
	natICMPInfoReply      = 16
	natICMP6EchoRequest   = 128
	natICMP6EchoReply     = 129
)

// natCastagnoli is the CRC32c table for SCTP, built once and only read.
var natCastagnoli = crc32.MakeTable(crc32.Castagnoli)

// natPacket applies a NATed connection's binding to b, whose Key and
// Offsets are from its last Parse, and returns the ct_state bit the
// packet gains (StateSrcNAT or StateDstNAT, or 0 when kind is neither):
// Open vSwitch's nat_packet.
//
// orig is the connection's original tuple and reply its reply tuple
// after NAT (for ICMP echo, SrcPort of both is the identifier); kind is
// the committed nat's side (NATSrc or NATDst). isReply says b travels in
// the reply direction; related says b is an ICMP or ICMPv6 error quoting
// a packet of the connection. The frame bytes and b.Key (addresses,
// TCP/UDP/SCTP ports) change together; the conntrack metadata of the key
// is the caller's.
//
// The caller skips packets already NATed in the same zone by an earlier
// ct action of this pass (Open vSwitch's handle_nat).
func natPacket(b *packet.Buffer, orig, reply *Tuple, kind NATKind, isReply, related bool) uint32 {
	action := kind
	target := reply
	if isReply {
		action = natReverseKind(kind)
		target = orig
	}
	// The packet must look like the other direction's tuple reversed.
	to := Tuple{Src: target.Dst, Dst: target.Src, SrcPort: target.DstPort, DstPort: target.SrcPort}
	if target.Proto == packet.ProtoICMP || target.Proto == packet.ProtoICMPv6 {
		to.SrcPort = target.SrcPort // the echo identifier, the same both ways
	}
	return natRewriteTo(b, &to, action, related)
}

// natRewriteTo is natPacket's rewrite, given the tuple the packet must
// carry: to's address on the side action names (the source for NATSrc,
// the destination for NATDst) and both of to's TCP/UDP/SCTP ports, or
// for an ICMP echo its identifier to.SrcPort. A related ICMP or ICMPv6
// error gets to's address on that side of its outer header, and the
// packet it quotes, which went the other way, reversed to's address on
// the other side and reversed ports (or identifier to.SrcPort). It
// returns StateSrcNAT or StateDstNAT as action, 0 for NATApply.
func natRewriteTo(b *packet.Buffer, to *Tuple, action NATKind, related bool) uint32 {
	var state uint32
	switch action {
	case NATSrc:
		state = StateSrcNAT
	case NATDst:
		state = StateDstNAT
	default:
		return 0
	}
	frame := b.Data()
	outer, ok := natOuter(frame, &b.Key, b.Offsets)
	if !ok {
		return state
	}
	partial := b.HasVnet && b.Vnet.Flags&packet.VnetNeedsCsum != 0
	if related {
		if natRelated(frame, outer, to, action, partial) && partial {
			// The ICMP checksum is complete now; completing it again on
			// output would spoil it.
			b.Vnet.Flags &^= packet.VnetNeedsCsum
		}
	} else {
		if action == NATSrc {
			natSetAddr(frame, outer, true, to.Src, partial)
		} else {
			natSetAddr(frame, outer, false, to.Dst, partial)
		}
		natSetPorts(frame, outer, to.SrcPort, to.DstPort, to.SrcPort, partial)
	}
	natSyncKey(frame, outer, &b.Key)
	return state
}

// natReverseKind swaps src and dst: the side a nat rewrites in the other
// direction.
func natReverseKind(k NATKind) NATKind {
	switch k {
	case NATSrc:
		return NATDst
	case NATDst:
		return NATSrc
	}
	return k
}

// natIP locates one IP packet in a frame: the packet itself, or the one
// an ICMP error quotes.
type natIP struct {
	l3, l4 int // offsets in the frame; l4 is 0 when there is no L4 header (a later fragment)
	end    int // end of the IP payload, within the frame
	v6     bool
	proto  uint8
	quoted bool // inside an ICMP error: no offloads apply
	cut    bool // the IP packet goes on beyond end (a quote cut short)
}

// natOuter locates the packet's own IP header from its parse.
func natOuter(frame []byte, k *packet.Key, o packet.Offsets) (natIP, bool) {
	h := natIP{l3: int(o.L3), proto: k.IPProto}
	switch k.EtherType {
	case packet.EtherTypeIPv4:
		if h.l3 == 0 || h.l3+packet.IPv4MinLen > len(frame) {
			return h, false
		}
		h.end = min(len(frame), h.l3+int(binary.BigEndian.Uint16(frame[h.l3+2:])))
		if h.end < h.l3+packet.IPv4MinLen {
			return h, false
		}
	case packet.EtherTypeIPv6:
		if h.l3 == 0 || h.l3+packet.IPv6HeaderLen > len(frame) {
			return h, false
		}
		h.v6 = true
		h.end = h.l3 + packet.IPv6HeaderLen + int(binary.BigEndian.Uint16(frame[h.l3+4:]))
		if h.end == h.l3+packet.IPv6HeaderLen || h.end > len(frame) {
			h.end = len(frame) // a jumbogram, or cut short: as far as the frame goes
		}
	default:
		return h, false
	}
	if o.L4 != 0 && int(o.L4) > h.l3 && int(o.L4) <= h.end {
		h.l4 = int(o.L4)
	}
	return h, true
}

// natSetAddr writes the source (src) or destination address of h and
// updates the checksums that cover it. addr of the wrong family does
// nothing.
func natSetAddr(frame []byte, h natIP, src bool, addr netip.Addr, partial bool) {
	var field []byte
	var buf [16]byte
	var n int
	switch {
	case !h.v6 && addr.Is4():
		at := h.l3 + 16
		if src {
			at = h.l3 + 12
		}
		if at+4 > h.end {
			return
		}
		field = frame[at : at+4]
		a := addr.As4()
		n = copy(buf[:], a[:])
	case h.v6 && addr.Is6():
		at := h.l3 + 24
		if src {
			at = h.l3 + 8
		}
		if at+16 > h.end {
			return
		}
		field = frame[at : at+16]
		buf = addr.As16()
		n = 16
	default:
		return
	}
	newAddr := buf[:n]
	if string(field) == string(newAddr) {
		return
	}
	diff := natDiff(field, newAddr)
	if f := natPseudoCsum(frame, h); f != nil {
		natUpdateCsum(f, diff, partial && !h.quoted, h.proto == packet.ProtoUDP)
	}
	if !h.v6 {
		natUpdateCsum(frame[h.l3+10:h.l3+12], diff, false, false)
	}
	copy(field, newAddr)
}

// natPseudoCsum returns the L4 checksum field of h that covers the
// pseudo-header (TCP, UDP, UDP-Lite, ICMPv6), or nil when there is none
// or it is not in the frame (a short quote).
func natPseudoCsum(frame []byte, h natIP) []byte {
	if h.l4 == 0 {
		return nil
	}
	at := -1
	switch h.proto {
	case packet.ProtoTCP:
		at = h.l4 + 16
	case packet.ProtoUDP, packet.ProtoUDPLite:
		at = h.l4 + 6
	case packet.ProtoICMPv6:
		if h.v6 {
			at = h.l4 + 2
		}
	}
	if at < 0 || at+2 > h.end {
		return nil
	}
	return frame[at : at+2]
}

// natDiff returns what replacing the covered bytes old by new (same even
// length, at an even offset) adds to a one's complement sum, unfolded:
// the sum of ~m + m' over their 16-bit words (RFC 1624, eqn. 3). For the
// at most 16 bytes rewritten here it stays below 2^21.
func natDiff(old, new []byte) uint32 {
	var d uint32
	for i := 0; i+1 < len(old) && i+1 < len(new); i += 2 {
		d += uint32(^binary.BigEndian.Uint16(old[i:])) + uint32(binary.BigEndian.Uint16(new[i:]))
	}
	return d
}

// natFold folds a 32-bit one's complement sum to 16 bits.
func natFold(s uint32) uint16 {
	s = s>>16 + s&0xffff
	s = s>>16 + s&0xffff
	return uint16(s)
}

// natUpdateCsum applies diff (natDiff) to the checksum field f: a stored
// checksum (complemented), or the uncomplemented pseudo-header sum of a
// partial one. A UDP checksum of 0 (none) stays 0; one that would become
// 0 is stored as 0xffff.
func natUpdateCsum(f []byte, diff uint32, partial, udp bool) {
	c := binary.BigEndian.Uint16(f)
	if partial {
		binary.BigEndian.PutUint16(f, natFold(uint32(c)+diff))
		return
	}
	if udp && c == 0 {
		return // no checksum
	}
	c = ^natFold(uint32(^c) + diff)
	if udp && c == 0 {
		c = 0xffff
	}
	binary.BigEndian.PutUint16(f, c)
}

// natSetPorts writes h's TCP, UDP or SCTP ports, or its ICMP/ICMPv6 echo
// identifier (echoID), updating the L4 checksum. Other protocols, and
// headers not (wholly) in the frame, are left alone.
func natSetPorts(frame []byte, h natIP, sport, dport, echoID uint16, partial bool) {
	if h.l4 == 0 {
		return
	}
	partial = partial && !h.quoted
	l4 := h.l4
	switch h.proto {
	case packet.ProtoTCP, packet.ProtoUDP:
		if l4+4 > h.end {
			return
		}
		var old, cur [4]byte
		copy(old[:], frame[l4:l4+4])
		binary.BigEndian.PutUint16(cur[0:], sport)
		binary.BigEndian.PutUint16(cur[2:], dport)
		if old == cur {
			return
		}
		copy(frame[l4:l4+4], cur[:])
		if partial {
			return // ports are not in the pseudo-header: the completion covers them
		}
		if f := natPseudoCsum(frame, h); f != nil {
			natUpdateCsum(f, natDiff(old[:], cur[:]), false, h.proto == packet.ProtoUDP)
		}
	case packet.ProtoSCTP:
		natSetSCTPPorts(frame, h, sport, dport)
	case packet.ProtoICMP, packet.ProtoICMPv6:
		if l4+8 > h.end || h.v6 != (h.proto == packet.ProtoICMPv6) || !natICMPHasID(frame[l4], h.v6) {
			return
		}
		var cur [2]byte
		binary.BigEndian.PutUint16(cur[:], echoID)
		old := frame[l4+4 : l4+6]
		if string(old) == string(cur[:]) {
			return
		}
		if !partial {
			natUpdateCsum(frame[l4+2:l4+4], natDiff(old, cur[:]), false, false)
		}
		copy(old, cur[:])
	}
}

// natICMPHasID reports whether an ICMP (v6: ICMPv6) message of type t
// carries an identifier in its second word.
func natICMPHasID(t uint8, v6 bool) bool {
	if v6 {
		return t == natICMP6EchoRequest || t == natICMP6EchoReply
	}
	switch t {
	case natICMPEchoReply, natICMPEchoRequest, natICMPTimestamp, natICMPTimestampReply, natICMPInfoRequest, natICMPInfoReply:
		return true
	}
	return false
}

// natSetSCTPPorts rewrites SCTP ports, recomputing the CRC32c over the
// packet and keeping whatever error the stored one had. A quote cut
// short leaves too little to recompute over: its ports change alone.
// (virtio has no CRC32c offload, so NEEDS_CSUM never concerns SCTP.)
func natSetSCTPPorts(frame []byte, h natIP, sport, dport uint16) {
	seg := frame[h.l4:h.end]
	if len(seg) < 4 || binary.BigEndian.Uint16(seg[0:]) == sport && binary.BigEndian.Uint16(seg[2:]) == dport {
		return
	}
	if h.cut || len(seg) < packet.SCTPMinLen {
		binary.BigEndian.PutUint16(seg[0:], sport)
		binary.BigEndian.PutUint16(seg[2:], dport)
		return
	}
	stored := binary.BigEndian.Uint32(seg[8:12])
	binary.BigEndian.PutUint32(seg[8:12], 0)
	before := natSCTPCRC(seg)
	binary.BigEndian.PutUint16(seg[0:], sport)
	binary.BigEndian.PutUint16(seg[2:], dport)
	after := natSCTPCRC(seg)
	binary.BigEndian.PutUint32(seg[8:12], stored^before^after)
}

// natSCTPCRC is the SCTP checksum of seg (its field zero) as stored: the
// CRC32c with its bytes in little-endian order.
func natSCTPCRC(seg []byte) uint32 {
	c := crc32.Checksum(seg, natCastagnoli)
	return c>>24 | c>>8&0xff00 | c<<8&0xff0000 | c<<24
}

// natRelated rewrites an ICMP or ICMPv6 error of the connection: the outer
// address on the side action names to to's, the quoted packet (which
// travelled the other way) to to reversed on the other side, and the
// outer ICMP checksum recomputed. It reports whether it wrote that
// checksum.
func natRelated(frame []byte, outer natIP, to *Tuple, action NATKind, partial bool) bool {
	if action == NATSrc {
		natSetAddr(frame, outer, true, to.Src, partial)
	} else {
		natSetAddr(frame, outer, false, to.Dst, partial)
	}
	icmpProto := packet.ProtoICMP
	if outer.v6 {
		icmpProto = packet.ProtoICMPv6
	}
	if outer.l4 == 0 || outer.proto != icmpProto || outer.l4+8 > outer.end {
		return false
	}
	if inner, ok := natQuoted(frame, outer); ok {
		// The outer source's address is the quoted packet's destination,
		// and the other way round.
		if action == NATSrc {
			natSetAddr(frame, inner, false, to.Src, false)
		} else {
			natSetAddr(frame, inner, true, to.Dst, false)
		}
		natSetPorts(frame, inner, to.DstPort, to.SrcPort, to.SrcPort, false)
	}
	icmp := frame[outer.l4:outer.end]
	icmp[2], icmp[3] = 0, 0
	var sum uint16
	if outer.v6 {
		src := [16]byte(frame[outer.l3+8 : outer.l3+24])
		dst := [16]byte(frame[outer.l3+24 : outer.l3+40])
		sum = packet.PseudoHeaderSumV6(src, dst, packet.ProtoICMPv6, uint32(len(icmp)))
	}
	binary.BigEndian.PutUint16(icmp[2:], ^packet.Checksum(icmp, sum))
	return true
}

// natQuoted locates the packet an ICMP or ICMPv6 error quotes, after the
// 8-byte ICMP header. It reports false when the quote is not an IP
// header of the outer family.
func natQuoted(frame []byte, outer natIP) (natIP, bool) {
	h := natIP{l3: outer.l4 + 8, v6: outer.v6, quoted: true}
	q := frame[h.l3:outer.end]
	if !h.v6 {
		if len(q) < packet.IPv4MinLen || q[0]>>4 != 4 {
			return h, false
		}
		ihl := int(q[0]&0x0f) * 4
		if ihl < packet.IPv4MinLen || ihl > len(q) {
			return h, false
		}
		total := max(int(binary.BigEndian.Uint16(q[2:])), ihl)
		h.end, h.cut = h.l3+min(len(q), total), total > len(q)
		h.proto = q[9]
		if binary.BigEndian.Uint16(q[6:])&0x1fff == 0 {
			h.l4 = h.l3 + ihl
		}
		return h, true
	}
	if len(q) < packet.IPv6HeaderLen || q[0]>>4 != 6 {
		return h, false
	}
	total := packet.IPv6HeaderLen + int(binary.BigEndian.Uint16(q[4:]))
	h.end, h.cut = h.l3+min(len(q), total), total > len(q)
	next, off := q[6], packet.IPv6HeaderLen
	for range 8 {
		var n int
		switch next {
		case packet.ProtoHopByHop, packet.ProtoRouting, packet.ProtoDstOpts:
			if off+2 > h.end-h.l3 {
				return h, true
			}
			n = (int(q[off+1]) + 1) * 8
		case packet.ProtoAH:
			if off+2 > h.end-h.l3 {
				return h, true
			}
			n = (int(q[off+1]) + 2) * 4
		case packet.ProtoFragment:
			if off+8 > h.end-h.l3 {
				return h, true
			}
			if binary.BigEndian.Uint16(q[off+2:])&0xfff8 != 0 {
				h.proto = q[off]
				return h, true // a later fragment: no L4 header
			}
			n = 8
		default:
			h.proto = next
			if h.l3+off <= h.end {
				h.l4 = h.l3 + off
			}
			return h, true
		}
		next = q[off]
		off += n
	}
	return h, true
}

// natSyncKey copies the outer addresses and TCP/UDP/SCTP ports from the
// frame into the key, so the key describes the packet as it now is.
func natSyncKey(frame []byte, h natIP, k *packet.Key) {
	if h.v6 {
		k.SrcIPv6 = [16]byte(frame[h.l3+8 : h.l3+24])
		k.DstIPv6 = [16]byte(frame[h.l3+24 : h.l3+40])
	} else {
		k.SrcIPv4 = [4]byte(frame[h.l3+12 : h.l3+16])
		k.DstIPv4 = [4]byte(frame[h.l3+16 : h.l3+20])
	}
	if h.l4 == 0 {
		return
	}
	// Parse fills the ports only from a whole header; so does this.
	var hdr int
	switch h.proto {
	case packet.ProtoTCP:
		hdr = packet.TCPMinLen
	case packet.ProtoUDP:
		hdr = packet.UDPHeaderLen
	case packet.ProtoSCTP:
		hdr = packet.SCTPMinLen
	default:
		return
	}
	if h.l4+hdr <= h.end {
		k.SrcPort = binary.BigEndian.Uint16(frame[h.l4:])
		k.DstPort = binary.BigEndian.Uint16(frame[h.l4+2:])
	}
}

package conntrack

import (
	"encoding/binary"

	"gvs/packet"
)

// lookupCtx is what the tracker extracts from one packet (Open
// vSwitch's conn_lookup_ctx): the key in the packet's direction, and for
// an ICMP error the key of the connection it quotes, reversed to the
// error's direction (related).
type lookupCtx struct {
	key     connKey
	related bool
	seg     tcpSegment // TCP only, and not for related
	l4      []byte     // L4 header to the end of the IP payload
}

// ICMP message types the tracker knows.
const (
	icmpEchoReply      = 0
	icmpDstUnreach     = 3
	icmpSourceQuench   = 4
	icmpRedirect       = 5
	icmpEchoRequest    = 8
	icmpTimeExceeded   = 11
	icmpParamProb      = 12
	icmpTimestamp      = 13
	icmpTimestampReply = 14
	icmpInfoRequest    = 15
	icmpInfoReply      = 16

	icmp6DstUnreach    = 1
	icmp6PacketTooBig  = 2
	icmp6TimeExceeded  = 3
	icmp6ParamProb     = 4
	icmp6EchoRequest   = 128
	icmp6EchoReply     = 129
	icmpErrorDataL4Len = 8 // the transport bytes an ICMPv4 error must quote
)

func reverseICMPType(t uint8) uint8 {
	switch t {
	case icmpEchoRequest:
		return icmpEchoReply
	case icmpEchoReply:
		return icmpEchoRequest
	case icmpTimestamp:
		return icmpTimestampReply
	case icmpTimestampReply:
		return icmpTimestamp
	case icmpInfoRequest:
		return icmpInfoReply
	case icmpInfoReply:
		return icmpInfoRequest
	}
	return 0
}

func reverseICMP6Type(t uint8) uint8 {
	switch t {
	case icmp6EchoRequest:
		return icmp6EchoReply
	case icmp6EchoReply:
		return icmp6EchoRequest
	}
	return 0
}

// extract fills ctx from a parsed packet as Open vSwitch's
// conn_key_extract: IPv4 or IPv6 that is not a fragment, with a valid
// IPv4 header checksum and L4 checksum (unless the checksum is
// offloaded), a complete transport header and non-zero ports. It
// reports false for a packet to be marked +inv.
func extract(b *packet.Buffer, zone uint16, ctx *lookupCtx) bool {
	*ctx = lookupCtx{}
	ctx.key.zone = zone
	frame := b.Data()
	l3, l4 := int(b.Offsets.L3), int(b.Offsets.L4)
	if l3 == 0 || l4 == 0 || l4 <= l3 || l4 > len(frame) {
		return false
	}
	// A checksum the sender left partial (or vouched for) is not
	// checked, as Open vSwitch skips checksums offload has dealt with.
	checkL4 := !(b.HasVnet && b.Vnet.Flags&(packet.VnetNeedsCsum|packet.VnetDataValid) != 0)
	var ip, seg []byte
	switch b.Key.EtherType {
	case packet.EtherTypeIPv4:
		ip = frame[l3:]
		if len(ip) < 20 || ip[0]>>4 != 4 {
			return false
		}
		ihl := int(ip[0]&0x0f) * 4
		tot := int(binary.BigEndian.Uint16(ip[2:]))
		if ihl < 20 || tot < ihl || tot > len(ip) || l3+ihl != l4 {
			return false
		}
		if binary.BigEndian.Uint16(ip[6:])&0x3fff != 0 {
			return false // a fragment: ipf reassembles before ct
		}
		if checkL4 && packet.Checksum(ip[:ihl], 0) != 0xffff {
			return false
		}
		ip = ip[:tot]
		seg = ip[ihl:]
		copy(ctx.key.src[:4], ip[12:16])
		copy(ctx.key.dst[:4], ip[16:20])
		ctx.key.proto = ip[9]
	case packet.EtherTypeIPv6:
		ip = frame[l3:]
		if len(ip) < 40 || ip[0]>>4 != 6 {
			return false
		}
		if b.Key.IPFrag != 0 {
			return false
		}
		end := 40 + int(binary.BigEndian.Uint16(ip[4:]))
		if end > len(ip) || l4-l3 > end {
			return false
		}
		ip = ip[:end]
		seg = ip[l4-l3:]
		copy(ctx.key.src[:], ip[8:24])
		copy(ctx.key.dst[:], ip[24:40])
		ctx.key.v6 = true
		ctx.key.proto = b.Key.IPProto
	default:
		return false
	}
	ctx.l4 = seg
	return extractL4(&ctx.key, seg, ip, &ctx.related, checkL4, &ctx.seg, false)
}

// checksumOK checks an L4 checksum over seg with the pseudo-header of ip.
func checksumOK(k *connKey, seg, ip []byte) bool {
	var ph uint16
	if k.v6 {
		ph = packet.PseudoHeaderSumV6([16]byte(ip[8:24]), [16]byte(ip[24:40]), k.proto, uint32(len(seg)))
	} else {
		ph = packet.PseudoHeaderSumV4([4]byte(ip[12:16]), [4]byte(ip[16:20]), k.proto, uint16(len(seg)))
	}
	return packet.Checksum(seg, ph) == 0xffff
}

// extractL4 fills the key's transport part from seg (the L4 header to
// the end of the IP payload of ip). inner is set for the packet quoted in
// an ICMP error: no checksum, no nested error, and only the first bytes
// of the transport header need be there.
func extractL4(k *connKey, seg, ip []byte, related *bool, checkSum bool, ts *tcpSegment, inner bool) bool {
	switch {
	case k.proto == packet.ProtoTCP:
		if inner {
			if len(seg) < icmpErrorDataL4Len {
				return false
			}
		} else {
			if len(seg) < 20 {
				return false
			}
			hl := int(seg[12]>>4) * 4
			if hl < 20 || hl > len(seg) {
				return false
			}
			if checkSum && !checksumOK(k, seg, ip) {
				return false
			}
			ts.hdr = seg
			ts.payload = uint32(len(seg) - hl)
		}
		k.sport = binary.BigEndian.Uint16(seg[0:])
		k.dport = binary.BigEndian.Uint16(seg[2:])
		return k.sport != 0 && k.dport != 0
	case k.proto == packet.ProtoUDP:
		if len(seg) < 8 {
			return false
		}
		if !inner {
			ul := int(binary.BigEndian.Uint16(seg[4:]))
			if ul < 8 || ul > len(seg) {
				return false
			}
			zeroV4 := !k.v6 && binary.BigEndian.Uint16(seg[6:]) == 0
			if checkSum && !zeroV4 && !checksumOK(k, seg, ip) {
				return false
			}
		}
		k.sport = binary.BigEndian.Uint16(seg[0:])
		k.dport = binary.BigEndian.Uint16(seg[2:])
		return k.sport != 0 && k.dport != 0
	case !k.v6 && k.proto == packet.ProtoICMP:
		if len(seg) < 8 {
			return false
		}
		if !inner && checkSum && packet.Checksum(seg, 0) != 0xffff {
			return false
		}
		switch t := seg[0]; t {
		case icmpEchoRequest, icmpEchoReply, icmpTimestamp, icmpTimestampReply, icmpInfoRequest, icmpInfoReply:
			if seg[1] != 0 {
				return false
			}
			id := binary.BigEndian.Uint16(seg[4:])
			k.sport, k.dport = id, id
			k.stype, k.dtype = t, reverseICMPType(t)
			return true
		case icmpDstUnreach, icmpTimeExceeded, icmpParamProb, icmpSourceQuench, icmpRedirect:
			if inner {
				return false
			}
			return extractInner(k, seg[8:], related)
		}
		return false
	case k.v6 && k.proto == packet.ProtoICMPv6:
		if len(seg) < 8 {
			return false
		}
		if !inner && checkSum && !checksumOK(k, seg, ip) {
			return false
		}
		switch t := seg[0]; t {
		case icmp6EchoRequest, icmp6EchoReply:
			if seg[1] != 0 {
				return false
			}
			id := binary.BigEndian.Uint16(seg[4:])
			k.sport, k.dport = id, id
			k.stype, k.dtype = t, reverseICMP6Type(t)
			return true
		case icmp6DstUnreach, icmp6PacketTooBig, icmp6TimeExceeded, icmp6ParamProb:
			if inner {
				return false
			}
			return extractInner(k, seg[8:], related)
		}
		return false
	}
	// Other protocols have no transport key.
	return true
}

// extractInner replaces k with the key of the packet an ICMP error
// quotes (ip), reversed to the error's direction: the quoted packet went
// from the error's destination, so its source must be that.
func extractInner(k *connKey, ip []byte, related *bool) bool {
	in := connKey{zone: k.zone, v6: k.v6}
	var seg []byte
	if !k.v6 {
		if len(ip) < 20 {
			return false
		}
		ihl := int(ip[0]&0x0f) * 4
		if ihl < 20 || len(ip) < ihl || binary.BigEndian.Uint16(ip[6:])&0x3fff != 0 {
			return false
		}
		copy(in.src[:4], ip[12:16])
		copy(in.dst[:4], ip[16:20])
		in.proto = ip[9]
		seg = ip[ihl:]
	} else {
		if len(ip) < 40 {
			return false
		}
		copy(in.src[:], ip[8:24])
		copy(in.dst[:], ip[24:40])
		proto, off, ok := skipIPv6Ext(ip, ip[6])
		if !ok {
			return false
		}
		in.proto = proto
		seg = ip[off:]
	}
	if in.src != k.dst {
		return false
	}
	if !extractL4(&in, seg, ip, nil, false, nil, true) {
		return false
	}
	*k = in.reverse()
	*related = true
	return true
}

// skipIPv6Ext walks the extension headers of the IPv6 packet ip and
// returns the upper-layer protocol and its offset; false for a fragment
// or a header cut short.
func skipIPv6Ext(ip []byte, next uint8) (uint8, int, bool) {
	off := 40
	for range 16 {
		switch next {
		case packet.ProtoHopByHop, packet.ProtoRouting, packet.ProtoDstOpts, packet.ProtoMobility, packet.ProtoHIP, packet.ProtoShim6:
			if len(ip) < off+8 {
				return 0, 0, false
			}
			next, off = ip[off], off+(int(ip[off+1])+1)*8
		case packet.ProtoAH:
			if len(ip) < off+8 {
				return 0, 0, false
			}
			next, off = ip[off], off+(int(ip[off+1])+2)*4
		case packet.ProtoFragment:
			return 0, 0, false
		default:
			return next, off, off <= len(ip)
		}
	}
	return 0, 0, false
}

package conntrack

// STAND-IN until helper ctnat's NAT code (nat*.go) is on main: a plain
// allocator and rewrite, enough for the tracker's tests. Delete this
// file and point bindings.go at ctnat's functions when they land.

import (
	"encoding/binary"

	"gvs/packet"
)

// natChooseReply picks the reply key of a connection whose original key
// is orig under n: the first address of the range, the original port if
// free (or the first free one of the range, SNAT 1024-65535 by default).
func natChooseReply(orig *connKey, n *NAT, inUse func(*connKey) bool) (connKey, natAction, bool) {
	r := orig.reverse()
	var action natAction
	var addr *[16]byte
	var port *uint16
	switch n.Kind {
	case NATSrc:
		action, addr, port = natSrc, &r.dst, &r.dport
	case NATDst:
		action, addr, port = natDst, &r.src, &r.sport
	default:
		return r, 0, false
	}
	if n.AddrMin.IsValid() {
		if r.v6 {
			*addr = n.AddrMin.As16()
		} else {
			a := n.AddrMin.As4()
			copy(addr[:4], a[:])
		}
	}
	hasPorts := r.proto == packet.ProtoTCP || r.proto == packet.ProtoUDP
	if !hasPorts {
		return r, action, !inUse(&r)
	}
	lo, hi := n.PortMin, n.PortMax
	if hi == 0 {
		hi = lo
	}
	if lo == 0 {
		if !inUse(&r) {
			return r, action, true
		}
		if action != natSrc {
			return r, action, false
		}
		lo, hi = 1024, 65535
	}
	for p := uint32(lo); p <= uint32(hi); p++ {
		*port = uint16(p)
		if !inUse(&r) {
			return r, action, true
		}
	}
	return r, action, false
}

// natRewriteStub rewrites the outer IPv4/IPv6 addresses and TCP/UDP
// ports and recomputes the checksums; ICMP error payloads are left alone.
func natRewriteStub(b *packet.Buffer, to *connKey, action natAction, related bool) {
	frame := b.Data()
	l3, l4 := int(b.Offsets.L3), int(b.Offsets.L4)
	k := &b.Key
	if to.v6 {
		ip := frame[l3:]
		if action&natSrc != 0 {
			copy(ip[8:24], to.src[:])
			k.SrcIPv6 = to.src
		}
		if action&natDst != 0 {
			copy(ip[24:40], to.dst[:])
			k.DstIPv6 = to.dst
		}
	} else {
		ip := frame[l3:]
		if action&natSrc != 0 {
			copy(ip[12:16], to.src[:4])
			k.SrcIPv4 = [4]byte(to.src[:4])
		}
		if action&natDst != 0 {
			copy(ip[16:20], to.dst[:4])
			k.DstIPv4 = [4]byte(to.dst[:4])
		}
		ihl := int(ip[0]&0x0f) * 4
		ip[10], ip[11] = 0, 0
		binary.BigEndian.PutUint16(ip[10:], ^packet.Checksum(ip[:ihl], 0))
	}
	if related || (to.proto != packet.ProtoTCP && to.proto != packet.ProtoUDP) {
		return
	}
	seg := frame[l4:]
	if action&natSrc != 0 {
		binary.BigEndian.PutUint16(seg[0:], to.sport)
		k.SrcPort = to.sport
	}
	if action&natDst != 0 {
		binary.BigEndian.PutUint16(seg[2:], to.dport)
		k.DstPort = to.dport
	}
	csumOff := 16
	if to.proto == packet.ProtoUDP {
		csumOff = 6
		if !to.v6 && binary.BigEndian.Uint16(seg[6:]) == 0 {
			return
		}
	}
	var ln int
	if to.v6 {
		ln = int(binary.BigEndian.Uint16(frame[l3+4:])) + 40 - (l4 - l3)
	} else {
		ln = int(binary.BigEndian.Uint16(frame[l3+2:])) - (l4 - l3)
	}
	seg = seg[:ln]
	seg[csumOff], seg[csumOff+1] = 0, 0
	var ph uint16
	if to.v6 {
		ph = packet.PseudoHeaderSumV6([16]byte(frame[l3+8:l3+24]), [16]byte(frame[l3+24:l3+40]), to.proto, uint32(ln))
	} else {
		ph = packet.PseudoHeaderSumV4([4]byte(frame[l3+12:l3+16]), [4]byte(frame[l3+16:l3+20]), to.proto, uint16(ln))
	}
	sum := ^packet.Checksum(seg, ph)
	if sum == 0 && to.proto == packet.ProtoUDP {
		sum = 0xffff
	}
	binary.BigEndian.PutUint16(seg[csumOff:], sum)
}

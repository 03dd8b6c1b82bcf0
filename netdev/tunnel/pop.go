package tunnel

import (
	"encoding/binary"

	"gvs/packet"
)

// Drop is why Pop refused a packet. The caller counts drops per reason
// (an array indexed by Drop) and frees the packet.
type Drop uint8

const (
	DropNone               Drop = iota
	DropTruncated               // shorter than its outer headers claim
	DropNotIP                   // outer EtherType or IP version is not IPv4/IPv6
	DropIPChecksum              // bad outer IPv4 header checksum
	DropIPOptions               // outer IPv4 options (unsupported, as in Open vSwitch) or IPv6 ESP and the like
	DropWrongProtocol           // outer IP protocol is not the port's (UDP or GRE)
	DropChecksum                // bad UDP or GRE checksum
	DropBadVersion              // geneve version, GRE version or reserved flags
	DropBadFlags                // vxlan flags or reserved VNI bits
	DropPayloadType             // inner protocol is not Ethernet
	DropOptionsTooLong          // geneve options run past the packet
	DropOptionsUnsupported      // geneve options longer than the key holds
	DropFragment                // outer IP fragment (reassemble first)
	NumDrops                    // number of reasons, for counter arrays
)

var dropNames = [NumDrops]string{
	DropNone:               "none",
	DropTruncated:          "truncated",
	DropNotIP:              "not-ip",
	DropIPChecksum:         "bad-ip-checksum",
	DropIPOptions:          "ip-options",
	DropWrongProtocol:      "wrong-protocol",
	DropChecksum:           "bad-checksum",
	DropBadVersion:         "bad-version",
	DropBadFlags:           "bad-flags",
	DropPayloadType:        "payload-type",
	DropOptionsTooLong:     "options-too-long",
	DropOptionsUnsupported: "options-unsupported",
	DropFragment:           "fragment",
}

// String returns a short stable name, suitable as a metric label.
func (d Drop) String() string {
	if d < NumDrops {
		return dropNames[d]
	}
	return "unknown"
}

// clearTunnel zeroes the Key's tunnel fields (Open vSwitch's
// pkt_metadata_init_tnl).
func clearTunnel(k *packet.Key) {
	k.TunID = 0
	k.TunTOS = 0
	k.TunSrc, k.TunDst = [4]byte{}, [4]byte{}
	k.TunIPv6Src, k.TunIPv6Dst = [16]byte{}, [16]byte{}
	k.TunFlags, k.TunTpSrc, k.TunTpDst = 0, 0, 0
	k.TunGBPID, k.TunGBPFlags, k.TunTTL = 0, 0, 0
	k.TunMetaLen, k.TunMetaPad = 0, 0
	k.TunMetadata = [16]byte{}
}

// l4Trust is what the receiving device said of the outer checksum
// (the packet's virtio_net_hdr): verified, or partial (not computed yet,
// as a local sender's offload leaves it) with its start at partialAt.
type l4Trust struct {
	valid     bool
	partialAt int // 0: none (the L4 header is never at offset 0)
}

// PopConfig is what Pop needs of the receiving port.
type PopConfig struct {
	Kind Kind
	GBP  bool // vxlan GBP extension enabled on the port
}

// Pop checks the outer headers of the frame in b (Ethernet, up to two
// VLAN tags, IPv4 without options or IPv6, then UDP and geneve/vxlan,
// or GRE, per c.Kind), strips them, and fills b.Key's tunnel fields. On
// DropNone the frame is the inner Ethernet frame; on any other result
// the buffer's window is unchanged and the Key's tunnel fields are
// zero. Bytes after the outer IP packet (Ethernet padding) are cut.
// Only the tunnel fields change: the Key's packet fields still describe
// the outer frame until the caller parses the inner one (Open vSwitch
// recirculates after tnl_pop).
//
// A UDP or GRE checksum is verified unless the packet's virtio_net_hdr
// (b.HasVnet) says it was verified or is partial there (a local sender's
// offload, as on a veth); the header is then adjusted to the inner
// frame: a partial checksum inside it moves, one in the outer headers
// and "verified" are dropped.
func Pop(b *packet.Buffer, c PopConfig) Drop {
	k := &b.Key
	clearTunnel(k)
	d := b.Data()
	var end int
	var trust l4Trust
	if b.HasVnet {
		trust.valid = b.Vnet.Flags&packet.VnetDataValid != 0
		if b.Vnet.Flags&packet.VnetNeedsCsum != 0 {
			trust.partialAt = int(b.Vnet.CsumStart)
		}
	}
	n, drop := parseOuter(d, c, k, &end, trust)
	if drop != DropNone {
		clearTunnel(k)
		return drop
	}
	b.SetLen(end)
	b.Pull(n)
	b.Offsets = packet.Offsets{}
	if b.HasVnet {
		// The header described the outer packet: a partial checksum
		// in the outer headers is moot once they are gone, one in
		// the inner packet moves with it; the sender's "verified"
		// was about the outer checksum.
		v := &b.Vnet
		v.Flags &^= packet.VnetDataValid
		if v.Flags&packet.VnetNeedsCsum != 0 {
			if int(v.CsumStart) >= n {
				v.CsumStart -= uint16(n)
			} else {
				v.Flags &^= packet.VnetNeedsCsum
				v.CsumStart, v.CsumOffset = 0, 0
			}
		}
		if int(v.HdrLen) >= n {
			v.HdrLen -= uint16(n)
		}
	}
	return DropNone
}

// parseOuter validates the outer headers of d and returns their length.
// *end is where the outer IP packet ends.
func parseOuter(d []byte, c PopConfig, k *packet.Key, end *int, trust l4Trust) (int, Drop) {
	if len(d) < ethLen {
		return 0, DropTruncated
	}
	off := 12
	etype := binary.BigEndian.Uint16(d[off:])
	for i := 0; i < 2 && (etype == packet.EtherTypeVLAN || etype == packet.EtherTypeQinQ); i++ {
		off += 4
		if len(d) < off+2 {
			return 0, DropTruncated
		}
		etype = binary.BigEndian.Uint16(d[off:])
	}
	l3 := off + 2
	var proto uint8
	var l4 int
	var ipEnd int
	switch etype {
	case ethTypeIPv4:
		if len(d) < l3+ipv4Len {
			return 0, DropTruncated
		}
		ip := d[l3 : l3+ipv4Len]
		if ip[0]>>4 != 4 {
			return 0, DropNotIP
		}
		ihl := int(ip[0]&0xf) * 4
		if ihl < ipv4Len {
			return 0, DropNotIP
		}
		if len(d) < l3+ihl {
			return 0, DropTruncated
		}
		if packet.Checksum(d[l3:l3+ihl], 0) != 0xffff {
			return 0, DropIPChecksum
		}
		tot := int(binary.BigEndian.Uint16(ip[2:]))
		if tot > len(d)-l3 {
			return 0, DropTruncated
		}
		if ihl > ipv4Len {
			return 0, DropIPOptions
		}
		if tot < ihl {
			return 0, DropTruncated
		}
		if binary.BigEndian.Uint16(ip[6:])&0x3fff != 0 { // MF or an offset
			return 0, DropFragment
		}
		copy(k.TunSrc[:], ip[12:16])
		copy(k.TunDst[:], ip[16:20])
		k.TunTOS = ip[1]
		k.TunTTL = ip[8]
		proto = ip[9]
		l4 = l3 + ipv4Len
		ipEnd = l3 + tot
	case ethTypeIPv6:
		if len(d) < l3+ipv6Len {
			return 0, DropTruncated
		}
		ip := d[l3 : l3+ipv6Len]
		if ip[0]>>4 != 6 {
			return 0, DropNotIP
		}
		plen := int(binary.BigEndian.Uint16(ip[4:]))
		if plen > len(d)-l3-ipv6Len {
			return 0, DropTruncated
		}
		copy(k.TunIPv6Src[:], ip[8:24])
		copy(k.TunIPv6Dst[:], ip[24:40])
		k.TunTOS = uint8(binary.BigEndian.Uint32(ip[0:]) >> 20)
		k.TunTTL = ip[7]
		ipEnd = l3 + ipv6Len + plen
		// Extension headers (Linux's ip6gre puts a destination option,
		// the tunnel encapsulation limit, in front of GRE) are skipped
		// as Open vSwitch's parser does; a fragment is dropped.
		var drop Drop
		proto, l4, drop = skipIPv6Extensions(d[:ipEnd], ip[6], l3+ipv6Len)
		if drop != DropNone {
			return 0, drop
		}
	default:
		return 0, DropNotIP
	}
	pkt := d[:ipEnd]
	*end = ipEnd
	switch c.Kind {
	case Geneve, VXLAN:
		if proto != protoUDP {
			if etype == ethTypeIPv6 && isIPv6Extension(proto) {
				return 0, DropIPOptions
			}
			return 0, DropWrongProtocol
		}
		return parseUDP(pkt, l3, l4, etype == ethTypeIPv6, c, k, trust.valid || trust.partialAt == l4)
	case GRE:
		if proto != protoGRE {
			if etype == ethTypeIPv6 && isIPv6Extension(proto) {
				return 0, DropIPOptions
			}
			return 0, DropWrongProtocol
		}
		return parseGRE(pkt, l4, k, trust.valid || trust.partialAt == l4)
	}
	return 0, DropWrongProtocol
}

// skipIPv6Extensions walks the extension headers starting at off with
// next header proto and returns the upper-layer protocol and its offset.
func skipIPv6Extensions(d []byte, proto uint8, off int) (uint8, int, Drop) {
	for i := 0; i < 8; i++ {
		switch proto {
		case packet.ProtoHopByHop, packet.ProtoRouting, packet.ProtoDstOpts:
			if len(d) < off+8 {
				return 0, 0, DropTruncated
			}
			proto, off = d[off], off+(int(d[off+1])+1)*8
		case packet.ProtoAH:
			if len(d) < off+8 {
				return 0, 0, DropTruncated
			}
			proto, off = d[off], off+(int(d[off+1])+2)*4
		case packet.ProtoFragment:
			return 0, 0, DropFragment
		default:
			return proto, off, DropNone
		}
	}
	return 0, 0, DropIPOptions // more headers than any tunnel sender puts
}

func isIPv6Extension(p uint8) bool {
	switch p {
	case packet.ProtoHopByHop, packet.ProtoRouting, packet.ProtoFragment, packet.ProtoDstOpts,
		packet.ProtoAH, packet.ProtoMobility, packet.ProtoHIP, packet.ProtoShim6:
		return true
	}
	return false
}

func parseUDP(pkt []byte, l3, l4 int, ipv6 bool, c PopConfig, k *packet.Key, trusted bool) (int, Drop) {
	base := udpLen + vxlanLen // geneve's base header is as long
	if len(pkt)-l4 < base {
		return 0, DropTruncated
	}
	udp := pkt[l4:]
	ulen := int(binary.BigEndian.Uint16(udp[4:]))
	if ulen < base || ulen > len(udp) {
		return 0, DropTruncated
	}
	udp = udp[:ulen]
	if binary.BigEndian.Uint16(udp[6:]) != 0 {
		var sum uint16
		if ipv6 {
			var src, dst [16]byte
			copy(src[:], pkt[l3+8:])
			copy(dst[:], pkt[l3+24:])
			sum = packet.PseudoHeaderSumV6(src, dst, protoUDP, uint32(ulen))
		} else {
			var src, dst [4]byte
			copy(src[:], pkt[l3+12:])
			copy(dst[:], pkt[l3+16:])
			sum = packet.PseudoHeaderSumV4(src, dst, protoUDP, uint16(ulen))
		}
		if !trusted && packet.Checksum(udp, sum) != 0xffff {
			return 0, DropChecksum
		}
		k.TunFlags |= FlagCsum
	}
	k.TunTpSrc = binary.BigEndian.Uint16(udp[0:])
	k.TunTpDst = binary.BigEndian.Uint16(udp[2:])
	t := udp[udpLen:]
	if c.Kind == VXLAN {
		flags := binary.BigEndian.Uint32(t[0:])
		vni := binary.BigEndian.Uint32(t[4:])
		if c.GBP && flags&vxlanFlagGBP != 0 {
			k.TunGBPID = uint16(flags)
			if flags&vxlanGBPDontLearn != 0 {
				k.TunGBPFlags |= 0x40
			}
			if flags&vxlanGBPApplied != 0 {
				k.TunGBPFlags |= 0x08
			}
			flags &^= vxlanFlagGBP | vxlanGBPDontLearn | vxlanGBPApplied | 0xffff
		}
		if flags != vxlanFlagVNI || vni&0xff != 0 {
			return 0, DropBadFlags
		}
		k.TunID = uint64(vni >> 8)
		k.TunFlags |= FlagKey
		return l4 + udpLen + vxlanLen, DropNone
	}
	optLen := int(t[0]&0x3f) * 4
	if udpLen+geneveBaseLen+optLen > len(udp) {
		return 0, DropOptionsTooLong
	}
	if t[0]>>6 != 0 {
		return 0, DropBadVersion
	}
	if binary.BigEndian.Uint16(t[2:]) != ethTypeTEB {
		return 0, DropPayloadType
	}
	if optLen > len(k.TunMetadata) {
		return 0, DropOptionsUnsupported
	}
	if t[1]&0x80 != 0 {
		k.TunFlags |= FlagOAM
	}
	k.TunID = uint64(binary.BigEndian.Uint32(t[4:]) >> 8)
	k.TunFlags |= FlagKey | FlagUDPIF
	copy(k.TunMetadata[:], t[geneveBaseLen:geneveBaseLen+optLen])
	k.TunMetaLen = uint8(optLen)
	return l4 + udpLen + geneveBaseLen + optLen, DropNone
}

func parseGRE(pkt []byte, l4 int, k *packet.Key, trusted bool) (int, Drop) {
	if len(pkt)-l4 < greBaseLen {
		return 0, DropTruncated
	}
	g := pkt[l4:]
	flags := binary.BigEndian.Uint16(g[0:])
	if flags&^(greFlagCsum|greFlagKey|greFlagSeq) != 0 {
		return 0, DropBadVersion
	}
	hlen := greBaseLen
	for _, f := range [...]uint16{greFlagCsum, greFlagKey, greFlagSeq} {
		if flags&f != 0 {
			hlen += 4
		}
	}
	if hlen > len(g) {
		return 0, DropTruncated
	}
	o := greBaseLen
	if flags&greFlagCsum != 0 {
		if !trusted && packet.Checksum(g, 0) != 0xffff {
			return 0, DropChecksum
		}
		k.TunFlags |= FlagCsum
		o += 4
	}
	if flags&greFlagKey != 0 {
		k.TunID = uint64(binary.BigEndian.Uint32(g[o:]))
		k.TunFlags |= FlagKey
	}
	if binary.BigEndian.Uint16(g[2:]) != ethTypeTEB {
		return 0, DropPayloadType
	}
	return l4 + hlen, DropNone
}

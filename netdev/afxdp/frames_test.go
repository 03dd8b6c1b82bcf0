package afxdp

import (
	"encoding/binary"

	"gvs/packet"
)

// Frame builders for the tests: Ethernet, optional 802.1Q tag, IPv4 or
// IPv6, TCP or UDP, with correct checksums unless partial is asked for.

type frameSpec struct {
	vlan    uint16 // 0: untagged
	ipv6    bool
	udp     bool
	payload int
	seq     uint32
	flags   byte // TCP flags
	partial bool // leave only the pseudo-header sum in the L4 checksum
}

var (
	testSrcMAC = [6]byte{0x02, 0, 0, 0, 0, 1}
	testDstMAC = [6]byte{0x02, 0, 0, 0, 0, 2}
	testSrc4   = [4]byte{198, 18, 200, 1}
	testDst4   = [4]byte{198, 18, 200, 2}
	testSrc6   = [16]byte{0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}
	testDst6   = [16]byte{0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2}
)

func buildFrame(s frameSpec) []byte {
	l4Len := 20
	proto := packet.ProtoTCP
	if s.udp {
		l4Len, proto = 8, packet.ProtoUDP
	}
	l3Len := 20
	if s.ipv6 {
		l3Len = 40
	}
	l2 := 14
	if s.vlan != 0 {
		l2 = 18
	}
	f := make([]byte, l2+l3Len+l4Len+s.payload)
	copy(f[0:], testDstMAC[:])
	copy(f[6:], testSrcMAC[:])
	et := f[12:]
	if s.vlan != 0 {
		binary.BigEndian.PutUint16(f[12:], packet.EtherTypeVLAN)
		binary.BigEndian.PutUint16(f[14:], s.vlan)
		et = f[16:]
	}
	ip := f[l2:]
	l4 := f[l2+l3Len:]
	segLen := l4Len + s.payload
	var pseudo uint16
	if s.ipv6 {
		binary.BigEndian.PutUint16(et, packet.EtherTypeIPv6)
		ip[0] = 0x60
		binary.BigEndian.PutUint16(ip[4:], uint16(segLen))
		ip[6] = proto
		ip[7] = 64
		copy(ip[8:], testSrc6[:])
		copy(ip[24:], testDst6[:])
		pseudo = packet.PseudoHeaderSumV6(testSrc6, testDst6, proto, uint32(segLen))
	} else {
		binary.BigEndian.PutUint16(et, packet.EtherTypeIPv4)
		ip[0] = 0x45
		binary.BigEndian.PutUint16(ip[2:], uint16(l3Len+segLen))
		binary.BigEndian.PutUint16(ip[4:], 0x1234)
		ip[6] = 0x40 // DF
		ip[8] = 64
		ip[9] = proto
		copy(ip[12:], testSrc4[:])
		copy(ip[16:], testDst4[:])
		binary.BigEndian.PutUint16(ip[10:], packet.IPv4HeaderChecksum(ip[:20]))
		pseudo = packet.PseudoHeaderSumV4(testSrc4, testDst4, proto, uint16(segLen))
	}
	binary.BigEndian.PutUint16(l4[0:], 40000)
	binary.BigEndian.PutUint16(l4[2:], 5201)
	field := 16
	if s.udp {
		binary.BigEndian.PutUint16(l4[4:], uint16(segLen))
		field = 6
	} else {
		binary.BigEndian.PutUint32(l4[4:], s.seq)
		binary.BigEndian.PutUint32(l4[8:], 1)
		l4[12] = 5 << 4
		l4[13] = s.flags
		binary.BigEndian.PutUint16(l4[14:], 65535)
	}
	for i := range s.payload {
		l4[l4Len+i] = byte(i*7 + i>>8)
	}
	if s.partial {
		binary.BigEndian.PutUint16(l4[field:], pseudo)
	} else {
		binary.BigEndian.PutUint16(l4[field:], ^packet.Checksum(l4[:segLen], pseudo))
	}
	return f
}

// l4ChecksumOK verifies the TCP or UDP checksum of a parsed frame.
func l4ChecksumOK(frame []byte) bool {
	var k packet.Key
	var o packet.Offsets
	if packet.ParseOffsets(frame, &k, &o) != packet.StatusOK || o.L4 == 0 {
		return false
	}
	l3 := int(o.L3)
	var end int
	var pseudo uint16
	if k.EtherType == packet.EtherTypeIPv4 {
		end = l3 + int(binary.BigEndian.Uint16(frame[l3+2:]))
		pseudo = packet.PseudoHeaderSumV4(k.SrcIPv4, k.DstIPv4, k.IPProto, uint16(end-int(o.L4)))
	} else {
		end = l3 + 40 + int(binary.BigEndian.Uint16(frame[l3+4:]))
		pseudo = packet.PseudoHeaderSumV6(k.SrcIPv6, k.DstIPv6, k.IPProto, uint32(end-int(o.L4)))
	}
	return packet.Checksum(frame[o.L4:end], pseudo) == 0xffff
}

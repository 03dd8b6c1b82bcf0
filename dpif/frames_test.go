package dpif

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"testing"

	"gvs/packet"
)

// fspec describes a test frame; buildFrame makes it with every checksum
// computed from scratch, so a frame rewritten by set actions can be
// compared byte for byte with one built with the new values.
type fspec struct {
	v6         bool
	vid        uint16
	dst, src   [6]byte
	src4, dst4 [4]byte
	src6, dst6 [16]byte
	tos, ttl   uint8
	label      uint32
	proto      uint8
	sport      uint16
	dport      uint16
	icmpType   uint8
	icmpCode   uint8
	icmpRest   uint32 // the 4 bytes after an ICMP checksum (ND: reserved/flags)
	payload    []byte
	noUDPCsum  bool
	arp        *arpSpec
}

type arpSpec struct {
	op       uint16
	sha, tha [6]byte
	spa, tpa [4]byte
}

func buildFrame(s fspec) []byte {
	f := append([]byte(nil), s.dst[:]...)
	f = append(f, s.src[:]...)
	if s.vid != 0 {
		f = binary.BigEndian.AppendUint16(f, packet.EtherTypeVLAN)
		f = binary.BigEndian.AppendUint16(f, s.vid)
	}
	if s.arp != nil {
		f = binary.BigEndian.AppendUint16(f, packet.EtherTypeARP)
		f = append(f, 0, 1, 8, 0, 6, 4)
		f = binary.BigEndian.AppendUint16(f, s.arp.op)
		f = append(f, s.arp.sha[:]...)
		f = append(f, s.arp.spa[:]...)
		f = append(f, s.arp.tha[:]...)
		f = append(f, s.arp.tpa[:]...)
		return f
	}
	// L4 segment with a zero checksum.
	var seg []byte
	csumAt := -1
	switch s.proto {
	case packet.ProtoTCP:
		seg = binary.BigEndian.AppendUint16(nil, s.sport)
		seg = binary.BigEndian.AppendUint16(seg, s.dport)
		seg = append(seg, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x18, 0xff, 0xff, 0, 0, 0, 0)
		csumAt = 16
	case packet.ProtoUDP:
		seg = binary.BigEndian.AppendUint16(nil, s.sport)
		seg = binary.BigEndian.AppendUint16(seg, s.dport)
		seg = binary.BigEndian.AppendUint16(seg, uint16(8+len(s.payload)))
		seg = append(seg, 0, 0)
		if !s.noUDPCsum {
			csumAt = 6
		}
	case packet.ProtoSCTP:
		seg = binary.BigEndian.AppendUint16(nil, s.sport)
		seg = binary.BigEndian.AppendUint16(seg, s.dport)
		seg = append(seg, 0, 0, 0, 9, 0, 0, 0, 0)
	case packet.ProtoICMP, packet.ProtoICMPv6:
		seg = []byte{s.icmpType, s.icmpCode, 0, 0}
		seg = binary.BigEndian.AppendUint32(seg, s.icmpRest)
		csumAt = 2
	}
	seg = append(seg, s.payload...)
	var l3 []byte
	if !s.v6 {
		f = binary.BigEndian.AppendUint16(f, packet.EtherTypeIPv4)
		l3 = []byte{0x45, s.tos, 0, 0, 0, 1, 0, 0, s.ttl, s.proto, 0, 0}
		binary.BigEndian.PutUint16(l3[2:], uint16(20+len(seg)))
		l3 = append(l3, s.src4[:]...)
		l3 = append(l3, s.dst4[:]...)
		binary.BigEndian.PutUint16(l3[10:], packet.IPv4HeaderChecksum(l3))
	} else {
		f = binary.BigEndian.AppendUint16(f, packet.EtherTypeIPv6)
		l3 = binary.BigEndian.AppendUint32(nil, 6<<28|uint32(s.tos)<<20|s.label&0xfffff)
		l3 = binary.BigEndian.AppendUint16(l3, uint16(len(seg)))
		l3 = append(l3, s.proto, s.ttl)
		l3 = append(l3, s.src6[:]...)
		l3 = append(l3, s.dst6[:]...)
	}
	switch {
	case s.proto == packet.ProtoSCTP:
		binary.LittleEndian.PutUint32(seg[8:], crc32.Checksum(seg, crc32.MakeTable(crc32.Castagnoli)))
	case s.proto == packet.ProtoICMP:
		binary.BigEndian.PutUint16(seg[csumAt:], ^packet.Checksum(seg, 0))
	case csumAt >= 0:
		var ph uint16
		if s.v6 {
			ph = packet.PseudoHeaderSumV6(s.src6, s.dst6, s.proto, uint32(len(seg)))
		} else {
			ph = packet.PseudoHeaderSumV4(s.src4, s.dst4, s.proto, uint16(len(seg)))
		}
		c := ^packet.Checksum(seg, ph)
		if c == 0 && s.proto == packet.ProtoUDP {
			c = 0xffff
		}
		binary.BigEndian.PutUint16(seg[csumAt:], c)
	}
	return append(append(f, l3...), seg...)
}

// checkChecksums verifies a frame's IPv4 header checksum and its L4
// checksum as a receiver would, with the packet package's helpers.
func checkChecksums(t *testing.T, frame []byte) {
	t.Helper()
	for _, e := range checksumErrors(frame) {
		t.Error(e)
	}
}

// checksumErrors is checkChecksums' work: what does not verify.
func checksumErrors(frame []byte) []string {
	var errs []string
	var k packet.Key
	var o packet.Offsets
	st := packet.ParseOffsets(frame, &k, &o)
	if o.L3 == 0 {
		return nil
	}
	l3 := frame[o.L3:]
	if k.EtherType == packet.EtherTypeIPv4 && len(l3) >= packet.IPv4MinLen && int(l3[0]&0xf)*4 <= len(l3) {
		ihl := int(l3[0]&0xf) * 4
		if c := packet.Checksum(l3[:ihl], 0); c != 0xffff {
			errs = append(errs, fmt.Sprintf("IPv4 header checksum does not verify (sum %#x)", c))
		}
	}
	if o.L4 == 0 || st != packet.StatusOK {
		return errs
	}
	seg := frame[o.L4:]
	var ph uint16
	if k.EtherType == packet.EtherTypeIPv4 {
		ph = packet.PseudoHeaderSumV4(k.SrcIPv4, k.DstIPv4, k.IPProto, uint16(len(seg)))
	} else {
		ph = packet.PseudoHeaderSumV6(k.SrcIPv6, k.DstIPv6, k.IPProto, uint32(len(seg)))
	}
	proto := k.IPProto
	if proto == packet.ProtoICMPv6 && k.EtherType != packet.EtherTypeIPv6 || proto == packet.ProtoICMP && k.EtherType != packet.EtherTypeIPv4 {
		proto = 0 // not what the number means there: no checksum we know
	}
	switch proto {
	case packet.ProtoTCP, packet.ProtoICMPv6:
		if c := packet.Checksum(seg, ph); c != 0xffff {
			errs = append(errs, fmt.Sprintf("L4 checksum does not verify (sum %#x)", c))
		}
	case packet.ProtoUDP:
		if binary.BigEndian.Uint16(seg[6:]) != 0 {
			if c := packet.Checksum(seg, ph); c != 0xffff {
				errs = append(errs, fmt.Sprintf("UDP checksum does not verify (sum %#x)", c))
			}
		}
	case packet.ProtoICMP:
		if c := packet.Checksum(seg, 0); c != 0xffff {
			errs = append(errs, fmt.Sprintf("ICMP checksum does not verify (sum %#x)", c))
		}
	case packet.ProtoSCTP:
		cp := append([]byte(nil), seg...)
		stored := binary.LittleEndian.Uint32(cp[8:])
		binary.LittleEndian.PutUint32(cp[8:], 0)
		if c := crc32.Checksum(cp, crc32.MakeTable(crc32.Castagnoli)); c != stored {
			errs = append(errs, fmt.Sprintf("SCTP checksum %#x, want %#x", stored, c))
		}
	}
	return errs
}

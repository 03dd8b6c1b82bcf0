package conntrack

// Packet builders and checksum verifiers for the NAT tests: every
// checksum computed from scratch, so a rewritten packet can be compared
// byte for byte with one built with the rewritten fields.

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"net/netip"

	"gvs/packet"
)

// ntPkt describes one IP packet to build.
type ntPkt struct {
	src, dst     netip.Addr // both IPv4 or both IPv6
	proto        uint8
	sport, dport uint16 // TCP, UDP, SCTP
	icmpType     uint8  // ICMP, ICMPv6
	icmpCode     uint8
	icmpID       uint16 // echo identifier
	payload      []byte
	udpNoCsum    bool   // UDP checksum 0
	quote        []byte // ICMP error: the quoted packet, after the 8-byte header
	ipOptions    int    // IPv4: words of NOP options
	ipFrag       uint16 // IPv4 flags+offset field
}

func (p ntPkt) v6() bool { return p.src.Is6() }

// ntIP builds the IP packet with correct checksums.
func ntIP(p ntPkt) []byte {
	var l4 []byte
	switch p.proto {
	case packet.ProtoTCP:
		l4 = make([]byte, 20+len(p.payload))
		binary.BigEndian.PutUint16(l4[0:], p.sport)
		binary.BigEndian.PutUint16(l4[2:], p.dport)
		binary.BigEndian.PutUint32(l4[4:], 0x01020304)
		binary.BigEndian.PutUint32(l4[8:], 0x0a0b0c0d)
		l4[12] = 5 << 4
		l4[13] = 0x18
		binary.BigEndian.PutUint16(l4[14:], 65535)
		copy(l4[20:], p.payload)
	case packet.ProtoUDP, packet.ProtoUDPLite:
		l4 = make([]byte, 8+len(p.payload))
		binary.BigEndian.PutUint16(l4[0:], p.sport)
		binary.BigEndian.PutUint16(l4[2:], p.dport)
		binary.BigEndian.PutUint16(l4[4:], uint16(len(l4)))
		copy(l4[8:], p.payload)
	case packet.ProtoSCTP:
		l4 = make([]byte, 12+len(p.payload))
		binary.BigEndian.PutUint16(l4[0:], p.sport)
		binary.BigEndian.PutUint16(l4[2:], p.dport)
		binary.BigEndian.PutUint32(l4[4:], 0xdeadbeef)
		copy(l4[12:], p.payload)
	case packet.ProtoICMP, packet.ProtoICMPv6:
		l4 = make([]byte, 8+len(p.quote)+len(p.payload))
		l4[0], l4[1] = p.icmpType, p.icmpCode
		if natICMPHasID(p.icmpType, p.v6()) {
			binary.BigEndian.PutUint16(l4[4:], p.icmpID)
			binary.BigEndian.PutUint16(l4[6:], 1)
		}
		copy(l4[8:], p.quote)
		copy(l4[8+len(p.quote):], p.payload)
	default:
		l4 = append([]byte(nil), p.payload...)
	}
	var ip []byte
	if p.v6() {
		ip = make([]byte, 40+len(l4))
		ip[0] = 6 << 4
		binary.BigEndian.PutUint16(ip[4:], uint16(len(l4)))
		ip[6], ip[7] = p.proto, 64
		s, d := p.src.As16(), p.dst.As16()
		copy(ip[8:], s[:])
		copy(ip[24:], d[:])
		copy(ip[40:], l4)
	} else {
		hl := 20 + 4*p.ipOptions
		ip = make([]byte, hl+len(l4))
		ip[0] = 4<<4 | byte(hl/4)
		binary.BigEndian.PutUint16(ip[2:], uint16(len(ip)))
		binary.BigEndian.PutUint16(ip[4:], 0x1234)
		binary.BigEndian.PutUint16(ip[6:], p.ipFrag)
		ip[8], ip[9] = 64, p.proto
		s, d := p.src.As4(), p.dst.As4()
		copy(ip[12:], s[:])
		copy(ip[16:], d[:])
		for i := 20; i < hl; i++ {
			ip[i] = 1 // NOP
		}
		binary.BigEndian.PutUint16(ip[10:], packet.IPv4HeaderChecksum(ip[:hl]))
		copy(ip[hl:], l4)
	}
	ntFixL4(ip, p.udpNoCsum)
	return ip
}

// ntL4 returns the L4 segment of an IP packet and its protocol (no IPv6
// extension headers: the builder makes none).
func ntL4(ip []byte) ([]byte, uint8, bool) {
	if len(ip) < 20 {
		return nil, 0, false
	}
	if ip[0]>>4 == 6 {
		if len(ip) < 40 {
			return nil, 0, false
		}
		return ip[40:], ip[6], true
	}
	hl := int(ip[0]&0x0f) * 4
	if hl > len(ip) {
		return nil, 0, false
	}
	if binary.BigEndian.Uint16(ip[6:])&0x1fff != 0 {
		return nil, ip[9], false
	}
	return ip[hl:], ip[9], true
}

// ntPseudo returns the pseudo-header sum of ip for an L4 segment of n bytes.
func ntPseudo(ip []byte, proto uint8, n int) uint16 {
	if ip[0]>>4 == 6 {
		return packet.PseudoHeaderSumV6([16]byte(ip[8:24]), [16]byte(ip[24:40]), proto, uint32(n))
	}
	return packet.PseudoHeaderSumV4([4]byte(ip[12:16]), [4]byte(ip[16:20]), proto, uint16(n))
}

// ntL4Csum computes the L4 checksum of the whole packet ip from scratch
// (with the field taken as zero) and where it goes; ok is false for
// protocols without one. SCTP returns its CRC in crc.
func ntL4Csum(ip []byte) (at int, csum uint16, crc uint32, ok bool) {
	l4, proto, ok := ntL4(ip)
	if !ok {
		return 0, 0, 0, false
	}
	off := len(ip) - len(l4)
	field := -1
	var sum uint16
	switch proto {
	case packet.ProtoTCP:
		field, sum = 16, ntPseudo(ip, proto, len(l4))
	case packet.ProtoUDP, packet.ProtoUDPLite:
		field, sum = 6, ntPseudo(ip, proto, len(l4))
	case packet.ProtoICMPv6:
		field, sum = 2, ntPseudo(ip, proto, len(l4))
	case packet.ProtoICMP:
		field = 2
	case packet.ProtoSCTP:
		if len(l4) < 12 {
			return 0, 0, 0, false
		}
		c := append([]byte(nil), l4...)
		binary.BigEndian.PutUint32(c[8:], 0)
		v := crc32.Checksum(c, crc32.MakeTable(crc32.Castagnoli))
		return off + 8, 0, v>>24 | v>>8&0xff00 | v<<8&0xff0000 | v<<24, true
	}
	if field < 0 || len(l4) < field+2 {
		return 0, 0, 0, false
	}
	c := append([]byte(nil), l4...)
	c[field], c[field+1] = 0, 0
	return off + field, ^packet.Checksum(c, sum), 0, true
}

// ntFixL4 writes the L4 checksum of ip.
func ntFixL4(ip []byte, udpNoCsum bool) {
	at, c, crc, ok := ntL4Csum(ip)
	if !ok {
		return
	}
	_, proto, _ := ntL4(ip)
	switch {
	case proto == packet.ProtoSCTP:
		binary.BigEndian.PutUint32(ip[at:], crc)
	case proto == packet.ProtoUDP && udpNoCsum:
		binary.BigEndian.PutUint16(ip[at:], 0)
	default:
		if proto == packet.ProtoUDP && c == 0 {
			c = 0xffff
		}
		binary.BigEndian.PutUint16(ip[at:], c)
	}
}

// ntCheckIP verifies ip's checksums from scratch: the IPv4 header's, the
// L4 one (a UDP checksum of 0 passes), and for an ICMP error the quoted
// packet's IPv4 header checksum and, when the quote is whole, its L4 one.
// Checksums compare as one's complement numbers (0 and 0xffff are both
// zero).
func ntCheckIP(ip []byte) error {
	if len(ip) < 20 {
		return fmt.Errorf("short packet")
	}
	if ip[0]>>4 == 4 {
		hl := int(ip[0]&0x0f) * 4
		if got, want := binary.BigEndian.Uint16(ip[10:]), packet.IPv4HeaderChecksum(ip[:hl]); !ntCsumEqual(got, want) {
			return fmt.Errorf("IPv4 header checksum %#04x, want %#04x", got, want)
		}
	}
	at, want, crc, ok := ntL4Csum(ip)
	if !ok {
		return nil
	}
	l4, proto, _ := ntL4(ip)
	if proto == packet.ProtoSCTP {
		if got := binary.BigEndian.Uint32(ip[at:]); got != crc {
			return fmt.Errorf("SCTP CRC %#08x, want %#08x", got, crc)
		}
		return nil
	}
	got := binary.BigEndian.Uint16(ip[at:])
	if proto == packet.ProtoUDP && got == 0 { // none (IPv6: left as it came)
		return nil
	}
	if !ntCsumEqual(got, want) {
		return fmt.Errorf("L4 (proto %d) checksum %#04x, want %#04x", proto, got, want)
	}
	if (proto == packet.ProtoICMP || proto == packet.ProtoICMPv6) && len(l4) >= 8+20 && !natICMPHasID(l4[0], proto == packet.ProtoICMPv6) {
		q := l4[8:]
		if q[0]>>4 == 4 {
			hl := int(q[0]&0x0f) * 4
			if hl >= 20 && hl <= len(q) {
				if got, want := binary.BigEndian.Uint16(q[10:]), packet.IPv4HeaderChecksum(q[:hl]); !ntCsumEqual(got, want) {
					return fmt.Errorf("quoted IPv4 header checksum %#04x, want %#04x", got, want)
				}
			}
			if int(binary.BigEndian.Uint16(q[2:])) == len(q) {
				if err := ntCheckIP(q); err != nil {
					return fmt.Errorf("quoted: %v", err)
				}
			}
		} else if len(q) >= 40 && 40+int(binary.BigEndian.Uint16(q[4:])) == len(q) {
			if err := ntCheckIP(q); err != nil {
				return fmt.Errorf("quoted: %v", err)
			}
		}
	}
	return nil
}

func ntCsumEqual(a, b uint16) bool {
	return a == b || a == 0 && b == 0xffff || a == 0xffff && b == 0
}

var ntMACs = []byte{2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1}

// ntFrame puts ip behind an Ethernet header (with a VLAN tag when vlan).
func ntFrame(ip []byte, vlan bool) []byte {
	f := append([]byte(nil), ntMACs...)
	if vlan {
		f = append(f, 0x81, 0x00, 0x00, 0x0a)
	}
	if ip[0]>>4 == 6 {
		f = append(f, 0x86, 0xdd)
	} else {
		f = append(f, 0x08, 0x00)
	}
	return append(f, ip...)
}

// ntBuffer returns a parsed buffer holding frame.
func ntBuffer(frame []byte) *packet.Buffer {
	b := packet.NewBuffer(packet.DefaultHeadroom, 2048)
	b.SetLen(len(frame))
	copy(b.Data(), frame)
	b.Parse()
	return b
}

// ntIPOf returns the IP packet inside a frame built by ntFrame.
func ntIPOf(frame []byte) []byte {
	if binary.BigEndian.Uint16(frame[12:]) == packet.EtherTypeVLAN {
		return frame[18:]
	}
	return frame[14:]
}

func ntAddr(s string) netip.Addr { return netip.MustParseAddr(s) }

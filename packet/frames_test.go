package packet

import "encoding/binary"

// Hand-built frames for the tests: every header is laid out byte by byte
// here, independently of the parser, with lengths and checksums filled in.

var (
	macA = [6]byte{0x02, 0x00, 0x00, 0x00, 0x00, 0x0a}
	macB = [6]byte{0x02, 0x00, 0x00, 0x00, 0x00, 0x0b}
	ip4A = [4]byte{198, 18, 0, 1}
	ip4B = [4]byte{198, 19, 0, 2}
	ip6A = [16]byte{0x20, 0x01, 0x0d, 0xb8, 15: 0x01}
	ip6B = [16]byte{0x20, 0x01, 0x0d, 0xb8, 8: 0xaa, 15: 0x02}
)

func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func put16(v uint16) []byte { return binary.BigEndian.AppendUint16(nil, v) }

// ether builds an Ethernet header with optional tags (outermost first).
func ether(et uint16, tags ...VLANTag) []byte {
	h := cat(macB[:], macA[:])
	for _, t := range tags {
		h = cat(h, put16(t.TPID), put16(t.TCI))
	}
	return cat(h, put16(et))
}

type ipv4Spec struct {
	proto, tos, ttl uint8
	frag            uint16 // flags and offset field (bytes 6-7)
	options         []byte // multiple of 4 bytes
}

// ipv4 builds an IPv4 header (with a valid header checksum) followed by l4.
func ipv4(s ipv4Spec, l4 []byte) []byte {
	ihl := IPv4MinLen + len(s.options)
	h := make([]byte, IPv4MinLen)
	h[0] = 0x40 | byte(ihl/4)
	h[1] = s.tos
	binary.BigEndian.PutUint16(h[2:], uint16(ihl+len(l4)))
	binary.BigEndian.PutUint16(h[4:], 0x1234)
	binary.BigEndian.PutUint16(h[6:], s.frag)
	h[8] = s.ttl
	h[9] = s.proto
	copy(h[12:], ip4A[:])
	copy(h[16:], ip4B[:])
	h = cat(h, s.options)
	binary.BigEndian.PutUint16(h[10:], refChecksum(h))
	return cat(h, l4)
}

type ipv6Spec struct {
	next, tc, hop uint8
	flowLabel     uint32
}

// ipv6 builds an IPv6 header followed by rest (extension headers and L4).
func ipv6(s ipv6Spec, rest []byte) []byte {
	h := make([]byte, IPv6HeaderLen)
	binary.BigEndian.PutUint32(h, 6<<28|uint32(s.tc)<<20|s.flowLabel&0xfffff)
	binary.BigEndian.PutUint16(h[4:], uint16(len(rest)))
	h[6] = s.next
	h[7] = s.hop
	copy(h[8:], ip6A[:])
	copy(h[24:], ip6B[:])
	return cat(h, rest)
}

// ext6 builds a generic IPv6 extension header (hop-by-hop, routing,
// destination options) of 8*(units+1) bytes.
func ext6(next uint8, units int) []byte {
	h := make([]byte, 8*(units+1))
	h[0] = next
	h[1] = byte(units)
	if len(h) >= 4 {
		h[2] = 1 // a PadN option or routing type: content is not parsed
	}
	return h
}

// frag6 builds an IPv6 fragment header.
func frag6(next uint8, offset uint16, more bool) []byte {
	v := offset << 3
	if more {
		v |= 1
	}
	return cat([]byte{next, 0}, put16(v), []byte{0, 0, 0, 42})
}

// tcp builds a TCP header with optWords 32-bit words of NOP options.
func tcp(sp, dp, flags uint16, optWords int, payload []byte) []byte {
	h := make([]byte, TCPMinLen+4*optWords)
	binary.BigEndian.PutUint16(h[0:], sp)
	binary.BigEndian.PutUint16(h[2:], dp)
	binary.BigEndian.PutUint32(h[4:], 1000)
	binary.BigEndian.PutUint16(h[12:], uint16(5+optWords)<<12|flags&0x0fff)
	binary.BigEndian.PutUint16(h[14:], 65535)
	for i := TCPMinLen; i < len(h); i++ {
		h[i] = 1 // NOP
	}
	return cat(h, payload)
}

func udp(sp, dp uint16, payload []byte) []byte {
	return cat(put16(sp), put16(dp), put16(uint16(UDPHeaderLen+len(payload))), put16(0), payload)
}

func sctp(sp, dp uint16) []byte {
	return cat(put16(sp), put16(dp), []byte{0, 0, 0, 7, 0, 0, 0, 0})
}

func icmp(typ, code uint8) []byte {
	return []byte{typ, code, 0, 0, 0, 1, 0, 2}
}

func arp(htype, ptype uint16, op uint16) []byte {
	return cat(put16(htype), put16(ptype), []byte{6, 4}, put16(op),
		macA[:], ip4A[:], macB[:], ip4B[:])
}

// pad extends a frame to the Ethernet minimum of 60 bytes (without FCS).
func pad(f []byte) []byte {
	for len(f) < 60 {
		f = append(f, 0)
	}
	return f
}

// refChecksum is the textbook RFC 1071 checksum: add 16-bit big-endian
// words in a 32-bit accumulator, fold, complement. The reference for the
// fast implementation.
func refChecksum(b []byte) uint16 {
	return ^refSum(b, 0)
}

func refSum(b []byte, initial uint32) uint16 {
	s := initial
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		s += uint32(b[len(b)-1]) << 8
	}
	for s > 0xffff {
		s = s>>16 + s&0xffff
	}
	return uint16(s)
}

// refPseudo is the reference pseudo-header sum: the pseudo-header laid out
// as bytes and summed.
func refPseudo(src, dst []byte, proto uint8, length int) uint16 {
	var ph []byte
	if len(src) == 4 {
		ph = cat(src, dst, []byte{0, proto}, put16(uint16(length)))
	} else {
		ph = cat(src, dst, binary.BigEndian.AppendUint32(nil, uint32(length)), []byte{0, 0, 0, proto})
	}
	return refSum(ph, 0)
}

// nd builds an ICMPv6 neighbour solicitation or advertisement: type,
// code 0, checksum 0, the reserved/flags word, target, then options.
func nd(typ uint8, reserved uint32, target [16]byte, opts []byte) []byte {
	b := []byte{typ, 0, 0, 0}
	b = binary.BigEndian.AppendUint32(b, reserved)
	return cat(b, target[:], opts)
}

// ndOpt builds a link-layer address option (type 1 source, 2 target).
func ndOpt(typ uint8, mac [6]byte) []byte { return cat([]byte{typ, 1}, mac[:]) }

package tunnel

import (
	"encoding/binary"
	"net/netip"
	"strconv"
	"strings"

	"gvs/packet"
)

// ErrSyntax is ParseHeader's error for text it cannot read; the message
// says where.
type ErrSyntax struct{ Msg string }

func (e *ErrSyntax) Error() string { return "tnl_push: " + e.Msg }

// cursor reads the tnl_push text left to right.
type cursor struct {
	s   string
	err error
}

func (c *cursor) fail(what string) {
	if c.err == nil {
		rest := c.s
		if len(rest) > 20 {
			rest = rest[:20] + "..."
		}
		c.err = &ErrSyntax{Msg: "expected " + what + " at \"" + rest + "\""}
	}
}

// lit consumes a literal.
func (c *cursor) lit(l string) {
	if c.err != nil {
		return
	}
	if !strings.HasPrefix(c.s, l) {
		c.fail(strconv.Quote(l))
		return
	}
	c.s = c.s[len(l):]
}

// try consumes l if it is next.
func (c *cursor) try(l string) bool {
	if c.err == nil && strings.HasPrefix(c.s, l) {
		c.s = c.s[len(l):]
		return true
	}
	return false
}

// token returns the text up to the next ',' or ')'.
func (c *cursor) token() string {
	if c.err != nil {
		return ""
	}
	i := strings.IndexAny(c.s, ",)}")
	if i < 0 {
		i = len(c.s)
	}
	t := c.s[:i]
	c.s = c.s[i:]
	return t
}

// num reads a number (decimal, or hex with 0x) of at most bits bits.
func (c *cursor) num(bits int) uint64 {
	t := c.token()
	if c.err != nil {
		return 0
	}
	v, err := strconv.ParseUint(t, 0, bits)
	if err != nil || strings.HasPrefix(t, "0") && len(t) > 1 && t[1] != 'x' && t[1] != 'X' {
		// C's %i would read a leading 0 as octal; Open vSwitch never
		// prints one, so refuse rather than guess.
		c.fail("a number")
		return 0
	}
	return v
}

func (c *cursor) field(name string, bits int) uint64 {
	c.lit(name + "=")
	return c.num(bits)
}

func (c *cursor) mac(name string, dst []byte) {
	c.lit(name + "=")
	t := c.token()
	if c.err != nil {
		return
	}
	parts := strings.Split(t, ":")
	if len(parts) != 6 {
		c.fail("an Ethernet address")
		return
	}
	for i, p := range parts {
		v, err := strconv.ParseUint(p, 16, 8)
		if err != nil || len(p) != 2 {
			c.fail("an Ethernet address")
			return
		}
		dst[i] = byte(v)
	}
}

func (c *cursor) addr(name string, v6 bool) netip.Addr {
	c.lit(name + "=")
	t := c.token()
	if c.err != nil {
		return netip.Addr{}
	}
	a, err := netip.ParseAddr(t)
	if err != nil || a.Is6() != v6 || a.Zone() != "" {
		c.fail("an IP address")
	}
	return a
}

// ParsePush reads a tnl_push action as dpctl/dump-flows prints it with
// numeric ports: tnl_push(tnl_port(N),header(...),out_port(M)).
func ParsePush(s string) (tnlPort, outPort uint32, h Header, err error) {
	c := &cursor{s: s}
	c.lit("tnl_push(tnl_port(")
	tnlPort = uint32(c.num(32))
	c.lit("),")
	if c.err != nil {
		return 0, 0, Header{}, c.err
	}
	h, rest, err := parseHeader(c.s)
	if err != nil {
		return 0, 0, Header{}, err
	}
	c.s = rest
	c.lit(",out_port(")
	outPort = uint32(c.num(32))
	c.lit("))")
	if c.err == nil && c.s != "" {
		c.fail("the end")
	}
	return tnlPort, outPort, h, c.err
}

// ParseHeader reads the header(...) text that Header.AppendFormat
// writes (Open vSwitch's format of a tnl_push header) back into a
// Header: the bytes as Open vSwitch's parser builds them (the IPv4
// header checksum computed), the per-packet fields' flags from what
// the text has (a non-zero UDP checksum asks for one), the default
// source port range.
func ParseHeader(s string) (Header, error) {
	h, rest, err := parseHeader(s)
	if err == nil && rest != "" {
		err = &ErrSyntax{Msg: "trailing text after the header"}
	}
	return h, err
}

var errHeaderSize = &ErrSyntax{Msg: "size does not match the headers"}

func parseHeader(s string) (Header, string, error) {
	var h Header
	c := &cursor{s: s}
	b := h.Bytes[:]
	c.lit("header(")
	size := c.field("size", 16)
	c.lit(",")
	typ := c.field("type", 32)
	c.lit(",eth(")
	c.mac("dst", b[0:6])
	c.lit(",")
	c.mac("src", b[6:12])
	c.lit(",")
	etype := uint16(c.field("dl_type", 16))
	binary.BigEndian.PutUint16(b[12:], etype)
	c.lit("),")
	if c.err != nil {
		return Header{}, "", c.err
	}
	var proto uint8
	n := ethLen
	switch {
	case etype == ethTypeIPv4 && c.try("ipv4("):
		ip := b[ethLen : ethLen+ipv4Len]
		ip[0] = 0x45
		src := c.addr("src", false)
		c.lit(",")
		dst := c.addr("dst", false)
		c.lit(",")
		proto = uint8(c.field("proto", 8))
		c.lit(",")
		ip[1] = uint8(c.field("tos", 8))
		c.lit(",")
		ip[8] = uint8(c.field("ttl", 8))
		c.lit(",")
		binary.BigEndian.PutUint16(ip[6:], uint16(c.field("frag", 16)))
		c.lit("),")
		if c.err != nil {
			return Header{}, "", c.err
		}
		ip[9] = proto
		s4, d4 := src.As4(), dst.As4()
		copy(ip[12:], s4[:])
		copy(ip[16:], d4[:])
		binary.BigEndian.PutUint16(ip[10:], packet.IPv4HeaderChecksum(ip))
		n += ipv4Len
	case etype == ethTypeIPv6 && c.try("ipv6("):
		h.IPv6 = true
		ip := b[ethLen : ethLen+ipv6Len]
		src := c.addr("src", true)
		c.lit(",")
		dst := c.addr("dst", true)
		c.lit(",")
		label := c.field("label", 20)
		c.lit(",")
		proto = uint8(c.field("proto", 8))
		c.lit(",")
		tclass := c.field("tclass", 8)
		c.lit(",")
		ip[7] = uint8(c.field("hlimit", 8))
		c.lit("),")
		if c.err != nil {
			return Header{}, "", c.err
		}
		binary.BigEndian.PutUint32(ip[0:], 6<<28|uint32(tclass)<<20|uint32(label))
		ip[6] = proto
		s16, d16 := src.As16(), dst.As16()
		copy(ip[8:], s16[:])
		copy(ip[24:], d16[:])
		n += ipv6Len
	default:
		c.fail("ipv4( or ipv6( matching dl_type")
		return Header{}, "", c.err
	}
	h.L4 = uint16(n)
	switch {
	case typ == 4 || typ == 5:
		h.Kind = VXLAN
		if typ == 5 {
			h.Kind = Geneve
		}
		if proto != protoUDP {
			return Header{}, "", &ErrSyntax{Msg: "a UDP tunnel needs proto=17"}
		}
		udp := b[n:]
		c.lit("udp(")
		binary.BigEndian.PutUint16(udp[0:], uint16(c.field("src", 16)))
		c.lit(",")
		binary.BigEndian.PutUint16(udp[2:], uint16(c.field("dst", 16)))
		c.lit(",")
		csum := uint16(c.field("csum", 16))
		binary.BigEndian.PutUint16(udp[6:], csum)
		h.UDPCsum = csum != 0
		c.lit("),")
		n += udpLen
		t := b[n:]
		if h.Kind == VXLAN {
			c.lit("vxlan(")
			binary.BigEndian.PutUint32(t[0:], uint32(c.field("flags", 32)))
			c.lit(",")
			binary.BigEndian.PutUint32(t[4:], uint32(c.field("vni", 24))<<8)
			c.lit(")")
			n += vxlanLen
		} else {
			c.lit("geneve(")
			if c.try("oam,") {
				t[1] |= 0x80
			}
			if c.try("crit,") {
				t[1] |= 0x40
			}
			binary.BigEndian.PutUint16(t[2:], ethTypeTEB)
			binary.BigEndian.PutUint32(t[4:], uint32(c.field("vni", 24))<<8)
			optLen := 0
			if c.try(",options(") {
				optLen = c.geneveOptions(t[geneveBaseLen : geneveBaseLen+MaxGeneveOptions])
				c.lit(")")
			}
			c.lit(")")
			t[0] = byte(optLen / 4)
			n += geneveBaseLen + optLen
		}
	case typ == 3 || typ == 109:
		h.Kind = GRE
		if proto != protoGRE || (typ == 109) != h.IPv6 {
			return Header{}, "", &ErrSyntax{Msg: "gre needs proto=47 and type 3 over IPv4, 109 over IPv6"}
		}
		g := b[n:]
		c.lit("gre((")
		flags := uint16(c.field("flags", 16))
		c.lit(",")
		binary.BigEndian.PutUint16(g[2:], uint16(c.field("proto", 16)))
		c.lit(")")
		if flags&^(greFlagCsum|greFlagKey|greFlagSeq) != 0 {
			c.fail("GRE flags C, K, S only")
		}
		binary.BigEndian.PutUint16(g[0:], flags)
		o := greBaseLen
		if flags&greFlagCsum != 0 {
			c.lit(",")
			binary.BigEndian.PutUint16(g[o:], uint16(c.field("csum", 16)))
			h.GRECsum = true
			o += 4
		}
		if flags&greFlagKey != 0 {
			c.lit(",")
			binary.BigEndian.PutUint32(g[o:], uint32(c.field("key", 32)))
			o += 4
		}
		if flags&greFlagSeq != 0 {
			c.lit(",")
			binary.BigEndian.PutUint32(g[o:], uint32(c.field("seq", 32)))
			h.GRESeq = true
			o += 4
		}
		c.lit(")")
		n += o
	default:
		c.fail("type 3, 4, 5 or 109")
	}
	c.lit(")")
	if c.err != nil {
		return Header{}, "", c.err
	}
	if uint64(n) != size {
		return Header{}, "", errHeaderSize
	}
	h.Len = uint16(n)
	h.SrcPortMin, h.SrcPortMax = DefaultSrcPortMin, DefaultSrcPortMax
	return h, c.s, nil
}

// geneveOptions reads {class=..,type=..,len=N,0xDATA} groups into dst
// and returns their length.
func (c *cursor) geneveOptions(dst []byte) int {
	n := 0
	for c.err == nil && c.try("{") {
		class := c.field("class", 16)
		c.lit(",")
		typ := c.field("type", 8)
		c.lit(",")
		l := int(c.field("len", 8))
		if l%4 != 0 || l > 124 || n+4+l > len(dst) {
			c.fail("an option length of whole words that fits")
			return 0
		}
		o := dst[n:]
		binary.BigEndian.PutUint16(o[0:], uint16(class))
		o[2] = byte(typ)
		o[3] = byte(l / 4)
		if l > 0 {
			c.lit(",")
			t := c.token()
			if !c.hexInto(t, o[4:4+l]) {
				c.fail("option data")
				return 0
			}
		}
		c.lit("}")
		n += 4 + l
	}
	return n
}

// hexInto writes the number t ("0", or 0x and hex digits) right-aligned
// into dst, as Open vSwitch prints option data without leading zeros.
func (c *cursor) hexInto(t string, dst []byte) bool {
	for i := range dst {
		dst[i] = 0
	}
	if t == "0" {
		return true
	}
	if !strings.HasPrefix(t, "0x") || len(t) == 2 {
		return false
	}
	digits := t[2:]
	if (len(digits)+1)/2 > len(dst) {
		return false
	}
	j := len(dst) - 1
	for i := len(digits); i > 0; i -= 2 {
		lo := hexDigit(digits[i-1])
		hi := 0
		if i >= 2 {
			hi = hexDigit(digits[i-2])
		}
		if lo < 0 || hi < 0 {
			return false
		}
		dst[j] = byte(hi<<4 | lo)
		j--
	}
	return true
}

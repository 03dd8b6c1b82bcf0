package tunnel

import (
	"encoding/binary"
	"net/netip"
	"strconv"
)

// AppendFormat appends the header as Open vSwitch's
// format_odp_tnl_push_header prints it:
// header(size=50,type=5,eth(dst=..,src=..,dl_type=0x0800),ipv4(...),udp(...),geneve(vni=0x1)).
// It prints the prebuilt header, so the UDP source port is 0.
func (h *Header) AppendFormat(s []byte) []byte {
	b := h.Bytes[:h.Len]
	s = append(s, "header(size="...)
	s = strconv.AppendUint(s, uint64(h.Len), 10)
	s = append(s, ",type="...)
	s = strconv.AppendUint(s, uint64(vportType(h.Kind, h.IPv6)), 10)
	s = append(s, ",eth(dst="...)
	s = appendMAC(s, b[0:6])
	s = append(s, ",src="...)
	s = appendMAC(s, b[6:12])
	s = append(s, ",dl_type=0x"...)
	s = appendHex(s, uint64(binary.BigEndian.Uint16(b[12:])), 4)
	s = append(s, "),"...)
	l4 := b[h.L4:]
	if h.IPv6 {
		ip := b[ethLen:]
		flow := binary.BigEndian.Uint32(ip)
		s = append(s, "ipv6(src="...)
		s = netip.AddrFrom16([16]byte(ip[8:24])).AppendTo(s)
		s = append(s, ",dst="...)
		s = netip.AddrFrom16([16]byte(ip[24:40])).AppendTo(s)
		s = append(s, ",label="...)
		s = strconv.AppendUint(s, uint64(flow&0xfffff), 10)
		s = append(s, ",proto="...)
		s = strconv.AppendUint(s, uint64(ip[6]), 10)
		s = append(s, ",tclass=0x"...)
		s = appendHex(s, uint64(flow>>20&0xff), 1)
		s = append(s, ",hlimit="...)
		s = strconv.AppendUint(s, uint64(ip[7]), 10)
		s = append(s, "),"...)
	} else {
		ip := b[ethLen:]
		s = append(s, "ipv4(src="...)
		s = netip.AddrFrom4([4]byte(ip[12:16])).AppendTo(s)
		s = append(s, ",dst="...)
		s = netip.AddrFrom4([4]byte(ip[16:20])).AppendTo(s)
		s = append(s, ",proto="...)
		s = strconv.AppendUint(s, uint64(ip[9]), 10)
		s = append(s, ",tos="...)
		s = appendCHex(s, uint64(ip[1]))
		s = append(s, ",ttl="...)
		s = strconv.AppendUint(s, uint64(ip[8]), 10)
		s = append(s, ",frag=0x"...)
		s = appendHex(s, uint64(binary.BigEndian.Uint16(ip[6:])), 1)
		s = append(s, "),"...)
	}
	switch h.Kind {
	case Geneve, VXLAN:
		s = append(s, "udp(src="...)
		s = strconv.AppendUint(s, uint64(binary.BigEndian.Uint16(l4[0:])), 10)
		s = append(s, ",dst="...)
		s = strconv.AppendUint(s, uint64(binary.BigEndian.Uint16(l4[2:])), 10)
		s = append(s, ",csum=0x"...)
		s = appendHex(s, uint64(binary.BigEndian.Uint16(l4[6:])), 1)
		s = append(s, "),"...)
		t := l4[udpLen:]
		if h.Kind == VXLAN {
			s = append(s, "vxlan(flags=0x"...)
			s = appendHex(s, uint64(binary.BigEndian.Uint32(t[0:])), 1)
			s = append(s, ",vni=0x"...)
			s = appendHex(s, uint64(binary.BigEndian.Uint32(t[4:])>>8), 1)
			s = append(s, ')')
		} else {
			s = append(s, "geneve("...)
			if t[1]&0x80 != 0 {
				s = append(s, "oam,"...)
			}
			if t[1]&0x40 != 0 {
				s = append(s, "crit,"...)
			}
			s = append(s, "vni=0x"...)
			s = appendHex(s, uint64(binary.BigEndian.Uint32(t[4:])>>8), 1)
			if n := int(t[0]&0x3f) * 4; n > 0 {
				s = append(s, ",options("...)
				s = AppendGeneveOptions(s, t[geneveBaseLen:geneveBaseLen+n])
				s = append(s, ')')
			}
			s = append(s, ')')
		}
	case GRE:
		flags := binary.BigEndian.Uint16(l4[0:])
		s = append(s, "gre((flags=0x"...)
		s = appendHex(s, uint64(flags), 1)
		s = append(s, ",proto=0x"...)
		s = appendHex(s, uint64(binary.BigEndian.Uint16(l4[2:])), 1)
		s = append(s, ')')
		o := greBaseLen
		if flags&greFlagCsum != 0 {
			s = append(s, ",csum=0x"...)
			s = appendHex(s, uint64(binary.BigEndian.Uint16(l4[o:])), 1)
			o += 4
		}
		if flags&greFlagKey != 0 {
			s = append(s, ",key=0x"...)
			s = appendHex(s, uint64(binary.BigEndian.Uint32(l4[o:])), 1)
			o += 4
		}
		if flags&greFlagSeq != 0 {
			s = append(s, ",seq=0x"...)
			s = appendHex(s, uint64(binary.BigEndian.Uint32(l4[o:])), 1)
		}
		s = append(s, ')')
	}
	return append(s, ')')
}

// String returns AppendFormat's text.
func (h *Header) String() string { return string(h.AppendFormat(nil)) }

// FormatPush returns the tnl_push action as dpctl/dump-flows prints it
// with numeric port names: tnl_push(tnl_port(4),header(...),out_port(2)).
func FormatPush(tnlPort, outPort uint32, h *Header) string {
	s := []byte("tnl_push(tnl_port(")
	s = strconv.AppendUint(s, uint64(tnlPort), 10)
	s = append(s, "),"...)
	s = h.AppendFormat(s)
	s = append(s, ",out_port("...)
	s = strconv.AppendUint(s, uint64(outPort), 10)
	return string(append(s, "))"...))
}

// AppendGeneveOptions appends raw geneve option TLVs as Open vSwitch's
// format_geneve_opts prints them (unmasked):
// {class=0x102,type=0x80,len=4,0xa}, one brace group per option, and
// its complaint when the list is malformed.
func AppendGeneveOptions(s []byte, opts []byte) []byte {
	for len(opts) > 0 {
		if len(opts) < 4 {
			s = append(s, "opt len "...)
			s = strconv.AppendUint(s, uint64(len(opts)), 10)
			return append(s, " less than minimum 4"...)
		}
		dataLen := int(opts[3]&0x1f) * 4
		l := 4 + dataLen
		if l > len(opts) {
			s = append(s, "opt len "...)
			s = strconv.AppendUint(s, uint64(l), 10)
			s = append(s, " greater than remaining "...)
			return strconv.AppendUint(s, uint64(len(opts)), 10)
		}
		s = append(s, "{class=0x"...)
		s = appendHex(s, uint64(binary.BigEndian.Uint16(opts[0:])), 1)
		s = append(s, ",type=0x"...)
		s = appendHex(s, uint64(opts[2]), 1)
		s = append(s, ",len="...)
		s = strconv.AppendUint(s, uint64(dataLen), 10)
		if dataLen > 0 {
			s = append(s, ',')
			s = appendHexBytes(s, opts[4:l])
		}
		s = append(s, '}')
		opts = opts[l:]
	}
	return s
}

// appendHexBytes is Open vSwitch's ds_put_hex: the bytes as one hex
// number without leading zero bytes, "0x" first; "0" if all are zero.
func appendHexBytes(s []byte, b []byte) []byte {
	printed := false
	for _, v := range b {
		if v == 0 && !printed {
			continue
		}
		if !printed {
			s = append(s, "0x"...)
			s = appendHex(s, uint64(v), 1)
			printed = true
		} else {
			s = appendHex(s, uint64(v), 2)
		}
	}
	if !printed {
		s = append(s, '0')
	}
	return s
}

// appendHex appends v in lower-case hex, zero-padded to width digits.
func appendHex(s []byte, v uint64, width int) []byte {
	var buf [16]byte
	t := strconv.AppendUint(buf[:0], v, 16)
	for i := len(t); i < width; i++ {
		s = append(s, '0')
	}
	return append(s, t...)
}

// appendCHex is C's %#x: "0" for zero, else 0x and the hex digits.
func appendCHex(s []byte, v uint64) []byte {
	if v == 0 {
		return append(s, '0')
	}
	s = append(s, "0x"...)
	return appendHex(s, v, 1)
}

func appendMAC(s []byte, m []byte) []byte {
	for i, v := range m {
		if i > 0 {
			s = append(s, ':')
		}
		s = appendHex(s, uint64(v), 2)
	}
	return s
}

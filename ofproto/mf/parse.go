package mf

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"gvs/ofproto/ofperr"
	"gvs/packet"
)

// PortParser resolves a port name ("eth0") to its OpenFlow number; nil
// means only numbers and reserved names (LOCAL, CONTROLLER...) are known.
type PortParser func(name string) (uint32, bool)

// ParsePort parses an OpenFlow port as ovs-ofctl does: a number (16-bit
// space, or an OpenFlow 1.1+ reserved number 0xffffff00 and up), a
// reserved name (case-insensitive: IN_PORT, TABLE, NORMAL, FLOOD, ALL,
// CONTROLLER, LOCAL, ANY, NONE, UNSET), or a name ports resolves.
func ParsePort(s string, ports PortParser) (uint32, bool) {
	if strings.HasPrefix(s, "-") {
		return 0, false
	}
	if n, err := strconv.ParseUint(s, 10, 32); err == nil {
		switch {
		case n < 0xffff+1:
			return uint32(n), true
		case n >= 0xffffff00:
			return uint32(n - ofp11Offset), true
		}
		return 0, false
	}
	for _, p := range []uint32{PortInPort, PortTable, PortNormal, PortFlood, PortAll, PortController, PortLocal, PortNone, PortUnset} {
		if strings.EqualFold(s, PortName(p)) {
			return p, true
		}
	}
	if strings.EqualFold(s, "NONE") {
		return PortNone, true
	}
	if ports != nil {
		return ports(s)
	}
	return 0, false
}

// parseIntString is Open vSwitch's parse_int_string: "0x..." hex of any
// length up to width bytes, else a C integer (decimal, 0-prefixed octal)
// that fits. It returns the value (left-aligned in width bytes) and the
// unparsed tail.
func parseIntString(s string, width int) (Value, string, error) {
	var v Value
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		s = s[2:]
		var digits []byte
		for {
			s = strings.TrimLeft(s, " \t\r\n")
			if s == "" || !isHexDigit(s[0]) {
				break
			}
			d := hexValue(s[0])
			if d != 0 || len(digits) > 0 {
				if (len(digits)+2)/2 > width {
					return v, s, errRange
				}
				digits = append(digits, d)
			}
			s = s[1:]
		}
		idx := width
		for i := len(digits) - 1; i >= 0; i -= 2 {
			idx--
			v[idx] = digits[i]
			if i > 0 {
				v[idx] |= digits[i-1] << 4
			}
		}
		return v, s, nil
	}
	end := 0
	for end < len(s) && (s[end] >= '0' && s[end] <= '9' || (end > 0 && (s[end]|0x20 >= 'a' && s[end]|0x20 <= 'f' || s[end]|0x20 == 'x'))) {
		end++
	}
	// strtoull(s, 0): leading whitespace and sign are accepted by C but
	// never appear in flow syntax; digits only.
	n, err := strconv.ParseUint(s[:end], 0, 64)
	if err != nil {
		// Find the longest prefix C would accept.
		for end > 0 {
			end--
			if n, err = strconv.ParseUint(s[:end], 0, 64); err == nil {
				break
			}
		}
		if end == 0 {
			if len(s) > 0 && s[0] >= '0' && s[0] <= '9' {
				return v, s, errRange
			}
			return v, s, errSyntax
		}
	}
	if width < 8 && n>>(8*width) != 0 {
		return v, s[end:], errRange
	}
	v = ValueFromUint(n, width)
	return v, s[end:], nil
}

var (
	errRange  = errors.New("out of range")
	errSyntax = errors.New("syntax")
)

func isHexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'f'
}

func hexValue(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c | 0x20 - 'a' + 10
}

// parseFlags is Open vSwitch's parse_flags for a whole string (end of
// string as terminator): "N/M" numbers, "+a-b" masked names, or
// "a|b|N" unmasked.
func parseFlags(s string, name func(uint32) string, fieldName string, allowed uint32) (flags, mask uint32, err error) {
	unknown := fmt.Errorf("%s: unknown %s flag(s)", s, fieldName)
	if a, b, ok := strings.Cut(s, "/"); ok {
		f, err1 := strconv.ParseUint(a, 0, 32)
		m, err2 := strconv.ParseUint(b, 0, 32)
		if err1 == nil && err2 == nil {
			if uint32(f)&^allowed != 0 || uint32(m)&^allowed != 0 {
				return 0, 0, unknown
			}
			return uint32(f), uint32(m), nil
		}
	}
	if strings.HasPrefix(s, "+") || strings.HasPrefix(s, "-") {
		rest := s
		for rest != "" {
			set := rest[0] == '+'
			if rest[0] != '+' && rest[0] != '-' {
				return 0, 0, fmt.Errorf("%s: %s must be preceded by '+' (for SET) or '-' (NOT SET)", rest, fieldName)
			}
			rest = rest[1:]
			found := false
			for bit := uint32(1); bit != 0; bit <<= 1 {
				fname := name(bit)
				if fname == "" || !strings.HasPrefix(rest, fname) {
					continue
				}
				after := rest[len(fname):]
				if after != "" && after[0] != '+' && after[0] != '-' {
					continue
				}
				if mask&bit != 0 {
					return 0, 0, fmt.Errorf("%s: Each %s flag can be specified only once", rest, fieldName)
				}
				if bit&allowed == 0 {
					return 0, 0, fmt.Errorf("%s: unknown %s flag(s)", rest, fieldName)
				}
				if set {
					flags |= bit
				}
				mask |= bit
				rest = after
				found = true
				break
			}
			if !found {
				return 0, 0, fmt.Errorf("%s: unknown %s flag(s)", rest, fieldName)
			}
		}
		return flags, mask, nil
	}
	rest := s
	for rest != "" {
		if n, tail, ok := scanCInt(rest); ok {
			if uint32(n)&^allowed != 0 || n>>32 != 0 {
				return 0, 0, unknown
			}
			flags |= uint32(n)
			rest = strings.TrimPrefix(tail, "|")
			continue
		}
		found := false
		for bit := uint32(1); bit != 0; bit <<= 1 {
			fname := name(bit)
			if fname == "" || !strings.HasPrefix(rest, fname) {
				continue
			}
			after := rest[len(fname):]
			if after != "" && after[0] != '|' {
				continue
			}
			if bit&allowed == 0 {
				return 0, 0, unknown
			}
			flags |= bit
			rest = strings.TrimPrefix(after, "|")
			found = true
			break
		}
		if !found {
			return 0, 0, unknown
		}
	}
	return flags, ^uint32(0), nil
}

// scanCInt reads a C "%lli" integer (decimal, 0x hex, 0 octal) at the
// start of s.
func scanCInt(s string) (uint64, string, bool) {
	end := 0
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		end = 2
		for end < len(s) && isHexDigit(s[end]) {
			end++
		}
		if end == 2 {
			return 0, s, false
		}
	} else {
		for end < len(s) && s[end] >= '0' && s[end] <= '9' {
			end++
		}
	}
	if end == 0 {
		return 0, s, false
	}
	n, err := strconv.ParseUint(s[:end], 0, 64)
	if err != nil {
		return 0, s, false
	}
	return n, s[end:], true
}

// fragNames is Open vSwitch's all_frags table.
var fragNames = []struct {
	name        string
	mask, value uint8
}{
	{"no", 3, 0}, {"first", 3, 1}, {"later", 3, 3},
	{"no", 1, 0}, {"yes", 1, 1}, {"not_later", 2, 0}, {"later", 2, 2},
}

// ParseValue parses s as a value and optional mask of the field, as
// ovs-ofctl reads it after "field=" (mf_parse): "*" wildcards; integers
// in decimal or 0x hex with "/mask"; addresses with "/prefix" or
// "/mask"; port names; flag syntax for ct_state, tcp_flags, tun_flags;
// ip_frag names. The mask is all-ones when none is given.
func (fd *Field) ParseValue(s string, ports PortParser) (v, mask Value, err error) {
	if s == "*" {
		return Value{}, Value{}, nil
	}
	switch fd.Format {
	case FormatDecimal, FormatHex:
		v, mask, err = fd.parseInteger(s)
	case FormatCTState:
		var f, m uint32
		f, m, err = parseFlags(s, ctStateName, "ct_state", 0xff)
		v, mask = ValueFromUint(uint64(f), 4), ValueFromUint(uint64(m), 4)
	case FormatTCPFlags:
		var f, m uint32
		f, m, err = parseFlags(s, tcpFlagName, "TCP", 0x0fff)
		v, mask = ValueFromUint(uint64(f), 2), ValueFromUint(uint64(m&0xffff), 2)
	case FormatTunFlags:
		var f, m uint32
		f, m, err = parseFlags(s, tunFlagName, "tunnel", 1)
		v, mask = ValueFromUint(uint64(f), 2), ValueFromUint(uint64(m&0xffff), 2)
	case FormatEthernet:
		v, mask, err = parseEthMasked(s)
	case FormatIPv4:
		v, mask, err = parseIPv4Masked(s)
	case FormatIPv6:
		v, mask, err = parseIPv6Masked(s)
	case FormatOFP10Port:
		p, ok := ParsePort(s, ports)
		if !ok {
			return v, mask, fmt.Errorf("%s: invalid or unknown port for %s", s, fd.Name)
		}
		v, mask = ValueFromUint(uint64(uint16(p)), 2), onesBytes(2)
	case FormatOFP11Port:
		p, ok := ParsePort(s, ports)
		if !ok {
			return v, mask, fmt.Errorf("%s: port value out of range for %s", s, fd.Name)
		}
		v, mask = ValueFromUint(uint64(PortToOFP11(p)), 4), onesBytes(4)
	case FormatFrag:
		found := false
		for _, h := range fragNames {
			if strings.EqualFold(s, h.name) {
				v, mask = ValueFromUint(uint64(h.value), 1), ValueFromUint(uint64(h.mask|^uint8(3)), 1)
				found = true
				break
			}
		}
		if !found {
			return v, mask, fmt.Errorf("%s: unknown fragment type (valid types are \"no\", \"yes\", \"first\", \"later\", \"not_later\"", s)
		}
	}
	if err == nil && !fd.isMaskValid(mask) {
		err = fmt.Errorf("%s: invalid mask for field %s", s, fd.Name)
	}
	return v, mask, err
}

func (fd *Field) parseInteger(s string) (v, mask Value, err error) {
	width := fd.Bytes
	v, tail, e := parseIntString(s, width)
	what := "value"
	if e == nil && tail != "" && tail[0] != '/' {
		e = errSyntax
	}
	if e == nil {
		if tail != "" {
			what = "mask"
			mask, tail, e = parseIntString(tail[1:], width)
			if e == nil && tail != "" {
				e = errSyntax
			}
		} else {
			mask = onesBytes(width)
		}
	}
	if e != nil {
		if e == errRange {
			return v, mask, fmt.Errorf("%s: %s too large for %d-byte field %s", s, what, width, fd.Name)
		}
		return v, mask, fmt.Errorf("%s: bad syntax for %s %s", s, fd.Name, what)
	}
	return v, mask, nil
}

func parseEth(s string) ([6]byte, bool) {
	var a [6]byte
	parts := strings.Split(s, ":")
	if len(parts) != 6 {
		return a, false
	}
	for i, p := range parts {
		if len(p) == 0 || len(p) > 2 {
			return a, false
		}
		n, err := strconv.ParseUint(p, 16, 8)
		if err != nil {
			return a, false
		}
		a[i] = byte(n)
	}
	return a, true
}

func parseEthMasked(s string) (v, mask Value, err error) {
	addr, m, hasMask := strings.Cut(s, "/")
	a, ok := parseEth(addr)
	if !ok {
		return v, mask, fmt.Errorf("%s: invalid Ethernet address", s)
	}
	copy(v[:6], a[:])
	if !hasMask {
		return v, onesBytes(6), nil
	}
	b, ok := parseEth(m)
	if !ok {
		return v, mask, fmt.Errorf("%s: invalid Ethernet address", s)
	}
	copy(mask[:6], b[:])
	return v, mask, nil
}

func parseIPv4(s string) ([4]byte, bool) {
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is4() {
		return [4]byte{}, false
	}
	return a.As4(), true
}

func parseIPv4Masked(s string) (v, mask Value, err error) {
	addr, m, hasMask := strings.Cut(s, "/")
	a, ok := parseIPv4(addr)
	if !ok {
		return v, mask, fmt.Errorf("%s: invalid IP address", s)
	}
	copy(v[:4], a[:])
	switch {
	case !hasMask:
		mask = onesBytes(4)
	case strings.Contains(m, "."):
		b, ok := parseIPv4(m)
		if !ok {
			return v, mask, fmt.Errorf("%s: invalid IP address", s)
		}
		copy(mask[:4], b[:])
	default:
		n, err := strconv.Atoi(m)
		if err != nil {
			return v, mask, fmt.Errorf("%s: invalid IP address", s)
		}
		if n < 0 || n > 32 {
			return v, mask, fmt.Errorf("%s: IPv4 network prefix bits not between 0 and 32, inclusive", s)
		}
		mask = prefixMask(n, 4)
	}
	return v, mask, nil
}

func prefixMask(n, nbytes int) Value {
	var m Value
	for i := 0; i < n; i++ {
		m[i/8] |= 0x80 >> (i % 8)
	}
	return m
}

func parseIPv6Masked(s string) (v, mask Value, err error) {
	addr, m, hasMask := strings.Cut(s, "/")
	a, e := netip.ParseAddr(addr)
	if e != nil || !a.Is6() || a.Zone() != "" {
		return v, mask, fmt.Errorf("%s: invalid IPv6 address", s)
	}
	b := a.As16()
	copy(v[:], b[:])
	// Open vSwitch tries "/%d" before "/<address>", so a mask address
	// that starts with decimal digits ("/10d3::") is read as a prefix
	// length followed by garbage: an error, kept for compatibility.
	digits := 0
	for digits < len(m) && m[digits] >= '0' && m[digits] <= '9' {
		digits++
	}
	switch {
	case !hasMask:
		mask = onesBytes(16)
	case digits > 0 && digits < len(m):
		return v, mask, fmt.Errorf("%s: invalid IPv6 address", s)
	case strings.Contains(m, ":"):
		ma, e := netip.ParseAddr(m)
		if e != nil || !ma.Is6() {
			return v, mask, fmt.Errorf("%s: Invalid IPv6 mask", s)
		}
		mb := ma.As16()
		copy(mask[:], mb[:])
	default:
		n, e := strconv.Atoi(m)
		if e != nil {
			return v, mask, fmt.Errorf("%s: invalid IPv6 address", s)
		}
		if n < 0 || n > 128 {
			return v, mask, fmt.Errorf("%s: IPv6 network prefix bits not between 0 and 128, inclusive", s)
		}
		mask = prefixMask(n, 16)
	}
	return v, mask, nil
}

// FormatValue writes a value (and mask, nil for exact) of the field as
// Open vSwitch's mf_format does (set_field and load arguments, learn
// specs): "ANY" for an all-zero mask.
func (fd *Field) FormatValue(v Value, mask *Value) string {
	if mask != nil {
		switch {
		case mask.IsZero():
			return "ANY"
		case *mask == onesBytes(fd.Bytes):
			mask = nil
		}
	}
	switch fd.Format {
	case FormatOFP11Port:
		if mask == nil {
			p, _ := PortFromOFP11(uint32(v.Uint(4)))
			return PortName(p)
		}
		return fd.formatInteger(v, mask)
	case FormatOFP10Port:
		if mask == nil {
			return PortName(uint32(v.Uint(2)))
		}
		return fd.formatInteger(v, mask)
	case FormatDecimal, FormatHex:
		return fd.formatInteger(v, mask)
	case FormatCTState:
		m := uint32(0xffffffff)
		if mask != nil {
			m = uint32(mask.Uint(4))
		}
		var s strings.Builder
		formatFlagsMasked(&s, "", ctStateName, uint32(v.Uint(4)), m, 0xffff)
		return s.String()
	case FormatEthernet:
		var a, b [6]byte
		copy(a[:], v[:6])
		if mask == nil {
			return formatEth(a)
		}
		copy(b[:], mask[:6])
		return formatEth(a) + "/" + formatEth(b)
	case FormatIPv4:
		var a, b [4]byte
		copy(a[:], v[:4])
		b = [4]byte{0xff, 0xff, 0xff, 0xff}
		if mask != nil {
			copy(b[:], mask[:4])
		}
		return formatIPv4Masked(a, b)
	case FormatIPv6:
		var a [16]byte
		copy(a[:], v[:16])
		b := onesArray16()
		if mask != nil {
			copy(b[:], mask[:16])
		}
		return formatIPv6Masked(a, b)
	case FormatFrag:
		m := uint8(0xff)
		if mask != nil {
			m = mask[0]
		}
		m &= 3
		val := v[0] & m
		for _, h := range fragNames {
			if val == h.value && m == h.mask {
				return h.name
			}
		}
		return "<error>"
	case FormatTunFlags:
		m := uint32(0xffff)
		if mask != nil {
			m = uint32(mask.Uint(2))
		}
		var s strings.Builder
		formatFlagsMasked(&s, "", tunFlagName, uint32(v.Uint(2)), m&1, 1)
		return s.String()
	case FormatTCPFlags:
		m := uint32(0xffff)
		if mask != nil {
			m = uint32(mask.Uint(2))
		}
		var s strings.Builder
		formatFlagsMasked(&s, "", tcpFlagName, uint32(v.Uint(2)), m&0x0fff, 0x0fff)
		return s.String()
	}
	return ""
}

// formatInteger is mf_format_integer_string.
func (fd *Field) formatInteger(v Value, mask *Value) string {
	var s string
	if fd.Format == FormatHex || fd.Bytes > 8 {
		s = putHex(v[:fd.Bytes])
	} else {
		s = strconv.FormatInt(int64(v.Uint(fd.Bytes)), 10)
	}
	if mask != nil {
		s += "/" + putHex(mask[:fd.Bytes])
	}
	return s
}

// protocols are the shorthand keywords of the flow syntax.
var protocols = map[string]struct {
	dlType uint16
	proto  uint8
}{
	"ip": {packet.EtherTypeIPv4, 0}, "ipv4": {packet.EtherTypeIPv4, 0}, "ip4": {packet.EtherTypeIPv4, 0},
	"arp":  {packet.EtherTypeARP, 0},
	"icmp": {packet.EtherTypeIPv4, packet.ProtoICMP}, "tcp": {packet.EtherTypeIPv4, packet.ProtoTCP},
	"udp": {packet.EtherTypeIPv4, packet.ProtoUDP}, "sctp": {packet.EtherTypeIPv4, packet.ProtoSCTP},
	"ipv6": {packet.EtherTypeIPv6, 0}, "ip6": {packet.EtherTypeIPv6, 0},
	"icmp6": {packet.EtherTypeIPv6, packet.ProtoICMPv6}, "tcp6": {packet.EtherTypeIPv6, packet.ProtoTCP},
	"udp6": {packet.EtherTypeIPv6, packet.ProtoUDP}, "sctp6": {packet.EtherTypeIPv6, packet.ProtoSCTP},
	"rarp": {packet.EtherTypeRARP, 0}, "mpls": {0x8847, 0}, "mplsm": {0x8848, 0},
}

// KeyValue is one "key=value" (or "key:value", "key(value)", bare
// "key") item of the flow syntax.
type KeyValue struct{ Key, Value string }

// SplitKeyValues splits s into items as Open vSwitch's
// ofputil_parse_key_value does: items separated by commas or white
// space; a value after '=' or ':' runs to the next comma or space, after
// '(' to the matching ')'.
func SplitKeyValues(s string) []KeyValue {
	var out []KeyValue
	for {
		s = strings.TrimLeft(s, ", \t\r\n")
		if s == "" {
			return out
		}
		keyLen := strings.IndexAny(s, ":=(, \t\r\n")
		if keyLen < 0 {
			keyLen = len(s)
		}
		key := s[:keyLen]
		var delim byte
		if keyLen < len(s) {
			delim = s[keyLen]
			s = s[keyLen+1:]
		} else {
			s = ""
		}
		var valueDelims string
		switch delim {
		case ':', '=':
			valueDelims = ", \t\r\n"
		case '(':
			valueDelims = ")"
		default:
			out = append(out, KeyValue{Key: key})
			continue
		}
		n := valueLen(s, valueDelims)
		if delim == '(' && n < len(s) && strings.HasPrefix(s[n:], ")->") {
			n += valueLen(s[n:], ", \t\r\n")
		}
		out = append(out, KeyValue{Key: key, Value: s[:n]})
		if n < len(s) {
			s = s[n+1:]
		} else {
			s = ""
		}
	}
}

// valueLen is parse_value: up to a delimiter outside parentheses.
func valueLen(s, delims string) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '(':
			depth++
		case c == ')' && depth > 0:
			depth--
		case depth == 0 && strings.IndexByte(delims, c) >= 0:
			return i
		}
	}
	return len(s)
}

// ParseMatch parses the match part of the ovs-ofctl flow syntax
// ("priority=10,tcp,in_port=1,nw_src=10.0.0.0/8,reg0[0..7]=5") as
// parse_ofp_str does, and returns the match and the priority
// (DefaultPriority if not given). Keywords of a flow_mod that are not
// part of a match (table, cookie, timeouts, flags, actions, statistics
// as dump-flows prints them) are ignored; anything else unknown is an
// error worded as ovs-ofctl's. As in Open vSwitch, prerequisites are not
// checked here (see Match.CheckPrereqs).
func ParseMatch(s string) (Match, int, error) {
	return ParseMatchPorts(s, nil)
}

// ParseMatchPorts is ParseMatch with port names resolved by ports.
func ParseMatchPorts(s string, ports PortParser) (Match, int, error) {
	var m Match
	priority := DefaultPriority
	if i := strings.Index(s, "action"); i >= 0 {
		s = s[:i]
	}
	for _, kv := range SplitKeyValues(s) {
		name, value := kv.Key, kv.Value
		if p, ok := protocols[name]; ok {
			fieldTable[EthType].SetMatch(&m, ValueFromUint(uint64(p.dlType), 2))
			if p.proto != 0 {
				fieldTable[IPProto].SetMatch(&m, ValueFromUint(uint64(p.proto), 1))
			}
			continue
		}
		switch name {
		case "eth", "send_flow_rem", "check_overlap", "reset_counts", "no_packet_counts", "no_byte_counts",
			"no_readonly_table", "allow_hidden_fields":
			continue
		}
		if fd := FieldByName(name); fd != nil {
			if value == "" {
				value = "0/0"
			}
			v, mask, err := fd.ParseValue(value, ports)
			if err != nil {
				return Match{}, 0, err
			}
			setMatchParsed(fd, &m, v, mask)
			continue
		}
		if strings.Contains(name, "[") {
			if err := parseSubfieldMatch(&m, name, value); err != nil {
				return Match{}, 0, err
			}
			continue
		}
		if value == "" {
			return Match{}, 0, fmt.Errorf("field %s missing value", name)
		}
		switch name {
		case "priority":
			n, err := strconv.ParseUint(value, 0, 16)
			if err != nil {
				return Match{}, 0, fmt.Errorf("invalid priority \"%s\"", value)
			}
			priority = int(n)
		case "table", "out_port", "out_group", "idle_timeout", "hard_timeout", "importance", "cookie",
			"duration", "n_packets", "n_bytes", "idle_age", "hard_age":
		default:
			return Match{}, 0, fmt.Errorf("unknown keyword %s", name)
		}
	}
	return m, priority, nil
}

// setMatchParsed is mf_set for a value parsed from text.
func setMatchParsed(fd *Field, m *Match, v, mask Value) {
	switch {
	case mask == onesBytes(fd.Bytes):
		fd.SetMatch(m, v)
	case mask.IsZero() && !fd.isVariableLength():
		fd.SetWild(m)
	case fd.ID == IPDSCPShifted:
		fd.SetMatchMasked(m, v, mask)
	default:
		fd.setMatchFromWire(m, v, mask)
	}
}

// parseSubfieldMatch handles "field[bits]=value" (parse_subfield).
func parseSubfieldMatch(m *Match, name, value string) error {
	sf, err := ParseSubfield(name)
	if err != nil {
		return err
	}
	fd := sf.Field
	v, tail, e := parseIntString(value, fd.Bytes)
	if e != nil || tail != "" {
		return fmt.Errorf("%s: cannot parse integer value: %s", name, value)
	}
	// The value must fit in the subfield's width.
	for i := sf.NBits; i < fd.Bytes*8; i++ {
		if v.bit(fd.Bytes, i) {
			return fmt.Errorf("%s: value %s does not fit into %d bits", name, fd.FormatValue(v, nil), sf.NBits)
		}
	}
	val, mask := fd.Get(&m.Flow), fd.GetMask(&m.Wildcards)
	CopyBits(v, fd.Bytes, 0, &val, fd.Bytes, sf.Ofs, sf.NBits)
	for i := sf.Ofs; i < sf.Ofs+sf.NBits; i++ {
		mask.setBit(fd.Bytes, i)
	}
	setMatchParsed(fd, m, val, mask)
	return nil
}

// CheckPrereqs reports whether every field m matches has its
// prerequisites satisfied by m (else OFPBMC_BAD_PREREQ, as a flow_mod
// decoder checks). Fields that share storage (tcp_src/udp_src/sctp_src,
// ip_src/arp_spa, icmp_type/icmpv6_type, arp_sha/nd_sll...) pass if any
// of them does.
func (m *Match) CheckPrereqs() error {
	checked := map[uintptr]bool{}
	for i := range fieldTable {
		fd := &fieldTable[i]
		if fd.Prereq == PrereqNone || fd.acc.get != nil || fd.IsWildcarded(&m.Wildcards) || checked[fd.acc.off] {
			continue
		}
		checked[fd.acc.off] = true
		ok := false
		for j := range fieldTable {
			other := &fieldTable[j]
			if other.acc.get == nil && other.acc.off == fd.acc.off && other.PrereqsMatched(m) {
				ok = true
				break
			}
		}
		if !ok {
			return ofperr.OFPBMC_BAD_PREREQ
		}
	}
	return nil
}

// CheckCTOrigTuple reports OFPBAC_MATCH_INCONSISTENT if m matches a
// conntrack original-direction address of one IP version while its
// dl_type is not that version (a check of Open vSwitch's flow_mod
// decoder).
func (m *Match) CheckCTOrigTuple() error {
	w, f := &m.Wildcards.Masks, &m.Flow
	if ((w.CTNwSrc != [4]byte{} || w.CTNwDst != [4]byte{}) && f.EtherType != packet.EtherTypeIPv4) ||
		((w.CTIPv6Src != [16]byte{} || w.CTIPv6Dst != [16]byte{}) && f.EtherType != packet.EtherTypeIPv6) {
		return ofperr.OFPBAC_MATCH_INCONSISTENT
	}
	return nil
}

// ParseFlow parses a packet's fields in the flow syntax, each exact, as
// ofproto/trace takes them (parse_ofp_exact_flow): protocol keywords and
// "field=value" in an order that meets each field's prerequisites, each
// field once. It returns the flow and the fields named (exact). in_port
// defaults to PortNone.
func ParseFlow(s string, ports PortParser) (Flow, Wildcards, error) {
	var f Flow
	var w Wildcards
	fail := func(format string, args ...any) (Flow, Wildcards, error) {
		return Flow{}, Wildcards{}, fmt.Errorf(format, args...)
	}
	for _, kv := range SplitKeyValues(s) {
		key := kv.Key
		if p, ok := protocols[key]; ok {
			if f.EtherType != 0 {
				return fail("%s: Ethernet type set multiple times", s)
			}
			f.EtherType, w.Masks.EtherType = p.dlType, 0xffff
			if p.proto != 0 {
				if f.IPProto != 0 {
					return fail("%s: network protocol set multiple times", s)
				}
				f.IPProto, w.Masks.IPProto = p.proto, 0xff
			}
			continue
		}
		fd := FieldByName(key)
		if fd == nil {
			return fail("%s: unknown field %s", s, key)
		}
		if !fd.PrereqsOK(&f) {
			return fail("%s: prerequisites not met for setting %s", s, key)
		}
		if !fd.Get(&f).IsZero() {
			return fail("%s: field %s set multiple times", s, key)
		}
		v, mask, err := fd.ParseValue(kv.Value, ports)
		if err == nil && mask != onesBytes(fd.Bytes) {
			err = fmt.Errorf("%s: wildcards not allowed here", kv.Value)
		}
		if err != nil {
			return fail("%s: bad value for %s (%s)", s, key, err)
		}
		fd.Set(&f, v)
		fd.Unwildcard(&w)
	}
	if f.InPort == 0 {
		f.InPort = PortNone
	}
	return f, w, nil
}

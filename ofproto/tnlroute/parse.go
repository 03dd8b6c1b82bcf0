package tnlroute

import (
	"errors"
	"net/netip"
	"strings"
)

// The appctl commands' error texts, Open vSwitch 3.1's.
var (
	ErrInvalidParameters = errors.New("Invalid parameters")
	ErrInvalidMarkOrGW   = errors.New("Invalid pkt_mark or gateway")
	ErrInvalidMarkOrGW6  = errors.New("Invalid pkt_mark or IPv6 gateway")
	ErrInvalidMark       = errors.New("Invalid pkt_mark")
	ErrInsert            = errors.New("Error while inserting route.")
	ErrNotFound          = errors.New("Not found")
	ErrBadIP             = errors.New("bad IP address")
	ErrBadMAC            = errors.New("bad MAC address")
	ErrBadAging          = errors.New("bad aging value")
)

// ifNameMax is the longest name Open vSwitch keeps for a route's device or
// a neighbour's bridge (IFNAMSIZ less the terminator): longer names are
// cut, as its strlcpy into a char[IFNAMSIZ] cuts them.
const ifNameMax = 15

func truncName(s string) string {
	if len(s) > ifNameMax {
		return s[:ifNameMax]
	}
	return s
}

// RouteSpec is a parsed ovs/route/add, del or lookup: a prefix in the
// v4-mapped IPv6 space (an IPv4 /N is ::ffff:a.b.c.d/96+N).
type RouteSpec struct {
	Dst  [16]byte // not yet masked
	Plen uint8    // 0..128
	Mark uint32
	Dev  string   // add only
	GW   [16]byte // add only; zero for none
}

// ParseRouteAdd parses ovs/route/add's arguments (after the command
// name): IP/PLEN OUTPUT_BRIDGE [GW] [pkt_mark=MARK], as Open vSwitch
// 3.1's ovs_router_add.
func ParseRouteAdd(args []string) (RouteSpec, error) {
	var r RouteSpec
	if len(args) < 2 {
		return r, ErrInvalidParameters
	}
	if ip, plen, ok := scanIPv4Route(args[0]); ok {
		if len(args) > 2 {
			mark, okMark := scanPktMark(args[2])
			gw, okGW := parseInetPton4(args[2])
			if !okMark && !okGW {
				return r, ErrInvalidMarkOrGW
			}
			if okMark {
				r.Mark = mark
			} else if gw != ([4]byte{}) {
				r.GW = mapped4(gw)
			}
		}
		r.Dst, r.Plen = mapped4(ip), uint8(plen)+96
	} else if ip6, plen, ok := scanIPv6Route(args[0]); ok {
		if len(args) > 2 {
			mark, okMark := scanPktMark(args[2])
			gw, okGW := parseInetPton6(args[2])
			if !okMark && !okGW {
				return r, ErrInvalidMarkOrGW6
			}
			if okMark {
				r.Mark = mark
			} else {
				r.GW = gw
			}
		}
		r.Dst, r.Plen = ip6, uint8(plen)
	} else {
		return r, ErrInvalidParameters
	}
	if len(args) > 3 {
		mark, ok := scanPktMark(args[3])
		if !ok {
			return r, ErrInvalidMark
		}
		r.Mark = mark
	}
	// The full name finds the device; the entry keeps it cut to 15.
	r.Dev = args[1]
	return r, nil
}

// ParseRouteDel parses ovs/route/del's arguments: IP/PLEN [pkt_mark=MARK].
func ParseRouteDel(args []string) (RouteSpec, error) {
	var r RouteSpec
	if len(args) < 1 {
		return r, ErrInvalidParameters
	}
	if ip, plen, ok := scanIPv4Route(args[0]); ok {
		r.Dst, r.Plen = mapped4(ip), uint8(plen)+96
	} else if ip6, plen, ok := scanIPv6Route(args[0]); ok {
		r.Dst, r.Plen = ip6, uint8(plen)
	} else {
		return r, ErrInvalidParameters
	}
	if len(args) > 1 {
		mark, ok := scanPktMark(args[1])
		if !ok {
			return r, ErrInvalidMark
		}
		r.Mark = mark
	}
	return r, nil
}

// ParseRouteLookup parses ovs/route/lookup's arguments: IP [pkt_mark=MARK]
// (IP may carry /32, or /128 for IPv6, as Open vSwitch allows).
func ParseRouteLookup(args []string) (RouteSpec, error) {
	var r RouteSpec
	if len(args) < 1 {
		return r, ErrInvalidParameters
	}
	if ip, plen, ok := scanIPv4Route(args[0]); ok && plen == 32 {
		r.Dst, r.Plen = mapped4(ip), 128
	} else if ip6, plen, ok := scanIPv6Route(args[0]); ok && plen == 128 {
		r.Dst, r.Plen = ip6, 128
	} else {
		return r, ErrInvalidParameters
	}
	if len(args) > 1 {
		mark, ok := scanPktMark(args[1])
		if !ok {
			return r, ErrInvalidMark
		}
		r.Mark = mark
	}
	return r, nil
}

// ParseNeighSet parses tnl/neigh/set's arguments: BRIDGE IP MAC. An
// argument with a colon is an IPv6 address, otherwise IPv4, as Open
// vSwitch's lookup_any decides.
func ParseNeighSet(args []string) (bridge string, ip [16]byte, mac [6]byte, err error) {
	if len(args) != 3 {
		return "", ip, mac, ErrBadIP
	}
	if strings.Contains(args[1], ":") {
		a, ok := parseInetPton6(args[1])
		if !ok {
			return "", ip, mac, ErrBadIP
		}
		ip = a
	} else {
		a, ok := parseInetPton4(args[1])
		if !ok {
			return "", ip, mac, ErrBadIP
		}
		ip = mapped4(a)
	}
	mac, ok := scanMAC(args[2])
	if !ok {
		return "", ip, mac, ErrBadMAC
	}
	return truncName(args[0]), ip, mac, nil
}

// ParseAging parses tnl/neigh/aging's SECS: 1 to MaxAgingSeconds.
func ParseAging(arg string) (uint32, error) {
	s := skipSpaces(arg)
	v, _, ok := scanInt(s, 10)
	if !ok || uint32(v) == 0 || uint32(v) > MaxAgingSeconds {
		return 0, ErrBadAging
	}
	return uint32(v), nil
}

// scanPktMark is ovs_scan(s, "pkt_mark=%i"): anything may follow the
// number.
func scanPktMark(s string) (uint32, bool) {
	rest, ok := strings.CutPrefix(s, "pkt_mark=")
	if !ok {
		return 0, false
	}
	v, _, ok := scanInt(skipSpaces(rest), 0)
	return uint32(v), ok
}

// isSpace is C's isspace in the C locale.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func skipSpaces(s string) string {
	for len(s) > 0 && isSpace(s[0]) {
		s = s[1:]
	}
	return s
}

// scanInt is Open vSwitch's scanf integer conversion: an optional sign,
// then digits in base (0: a 0x prefix means 16, a leading 0 means 8,
// else 10; 16 also takes a 0x prefix). The value wraps as C's
// assignment to a narrower type does; callers truncate.
func scanInt(s string, base int) (uint64, string, bool) {
	neg := false
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if (base == 0 || base == 16) && len(s) > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		base = 16
		s = s[2:]
	} else if base == 0 {
		base = 10
		if len(s) > 0 && s[0] == '0' {
			base = 8
		}
	}
	var v uint64
	n := 0
	for n < len(s) {
		d := hexit(s[n])
		if d < 0 || d >= base {
			break
		}
		v = v*uint64(base) + uint64(d)
		n++
	}
	if n == 0 {
		return 0, s, false
	}
	if neg {
		v = -v
	}
	return v, s[n:], true
}

func hexit(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// scanIPv4 is IP_SCAN_FMT ("%hhu.%hhu.%hhu.%hhu").
func scanIPv4(s string) ([4]byte, string, bool) {
	var ip [4]byte
	for i := range ip {
		if i > 0 {
			if len(s) == 0 || s[0] != '.' {
				return ip, s, false
			}
			s = s[1:]
		}
		v, rest, ok := scanInt(skipSpaces(s), 10)
		if !ok {
			return ip, s, false
		}
		ip[i], s = byte(v), rest
	}
	return ip, s, true
}

// scanIPv4Route is ip_parse_cidr: IP, IP/PLEN or IP/CIDR-MASK, nothing
// after.
func scanIPv4Route(s string) ([4]byte, int, bool) {
	ip, rest, ok := scanIPv4(s)
	if !ok {
		return ip, 0, false
	}
	var mask uint32
	if r, ok := strings.CutPrefix(rest, "/"); ok {
		if m, r2, ok := scanIPv4(r); ok {
			mask, rest = uint32(m[0])<<24|uint32(m[1])<<16|uint32(m[2])<<8|uint32(m[3]), r2
		} else if v, r2, ok := scanInt(skipSpaces(r), 10); ok {
			p := int32(v)
			if p < 0 || p > 32 {
				return ip, 0, false
			}
			mask, rest = prefixMask32(int(p)), r2
		} else {
			mask = 0xffffffff
		}
	} else {
		mask = 0xffffffff
	}
	if x := ^mask; x&(x+1) != 0 {
		return ip, 0, false // not a CIDR mask
	}
	if rest != "" {
		return ip, 0, false
	}
	plen := 32
	for m := mask; plen > 0 && m&1 == 0; m >>= 1 {
		plen--
	}
	return ip, plen, true
}

func prefixMask32(p int) uint32 {
	if p == 0 {
		return 0
	}
	return ^uint32(0) << (32 - p)
}

// ipv6Chars is IPV6_SCAN_FMT's set.
func isIPv6Char(c byte) bool { return hexit(c) >= 0 || c == ':' || c == '.' }

// scanIPv6Text is " %46[0123456789abcdefABCDEF:.]".
func scanIPv6Text(s string) (string, string, bool) {
	n := 0
	for n < len(s) && n < 46 && isIPv6Char(s[n]) {
		n++
	}
	if n == 0 {
		return "", s, false
	}
	return s[:n], s[n:], true
}

// scanIPv6Route is ipv6_parse_cidr: ADDR, ADDR/PLEN or ADDR/CIDR-MASK,
// nothing after.
func scanIPv6Route(s string) ([16]byte, int, bool) {
	text, rest, ok := scanIPv6Text(skipSpaces(s))
	if !ok {
		return [16]byte{}, 0, false
	}
	ip, ok := parseInetPton6(text)
	if !ok {
		return ip, 0, false
	}
	plen := 128
	if r, ok := strings.CutPrefix(rest, "/"); ok {
		if v, r2, ok := scanInt(skipSpaces(r), 10); ok {
			p := int32(v)
			if p < 0 || p > 128 {
				return ip, 0, false
			}
			plen, rest = int(p), r2
		} else if mtext, r2, ok := scanIPv6Text(r); ok {
			m, ok := parseInetPton6(mtext)
			if !ok {
				return ip, 0, false
			}
			p, ok := cidrBits(m)
			if !ok {
				return ip, 0, false
			}
			plen, rest = p, r2
		}
	}
	if rest != "" {
		return ip, 0, false
	}
	return ip, plen, true
}

// cidrBits returns the prefix length of a CIDR mask.
func cidrBits(m [16]byte) (int, bool) {
	n := 0
	for n < 128 && m[n/8]&(0x80>>(n%8)) != 0 {
		n++
	}
	return n, m == prefixMask(uint8(n))
}

// parseInetPton4 is inet_pton(AF_INET): a strict dotted quad.
func parseInetPton4(s string) ([4]byte, bool) {
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is4() {
		return [4]byte{}, false
	}
	return a.As4(), true
}

// parseInetPton6 is inet_pton(AF_INET6) (no zone).
func parseInetPton6(s string) ([16]byte, bool) {
	if strings.ContainsRune(s, '%') {
		return [16]byte{}, false
	}
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is6() {
		return [16]byte{}, false
	}
	return a.As16(), true
}

// scanMAC is eth_addr_from_string: six %hhx separated by colons, nothing
// after.
func scanMAC(s string) ([6]byte, bool) {
	var mac [6]byte
	for i := range mac {
		if i > 0 {
			if len(s) == 0 || s[0] != ':' {
				return [6]byte{}, false
			}
			s = s[1:]
		}
		v, rest, ok := scanInt(skipSpaces(s), 16)
		if !ok {
			return [6]byte{}, false
		}
		mac[i], s = byte(v), rest
	}
	if s != "" {
		return [6]byte{}, false
	}
	return mac, true
}

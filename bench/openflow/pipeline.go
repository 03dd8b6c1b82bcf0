package openflow

import (
	"bufio"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Port is one logical port of the saved OVN pipeline, as its .ports file
// lists it: the Open vSwitch interface it was bound to, its OpenFlow port
// number, the logical port's name, MAC and IPv4 address.
type Port struct {
	Iface   string
	OFPort  int
	Logical string
	MAC     string
	IP      string
}

// ParsePorts reads a .ports file ("# comment" lines, then one port a line:
// iface ofport logical_port mac ipv4).
func ParsePorts(text string) ([]Port, error) {
	var ports []Port
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 5 {
			return nil, fmt.Errorf("ports line %d: want 5 fields (iface ofport logical_port mac ipv4), got %d", n, len(f))
		}
		ofport, err := strconv.Atoi(f[1])
		if err != nil || ofport <= 0 || ofport >= 0xff00 {
			return nil, fmt.Errorf("ports line %d: bad ofport %q", n, f[1])
		}
		mac, err := net.ParseMAC(f[3])
		if err != nil || len(mac) != 6 {
			return nil, fmt.Errorf("ports line %d: bad MAC %q", n, f[3])
		}
		ip := net.ParseIP(f[4]).To4()
		if ip == nil {
			return nil, fmt.Errorf("ports line %d: bad IPv4 address %q", n, f[4])
		}
		ports = append(ports, Port{Iface: f[0], OFPort: ofport, Logical: f[2], MAC: mac.String(), IP: ip.String()})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(ports) == 0 {
		return nil, fmt.Errorf("no ports listed")
	}
	return ports, nil
}

// Endpoint is a host's MAC and IPv4 address that takes a logical port's
// place.
type Endpoint struct {
	MAC string
	IP  string
}

// Rewrite returns the flows with each port's MAC and IPv4 address replaced
// by its endpoint's (ports[i] by to[i]), in one pass so that swapped
// addresses do not collide. It refuses a flow text that encodes a port's
// address in another form (hexadecimal, a prefix covering it, a MAC in
// capitals), which a text replacement would miss.
func Rewrite(flows string, ports []Port, to []Endpoint) (string, error) {
	if len(to) != len(ports) {
		return "", fmt.Errorf("%d endpoints for %d ports", len(to), len(ports))
	}
	repl := map[string]string{}
	var alts []string
	for i, p := range ports {
		mac, err := net.ParseMAC(to[i].MAC)
		if err != nil || len(mac) != 6 {
			return "", fmt.Errorf("endpoint %d: bad MAC %q", i, to[i].MAC)
		}
		ip := net.ParseIP(to[i].IP).To4()
		if ip == nil {
			return "", fmt.Errorf("endpoint %d: bad IPv4 address %q", i, to[i].IP)
		}
		if err := checkOtherForms(flows, p); err != nil {
			return "", err
		}
		repl[p.MAC] = mac.String()
		repl[p.IP] = ip.String()
		alts = append(alts, regexp.QuoteMeta(p.MAC), regexp.QuoteMeta(p.IP))
	}
	// Longest first, so that of two addresses where one starts the other
	// the longer wins (regexp alternation is leftmost-first).
	slices.SortFunc(alts, func(a, b string) int { return len(b) - len(a) })
	re := regexp.MustCompile(strings.Join(alts, "|"))
	var b strings.Builder
	last := 0
	for _, m := range re.FindAllStringIndex(flows, -1) {
		if !wholeAddress(flows, m[0], m[1]) {
			continue
		}
		b.WriteString(flows[last:m[0]])
		b.WriteString(repl[flows[m[0]:m[1]]])
		last = m[1]
	}
	b.WriteString(flows[last:])
	return b.String(), nil
}

// wholeAddress reports whether s[from:to] stands alone: 198.18.0.1 inside
// 198.18.0.10, or a MAC inside a longer run of hex pairs, does not; after
// "set_field:" it does.
func wholeAddress(s string, from, to int) bool {
	if from > 0 {
		c := s[from-1]
		if isAlnum(c) || c == '.' {
			return false
		}
		// ...ab:<address>: a hex pair standing alone before the colon.
		if c == ':' && from >= 3 && isHex(s[from-2]) && isHex(s[from-3]) && (from == 3 || !isAlnum(s[from-4])) {
			return false
		}
	}
	if to < len(s) {
		c := s[to]
		if isAlnum(c) {
			return false
		}
		// An IPv4 address continues with ".digit" (198.18.0.1.5), a MAC
		// with ":hex" (a longer run); "198.18.0.1:80" is an address and port.
		isMAC := strings.Contains(s[from:to], ":")
		if to+1 < len(s) && (c == '.' && !isMAC && isHex(s[to+1]) || c == ':' && isMAC && isHex(s[to+1])) {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// checkOtherForms finds a port's address written in a form Rewrite does
// not replace.
func checkOtherForms(flows string, p Port) error {
	mac, _ := net.ParseMAC(p.MAC)
	ip := net.ParseIP(p.IP).To4()
	lower := strings.ToLower(flows)
	forms := []string{
		fmt.Sprintf("0x%012x", []byte(mac)),
		fmt.Sprintf("0x%08x", []byte(ip)),
		fmt.Sprintf("0x%x", uint32(ip[0])<<24|uint32(ip[1])<<16|uint32(ip[2])<<8|uint32(ip[3])),
	}
	for _, f := range forms {
		if strings.Contains(lower, f) {
			return fmt.Errorf("port %s: its address appears as %s, which a text replacement would miss", p.Logical, f)
		}
	}
	if strings.Contains(flows, strings.ToUpper(p.MAC)) && strings.ToUpper(p.MAC) != p.MAC {
		return fmt.Errorf("port %s: its MAC appears in capitals", p.Logical)
	}
	// A prefix match on an address (nw_dst=198.18.0.0/24) covers the
	// port's address without naming it.
	for _, m := range regexp.MustCompile(`(\d+\.\d+\.\d+\.\d+)/(\d+\.\d+\.\d+\.\d+|\d+)`).FindAllStringSubmatch(flows, -1) {
		var mask net.IPMask
		if bits, err := strconv.Atoi(m[2]); err == nil {
			mask = net.CIDRMask(bits, 32)
		} else if mip := net.ParseIP(m[2]).To4(); mip != nil {
			mask = net.IPMask(mip)
		}
		base := net.ParseIP(m[1]).To4()
		if base == nil || mask == nil {
			continue
		}
		if base.Mask(mask).Equal(ip.Mask(mask)) && m[1] != p.IP {
			return fmt.Errorf("port %s: %s covers its address", p.Logical, m[0])
		}
	}
	return nil
}

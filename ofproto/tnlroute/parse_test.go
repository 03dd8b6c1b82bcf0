package tnlroute

import (
	"errors"
	"net/netip"
	"testing"
)

func TestParseRouteAdd(t *testing.T) {
	for _, c := range []struct {
		args []string
		err  error
		dst  string
		plen uint8
		gw   string
		mark uint32
	}{
		{args: []string{"198.18.2.0/24", "br0"}, dst: "198.18.2.0", plen: 120},
		{args: []string{"198.18.2.9", "br0"}, dst: "198.18.2.9", plen: 128},
		{args: []string{"198.18.2.0/255.255.255.0", "br0"}, dst: "198.18.2.0", plen: 120},
		{args: []string{"198.18.2.0/24", "br0", "198.18.1.1"}, dst: "198.18.2.0", plen: 120, gw: "198.18.1.1"},
		{args: []string{"198.18.2.0/24", "br0", "0.0.0.0"}, dst: "198.18.2.0", plen: 120},
		{args: []string{"198.18.2.0/24", "br0", "pkt_mark=0x10"}, dst: "198.18.2.0", plen: 120, mark: 16},
		{args: []string{"198.18.2.0/24", "br0", "pkt_mark=010"}, dst: "198.18.2.0", plen: 120, mark: 8},
		{args: []string{"198.18.2.0/24", "br0", "pkt_mark=-1"}, dst: "198.18.2.0", plen: 120, mark: 0xffffffff},
		{args: []string{"198.18.2.0/24", "br0", "pkt_mark=5junk"}, dst: "198.18.2.0", plen: 120, mark: 5},
		{args: []string{"198.18.2.0/24", "br0", "198.18.1.1", "pkt_mark=7"}, dst: "198.18.2.0", plen: 120, gw: "198.18.1.1", mark: 7},
		{args: []string{"2001:2::/48", "br0", "2001:2::fe", "pkt_mark=7"}, dst: "2001:2::", plen: 48, gw: "2001:2::fe", mark: 7},
		{args: []string{"2001:2::/ffff:ffff::", "br0"}, dst: "2001:2::", plen: 32},
		{args: []string{"::ffff:198.18.0.0/112", "br0"}, dst: "198.18.0.0", plen: 112},
		{args: []string{"198.18.2.0/33", "br0"}, err: ErrInvalidParameters},
		{args: []string{"198.18.2.0/-1", "br0"}, err: ErrInvalidParameters},
		{args: []string{"198.18.2.0/255.0.255.0", "br0"}, err: ErrInvalidParameters},
		{args: []string{"198.18.2.0/24x", "br0"}, err: ErrInvalidParameters},
		{args: []string{"2001:2::/129", "br0"}, err: ErrInvalidParameters},
		{args: []string{"2001:2::/ffff::ffff", "br0"}, err: ErrInvalidParameters},
		{args: []string{"bogus", "br0"}, err: ErrInvalidParameters},
		{args: []string{"198.18.2.0/24", "br0", "bogus"}, err: ErrInvalidMarkOrGW},
		{args: []string{"198.18.2.0/24", "br0", "2001::1"}, err: ErrInvalidMarkOrGW},
		{args: []string{"2001:2::/48", "br0", "198.18.1.1"}, err: ErrInvalidMarkOrGW6},
		{args: []string{"198.18.2.0/24", "br0", "198.18.1.1", "mark=1"}, err: ErrInvalidMark},
	} {
		r, err := ParseRouteAdd(c.args)
		if c.err != nil || err != nil {
			if !errors.Is(err, c.err) {
				t.Errorf("%q: error %v, want %v", c.args, err, c.err)
			}
			continue
		}
		if From16(r.Dst) != netip.MustParseAddr(c.dst) || r.Plen != c.plen || r.Mark != c.mark || r.Dev != "br0" {
			t.Errorf("%q: got %v/%d mark %d dev %s", c.args, From16(r.Dst), r.Plen, r.Mark, r.Dev)
		}
		if gw := From16(r.GW); (c.gw == "" && gw.IsValid()) || (c.gw != "" && gw != netip.MustParseAddr(c.gw)) {
			t.Errorf("%q: gateway %v, want %q", c.args, gw, c.gw)
		}
	}
}

func TestParseLookupDelNeighAging(t *testing.T) {
	if r, err := ParseRouteLookup([]string{"198.18.1.1/32", "pkt_mark=3"}); err != nil || r.Mark != 3 || r.Plen != 128 {
		t.Errorf("lookup /32: %+v %v", r, err)
	}
	for _, bad := range [][]string{{"198.18.1.0/24"}, {"2001:2::/64"}, {"x"}} {
		if _, err := ParseRouteLookup(bad); !errors.Is(err, ErrInvalidParameters) {
			t.Errorf("lookup %q: %v", bad, err)
		}
	}
	if _, err := ParseRouteLookup([]string{"198.18.1.1", "x"}); !errors.Is(err, ErrInvalidMark) {
		t.Errorf("lookup bad mark: %v", err)
	}
	if _, err := ParseRouteDel([]string{"198.18.1.0/24", "pkt_mark="}); !errors.Is(err, ErrInvalidMark) {
		t.Errorf("del bad mark: %v", err)
	}
	br, ip, mac, err := ParseNeighSet([]string{"br-with-a-very-long-name", "2001:2::5", "AA:bb:0xc:0:0:1"})
	if err != nil || br != "br-with-a-very-" || From16(ip) != netip.MustParseAddr("2001:2::5") || mac != [6]byte{0xaa, 0xbb, 0x0c, 0, 0, 1} {
		t.Errorf("neigh set: %q %v %x %v", br, From16(ip), mac, err)
	}
	if _, _, _, err := ParseNeighSet([]string{"br0", "198.18.1", "aa:bb:cc:dd:ee:ff"}); !errors.Is(err, ErrBadIP) {
		t.Errorf("short IPv4: %v", err)
	}
	if _, _, _, err := ParseNeighSet([]string{"br0", "198.18.1.1", "aa:bb:cc:dd:ee:ff "}); !errors.Is(err, ErrBadMAC) {
		t.Errorf("MAC with trailing space: %v", err)
	}
	for in, want := range map[string]uint32{"1": 1, "3600": 3600, " 5": 5, "+7x": 7} {
		if got, err := ParseAging(in); err != nil || got != want {
			t.Errorf("aging %q: %d %v", in, got, err)
		}
	}
	for _, in := range []string{"0", "3601", "x", "-1", "4294967296"} {
		if _, err := ParseAging(in); !errors.Is(err, ErrBadAging) {
			t.Errorf("aging %q: %v", in, err)
		}
	}
}

// TestFormatAddr checks glibc inet_ntop's choices (outputs taken from
// glibc 2.36's inet_ntop).
func TestFormatAddr(t *testing.T) {
	for in, want := range map[string]string{
		"::":                "::",
		"::1":               "::1",
		"::1.2.3.4":         "::1.2.3.4",
		"::ffff:1.2.3.4":    "1.2.3.4", // v4-mapped: dotted, as ipv6_format_mapped
		"1:0:0:2:0:0:0:3":   "1:0:0:2::3",
		"1:0:2:0:3:0:4:5":   "1:0:2:0:3:0:4:5",
		"2001:2::1":         "2001:2::1",
		"fe80::":            "fe80::",
		"1::1:2:3:4:5:6":    "1:0:1:2:3:4:5:6",
		"2001:db8:0:0:1::1": "2001:db8::1:0:0:1",
		"1:0:0:2:2:0:0:3":   "1::2:2:0:0:3",
	} {
		if got := FormatAddr(netip.MustParseAddr(in).As16()); got != want {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
	}
}

func FuzzParseRouteArgs(f *testing.F) {
	for _, s := range []string{"198.18.2.0/24", "2001:2::/48", "1.2.3.4/255.255.0.0", "pkt_mark=0x1f", "::ffff:1.2.3.4/120", " 1. 2.3.4/ 8", "-1.2.3.4", "2001::/ffff::"} {
		f.Add(s, "br0", "198.18.1.1", "pkt_mark=1")
	}
	f.Fuzz(func(t *testing.T, a, b, c, d string) {
		for n := 0; n <= 4; n++ {
			args := []string{a, b, c, d}[:n]
			if r, err := ParseRouteAdd(args); err == nil {
				if r.Plen > 128 {
					t.Fatalf("%q: plen %d", args, r.Plen)
				}
				if r.Dev != args[1] {
					t.Fatalf("%q: device name %q", args, r.Dev)
				}
			}
			if r, err := ParseRouteDel(args); err == nil && r.Plen > 128 {
				t.Fatalf("%q: plen %d", args, r.Plen)
			}
			if r, err := ParseRouteLookup(args); err == nil && r.Plen != 128 {
				t.Fatalf("%q: lookup plen %d", args, r.Plen)
			}
			ParseNeighSet(args)
		}
		if v, err := ParseAging(a); err == nil && (v == 0 || v > MaxAgingSeconds) {
			t.Fatalf("aging %q: %d", a, v)
		}
		var ip [16]byte
		copy(ip[:], a)
		FormatAddr(ip)
	})
}

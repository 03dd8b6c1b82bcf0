package tnlroute

import (
	"errors"
	"net/netip"
	"testing"

	"golang.org/x/sys/unix"
)

// fakeAddrs is an AddrSource from a map.
type fakeAddrs map[string][]netip.Prefix

func (f fakeAddrs) Addrs(dev string) ([]netip.Prefix, error) {
	l, ok := f[dev]
	if !ok {
		return nil, unix.ENODEV
	}
	return l, nil
}

var _ AddrSource = fakeAddrs{}

func pfx(s string) netip.Prefix { return netip.MustParsePrefix(s) }
func addr(s string) netip.Addr  { return netip.MustParseAddr(s) }

func kroute(t *testing.T, dst string, dev string, gw string, local bool) KernelRoute {
	t.Helper()
	p := pfx(dst)
	r := KernelRoute{Dst: p.Addr().As16(), Plen: uint8(p.Bits()), Dev: dev, Local: local}
	if p.Addr().Is4() {
		r.Plen += 96
	}
	if gw != "" {
		r.GW = addr(gw).As16()
	}
	return r
}

func userRoute(t *testing.T, args ...string) RouteSpec {
	t.Helper()
	r, err := ParseRouteAdd(args)
	if err != nil {
		t.Fatalf("ParseRouteAdd(%q): %v", args, err)
	}
	return r
}

func newTestTable() *Table {
	return NewTable(fakeAddrs{
		"br-phy": {pfx("198.18.1.1/24"), pfx("198.18.5.1/16"), pfx("2001:2:0:1::1/64")},
		"eth9":   {pfx("198.19.0.1/24")},
		"noaddr": {},
	}, true)
}

func mustLookup(t *testing.T, tb *Table, mark uint32, dst string) Result {
	t.Helper()
	r, ok := tb.Lookup(mark, addr(dst), netip.Addr{})
	if !ok {
		t.Fatalf("lookup %s mark %d: no route", dst, mark)
	}
	return r
}

func TestLongestPrefixAndPriorities(t *testing.T) {
	tb := newTestTable()
	tb.ReplaceSystem([]KernelRoute{
		kroute(t, "0.0.0.0/0", "eth9", "198.19.0.254", false),
		kroute(t, "198.18.1.0/24", "br-phy", "", false),
		kroute(t, "198.18.1.128/25", "br-phy", "198.18.1.9", false),
		kroute(t, "198.18.1.1/32", "br-phy", "", true),
		kroute(t, "198.19.0.0/24", "eth9", "", false),
		kroute(t, "203.0.113.0/24", "noaddr", "", false), // no source: left out
	})
	for _, c := range []struct {
		dst, dev, gw, src string
	}{
		{"198.18.1.7", "br-phy", "", "198.18.1.1"},
		{"198.18.1.200", "br-phy", "198.18.1.9", "198.18.1.1"}, // /25 beats /24
		{"198.18.1.1", "br-phy", "", "198.18.1.1"},             // local
		{"8.8.8.8", "eth9", "198.19.0.254", "198.19.0.1"},      // default; src by the gateway
		{"203.0.113.5", "eth9", "198.19.0.254", "198.19.0.1"},
	} {
		r := mustLookup(t, tb, 0, c.dst)
		if r.Dev != c.dev || r.Gateway.String() != orInvalid(c.gw) || r.Src.String() != c.src {
			t.Errorf("%s: got %+v, want dev %s gw %s src %s", c.dst, r, c.dev, c.gw, c.src)
		}
	}
	// A user /16 (priority 96+16+32 = 144) beats the kernel's /25 (121)
	// and /24, but not the local /32 (192).
	if err := tb.AddUser(userRoute(t, "198.18.0.0/16", "br-phy", "198.18.5.254")); err != nil {
		t.Fatal(err)
	}
	if r := mustLookup(t, tb, 0, "198.18.1.200"); r.Gateway != addr("198.18.5.254") || r.Src != addr("198.18.5.1") {
		t.Errorf("user /16 should win over kernel /25: %+v", r)
	}
	if r := mustLookup(t, tb, 0, "198.18.1.1"); r.Gateway.IsValid() {
		t.Errorf("local /32 should win over user /16: %+v", r)
	}
	// A kernel reset keeps user routes.
	tb.ReplaceSystem(nil)
	if r := mustLookup(t, tb, 0, "198.18.1.200"); r.Gateway != addr("198.18.5.254") {
		t.Errorf("after reset: %+v", r)
	}
	if _, ok := tb.Lookup(0, addr("8.8.8.8"), netip.Addr{}); ok {
		t.Error("kernel default route survived the reset")
	}
	n := 0
	for _, e := range tb.Entries() {
		if !e.User() {
			t.Errorf("kernel entry left: %+v", e)
		}
		n++
	}
	if n != 1 {
		t.Errorf("%d entries, want 1", n)
	}
}

func orInvalid(s string) string {
	if s == "" {
		return "invalid IP"
	}
	return s
}

func TestPktMark(t *testing.T) {
	tb := newTestTable()
	for _, args := range [][]string{
		{"198.18.2.0/24", "br-phy", "198.18.1.254"},
		{"198.18.2.0/24", "br-phy", "198.18.1.250", "pkt_mark=1234"},
		{"198.18.3.0/24", "br-phy", "pkt_mark=0x10"},
	} {
		if err := tb.AddUser(userRoute(t, args...)); err != nil {
			t.Fatal(args, err)
		}
	}
	if r := mustLookup(t, tb, 0, "198.18.2.1"); r.Gateway != addr("198.18.1.254") {
		t.Errorf("mark 0: %+v", r)
	}
	if r := mustLookup(t, tb, 1234, "198.18.2.1"); r.Gateway != addr("198.18.1.250") {
		t.Errorf("mark 1234: %+v", r)
	}
	// A route matches its own mark only.
	if _, ok := tb.Lookup(0, addr("198.18.3.1"), netip.Addr{}); ok {
		t.Error("mark-16 route answered mark 0")
	}
	if _, ok := tb.Lookup(7, addr("198.18.2.1"), netip.Addr{}); ok {
		t.Error("mark 7 found a route")
	}
	if r := mustLookup(t, tb, 16, "198.18.3.1"); r.Dev != "br-phy" || r.Gateway.IsValid() {
		t.Errorf("mark 16: %+v", r)
	}
	if err := tb.DelUser(mustParse(ParseRouteDel([]string{"198.18.2.0/24", "pkt_mark=1234"}))); err != nil {
		t.Fatal(err)
	}
	if err := tb.DelUser(mustParse(ParseRouteDel([]string{"198.18.2.0/24", "pkt_mark=1234"}))); !errors.Is(err, ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
	if _, ok := tb.Lookup(1234, addr("198.18.2.1"), netip.Addr{}); ok {
		t.Error("deleted route still found")
	}
}

func mustParse(r RouteSpec, err error) RouteSpec {
	if err != nil {
		panic(err)
	}
	return r
}

func TestIPv6AndLocalSource(t *testing.T) {
	tb := newTestTable()
	tb.ReplaceSystem([]KernelRoute{
		kroute(t, "2001:2:0:1::/64", "br-phy", "", false),
		kroute(t, "2001:2:0:1::1/128", "br-phy", "", true),
		kroute(t, "::/0", "br-phy", "2001:2:0:1::fe", false),
		kroute(t, "198.18.1.1/32", "br-phy", "", true),
	})
	if r := mustLookup(t, tb, 0, "2001:2:0:1::9"); r.Gateway.IsValid() || r.Src != addr("2001:2:0:1::1") {
		t.Errorf("on-link: %+v", r)
	}
	if r := mustLookup(t, tb, 0, "2001:db8::1"); r.Gateway != addr("2001:2:0:1::fe") {
		t.Errorf("default: %+v", r)
	}
	// As in Open vSwitch (v4-mapped addresses in one table), an IPv4
	// destination without an IPv4 route takes ::/0 (tests/ofctl shows
	// Debian doing so).
	if r := mustLookup(t, tb, 0, "192.0.2.1"); r.Gateway != addr("2001:2:0:1::fe") {
		t.Errorf("IPv4 destination over ::/0: %+v", r)
	}
	// With a source (a tunnel's local_ip): it must be local.
	if r, ok := tb.Lookup(0, addr("2001:db8::1"), addr("2001:2:0:1::1")); !ok || r.Src != addr("2001:2:0:1::1") {
		t.Errorf("local source: %+v %v", r, ok)
	}
	if _, ok := tb.Lookup(0, addr("2001:db8::1"), addr("2001:2:0:1::77")); ok {
		t.Error("non-local source accepted")
	}
}

func TestSourceAddressChoice(t *testing.T) {
	src := fakeAddrs{"d": {pfx("198.18.0.1/15"), pfx("198.18.1.1/24"), pfx("198.18.1.2/24"), pfx("2001:2::1/48")}}
	for dst, want := range map[string]string{
		"198.18.1.9":  "198.18.1.1", // longest mask, first of equals
		"198.19.0.9":  "198.18.0.1",
		"2001:2::9":   "2001:2::1",
		"203.0.113.1": "",
	} {
		got, ok := sourceAddr(src, addr(dst).As16(), "d")
		if want == "" {
			if ok {
				t.Errorf("%s: got %v, want none", dst, From16(got))
			}
			continue
		}
		if !ok || From16(got) != addr(want) {
			t.Errorf("%s: got %v %v, want %s", dst, From16(got), ok, want)
		}
	}
}

func TestDisableSystemRoute(t *testing.T) {
	tb := NewTable(fakeAddrs{"br-phy": {pfx("198.18.1.1/24")}}, false)
	tb.ReplaceSystem([]KernelRoute{kroute(t, "198.18.1.0/24", "br-phy", "", false)})
	if len(tb.Entries()) != 0 {
		t.Error("kernel route kept with system routes disabled")
	}
}

func TestLookupAllocatesNothing(t *testing.T) {
	tb := newTestTable()
	tb.ReplaceSystem([]KernelRoute{kroute(t, "198.18.1.0/24", "br-phy", "", false), kroute(t, "0.0.0.0/0", "eth9", "198.19.0.254", false)})
	dst := addr("8.8.4.4")
	if n := testing.AllocsPerRun(1000, func() {
		if _, ok := tb.Lookup(0, dst, netip.Addr{}); !ok {
			panic("no route")
		}
	}); n != 0 {
		t.Errorf("Lookup allocates %.1f times", n)
	}
}

func BenchmarkLookup(b *testing.B) {
	src := fakeAddrs{"br-phy": {pfx("198.18.0.1/15")}}
	tb := NewTable(src, true)
	var routes []KernelRoute
	for i := 0; i < 1000; i++ {
		var d [4]byte = [4]byte{198, 18, byte(i >> 8), byte(i)}
		routes = append(routes, KernelRoute{Dst: mapped4(d), Plen: 96 + 24 + uint8(i%9), Dev: "br-phy"})
	}
	tb.ReplaceSystem(routes)
	dst := addr("198.18.3.7")
	b.ReportAllocs()
	for b.Loop() {
		tb.Lookup(0, dst, netip.Addr{})
	}
}

func TestEntriesOrder(t *testing.T) {
	tb := newTestTable()
	tb.ReplaceSystem([]KernelRoute{
		kroute(t, "198.18.1.0/24", "br-phy", "", false),
		kroute(t, "198.18.1.1/32", "br-phy", "", true),
		kroute(t, "0.0.0.0/0", "eth9", "198.19.0.254", false),
	})
	if err := tb.AddUser(userRoute(t, "198.18.1.0/24", "br-phy", "198.18.1.254")); err != nil {
		t.Fatal(err)
	}
	got := showEntries(tb.Entries())
	// The /32 subtable (192) first, then the /24 one (user 152, and
	// the kernel's entry of the same match after it), then /0.
	want := "198.18.1.1/32 dev br-phy SRC 198.18.1.1 local\n" +
		"198.18.1.0/24 dev br-phy GW 198.18.1.254 SRC 198.18.1.1\n" +
		"198.18.1.0/24 dev br-phy SRC 198.18.1.1\n" +
		"0.0.0.0/0 dev eth9 GW 198.19.0.254 SRC 198.19.0.1\n"
	if got != want {
		t.Errorf("order:\n%s\nwant:\n%s", got, want)
	}
}

func TestLongDeviceName(t *testing.T) {
	tb := NewTable(fakeAddrs{"a-device-name-longer-than-15": {pfx("198.18.1.1/24")}}, false)
	if err := tb.AddUser(userRoute(t, "198.18.1.0/24", "a-device-name-longer-than-15")); err != nil {
		t.Fatal(err)
	}
	if e := tb.Entries(); len(e) != 1 || e[0].Dev != "a-device-name-l" {
		t.Errorf("entries %+v", e)
	}
}

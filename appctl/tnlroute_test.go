package appctl

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"gvs/ofproto/tnlroute"
)

// fakeRegistrar keeps commands with their argument limits, as unixctl
// checks them before calling.
type fakeRegistrar map[string]struct {
	min, max int
	fn       func([]string) (string, error)
}

func (f fakeRegistrar) Register(name, _ string, minArgs, maxArgs int, fn func([]string) (string, error)) {
	f[name] = struct {
		min, max int
		fn       func([]string) (string, error)
	}{minArgs, maxArgs, fn}
}

func (f fakeRegistrar) run(name string, args ...string) (string, error) {
	c, ok := f[name]
	if !ok {
		return "", fmt.Errorf("no command %s", name)
	}
	if len(args) < c.min || len(args) > c.max {
		return "", errors.New("argument count")
	}
	return c.fn(args)
}

type mapAddrs map[string][]netip.Prefix

func (m mapAddrs) Addrs(dev string) ([]netip.Prefix, error) {
	l, ok := m[dev]
	if !ok {
		return nil, unix.ENODEV
	}
	return l, nil
}

func newTunnelCommands() fakeRegistrar {
	r := fakeRegistrar{}
	routes := tnlroute.NewTable(mapAddrs{"br0": {netip.MustParsePrefix("198.18.1.1/24"), netip.MustParsePrefix("2001:2:0:1::1/64")}}, false)
	RegisterTunnelRouting(r, routes, tnlroute.NewCache(nil))
	return r
}

// TestTunnelRoutingOutput checks texts Open vSwitch's own test suite
// expects (tests/ovs-router.at, tunnel-push-pop.at), with our addresses.
func TestTunnelRoutingOutput(t *testing.T) {
	r := newTunnelCommands()
	for _, c := range [][]string{
		{"ovs/route/add", "198.18.2.0/24", "br0", "198.18.1.254"},
		{"ovs/route/add", "198.18.1.1/24", "br0", "pkt_mark=123"},
		{"ovs/route/add", "2001:2:0:2::/64", "br0", "2001:2:0:1::3", "pkt_mark=321"},
		{"tnl/neigh/set", "br0", "198.18.1.92", "f8:bc:12:44:34:b6"},
		{"tnl/arp/set", "br0", "2001:2:0:1::92", "f8:bc:12:44:34:b7"},
	} {
		if out, err := r.run(c[0], c[1:]...); err != nil || out != "OK" {
			t.Fatalf("%q: %q %v", c, out, err)
		}
	}
	out, _ := r.run("ovs/route/show")
	want := "Route Table:\n" +
		"User: 198.18.1.0/24 MARK 123 dev br0 SRC 198.18.1.1\n" +
		"User: 198.18.2.0/24 dev br0 GW 198.18.1.254 SRC 198.18.1.1\n" +
		"User: 2001:2:0:2::/64 MARK 321 dev br0 GW 2001:2:0:1::3 SRC 2001:2:0:1::1\n"
	if out != want {
		t.Errorf("show:\n%s\nwant:\n%s", out, want)
	}
	if out, _ := r.run("ovs/route/lookup", "198.18.1.7", "pkt_mark=123"); out != "src 198.18.1.1\ngateway ::\ndev br0\n" {
		t.Errorf("lookup: %q", out)
	}
	if _, err := r.run("ovs/route/lookup", "198.18.1.7"); err == nil || err.Error() != "Not found" {
		t.Errorf("lookup without route: %v", err)
	}
	out, _ = r.run("tnl/neigh/show")
	want = "IP                                            MAC                 Bridge\n" +
		"==========================================================================\n" +
		"198.18.1.92                                   f8:bc:12:44:34:b6   br0\n" +
		"2001:2:0:1::92                                f8:bc:12:44:34:b7   br0\n"
	if out != want {
		t.Errorf("neigh show:\n%s\nwant:\n%s", out, want)
	}
	if out, _ := r.run("tnl/neigh/aging"); out != "900" {
		t.Errorf("aging: %q", out)
	}
}

// FuzzTunnelRoutingCommands runs every command with arbitrary arguments:
// errors of Open vSwitch's texts, never a panic.
func FuzzTunnelRoutingCommands(f *testing.F) {
	f.Add("198.18.2.0/24", "br0", "198.18.1.254", "pkt_mark=5", uint8(4))
	f.Add("2001:2::/32", "br0", "2001:2:0:1::fe", "pkt_mark=0x5", uint8(4))
	f.Add("br0", "198.18.1.2", "aa:bb:cc:dd:ee:ff", "", uint8(3))
	f.Add("7", "", "", "", uint8(1))
	known := map[string]bool{}
	for _, e := range []error{tnlroute.ErrInvalidParameters, tnlroute.ErrInvalidMarkOrGW, tnlroute.ErrInvalidMarkOrGW6,
		tnlroute.ErrInvalidMark, tnlroute.ErrInsert, tnlroute.ErrNotFound, tnlroute.ErrBadIP, tnlroute.ErrBadMAC, tnlroute.ErrBadAging} {
		known[e.Error()] = true
	}
	f.Fuzz(func(t *testing.T, a, b, c, d string, n uint8) {
		r := newTunnelCommands()
		args := []string{a, b, c, d}[:n%5]
		for name := range r {
			_, err := r.run(name, args...)
			if err != nil && err.Error() != "argument count" && !known[err.Error()] {
				t.Fatalf("%s %q: unexpected error %q", name, args, err)
			}
		}
		for _, name := range []string{"ovs/route/show", "tnl/neigh/show"} {
			out, err := r.run(name)
			if err != nil || !strings.HasSuffix(out, "\n") {
				t.Fatalf("%s: %q %v", name, out, err)
			}
		}
	})
}

package afxdp

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"gvs/netdev/internal/nettest"
)

// newEnv returns a nettest.Env for one test (namespaces "gvsxdp<pid>-<n>-",
// interfaces "gx<pid36><n36>..."), skipping the test unless it runs as
// root on a kernel with AF_XDP.
func newEnv(t testing.TB) *nettest.Env {
	t.Helper()
	e := nettest.NewPrefixed(t, "gvsxdp", "gx")
	fd, err := unix.Socket(unix.AF_XDP, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Skipf("AF_XDP unsupported: %v", err)
	}
	unix.Close(fd)
	return e
}

// fwdTopo is two hosts (namespaces) joined through two root-namespace
// veth ends that a forwarder bridges: A:v0 -- xa | forwarder | xb -- B:v0.
type fwdTopo struct {
	e            *nettest.Env
	nsA, nsB     string
	xa, xb       string // root-namespace ends the forwarder opens
	addrA, addrB string
}

func newFwdTopo(t testing.TB) *fwdTopo {
	t.Helper()
	e := newEnv(t)
	tp := &fwdTopo{e: e, nsA: e.NS("a"), nsB: e.NS("b"), xa: e.IfName("xa"), xb: e.IfName("xb")}
	net := e.Subnet(0)
	tp.addrA, tp.addrB = net+".1", net+".2"
	e.Veth("v0", tp.nsA, tp.xa, "")
	e.Veth("v0", tp.nsB, tp.xb, "")
	e.Addr(tp.nsA, "v0", tp.addrA+"/24")
	e.Addr(tp.nsB, "v0", tp.addrB+"/24")
	return tp
}

// pair is a direct veth pair between two namespaces: the reference path.
type pair struct {
	nsA, nsB     string
	addrA, addrB string
}

func newPair(e *nettest.Env) pair {
	p := pair{nsA: e.NS("c"), nsB: e.NS("d")}
	net := e.Subnet(1)
	p.addrA, p.addrB = net+".1", net+".2"
	e.Veth("v0", p.nsA, "v0", p.nsB)
	e.Addr(p.nsA, "v0", p.addrA+"/24")
	e.Addr(p.nsB, "v0", p.addrB+"/24")
	return p
}

// ping sends count echo requests of size bytes from ns to addr, with DF
// set, and returns the round trip times; it fails on the first lost one.
func ping(ns, addr string, count, size int) ([]time.Duration, error) {
	p, err := nettest.NewPinger(ns, true)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	dst := netip.MustParseAddr(addr)
	var rtts []time.Duration
	for i := range count {
		rtt, err := p.Ping(dst, size, 2*time.Second)
		if err != nil {
			return rtts, fmt.Errorf("ping %s #%d (%d bytes): %w", addr, i, size, err)
		}
		rtts = append(rtts, rtt)
	}
	return rtts, nil
}

// xdpAttached reports whether ip(8) shows an XDP program on a
// root-namespace interface.
func xdpAttached(e *nettest.Env, name string) bool {
	return strings.Contains(e.Run("ip", "link", "show", "dev", name), "xdp")
}

// stallProbe are the iperf3 client options of the TCP runs: half-second
// intervals, so that a transmit stall shows as an interval that moved
// nothing, and a bounded connect.
var stallProbe = []string{"-i", "0.5", "--connect-timeout", "2000"}

// udpCounters returns the Udp line of /proc/net/snmp in ns by name.
func udpCounters(e *nettest.Env, ns string) map[string]int {
	var names []string
	out := map[string]int{}
	for _, line := range strings.Split(e.LinkRun(ns, "cat", "/proc/net/snmp"), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "Udp:" {
			continue
		}
		if names == nil {
			names = f[1:]
			continue
		}
		for i, v := range f[1:] {
			if i < len(names) {
				out[names[i]], _ = strconv.Atoi(v)
			}
		}
	}
	return out
}

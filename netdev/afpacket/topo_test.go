package afpacket

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"time"

	"gvs/netdev/internal/nettest"
)

// topo is ns1 (a1, 198.18.1.1) -- b1 [forwarder] b2 -- (a2, 198.18.1.2) ns2,
// with b1 and b2 in the root namespace, opened with afpacket.
type topo struct {
	env      *nettest.Env
	ns1, ns2 string
	b1, b2   string
	d1, d2   *Device
}

var (
	addr1    = netip.MustParseAddr("198.18.1.1")
	addr2    = netip.MustParseAddr("198.18.1.2")
	ref2Addr = netip.MustParseAddr("198.18.2.2")
)

// modes are the receive modes every forwarding test runs in, with the
// socket buffer each wants (recvmmsg needs room for bursts).
var modes = []Config{
	{RxMode: RxRing},
	{RxMode: RxRingV2},
	// With a socket buffer the V2 slots are MTU-sized and larger
	// frames (GSO) come through the TP_STATUS_COPY path.
	{RxMode: RxRingV2, SocketBuffer: 8 << 20},
	{RxMode: RxRecvmmsg, SocketBuffer: 8 << 20},
}

// eachMode runs f as a subtest per receive mode.
func eachMode(t *testing.T, f func(t *testing.T, cfg Config)) {
	for _, cfg := range modes {
		name := cfg.RxMode
		if cfg.SocketBuffer != 0 {
			name += fmt.Sprintf("-sockbuf-%dMiB", cfg.SocketBuffer>>20)
		}
		t.Run(name, func(t *testing.T) { f(t, cfg) })
	}
}

func newTopo(t testing.TB, cfg Config) *topo {
	env := nettest.New(t)
	tp := &topo{env: env, ns1: env.NS("ns1"), ns2: env.NS("ns2"), b1: env.IfName("b1"), b2: env.IfName("b2")}
	env.Veth("a1", tp.ns1, tp.b1, "")
	env.Veth("a2", tp.ns2, tp.b2, "")
	env.Addr(tp.ns1, "a1", "198.18.1.1/24")
	env.Addr(tp.ns2, "a2", "198.18.1.2/24")
	tp.d1 = openT(t, tp.b1, cfg)
	tp.d2 = openT(t, tp.b2, cfg)
	return tp
}

func openT(t testing.TB, name string, cfg Config) *Device {
	t.Helper()
	cfg.Name = name
	d, err := Open(cfg)
	if err != nil {
		t.Fatalf("Open(%s): %v", name, err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// pingRTTs pings dst from ns count times and returns the sorted RTTs of
// the replies.
func pingRTTs(t testing.TB, ns string, dst netip.Addr, count, size int, df bool) []time.Duration {
	t.Helper()
	p, err := nettest.NewPinger(ns, df)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var rtts []time.Duration
	for range count {
		rtt, err := p.Ping(dst, size, 500*time.Millisecond)
		if err == nil {
			rtts = append(rtts, rtt)
		}
		time.Sleep(20 * time.Millisecond)
	}
	slices.Sort(rtts)
	return rtts
}

func mustAddr(s string) netip.Addr { return netip.MustParseAddr(s) }

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[len(d)/2]
}

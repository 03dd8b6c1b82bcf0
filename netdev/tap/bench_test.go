package tap

import (
	"slices"
	"testing"
	"time"

	"gvs/netdev/afpacket"
	"gvs/netdev/internal/nettest"
)

// BenchmarkForwarderTapTCP measures iperf3 TCP through a forwarder between
// an afpacket port and an internal (tap) port whose stack is the iperf3
// peer, in both directions, offloads at kernel defaults.
func BenchmarkForwarderTapTCP(b *testing.B) {
	nettest.NeedIperf(b)
	env := nettest.New(b)
	ns1, ns2 := env.NS("ns1"), env.NS("ns2")
	b1, tp := env.IfName("b1"), env.IfName("tp")
	env.Veth("a1", ns1, b1, "")
	env.Addr(ns1, "a1", "198.18.1.1/24")
	tapDev := openT(b, Config{Name: tp, Type: "internal"})
	env.Run("ip", "link", "set", tp, "netns", ns2)
	env.NSRun(ns2, "ip", "link", "set", tp, "up")
	env.Addr(ns2, tp, "198.18.1.2/24")
	sys, err := afpacket.Open(afpacket.Config{Name: b1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { sys.Close() })
	nettest.StartForwarder(b, sys, tapDev)
	var toTap, fromTap []float64
	for b.Loop() {
		for _, dir := range []struct {
			extra []string
			out   *[]float64
		}{{nil, &toTap}, {[]string{"-R"}, &fromTap}} {
			r, err := env.IperfTCP(ns2, ns1, "198.18.1.2", 3*time.Second, dir.extra...)
			if err != nil {
				b.Fatal(err)
			}
			*dir.out = append(*dir.out, r.Gbps)
		}
	}
	slices.Sort(toTap)
	slices.Sort(fromTap)
	b.ReportMetric(toTap[len(toTap)/2], "to-tap-Gbit/s")
	b.ReportMetric(fromTap[len(fromTap)/2], "from-tap-Gbit/s")
}

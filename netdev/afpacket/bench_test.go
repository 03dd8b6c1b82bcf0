package afpacket

import (
	"slices"
	"testing"
	"time"

	"gvs/netdev/internal/nettest"
)

// BenchmarkForwarderTCP measures iperf3 TCP throughput (offloads at kernel
// defaults) through a bare forwarder of two afpacket devices in each
// receive mode, and over a direct veth pair as the reference, interleaved
// in the same run since other load on the machine moves every figure; then
// ping round trips over all of them. Gbit/s is the first of modes.
func BenchmarkForwarderTCP(b *testing.B) {
	nettest.NeedIperf(b)
	type path struct {
		name           string
		server, client string
		addr           string
		gbps           []float64
	}
	var paths []*path
	for _, cfg := range modes {
		tp := newTopo(b, cfg)
		nettest.StartForwarder(b, tp.d1, tp.d2)
		paths = append(paths, &path{name: cfg.RxMode, server: tp.ns2, client: tp.ns1, addr: addr2.String()})
	}
	env := nettest.New(b)
	ref1, ref2 := env.NS("ref1"), env.NS("ref2")
	env.Veth("r1", ref1, "r2", ref2)
	env.Addr(ref1, "r1", ref2Addr.Prev().String()+"/24")
	env.Addr(ref2, "r2", ref2Addr.String()+"/24")
	paths = append(paths, &path{name: "direct-veth", server: ref2, client: ref1, addr: ref2Addr.String()})
	for b.Loop() {
		for _, p := range paths {
			r, err := env.IperfTCP(p.server, p.client, p.addr, 3*time.Second)
			if err != nil {
				b.Fatalf("%s: %v", p.name, err)
			}
			p.gbps = append(p.gbps, r.Gbps)
		}
	}
	b.StopTimer()
	for i, p := range paths {
		slices.Sort(p.gbps)
		med := p.gbps[len(p.gbps)/2]
		if i == 0 {
			b.ReportMetric(med, "Gbit/s")
		}
		b.ReportMetric(med, p.name+"-Gbit/s")
		rtt := median(pingRTTs(b, p.client, mustAddr(p.addr), 30, 56, false))
		b.ReportMetric(float64(rtt.Microseconds()), p.name+"-ping-µs")
	}
}

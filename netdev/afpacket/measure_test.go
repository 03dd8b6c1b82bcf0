package afpacket

import (
	"fmt"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gvs/netdev/internal/nettest"
)

// TestMeasureRxModes compares the receive modes through a bare forwarder
// (and a direct veth pair as the reference), interleaved run by run and
// setup by setup since other load on the machine moves every figure:
// ping round trip, 1-byte UDP request/response rate, iperf3 TCP (one
// stream, offloads at kernel defaults) and UDP 8 KB datagrams offered at
// 1 Gbit/s. It takes minutes, so it runs only with GVS_RXMEASURE=N (N
// runs, at least 3), and prints a table of medians with min-max.
func TestMeasureRxModes(t *testing.T) {
	runs, _ := strconv.Atoi(os.Getenv("GVS_RXMEASURE"))
	if runs == 0 {
		t.Skip("set GVS_RXMEASURE=runs (>= 3) to measure")
	}
	nettest.NeedIperf(t)
	type setup struct {
		name           string
		server, client string
		addr           netip.Addr
		fw             *topo
		m              map[string][]float64
	}
	var setups []*setup
	for i, c := range []struct {
		name string
		cfg  Config
	}{
		{"ring-v3", Config{RxMode: RxRing}},
		{"ring-v2", Config{RxMode: RxRingV2}},
		// Every frame copied out of its slot, as before slots were lent.
		{"ring-v2-copied", Config{RxMode: RxRingV2, copyRx: true}},
		// With a socket buffer: MTU-sized slots and the copy path for
		// GSO frames.
		{"ring-v2-8MiB", Config{RxMode: RxRingV2, SocketBuffer: 8 << 20}},
		{"mmsg-8MiB", Config{RxMode: RxRecvmmsg, SocketBuffer: 8 << 20}},
	} {
		env := nettest.NewPrefixed(t, "gvsrx", "gx")
		tp := &topo{env: env, ns1: env.NS("ns1"), ns2: env.NS("ns2"), b1: env.IfName("b1"), b2: env.IfName("b2")}
		env.Veth("a1", tp.ns1, tp.b1, "")
		env.Veth("a2", tp.ns2, tp.b2, "")
		net := fmt.Sprintf("198.18.%d.", 10+i)
		env.Addr(tp.ns1, "a1", net+"1/24")
		env.Addr(tp.ns2, "a2", net+"2/24")
		tp.d1, tp.d2 = openT(t, tp.b1, c.cfg), openT(t, tp.b2, c.cfg)
		nettest.StartForwarder(t, tp.d1, tp.d2)
		setups = append(setups, &setup{name: c.name, server: tp.ns2, client: tp.ns1, addr: netip.MustParseAddr(net + "2"), fw: tp, m: map[string][]float64{}})
	}
	env := nettest.NewPrefixed(t, "gvsrx", "gx")
	ref1, ref2 := env.NS("ref1"), env.NS("ref2")
	env.Veth("r1", ref1, "r2", ref2)
	env.Addr(ref1, "r1", "198.18.30.1/24")
	env.Addr(ref2, "r2", "198.18.30.2/24")
	setups = append(setups, &setup{name: "direct-veth", server: ref2, client: ref1, addr: netip.MustParseAddr("198.18.30.2"), m: map[string][]float64{}})

	metrics := []string{"ping median (µs)", "UDP 1-byte RR (trans/s)", "TCP 1 stream (Gbit/s)", "TCP retransmits", "UDP 8 KB @1G loss (%)", "UDP 8 KB kernel drops", "UDP 8 KB tx drops"}
	for run := range runs {
		for _, s := range setups {
			rtts := pingRTTs(t, s.client, s.addr, 20, 56, false)
			s.m[metrics[0]] = append(s.m[metrics[0]], float64(median(rtts).Nanoseconds())/1e3)
		}
		for _, s := range setups {
			rate, err := nettest.UDPRequestResponse(s.server, s.client, s.addr, 7001, 2*time.Second)
			if err != nil {
				t.Fatalf("%s: rr: %v", s.name, err)
			}
			s.m[metrics[1]] = append(s.m[metrics[1]], rate)
		}
		for _, s := range setups {
			r, err := env.IperfTCP(s.server, s.client, s.addr.String(), 3*time.Second)
			if err != nil {
				t.Fatalf("%s: tcp: %v", s.name, err)
			}
			s.m[metrics[2]] = append(s.m[metrics[2]], r.Gbps)
			s.m[metrics[3]] = append(s.m[metrics[3]], float64(r.Retransmits))
		}
		for _, s := range setups {
			var before, txBefore uint64
			if s.fw != nil {
				before = s.fw.d1.Stats().RxKernelDrops + s.fw.d2.Stats().RxKernelDrops
				txBefore = s.fw.d1.Stats().TxDrops + s.fw.d2.Stats().TxDrops
			}
			r, err := env.IperfUDP(s.server, s.client, s.addr.String(), 3*time.Second, "1G", 8192)
			if err != nil {
				t.Fatalf("%s: udp: %v", s.name, err)
			}
			s.m[metrics[4]] = append(s.m[metrics[4]], 100*r.Loss())
			if s.fw != nil {
				s.m[metrics[5]] = append(s.m[metrics[5]], float64(s.fw.d1.Stats().RxKernelDrops+s.fw.d2.Stats().RxKernelDrops-before))
				s.m[metrics[6]] = append(s.m[metrics[6]], float64(s.fw.d1.Stats().TxDrops+s.fw.d2.Stats().TxDrops-txBefore))
			}
		}
		t.Logf("run %d of %d done", run+1, runs)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n| %d runs, median [min-max] |", runs)
	for _, s := range setups {
		fmt.Fprintf(&b, " %s |", s.name)
	}
	b.WriteString("\n|---|" + strings.Repeat("---:|", len(setups)) + "\n")
	for _, m := range metrics {
		fmt.Fprintf(&b, "| %s |", m)
		for _, s := range setups {
			v := slices.Clone(s.m[m])
			if len(v) == 0 {
				b.WriteString(" - |")
				continue
			}
			slices.Sort(v)
			fmt.Fprintf(&b, " %s [%s-%s] |", num(v[len(v)/2]), num(v[0]), num(v[len(v)-1]))
		}
		b.WriteString("\n")
	}
	t.Log(b.String())
}

func num(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

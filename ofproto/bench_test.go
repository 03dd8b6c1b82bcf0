package ofproto

import (
	"testing"
	"time"

	"gvs/dpif"
	"gvs/netdev/netdevtest"
)

// newFlowsFixture: a bridge where port 1 receives frames from many new
// sources to a host already learned on port 2.
func newFlowsFixture(tb testing.TB, n int) (*fixture, *netdevtest.Device) {
	fx := newFixture(tb, dpif.Config{PoolBuffers: 1024}, BridgeConfig{MACTableSize: 1 << 20}, PortConfig{}, PortConfig{})
	fx.send(2, frame(broadcast, mac(0xb), 0, false))
	in := netdevtest.MustNew(netdevtest.Config{Name: "in", RxQueueLen: n + 1, Discard: true})
	no, err := fx.dp.PortAdd(in, dpif.AutoPortNo)
	if err != nil {
		tb.Fatal(err)
	}
	fx.br.AddPort(no, PortConfig{})
	return fx, in
}

func srcMAC(i int) [6]byte {
	return [6]byte{0x02, 1, byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i)}
}

// TestNormalAbsorbs20kNewFlows: 20,000 new sources, each a MAC to learn
// and a megaflow to install: every packet delivered, no upcall lost.
func TestNormalAbsorbs20kNewFlows(t *testing.T) {
	const n = 20000
	fx, in := newFlowsFixture(t, n)
	out := fx.devs[2]
	base := out.Stats().TxPackets
	before := fx.dp.NumFlows()
	start := time.Now()
	for i := range n {
		in.Inject(0, frame(mac(0xb), srcMAC(i), 0, false))
	}
	deadline := time.Now().Add(10 * time.Second)
	for out.Stats().TxPackets < base+n && time.Now().Before(deadline) {
		time.Sleep(100 * time.Microsecond)
	}
	el := time.Since(start)
	var lost, upcalls uint64
	for _, s := range fx.dp.PMDStats() {
		lost += s.LostUpcalls
		upcalls += s.Upcalls
	}
	if got := out.Stats().TxPackets - base; got != n || lost != 0 {
		t.Fatalf("delivered %d of %d, lost upcalls %d", got, n, lost)
	}
	if flows := fx.dp.NumFlows() - before; flows != n || fx.br.MACStats().Entries != n+1 {
		t.Fatalf("%d new flows, %d MACs", flows, fx.br.MACStats().Entries)
	}
	t.Logf("%d new flows (learn + translate + install) in %v: %.0f flows/s", n, el, n/el.Seconds())
}

// BenchmarkNormalNewFlows: NORMAL upcalls per second, each learning a
// new MAC and installing a megaflow (injection cost included).
func BenchmarkNormalNewFlows(b *testing.B) {
	fx, in := newFlowsFixture(b, b.N)
	out := fx.devs[2]
	base := out.Stats().TxPackets
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		in.Inject(0, frame(mac(0xb), srcMAC(i), 0, false))
	}
	for out.Stats().TxPackets < base+uint64(b.N) {
		time.Sleep(50 * time.Microsecond)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "flows/s")
}

package pipeline

import (
	"runtime"
	"testing"

	"gvs/ofproto/mf"
)

// flowMods100k are 100,000 distinct adds of the kind `ovs-ofctl add-flows`
// sends: ip,nw_src=10.x.y.z,actions=output:N in table 0.
func flowMods(n int) []*FlowMod {
	fms := make([]*FlowMod, n)
	for i := range fms {
		m := match().ethType(0x0800).nwSrc([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}, [4]byte{255, 255, 255, 255}).get()
		fms[i] = add(0, 100, m, out(uint32(i%8+1)))
	}
	return fms
}

// BenchmarkAddFlows100k adds 100,000 flows one flow mod (one
// transaction) each, as ovs-ofctl add-flows does without --bundle, and
// reports the heap each rule takes.
func BenchmarkAddFlows100k(b *testing.B) {
	benchmarkAdd(b, false)
}

// BenchmarkAddFlows100kBundle adds them in one transaction (--bundle).
func BenchmarkAddFlows100kBundle(b *testing.B) {
	benchmarkAdd(b, true)
}

func benchmarkAdd(b *testing.B, bundle bool) {
	const n = 100_000
	fms := flowMods(n)
	b.ResetTimer()
	var perRule float64
	for range b.N {
		b.StopTimer()
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		p := New(Config{})
		b.StartTimer()
		if bundle {
			tx := p.Begin()
			for _, fm := range fms {
				if err := tx.FlowMod(fm); err != nil {
					b.Fatal(err)
				}
			}
			tx.Commit()
		} else {
			for _, fm := range fms {
				if err := p.FlowMod(fm); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&after)
		perRule = float64(after.HeapAlloc-before.HeapAlloc) / n
		if p.NumRules() != n {
			b.Fatalf("%d rules", p.NumRules())
		}
		runtime.KeepAlive(p)
		b.StartTimer()
	}
	b.ReportMetric(perRule, "B/rule")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/rule")
}

var _ = mf.PortNone

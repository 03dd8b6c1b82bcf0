package ofproto

import (
	"runtime"
	"testing"

	"gvs/ofproto/mf"
	"gvs/ofproto/ofp"
	"gvs/ofproto/ofpact"
	"gvs/ofproto/pipeline"
)

// BenchmarkConnFlowMods100k adds 100,000 decoded flow mods through
// ConnBridge (ovs-ofctl add-flows' messages after the connection layer
// decoded them), one transaction each, with a flow-monitor and
// flow-removed sink attached, and reports the heap per rule.
func BenchmarkConnFlowMods100k(b *testing.B) {
	const n = 100_000
	fms := make([]*ofp.FlowMod, n)
	for i := range fms {
		var m mf.Match
		m.Flow.EtherType, m.Wildcards.Masks.EtherType = 0x0800, 0xffff
		m.Flow.SrcIPv4 = [4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}
		m.Wildcards.Masks.SrcIPv4 = [4]byte{255, 255, 255, 255}
		fms[i] = &ofp.FlowMod{Command: 0, Match: m, Priority: 32768, TableID: 0, BufferID: ofp.BufferNone,
			OutPort: mf.PortNone, OutGroup: ofp.GroupAny, Actions: []ofp.Action{&ofpact.Output{Port: uint32(i%8 + 1)}}}
	}
	var perRule float64
	for range b.N {
		b.StopTimer()
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		br := NewBridge("br0", BridgeConfig{})
		br.SetEvents(&eventLog{})
		c := NewConnBridge(br)
		b.StartTimer()
		for _, fm := range fms {
			if err := c.FlowMod(fm, struct {
				Conn uint64
				XID  uint32
			}{}); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&after)
		perRule = float64(after.HeapAlloc-before.HeapAlloc) / n
		runtime.KeepAlive(br)
		b.StartTimer()
	}
	b.ReportMetric(perRule, "B/rule")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/rule")
}

// BenchmarkBundle100k commits 100,000 flow mods as one bundle
// (ovs-ofctl --bundle add-flows), through Bridge.CommitBundle.
func BenchmarkBundle100k(b *testing.B) {
	const n = 100_000
	msgs := make([]BundleMsg, n)
	for i := range msgs {
		var m mf.Match
		m.Flow.EtherType, m.Wildcards.Masks.EtherType = 0x0800, 0xffff
		m.Flow.SrcIPv4 = [4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}
		m.Wildcards.Masks.SrcIPv4 = [4]byte{255, 255, 255, 255}
		msgs[i].FlowMod = &pipeline.FlowMod{Command: pipeline.FlowAdd, Match: m, Priority: 32768,
			BufferID: pipeline.BufferNone, OutPort: mf.PortNone, OutGroup: pipeline.GroupAny,
			Actions: []pipeline.Action{&ofpact.Output{Port: uint32(i%8 + 1)}}}
	}
	for range b.N {
		br := NewBridge("br0", BridgeConfig{})
		if _, err := br.CommitBundle(msgs, true); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/rule")
}

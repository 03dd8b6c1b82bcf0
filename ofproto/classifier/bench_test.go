package classifier

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gvs/ofproto/mf"
	"gvs/packet"
)

// routeRules is a table of n rules of a few shapes, as a pipeline has:
// exact in_port+dl_dst, ip_dst prefixes, and 5-tuple-ish ACLs.
func routeRules(n int) []*Rule[int] {
	rng := rand.New(rand.NewPCG(1, 1))
	rules := make([]*Rule[int], n)
	for i := range rules {
		var m mf.Match
		switch i % 3 {
		case 0:
			m.Flow.InPort, m.Wildcards.Masks.InPort = uint32(i%64), math.MaxUint32
			m.Flow.DstMAC = [6]byte{2, 0, byte(i >> 16), byte(i >> 8), byte(i), 0}
			m.Wildcards.Masks.DstMAC = [6]byte{255, 255, 255, 255, 255, 255}
		case 1:
			m.Flow.EtherType, m.Wildcards.Masks.EtherType = packet.EtherTypeIPv4, 0xffff
			// Distinct prefixes: /24s of 10.0.0.0/8 and /32s of 198.18.0.0/15.
			if rng.IntN(2) == 0 {
				m.Flow.DstIPv4 = [4]byte{10, byte(i >> 16), byte(i >> 8), 0}
				m.Wildcards.Masks.DstIPv4 = prefix4(24)
			} else {
				m.Flow.DstIPv4 = [4]byte{198, 18 + byte(i>>16&1), byte(i >> 8), byte(i)}
				m.Wildcards.Masks.DstIPv4 = prefix4(32)
			}
		case 2:
			m.Flow.EtherType, m.Wildcards.Masks.EtherType = packet.EtherTypeIPv4, 0xffff
			m.Flow.IPProto, m.Wildcards.Masks.IPProto = 6, 0xff
			m.Flow.SrcIPv4 = [4]byte{198, 19, byte(i >> 8), byte(i)}
			m.Wildcards.Masks.SrcIPv4 = prefix4(32)
			m.Flow.DstPort, m.Wildcards.Masks.DstPort = uint16(i), 0xffff
		}
		rules[i] = &Rule[int]{Match: m, Priority: rng.IntN(1000), Value: i}
	}
	return rules
}

func BenchmarkLookup(b *testing.B) {
	for _, n := range []int{10, 1000, 100000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			c := New[int]()
			insertAll(c, routeRules(n))
			rng := rand.New(rand.NewPCG(2, 2))
			flows := make([]mf.Flow, 256)
			for i := range flows {
				f := &flows[i]
				f.InPort = uint32(rng.IntN(64))
				f.EtherType = packet.EtherTypeIPv4
				f.IPProto = 6
				f.DstIPv4 = [4]byte{198, 18, byte(rng.IntN(256)), byte(rng.IntN(256))}
				f.SrcIPv4 = [4]byte{198, 19, byte(rng.IntN(256)), byte(rng.IntN(256))}
				f.DstPort = uint16(rng.IntN(n + 1))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				var wc mf.Wildcards
				c.Lookup(1, &flows[i&255], &wc)
			}
		})
	}
}

func BenchmarkInsert100k(b *testing.B) {
	rules := routeRules(100000)
	b.ReportAllocs()
	for b.Loop() {
		c := New[int]()
		for _, r := range rules {
			r.sub = nil
			c.Insert(r, 1)
		}
	}
}

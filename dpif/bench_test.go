package dpif

import (
	"fmt"
	"testing"
	"time"

	"gvs/dpif/conntrack"
	"gvs/netdev/netdevtest"
	"gvs/packet"
)

// BenchmarkClassifierLookup: a packet that matches in the last of N
// subtables (the worst case of tuple space search), 100 flows each.
func BenchmarkClassifierLookup(b *testing.B) {
	for _, n := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("subtables=%d", n), func(b *testing.B) {
			c := newClassifier(7)
			var last packet.Key
			for s := range n {
				m := packet.Mask{InPort: ^uint32(0), DstPort: uint16(1) << s}
				for i := range 100 {
					k := packet.Key{InPort: uint32(i), DstPort: uint16(1) << s}
					c.insert(&flow{key: k}, &m)
					last = k
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if f, probed := c.lookup(&last); f == nil || probed != n {
					b.Fatal("miss")
				}
			}
		})
	}
}

func BenchmarkEMCHit(b *testing.B) {
	c := newEMC(DefaultEMCEntries, 1)
	f := &flow{}
	var k packet.Key
	packet.Parse(udpFrame(mac(2), mac(1), 0, [4]byte{1, 1, 1, 1}, [4]byte{2, 2, 2, 2}, 1, 2), &k)
	c.insert(&k, k.Hash(), f)
	b.ReportAllocs()
	for range b.N {
		if c.lookup(&k, k.Hash()) != f {
			b.Fatal("miss")
		}
	}
}

// BenchmarkPMDIteration: the whole packet path per packet (receive from a
// fake device, parse, hash, cache lookup, execute, send to a fake
// device), batches of 32.
func BenchmarkPMDIteration(b *testing.B) {
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"emc", Config{EMCInsertInvProb: 1}},
		{"megaflow", Config{EMCEntries: -1}},
	} {
		b.Run(c.name, func(b *testing.B) {
			_, p, plan := manualFixture(b, c.cfg, flowFrames(32), hubHandler(1, 2))
			for range 4 {
				p.pollOnce(plan)
			}
			b.ReportAllocs()
			b.ResetTimer()
			pkts := 0
			for pkts < b.N {
				pkts += p.pollOnce(plan)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(pkts), "ns/pkt")
		})
	}
}

// BenchmarkUpcallInstall: every packet is a new flow: miss, upcall,
// install, execute. Reports flows installed per second.
func BenchmarkUpcallInstall(b *testing.B) {
	const distinct = 1 << 16
	frames := make([][]byte, distinct)
	for i := range frames {
		src := [6]byte{0x02, 0, 0, 0, byte(i >> 8), byte(i)}
		frames[i] = udpFrame(mac(2), src, 0, [4]byte{1, 1, 1, 1}, [4]byte{2, 2, 2, 2}, 1, 2)
	}
	fx, p, plan := manualFixture(b, Config{}, frames, hubHandler(1, 2))
	b.ReportAllocs()
	b.ResetTimer()
	pkts, inCycle := 0, 0
	for pkts < b.N {
		n := p.pollOnce(plan)
		pkts += n
		if inCycle += n; inCycle >= distinct {
			fx.dp.Flush() // the loop starts over: make its flows new again
			inCycle -= distinct
		}
	}
	if p.cnt.lostUpcalls != 0 {
		b.Fatalf("%d lost upcalls", p.cnt.lostUpcalls)
	}
	b.ReportMetric(float64(p.cnt.upcalls)/b.Elapsed().Seconds(), "flows/s")
}

// BenchmarkIdleWakeup: one wake-up of a sleeping PMD by a frame on one of
// its many idle queues: the wait returns, the ready queue is polled, the
// frame forwarded, the queue found empty. The cost should not grow with
// the number of idle queues.
func BenchmarkIdleWakeup(b *testing.B) {
	for _, n := range []int{4, 64, 512} {
		b.Run(fmt.Sprint("queues=", n), func(b *testing.B) {
			fx := newFixture(b, Config{manual: true, PMDs: 1}, 0)
			for i := range n {
				fx.addPort(netdevtest.Config{Name: fmt.Sprintf("q%d", i), Discard: true})
			}
			fx.dp.SetUpcallHandler(hubHandler(1, 2))
			p := fx.dp.pmdList()[0]
			plan := p.takePlan(nil)
			frame := flowFrames(1)[0]
			wake := func() {
				fx.devs[1].Inject(0, frame)
				p.sleep(time.Second)
				for p.poll(plan) != 0 {
				}
			}
			for range 4 {
				wake() // install the flow; the first pass on a plan polls all
			}
			b.ResetTimer()
			for range b.N {
				wake()
			}
		})
	}
}

// BenchmarkPMDActions: the whole packet path per packet (EMC hits) with
// the OpenFlow-era actions: set fields with checksum updates, and a
// recirculation (hash, recirc, second classification).
func BenchmarkPMDActions(b *testing.B) {
	var v packet.Key
	v.SrcIPv4, v.DstIPv4, v.IPTTL, v.SrcPort, v.DstPort = [4]byte{198, 18, 9, 9}, [4]byte{198, 18, 8, 8}, 9, 7, 8
	setMask := packet.Mask{SrcIPv4: [4]byte{255, 255, 255, 255}, DstIPv4: [4]byte{255, 255, 255, 255}, IPTTL: 0xff}
	for _, c := range []struct {
		name string
		acts func(u *Upcall) Actions
	}{
		{"output", func(*Upcall) Actions { return Actions{Output(2)} }},
		{"set-eth-ipv4-udp", func(*Upcall) Actions {
			return Actions{Set(AttrEthernet, &v), SetMasked(AttrIPv4, &v, &setMask), Set(AttrUDP, &v), Output(2)}
		}},
		{"recirc", func(u *Upcall) Actions {
			if u.Key.RecircID == 0 {
				return Actions{Hash(HashL4, 0), Recirc(5)}
			}
			return Actions{Output(2)}
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			h := handlerFunc(func(u *Upcall) UpcallResult {
				u.Mask = l2Mask()
				u.Actions = append(u.Actions, c.acts(u)...)
				return UpcallInstall
			})
			_, p, plan := manualFixture(b, Config{EMCInsertInvProb: 1}, flowFrames(32), h)
			for range 4 {
				p.pollOnce(plan)
			}
			b.ReportAllocs()
			b.ResetTimer()
			pkts := 0
			for pkts < b.N {
				pkts += p.pollOnce(plan)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(pkts), "ns/pkt")
		})
	}
}

// BenchmarkMeter: one packet through a meter, uncontended.
func BenchmarkMeter(b *testing.B) {
	fx := newFixture(b, Config{}, 0)
	fx.dp.MeterSet(0, MeterConfig{Bands: []MeterBand{{Rate: 1 << 30}}})
	b.ReportAllocs()
	for range b.N {
		fx.dp.meterPass(0, 1500, fx.dp.now())
	}
}

// BenchmarkCTPipeline: the packet path of a conntrack firewall's
// established traffic (ct(zone=1,commit), recirc, then output on the
// second pass, whose megaflow matches ct_state), beside the same
// packets recirculated without ct and output directly: what ct costs
// per packet in the datapath, the tracker's established lookup
// included. 32 UDP connections, batches of 32, EMC on. Needs the
// datapath's own tracker.
func BenchmarkCTPipeline(b *testing.B) {
	var frames [][]byte
	for i := range 32 {
		frames = append(frames, udpFrame(mac(2), mac(1), 0, [4]byte{198, 18, 0, 1}, [4]byte{198, 18, 0, 2}, uint16(10000+i), 5201))
	}
	ctReq := conntrack.Request{Zone: 1, Commit: true}
	pipelines := []struct {
		name    string
		actions func(u *Upcall) Actions
	}{
		{"output", func(*Upcall) Actions { return Actions{Output(2)} }},
		{"recirc-output", func(u *Upcall) Actions {
			if u.Key.RecircID == 0 {
				return Actions{Recirc(1)}
			}
			return Actions{Output(2)}
		}},
		{"ct-recirc-output", func(u *Upcall) Actions {
			if u.Key.RecircID == 0 {
				return Actions{CT(ctReq), Recirc(1)}
			}
			u.Mask.CTState = 0xff
			return Actions{Output(2)}
		}},
	}
	for _, pl := range pipelines {
		b.Run(pl.name, func(b *testing.B) {
			h := handlerFunc(func(u *Upcall) UpcallResult {
				u.Mask = l2Mask()
				u.Mask.SrcPort = 0xffff
				u.Actions = append(u.Actions, pl.actions(u)...)
				return UpcallInstall
			})
			fx, p, plan := manualFixture(b, Config{EMCInsertInvProb: 1}, frames, h)
			if fx.dp.Conntrack() == nil {
				b.Skip("the datapath has no tracker")
			}
			for range 8 {
				p.pollOnce(plan)
			}
			b.ReportAllocs()
			b.ResetTimer()
			pkts := 0
			for pkts < b.N {
				pkts += p.pollOnce(plan)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(pkts), "ns/pkt")
			if fx.devs[2].Stats().TxPackets == 0 {
				b.Fatal("nothing sent")
			}
		})
	}
}

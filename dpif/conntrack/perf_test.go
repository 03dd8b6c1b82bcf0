package conntrack

import (
	"encoding/binary"
	"math/rand/v2"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"gvs/packet"
)

// An established connection's packet allocates nothing.
func TestAllocsEstablished(t *testing.T) {
	ct, _ := newTestTracker(t, Config{})
	a, b := handshake(t, ct, 1)
	pkt := tcpPkt(ipA, ipB, 40000, 5201, seg{flags: fACK, seq: a, ack: b, win: 502, wscale: -1, payload: 0})
	reply := udpPkt(ipB, ipA, 53, 5000)
	run(ct, udpPkt(ipA, ipB, 5000, 53), Request{Zone: 1, Commit: true})
	req := &Request{Zone: 1}
	if n := testing.AllocsPerRun(1000, func() {
		pkt.Key.CTState = 0
		ct.Execute(pkt, req)
		reply.Key.CTState = 0
		ct.Execute(reply, req)
	}); n != 0 {
		t.Fatalf("%v allocations per established packet", n)
	}
	if pkt.Key.CTState != trk|est || reply.Key.CTState != trk|est|rpl {
		t.Fatalf("states %s %s", stateString(pkt.Key.CTState), stateString(reply.Key.CTState))
	}
	// Started: the coarse clock path too.
	ct.Start()
	defer ct.Close()
	if n := testing.AllocsPerRun(1000, func() {
		reply.Key.CTState = 0
		ct.Execute(reply, req)
	}); n != 0 {
		t.Fatalf("%v allocations per packet with the clock running", n)
	}
}

// Many PMDs look connections up while a writer creates, and the expiry
// sweeps and flushes delete them (run with -race).
func TestConcurrentReadersAndWriter(t *testing.T) {
	ct := New(Config{})
	ct.Start()
	defer ct.Close()
	const conns = 200
	for p := range conns {
		run(ct, udpPkt(ipA, ipB, uint16(1000+p), 53), Request{Commit: true})
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	var bad atomic.Int64
	for r := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(r), 1))
			pkts := make([]*packet.Buffer, conns)
			for i := range pkts {
				pkts[i] = udpPkt(ipB, ipA, 53, uint16(1000+i))
			}
			req := &Request{}
			for !stop.Load() {
				b := pkts[rng.IntN(conns)]
				b.Key.CTState = 0
				ct.Execute(b, req)
				if b.Key.CTState != trk|est|rpl {
					bad.Add(1)
				}
			}
		}()
	}
	// The writer: churn of other connections, growing the table.
	for i := range 5000 {
		src := netip.AddrFrom4([4]byte{198, 18, byte(2 + i/60000), byte(i / 250)})
		run(ct, udpPkt(src, ipB, uint16(i%60000+1), 9), Request{Zone: 2, Commit: true})
		if i%1000 == 999 {
			ct.Flush(2, nil)
		}
	}
	stop.Store(true)
	wg.Wait()
	if n := bad.Load(); n != 0 {
		t.Fatalf("%d lookups of established connections failed during writes", n)
	}
	checkInvariants(t, ct)
}

// checkInvariants: every live connection is reachable by both keys, the
// counters match the table.
func checkInvariants(t testing.TB, ct *Tracker) {
	t.Helper()
	ct.mu.Lock()
	defer ct.mu.Unlock()
	tbl := ct.tbl.Load()
	nodes, live := 0, 0
	zones := map[uint16]uint32{}
	for i := range tbl.buckets {
		for n := tbl.buckets[i].Load(); n != nil; n = n.next.Load() {
			nodes++
			if n.c.dead.Load() {
				t.Fatal("dead connection linked")
			}
			if n.c.key[dir(n.reply)] != n.key {
				t.Fatal("node key differs from its connection's")
			}
			if !n.reply {
				live++
				zones[n.key.zone]++
			}
		}
	}
	if nodes != 2*live || tbl.n != nodes || uint32(live) != ct.n {
		t.Fatalf("nodes %d live %d table.n %d tracker.n %d", nodes, live, tbl.n, ct.n)
	}
	for z, n := range zones {
		if ct.zoneCount[z] != n {
			t.Fatalf("zone %d count %d, table has %d", z, ct.zoneCount[z], n)
		}
	}
}

func BenchmarkEstablished(b *testing.B) {
	ct := New(Config{})
	ct.Start()
	defer ct.Close()
	run(ct, udpPkt(ipA, ipB, 5000, 53), Request{Zone: 1, Commit: true})
	for p := range 10000 {
		run(ct, udpPkt(ipR, ipB, uint16(p+1), 53), Request{Zone: 1, Commit: true})
	}
	pkt := udpPkt(ipB, ipA, 53, 5000)
	req := &Request{Zone: 1}
	b.ReportAllocs()
	for b.Loop() {
		pkt.Key.CTState = 0
		ct.Execute(pkt, req)
	}
}

func BenchmarkEstablishedTCP(b *testing.B) {
	ct := New(Config{})
	ct.Start()
	defer ct.Close()
	req := &Request{Commit: true}
	ct.Execute(tcpPkt(ipA, ipB, 40000, 5201, seg{flags: fSYN, seq: 1000, win: 64240, wscale: 7}), req)
	ct.Execute(tcpPkt(ipB, ipA, 5201, 40000, seg{flags: fSYN | fACK, seq: 5000, ack: 1001, win: 65160, wscale: 7}), req)
	pkt := tcpPkt(ipA, ipB, 40000, 5201, seg{flags: fACK, seq: 1001, ack: 5001, win: 502, wscale: -1, payload: 1400})
	b.SetBytes(int64(pkt.Len()))
	b.ReportAllocs()
	for b.Loop() {
		pkt.Key.CTState = 0
		ct.Execute(pkt, req)
	}
}

func BenchmarkEstablishedParallel(b *testing.B) {
	ct := New(Config{})
	ct.Start()
	defer ct.Close()
	for p := range 1024 {
		run(ct, udpPkt(ipA, ipB, uint16(p+1), 53), Request{Commit: true})
	}
	var seq atomic.Uint32
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		base := seq.Add(1) * 7
		pkts := make([]*packet.Buffer, 64)
		for i := range pkts {
			pkts[i] = udpPkt(ipB, ipA, 53, uint16((int(base)+i)%1024+1))
		}
		req := &Request{}
		i := 0
		for pb.Next() {
			p := pkts[i&63]
			p.Key.CTState = 0
			ct.Execute(p, req)
			i++
		}
	})
}

func BenchmarkNewConnection(b *testing.B) {
	ct := New(Config{MaxConns: 1 << 30})
	pkts := make([]*packet.Buffer, 4096)
	for i := range pkts {
		pkts[i] = tcpPkt(netip.AddrFrom4([4]byte{198, 18, 10, byte(i >> 8)}), ipB, uint16(i&0xff+1), 80, seg{flags: fSYN, seq: 1, win: 1000, wscale: -1})
	}
	req := &Request{Commit: true}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i%len(pkts) == 0 {
			b.StopTimer()
			ct.Flush(AllZones, nil)
			b.StartTimer()
		}
		p := pkts[i%len(pkts)]
		p.Key.CTState = 0
		ct.Execute(p, req)
		i++
	}
}

// BenchmarkMemoryPerConn reports the heap bytes one tracked TCP
// connection takes (connection, its two table nodes and its share of
// the buckets).
func BenchmarkMemoryPerConn(b *testing.B) {
	const n = 100000
	pkts := make([]*packet.Buffer, 0, 256)
	for i := range 256 {
		pkts = append(pkts, tcpPkt(netip.AddrFrom4([4]byte{198, 18, 20, byte(i)}), ipB, 1, 80, seg{flags: fSYN, seq: 1, win: 1000, wscale: -1}))
	}
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		ct := New(Config{})
		req := &Request{Commit: true}
		for i := range n {
			p := pkts[i&255]
			binary.BigEndian.PutUint16(p.Data()[14+20:], uint16(i>>8+1)) // source port: a new connection
			p.Parse()
			p.HasVnet, p.Vnet.Flags = true, packet.VnetDataValid // checksum now stale
			p.Key.CTState = 0
			ct.Execute(p, req)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		if ct.Stats().Conns != n {
			b.Fatalf("%d conns", ct.Stats().Conns)
		}
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "B/conn")
		runtime.KeepAlive(ct)
	}
}

package mac

import (
	"math/rand/v2"
	"testing"
	"time"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// checkTable verifies every structural invariant of t: both lists agree
// with the map, per-port counts are exact, the heap is ordered and its
// slots are right, and no empty port is kept.
func checkTable(tb testing.TB, t *macTable) {
	tb.Helper()
	n := 0
	for e := t.lru.head; e != nil; e = e.newer() {
		if t.entries[e.macKey] != e {
			tb.Fatalf("listed entry %v not in map", e.macKey)
		}
		n++
	}
	if n != len(t.entries) {
		tb.Fatalf("table list %d entries, map %d", n, len(t.entries))
	}
	total := 0
	for no, p := range t.ports {
		if p.no != no || p.count == 0 || t.byUsage[p.slot] != p {
			tb.Fatalf("port %d: no %d count %d slot %d", no, p.no, p.count, p.slot)
		}
		c := 0
		for e := p.entries.head; e != nil; e = e.links[portLinks].next {
			if e.port != p || t.entries[e.macKey] != e {
				tb.Fatalf("port %d lists a foreign or stale entry", no)
			}
			c++
		}
		if c != p.count {
			tb.Fatalf("port %d lists %d, counts %d", no, c, p.count)
		}
		total += c
	}
	if total != len(t.entries) || len(t.byUsage) != len(t.ports) {
		tb.Fatalf("ports hold %d of %d entries; heap %d ports, map %d", total, len(t.entries), len(t.byUsage), len(t.ports))
	}
	for i := 1; i < len(t.byUsage); i++ {
		if t.byUsage.evictsBefore(i, (i-1)/2) {
			tb.Fatalf("heap order broken at %d", i)
		}
	}
}

func portCount(t *macTable, no uint32) int {
	if p := t.ports[no]; p != nil {
		return p.count
	}
	return 0
}

// TestFairEvictionSparesOtherPorts: the acceptance failure. Port 2's
// hosts are learned first and never refreshed, so they are the oldest
// entries; a flood of new sources on port 1 must evict only port 1's
// entries.
func TestFairEvictionSparesOtherPorts(t *testing.T) {
	const size, hostsB, flood = 100, 10, 20000
	tbl := newMACTable(size, time.Minute)
	now := epoch
	for i := range hostsB {
		tbl.learn(0, srcMAC(1_000_000+i), 2, now)
	}
	for i := range flood {
		now = now.Add(time.Millisecond)
		before := portCount(tbl, 1)
		out := tbl.learn(0, srcMAC(i), 1, now)
		if out.res != learnNew {
			t.Fatalf("flood %d: result %d", i, out.res)
		}
		if out.didEvict {
			if victim, ok := tbl.lookup(out.evicted.vlan, out.evicted.mac); ok {
				t.Fatalf("evicted %v still on port %d", out.evicted, victim)
			}
			if got := srcMACIndex(out.evicted.mac); got >= 1_000_000 {
				t.Fatalf("flood %d evicted port 2's host %d while port 1 held %d > %d", i, got-1_000_000, before, hostsB)
			}
		}
	}
	for i := range hostsB {
		if no, ok := tbl.lookup(0, srcMAC(1_000_000+i)); !ok || no != 2 {
			t.Fatalf("port 2 host %d lost", i)
		}
	}
	s := tbl.snapshot()
	if s.Entries != size || s.Evicted != flood-(size-hostsB) || s.Learned != flood+hostsB {
		t.Fatalf("stats %+v", s)
	}
	if portCount(tbl, 1) != size-hostsB {
		t.Fatalf("port 1 holds %d", portCount(tbl, 1))
	}
	checkTable(t, tbl)
}

func srcMACIndex(m [6]byte) int { return int(m[2])<<24 | int(m[3])<<16 | int(m[4])<<8 | int(m[5]) }

// TestFairEvictionTakesFromTheFullestPort: port 2 starts with most of
// the table; port 1's flood evicts port 2's entries only while port 2
// holds more (or ties, port 1 then losing as the lower number), and
// never port 1's own while port 2 holds more.
func TestFairEvictionTakesFromTheFullestPort(t *testing.T) {
	const size = 100
	tbl := newMACTable(size, time.Minute)
	now := epoch
	for i := range 80 {
		now = now.Add(time.Millisecond)
		tbl.learn(0, srcMAC(1_000_000+i), 2, now)
	}
	for i := range 1000 {
		now = now.Add(time.Millisecond)
		a, b := portCount(tbl, 1), portCount(tbl, 2)
		out := tbl.learn(0, srcMAC(i), 1, now)
		if !out.didEvict {
			continue
		}
		fromB := srcMACIndex(out.evicted.mac) >= 1_000_000
		switch {
		case a > b && fromB:
			t.Fatalf("step %d: evicted from port 2 (%d) while port 1 held %d", i, b, a)
		case b > a && !fromB:
			t.Fatalf("step %d: evicted from port 1 (%d) while port 2 held %d", i, a, b)
		case a == b && fromB:
			t.Fatalf("step %d: tie at %d broken towards the higher port number", i, a)
		}
	}
	if a, b := portCount(tbl, 1), portCount(tbl, 2); a != 50 || b != 50 {
		t.Fatalf("final split %d/%d, want 50/50", a, b)
	}
	checkTable(t, tbl)
}

// TestFairEvictionTieBreak: equal counts go to the lower port number,
// whatever the ages; within the port, its least recently used entry.
func TestFairEvictionTieBreak(t *testing.T) {
	tbl := newMACTable(6, time.Minute)
	now := epoch
	for _, port := range []uint32{3, 1, 2, 3, 1, 2} {
		now = now.Add(time.Second)
		tbl.learn(0, mac(byte(10*port+uint32(portCount(tbl, port)))), port, now)
	}
	now = now.Add(time.Second)
	tbl.learn(0, mac(10), 1, now) // port 1's LRU is now mac 11
	steps := []struct {
		port uint32
		want byte
	}{
		{4, 11},  // 2/2/2: port 1, though port 3 holds the oldest entry
		{4, 20},  // 1/2/2/1: ports 2 and 3 tie, port 2
		{5, 30},  // 1/1/2/2: ports 3 and 4 tie, port 3
		{5, 100}, // 1/1/1/2: port 4, its first (step 0)
	}
	for i, s := range steps {
		now = now.Add(time.Second)
		out := tbl.learn(0, mac(byte(100+i)), s.port, now)
		if !out.didEvict || out.evicted.mac != mac(s.want) {
			t.Fatalf("step %d evicted %v (%v), want mac %d", i, out.evicted, out.didEvict, s.want)
		}
		checkTable(t, tbl)
	}
}

// refModel is an independent reference for the table: each address's
// port and the sequence number of its last use; eviction by full scan.
type refModel map[macKey]struct {
	port uint32
	seq  int
}

// victim: the port with most entries, ties to the lower port number;
// its least recently used address.
func (m refModel) victim() macKey {
	counts := map[uint32]int{}
	for _, v := range m {
		counts[v.port]++
	}
	var port uint32
	best := 0
	for p, c := range counts {
		if c > best || c == best && p < port {
			port, best = p, c
		}
	}
	var k macKey
	seq := -1
	for key, v := range m {
		if v.port == port && (seq < 0 || v.seq < seq) {
			k, seq = key, v.seq
		}
	}
	return k
}

// TestMACTableMatchesReference drives random learns, moves, refreshes,
// touches, expiries, port flushes and shrinks against refModel: every
// eviction, every lookup and the structure must agree.
func TestMACTableMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tbl := newMACTable(64, time.Minute)
	ref := refModel{}
	now := epoch
	for step := range 50000 {
		now = now.Add(time.Millisecond)
		port := uint32(rng.IntN(6))
		k := macKey{uint16(rng.IntN(2)), mac(byte(rng.IntN(100)))}
		switch op := rng.IntN(100); {
		case op < 80:
			_, known := ref[k]
			full := !known && len(ref) >= tbl.max
			var want macKey
			if full {
				want = ref.victim()
				delete(ref, want)
			}
			out := tbl.learn(k.vlan, k.mac, port, now)
			if out.didEvict != full || full && out.evicted != want {
				t.Fatalf("step %d: evicted %v (%v), reference %v (%v)", step, out.evicted, out.didEvict, want, full)
			}
			ref[k] = struct {
				port uint32
				seq  int
			}{port, step}
		case op < 88:
			if e := tbl.entries[k]; e != nil {
				tbl.touch(e, now)
				v := ref[k]
				v.seq = step
				ref[k] = v
			}
		case op < 95:
			if e := tbl.oldest(); e != nil {
				for key, v := range ref {
					if v.seq < ref[e.macKey].seq {
						t.Fatalf("step %d: oldest %v, but %v is older", step, e.macKey, key)
					}
				}
				tbl.remove(e)
				delete(ref, e.macKey)
			}
		case op < 97:
			tbl.removePort(port)
			for key, v := range ref {
				if v.port == port {
					delete(ref, key)
				}
			}
		default:
			tbl.max = 1 + rng.IntN(80)
			for len(ref) > tbl.max {
				want := ref.victim()
				delete(ref, want)
				if got := tbl.evictFairly(); got.macKey != want {
					t.Fatalf("step %d: shrink evicted %v, reference %v", step, got.macKey, want)
				}
			}
		}
		v, inRef := ref[k]
		if no, ok := tbl.lookup(k.vlan, k.mac); ok != inRef || ok && no != v.port || len(tbl.entries) != len(ref) {
			t.Fatalf("step %d: lookup %v = %d,%v; table %d entries, reference %d", step, k, no, ok, len(tbl.entries), len(ref))
		}
		if step%97 == 0 {
			checkTable(t, tbl)
		}
	}
	checkTable(t, tbl)
}

func benchFullTable(b *testing.B, size, ports int) (*macTable, time.Time) {
	tbl := newMACTable(size, time.Minute)
	now := epoch
	for i := range size {
		tbl.learn(0, srcMAC(1<<30+i), uint32(i%ports), now)
	}
	return tbl, now
}

// BenchmarkMACLearnFullTable: each learn is a new address on a full
// default-size table and so an eviction, spread over 64 ports.
func BenchmarkMACLearnFullTable(b *testing.B) {
	tbl, now := benchFullTable(b, DefaultTableSize, 64)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		tbl.learn(0, srcMAC(i), uint32(i%64), now)
	}
	if tbl.stats.Evicted == 0 {
		b.Fatal("no eviction")
	}
}

// BenchmarkMACLearnFullTableFlood: the acceptance scenario, a flood of
// new addresses on one port of a full table shared by 64 ports.
func BenchmarkMACLearnFullTableFlood(b *testing.B) {
	tbl, now := benchFullTable(b, DefaultTableSize, 64)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		tbl.learn(0, srcMAC(i), 0, now)
	}
}

// BenchmarkMACLearnRefresh: a known address seen again (the common
// upcall case), on a full table.
func BenchmarkMACLearnRefresh(b *testing.B) {
	tbl, now := benchFullTable(b, DefaultTableSize, 64)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		j := i % DefaultTableSize
		tbl.learn(0, srcMAC(1<<30+j), uint32(j%64), now)
	}
}

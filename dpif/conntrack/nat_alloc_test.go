package conntrack

import (
	"fmt"
	"net/netip"
	"testing"

	"gvs/packet"
)

// ntTable is a stand-in for the tracker's table of reply tuples.
type ntTable map[Tuple]bool

func (t ntTable) inUse(r Tuple) bool { return t[r] }

// ntReverse is the plain reverse of a TCP/UDP/other tuple, and of an ICMP
// echo request (the identifier stays in SrcPort).
func ntReverse(o Tuple) Tuple {
	r := Tuple{Src: o.Dst, Dst: o.Src, SrcPort: o.DstPort, DstPort: o.SrcPort, Proto: o.Proto, Zone: o.Zone}
	if o.Proto == packet.ProtoICMP || o.Proto == packet.ProtoICMPv6 {
		r.SrcPort = o.SrcPort
		r.DstPort = 0 // echo reply, code 0
		if o.Proto == packet.ProtoICMPv6 {
			r.DstPort = uint16(natICMP6EchoReply) << 8
		}
	}
	return r
}

func ntTCP(src string, sport uint16, dst string, dport uint16) Tuple {
	return Tuple{Src: ntAddr(src), Dst: ntAddr(dst), SrcPort: sport, DstPort: dport, Proto: packet.ProtoTCP, Zone: 1}
}

// ntChoose runs natAllocate for orig and, on success, records the
// reply tuple in tab.
func ntChoose(t *testing.T, tab ntTable, orig Tuple, n *NAT, basis uint32) (Tuple, bool) {
	t.Helper()
	r, kind, ok := natAllocate(orig, ntReverse(orig), n, basis, tab.inUse)
	if ok {
		if kind != n.Kind {
			t.Fatalf("kind %v, want %v", kind, n.Kind)
		}
		if tab[r] {
			t.Fatalf("chose %v, which is in use", r)
		}
		tab[r] = true
	}
	return r, ok
}

func TestNATAllocateSNATKeepsPort(t *testing.T) {
	n := &NAT{Kind: NATSrc, AddrMin: ntAddr("198.18.2.10")}
	tab := ntTable{}
	orig := ntTCP("198.18.0.1", 40000, "198.18.1.2", 80)
	r, ok := ntChoose(t, tab, orig, n, 7)
	want := Tuple{Src: orig.Dst, Dst: n.AddrMin, SrcPort: 80, DstPort: 40000, Proto: packet.ProtoTCP, Zone: 1}
	if !ok || r != want {
		t.Fatalf("got %v %v, want %v", r, ok, want)
	}
	// A second client with the same port gets another one of the
	// ephemeral class.
	r, ok = ntChoose(t, tab, ntTCP("198.18.0.2", 40000, "198.18.1.2", 80), n, 7)
	if !ok || r.Dst != n.AddrMin || r.DstPort == 40000 || r.DstPort < 1024 {
		t.Fatalf("second: %v %v", r, ok)
	}
	if r.Src != orig.Dst || r.SrcPort != 80 {
		t.Fatalf("second changed the server side: %v", r)
	}
}

// Without a port range a source port stays in its class: 1-511,
// 600-1023 or 1024-65535.
func TestNATAllocatePortClasses(t *testing.T) {
	n := &NAT{Kind: NATSrc, AddrMin: ntAddr("198.18.2.10")}
	for _, c := range []struct{ sport, lo, hi uint16 }{
		{100, 1, 511}, {0, 1, 511}, {700, 600, 1023}, {550, 600, 1023}, {5000, 1024, 65535},
	} {
		tab := ntTable{}
		// Take the port itself, so another must be found.
		first := ntTCP("198.18.0.1", c.sport, "198.18.1.2", 80)
		blocker := ntReverse(first)
		blocker.Dst = n.AddrMin
		tab[blocker] = true
		for i := range 20 {
			r, ok := ntChoose(t, tab, ntTCP(fmt.Sprintf("198.18.0.%d", i+2), c.sport, "198.18.1.2", 80), n, 1)
			if !ok || r.DstPort < c.lo || r.DstPort > c.hi {
				t.Fatalf("sport %d: got port %d (%v), want %d-%d", c.sport, r.DstPort, ok, c.lo, c.hi)
			}
		}
	}
}

// A small range is searched whole and then exhausted.
func TestNATAllocateExhaustion(t *testing.T) {
	for _, c := range []struct {
		name   string
		n      NAT
		expect int
	}{
		{"one-address-4-ports", NAT{Kind: NATSrc, AddrMin: ntAddr("198.18.2.10"), PortMin: 5000, PortMax: 5003}, 4},
		{"3-addresses-2-ports", NAT{Kind: NATSrc, AddrMin: ntAddr("198.18.2.10"), AddrMax: ntAddr("198.18.2.12"), PortMin: 5000, PortMax: 5001}, 6},
		{"ipv6-2-addresses-3-ports", NAT{Kind: NATSrc, AddrMin: ntAddr("2001:2:0:2::10"), AddrMax: ntAddr("2001:2:0:2::11"), PortMin: 5000, PortMax: 5002}, 6},
		{"one-port-128", NAT{Kind: NATSrc, AddrMin: ntAddr("198.18.2.10"), PortMin: 6000, PortMax: 6127}, 128},
	} {
		t.Run(c.name, func(t *testing.T) {
			tab := ntTable{}
			seen := map[[2]any]bool{}
			for i := range c.expect + 3 {
				src, dst := "198.18.0.1", "198.18.1.2"
				if c.n.AddrMin.Is6() {
					src, dst = "2001:2::1", "2001:2:0:1::2"
				}
				// The same client and server, a new source port each time.
				r, ok := ntChoose(t, tab, ntTCP(src, uint16(30000+i), dst, 80), &c.n, 99)
				if i < c.expect {
					if !ok {
						t.Fatalf("connection %d refused with %d of %d in use", i, len(tab), c.expect)
					}
					if r.DstPort < c.n.PortMin || r.DstPort > c.n.PortMax || r.Dst.Less(c.n.AddrMin) || c.n.AddrMax.IsValid() && c.n.AddrMax.Less(r.Dst) {
						t.Fatalf("out of range: %v", r)
					}
					key := [2]any{r.Dst, r.DstPort}
					if seen[key] {
						t.Fatalf("%v given twice", key)
					}
					seen[key] = true
				} else if ok {
					t.Fatalf("connection %d accepted beyond the range: %v", i, r)
				}
			}
		})
	}
}

// A big range gives up after a bounded number of lookups.
func TestNATAllocateBoundedSearch(t *testing.T) {
	n := &NAT{Kind: NATSrc, AddrMin: ntAddr("198.18.2.10"), AddrMax: ntAddr("198.18.2.200")}
	lookups := 0
	_, _, ok := natAllocate(ntTCP("198.18.0.1", 40000, "198.18.1.2", 80), ntReverse(ntTCP("198.18.0.1", 40000, "198.18.1.2", 80)), n, 1,
		func(Tuple) bool { lookups++; return true })
	if ok {
		t.Fatal("allocation succeeded with everything in use")
	}
	if want := natMaxAddrTries * (128 + 64 + 32 + 16 + 8); lookups != want {
		t.Errorf("%d lookups, want %d", lookups, want)
	}
}

// The address is a function of the connection (hash), stable for the
// same basis; persistent makes it a function of the source address alone,
// the same for every basis.
func TestNATAllocateHashAndPersistence(t *testing.T) {
	base := NAT{Kind: NATSrc, AddrMin: ntAddr("198.18.2.0"), AddrMax: ntAddr("198.18.2.255")}
	pick := func(n NAT, orig Tuple, basis uint32) Tuple {
		r, _, ok := natAllocate(orig, ntReverse(orig), &n, basis, ntTable{}.inUse)
		if !ok {
			t.Fatalf("refused %v", orig)
		}
		return r
	}
	orig := ntTCP("198.18.0.1", 40000, "198.18.1.2", 80)
	if a, b := pick(base, orig, 5), pick(base, orig, 5); a != b {
		t.Errorf("same connection, same basis: %v then %v", a, b)
	}
	// Without persistent, connections of one source spread.
	addrs := map[netip.Addr]bool{}
	for i := range 64 {
		addrs[pick(base, ntTCP("198.18.0.1", uint16(40000+i), "198.18.1.2", 80), 5).Dst] = true
	}
	if len(addrs) < 16 {
		t.Errorf("64 connections used only %d of 256 addresses", len(addrs))
	}
	// With persistent, they all get one address, whatever the basis.
	p := base
	p.Persistent = true
	want := pick(p, orig, 1).Dst
	for i := range 64 {
		if got := pick(p, ntTCP("198.18.0.1", uint16(40000+i), fmt.Sprintf("198.18.1.%d", i), 80), uint32(i)).Dst; got != want {
			t.Fatalf("persistent: connection %d got %v, want %v", i, got, want)
		}
	}
	// ... and different sources still spread.
	addrs = map[netip.Addr]bool{}
	for i := range 64 {
		addrs[pick(p, ntTCP(fmt.Sprintf("198.18.0.%d", i), 40000, "198.18.1.2", 80), 1).Dst] = true
	}
	if len(addrs) < 16 {
		t.Errorf("persistent: 64 sources used only %d addresses", len(addrs))
	}
}

// With a port range the first port is hashed (stable for the connection)
// or random.
func TestNATAllocatePortStart(t *testing.T) {
	n := NAT{Kind: NATSrc, AddrMin: ntAddr("198.18.2.10"), PortMin: 10000, PortMax: 19999}
	orig := ntTCP("198.18.0.1", 40000, "198.18.1.2", 80)
	first := func(n NAT, basis uint32) uint16 {
		r, _, ok := natAllocate(orig, ntReverse(orig), &n, basis, ntTable{}.inUse)
		if !ok || r.DstPort < n.PortMin || r.DstPort > n.PortMax {
			t.Fatalf("got %v %v", r, ok)
		}
		return r.DstPort
	}
	if a, b := first(n, 3), first(n, 3); a != b {
		t.Errorf("hashed start moved: %d then %d", a, b)
	}
	r := n
	r.Random = true
	ports := map[uint16]bool{}
	for range 32 {
		ports[first(r, 3)] = true
	}
	if len(ports) < 16 {
		t.Errorf("random start: 32 connections got %d distinct ports", len(ports))
	}
}

// DNAT to a port range: the destination port is chosen in the range, the
// source port kept; when every destination port is taken for this source
// port, the source port moves instead.
func TestNATAllocateDNAT(t *testing.T) {
	n := &NAT{Kind: NATDst, AddrMin: ntAddr("198.18.5.1"), AddrMax: ntAddr("198.18.5.3"), PortMin: 8080, PortMax: 8081}
	tab := ntTable{}
	orig := ntTCP("198.18.0.1", 40000, "198.18.4.80", 80)
	r, ok := ntChoose(t, tab, orig, n, 11)
	if !ok || r.Dst != orig.Src || r.DstPort != 40000 || r.SrcPort < 8080 || r.SrcPort > 8081 || r.Src.Less(n.AddrMin) || n.AddrMax.Less(r.Src) {
		t.Fatalf("got %v %v", r, ok)
	}
	// Take both backend ports of the chosen backend for this client port.
	other := r
	other.SrcPort = 8080 + 8081 - r.SrcPort
	tab[other] = true
	// The same flow again (the same hash, so the same backend) must
	// move its source port.
	r2, _, ok := natAllocate(orig, ntReverse(orig), n, 11, tab.inUse)
	if !ok || r2.Src != r.Src || r2.DstPort == 40000 || r2.DstPort < 1024 {
		t.Fatalf("second: %v %v (first %v)", r2, ok, r)
	}
	// Without a port range the destination port stays.
	n2 := &NAT{Kind: NATDst, AddrMin: ntAddr("198.18.5.1")}
	r3, _, ok := natAllocate(orig, ntReverse(orig), n2, 11, ntTable{}.inUse)
	want := Tuple{Src: n2.AddrMin, Dst: orig.Src, SrcPort: 80, DstPort: 40000, Proto: packet.ProtoTCP, Zone: 1}
	if !ok || r3 != want {
		t.Fatalf("no port range: %v, want %v", r3, want)
	}
}

// DNAT spreads connections over the backends.
func TestNATAllocateDNATSpread(t *testing.T) {
	n := &NAT{Kind: NATDst, AddrMin: ntAddr("198.18.5.1"), AddrMax: ntAddr("198.18.5.3")}
	count := map[netip.Addr]int{}
	for i := range 300 {
		orig := ntTCP("198.18.0.1", uint16(20000+i), "198.18.4.80", 80)
		r, _, ok := natAllocate(orig, ntReverse(orig), n, 42, ntTable{}.inUse)
		if !ok {
			t.Fatal("refused")
		}
		count[r.Src]++
	}
	for a, c := range count {
		if c < 60 {
			t.Errorf("backend %v got %d of 300 connections", a, c)
		}
	}
	if len(count) != 3 {
		t.Errorf("backends used: %v", count)
	}
}

// ICMP echo: the identifier is the port; it is kept when free and moved
// when another client uses it. ICMPv6 echo has no port (as in Open
// vSwitch): a clash refuses the connection.
func TestNATAllocateICMP(t *testing.T) {
	n := &NAT{Kind: NATSrc, AddrMin: ntAddr("198.18.2.10")}
	tab := ntTable{}
	ping := func(src string) Tuple {
		return Tuple{Src: ntAddr(src), Dst: ntAddr("198.18.1.2"), SrcPort: 77, DstPort: uint16(natICMPEchoRequest) << 8, Proto: packet.ProtoICMP, Zone: 1}
	}
	r, ok := ntChoose(t, tab, ping("198.18.0.1"), n, 1)
	if !ok || r.SrcPort != 77 || r.DstPort != 0 || r.Dst != n.AddrMin {
		t.Fatalf("first ping: %v %v", r, ok)
	}
	r, ok = ntChoose(t, tab, ping("198.18.0.2"), n, 1)
	if !ok || r.SrcPort == 77 || r.SrcPort < 1 || r.SrcPort > 511 || r.DstPort != 0 {
		t.Fatalf("second ping: %v %v", r, ok)
	}

	// Keys that hold the identifier in both ports change both.
	both := ping("198.18.0.3")
	bothReply := ntReverse(both)
	bothReply.DstPort = bothReply.SrcPort
	taken := bothReply
	taken.Dst = n.AddrMin
	tab[taken] = true
	r, _, ok = natAllocate(both, bothReply, n, 1, tab.inUse)
	if !ok || r.SrcPort != r.DstPort || r.SrcPort == 77 {
		t.Fatalf("identifier in both ports: %v %v", r, ok)
	}

	n6 := &NAT{Kind: NATSrc, AddrMin: ntAddr("2001:2:0:2::10")}
	ping6 := func(src string) Tuple {
		return Tuple{Src: ntAddr(src), Dst: ntAddr("2001:2:0:1::2"), SrcPort: 77, DstPort: uint16(natICMP6EchoRequest) << 8, Proto: packet.ProtoICMPv6, Zone: 1}
	}
	tab = ntTable{}
	if r, ok := ntChoose(t, tab, ping6("2001:2::1"), n6, 1); !ok || r.SrcPort != 77 {
		t.Fatalf("first ping6: %v %v", r, ok)
	}
	if r, ok := ntChoose(t, tab, ping6("2001:2::2"), n6, 1); ok {
		t.Fatalf("second ping6 with the same id accepted: %v", r)
	}
}

// Protocols without ports get an address only; with a range of
// addresses a clash moves on to the next.
func TestNATAllocateOtherProtocol(t *testing.T) {
	gre := func(src string) Tuple {
		return Tuple{Src: ntAddr(src), Dst: ntAddr("198.18.1.2"), Proto: 47, Zone: 1}
	}
	tab := ntTable{}
	n := &NAT{Kind: NATSrc, AddrMin: ntAddr("198.18.2.10"), AddrMax: ntAddr("198.18.2.11"), PortMin: 1000, PortMax: 2000}
	a, ok1 := ntChoose(t, tab, gre("198.18.0.1"), n, 1)
	b, ok2 := ntChoose(t, tab, gre("198.18.0.2"), n, 1)
	_, ok3 := ntChoose(t, tab, gre("198.18.0.3"), n, 1)
	if !ok1 || !ok2 || ok3 || a.Dst == b.Dst || a.SrcPort != 0 || a.DstPort != 0 {
		t.Fatalf("got %v %v, %v %v, third %v", a, ok1, b, ok2, ok3)
	}
}

// No address keeps the connection's own (port-only NAT); a bare nat or an
// address of the other family chooses nothing.
func TestNATAllocateEdges(t *testing.T) {
	orig := ntTCP("198.18.0.1", 40000, "198.18.1.2", 80)
	r, _, ok := natAllocate(orig, ntReverse(orig), &NAT{Kind: NATSrc, PortMin: 3000, PortMax: 3000}, 1, ntTable{}.inUse)
	if !ok || r.Dst != orig.Src || r.DstPort != 3000 {
		t.Errorf("port only: %v %v", r, ok)
	}
	r, _, ok = natAllocate(orig, ntReverse(orig), &NAT{Kind: NATSrc, AddrMin: ntAddr("0.0.0.0")}, 1, ntTable{}.inUse)
	if !ok || r != ntReverse(orig) {
		t.Errorf("0.0.0.0: %v %v", r, ok)
	}
	if _, _, ok := natAllocate(orig, ntReverse(orig), &NAT{Kind: NATApply}, 1, ntTable{}.inUse); ok {
		t.Error("bare nat chose a tuple")
	}
	if _, _, ok := natAllocate(orig, ntReverse(orig), nil, 1, ntTable{}.inUse); ok {
		t.Error("nil nat chose a tuple")
	}
	if _, _, ok := natAllocate(orig, ntReverse(orig), &NAT{Kind: NATSrc, AddrMin: ntAddr("2001:2::5")}, 1, ntTable{}.inUse); ok {
		t.Error("IPv6 range for an IPv4 connection accepted")
	}
	// A maximum below the minimum is the minimum alone; the full 16-bit
	// port range and the whole IPv4 space do not overflow.
	r, _, ok = natAllocate(orig, ntReverse(orig), &NAT{Kind: NATSrc, AddrMin: ntAddr("198.18.2.10"), AddrMax: ntAddr("198.18.2.1"), PortMin: 1, PortMax: 65535}, 1, ntTable{}.inUse)
	if !ok || r.Dst != ntAddr("198.18.2.10") {
		t.Errorf("reversed range: %v %v", r, ok)
	}
	if _, _, ok = natAllocate(orig, ntReverse(orig), &NAT{Kind: NATSrc, AddrMin: ntAddr("0.0.0.1"), AddrMax: ntAddr("255.255.255.255")}, 1, ntTable{}.inUse); !ok {
		t.Error("whole IPv4 space refused")
	}
}

// IPv6 ranges: offsets carry into the upper 64 bits, and a huge range is
// limited to its first 2^32-1 addresses as in Open vSwitch.
func TestNATAddrArithmetic(t *testing.T) {
	if got := natAddrAdd(ntAddr("2001:2::ffff:ffff:ffff:ffff"), 2); got != ntAddr("2001:2:0:1::1") {
		t.Errorf("carry: %v", got)
	}
	if got := natAddrSpan(ntAddr("2001:2::ffff:ffff:ffff:fffe"), ntAddr("2001:2:0:1::1")); got != 3 {
		t.Errorf("span across 64 bits: %d", got)
	}
	if got := natAddrSpan(ntAddr("2001:2::"), ntAddr("2001:2:ffff::")); got != 0xfffffffe {
		t.Errorf("huge span: %#x", got)
	}
	if got := natAddrAdd(ntAddr("198.18.0.250"), 10); got != ntAddr("198.18.1.4") {
		t.Errorf("IPv4 add: %v", got)
	}
	n := &NAT{Kind: NATDst, AddrMin: ntAddr("2001:2::"), AddrMax: ntAddr("2001:2:ffff::")}
	for i := range 50 {
		orig := Tuple{Src: ntAddr("2001:2::1"), Dst: ntAddr("2001:2:0:4::80"), SrcPort: uint16(1000 + i), DstPort: 80, Proto: packet.ProtoTCP}
		r, _, ok := natAllocate(orig, ntReverse(orig), n, 1, ntTable{}.inUse)
		if !ok || r.Src.Less(n.AddrMin) || natAddrAdd(n.AddrMin, 0xfffffffe).Less(r.Src) {
			t.Fatalf("%v %v", r, ok)
		}
	}
}

// Two hundred connections from one client's port range through SNAT to
// one address all get distinct tuples (the acceptance scenario).
func TestNATAllocateTwoHundred(t *testing.T) {
	n := &NAT{Kind: NATSrc, AddrMin: ntAddr("198.18.2.10")}
	tab := ntTable{}
	for i := range 200 {
		// Clients reuse one small port range from several addresses,
		// so ports clash.
		orig := ntTCP(fmt.Sprintf("198.18.0.%d", 1+i%4), uint16(40000+i/4), "198.18.1.2", 5201)
		if _, ok := ntChoose(t, tab, orig, n, 123); !ok {
			t.Fatalf("connection %d refused", i)
		}
	}
}

func BenchmarkNATAllocate(b *testing.B) {
	n := &NAT{Kind: NATSrc, AddrMin: ntAddr("198.18.2.10"), AddrMax: ntAddr("198.18.2.20")}
	orig := ntTCP("198.18.0.1", 40000, "198.18.1.2", 80)
	rev := ntReverse(orig)
	free := func(Tuple) bool { return false }
	b.ReportAllocs()
	for b.Loop() {
		natAllocate(orig, rev, n, 1, free)
	}
}

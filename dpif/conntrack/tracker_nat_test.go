package conntrack

import (
	"net/netip"
	"strings"
	"testing"

	"gvs/packet"
)

// The tracker with the NAT code: bindings made at commit, applied to
// every packet of the connection, related errors rewritten inside.

func TestNATDNAT(t *testing.T) {
	ct, _ := newTestTracker(t, Config{})
	vip := netip.MustParseAddr("198.18.9.9")
	lb := &NAT{Kind: NATDst, AddrMin: ipB, PortMin: 8080, PortMax: 8080}
	b := tcpPkt(ipA, vip, 40000, 80, seg{flags: fSYN, seq: 1, win: 1000, wscale: -1})
	wantState(t, "syn", run(ct, b, Request{Zone: 2, Commit: true, NAT: lb}), trk|nw|StateDstNAT)
	if b.Key.DstIPv4 != ipB.As4() || b.Key.DstPort != 8080 || !extract(frame(b.Data()[14:]), 2, &lookupCtx{}) {
		t.Fatalf("dnat: %v:%d (or bad checksums)", b.Key.DstIPv4, b.Key.DstPort)
	}
	// The original tuple is the packet's before NAT.
	if b.Key.CTNwDst != vip.As4() || b.Key.CTTpDst != 80 {
		t.Fatalf("orig tuple %v:%d", b.Key.CTNwDst, b.Key.CTTpDst)
	}
	r := tcpPkt(ipB, ipA, 8080, 40000, seg{flags: fSYN | fACK, seq: 7, ack: 2, win: 1000, wscale: -1})
	wantState(t, "reply", run(ct, r, Request{Zone: 2, NAT: &NAT{Kind: NATApply}}), trk|est|rpl|StateSrcNAT)
	if r.Key.SrcIPv4 != vip.As4() || r.Key.SrcPort != 80 {
		t.Fatalf("reply source %v:%d", r.Key.SrcIPv4, r.Key.SrcPort)
	}
	got := dumpAll(ct)
	want := "tcp,orig=(src=198.18.0.1,dst=198.18.9.9,sport=40000,dport=80),reply=(src=198.18.0.2,dst=198.18.0.1,sport=8080,dport=40000),zone=2,protoinfo=(state=ESTABLISHED)"
	if len(got) != 1 || got[0] != want {
		t.Fatalf("dump %q\nwant %q", got, want)
	}
	// ct without nat does not rewrite, but keeps tracking.
	a := tcpPkt(ipA, vip, 40000, 80, seg{flags: fACK, seq: 2, ack: 8, win: 1000, wscale: -1})
	wantState(t, "no nat", run(ct, a, Request{Zone: 2}), trk|est)
	if a.Key.DstIPv4 != vip.As4() {
		t.Fatal("rewritten without nat")
	}
}

func TestNATRelatedICMPError(t *testing.T) {
	ct, _ := newTestTracker(t, Config{})
	snat := &NAT{Kind: NATSrc, AddrMin: ipN}
	b := udpPkt(ipA, ipB, 5000, 53)
	wantState(t, "out", run(ct, b, Request{Commit: true, NAT: snat}), trk|nw|StateSrcNAT)
	sent := append([]byte(nil), b.Data()[14:]...) // as B received it: from N
	// B answers with port unreachable to N, quoting the packet.
	e := icmpError(ipB, ipN, sent)
	wantState(t, "error", run(ct, e, Request{NAT: &NAT{Kind: NATApply}}), trk|rel|rpl|StateDstNAT)
	if e.Key.DstIPv4 != ipA.As4() {
		t.Fatalf("error not un-NATed: %v", e.Key.DstIPv4)
	}
	// The quoted packet is A's again.
	re := frame(e.Data()[14:])
	var ctx lookupCtx
	if !extract(re, 0, &ctx) || !ctx.related {
		t.Fatal("rewritten error does not parse as related (checksums?)")
	}
	quoted := e.Data()[14+20+8:]
	if netip.AddrFrom4([4]byte(quoted[12:16])) != ipA {
		t.Fatalf("quoted source %v", quoted[12:16])
	}
}

func TestNATICMPEchoAndExhaustion(t *testing.T) {
	ct, _ := newTestTracker(t, Config{})
	snat := &NAT{Kind: NATSrc, AddrMin: ipN}
	p := icmpPkt(ipA, ipB, 8, 33)
	wantState(t, "echo", run(ct, p, Request{Commit: true, NAT: snat}), trk|nw|StateSrcNAT)
	if p.Key.SrcIPv4 != ipN.As4() {
		t.Fatal("echo not NATed")
	}
	r := icmpPkt(ipB, ipN, 0, 33)
	wantState(t, "echo reply", run(ct, r, Request{NAT: &NAT{Kind: NATApply}}), trk|est|rpl|StateDstNAT)
	if r.Key.DstIPv4 != ipA.As4() {
		t.Fatal("echo reply not un-NATed")
	}
	// One address and one port: the second connection to the same
	// server port finds no tuple and stays uncommitted.
	one := &NAT{Kind: NATSrc, AddrMin: ipN, PortMin: 5000, PortMax: 5000}
	wantState(t, "first", run(ct, udpPkt(ipA, ipB, 7000, 53), Request{Commit: true, NAT: one}), trk|nw|StateSrcNAT)
	b := udpPkt(ipR, ipB, 7000, 53)
	wantState(t, "exhausted", run(ct, b, Request{Commit: true, NAT: one}), trk|nw)
	if b.Key.SrcIPv4 != ipR.As4() {
		t.Fatal("rewritten though not committed")
	}
	if n := len(dumpAll(ct)); n != 2 {
		t.Fatalf("%d conns", n)
	}
}

func TestNATIPv6AndNoBinding(t *testing.T) {
	ct, _ := newTestTracker(t, Config{})
	n6 := netip.MustParseAddr("2001:2::100")
	b := tcpPkt(ip6A, ip6B, 1000, 80, seg{flags: fSYN, seq: 1, win: 1000, wscale: -1})
	wantState(t, "syn6", run(ct, b, Request{Commit: true, NAT: &NAT{Kind: NATSrc, AddrMin: n6}}), trk|nw|StateSrcNAT)
	if b.Key.SrcIPv6 != n6.As16() || !extract(frame(b.Data()[14:]), 0, &lookupCtx{}) {
		t.Fatal("ipv6 snat")
	}
	r := tcpPkt(ip6B, n6, 80, 1000, seg{flags: fSYN | fACK, seq: 9, ack: 2, win: 1000, wscale: -1})
	wantState(t, "reply6", run(ct, r, Request{NAT: &NAT{Kind: NATApply}}), trk|est|rpl|StateDstNAT)
	if r.Key.DstIPv6 != ip6A.As16() {
		t.Fatal("ipv6 un-snat")
	}
	// A bare nat on a connection without a binding changes nothing.
	run(ct, udpPkt(ipA, ipB, 1, 2), Request{Commit: true})
	u := udpPkt(ipB, ipA, 2, 1)
	wantState(t, "no binding", run(ct, u, Request{NAT: &NAT{Kind: NATApply}}), trk|est|rpl)
	got := strings.Join(dumpAll(ct), "\n")
	if !strings.Contains(got, "reply=(src=2001:2::2,dst=2001:2::100,sport=80,dport=1000)") {
		t.Fatalf("dump %s", got)
	}
	_ = packet.ProtoTCP
}

// A packet NATed by a first ct and sent to a second ct in the same
// zone (the pipeline's commit after nat) is found by its NATed tuple.
func TestNATThenSecondCt(t *testing.T) {
	ct, _ := newTestTracker(t, Config{})
	snat := &NAT{Kind: NATSrc, AddrMin: ipN}
	run(ct, udpPkt(ipA, ipB, 5000, 53), Request{Zone: 1, Commit: true, NAT: snat})
	// Next packet: ct(zone=1,nat) then ct(zone=1,commit).
	b := udpPkt(ipA, ipB, 5000, 53)
	wantState(t, "nat", run(ct, b, Request{Zone: 1, NAT: &NAT{Kind: NATApply}}), trk|nw|StateSrcNAT)
	wantState(t, "second ct", run(ct, b, Request{Zone: 1, Commit: true}), trk|nw|StateSrcNAT)
	if b.Key.CTNwSrc != ipA.As4() || b.Key.SrcIPv4 != ipN.As4() {
		t.Fatalf("orig %v now %v", b.Key.CTNwSrc, b.Key.SrcIPv4)
	}
	if n := len(dumpAll(ct)); n != 1 {
		t.Fatalf("%d conns: the second ct made another", n)
	}
}

// A packet of a NATed connection is rewritten without allocating.
func TestAllocsNATEstablished(t *testing.T) {
	ct, _ := newTestTracker(t, Config{})
	run(ct, udpPkt(ipA, ipB, 5000, 53), Request{Commit: true, NAT: &NAT{Kind: NATSrc, AddrMin: ipN}})
	out := udpPkt(ipA, ipB, 5000, 53)
	in := udpPkt(ipB, ipN, 53, 5000)
	origOut := append([]byte(nil), out.Data()...)
	origIn := append([]byte(nil), in.Data()...)
	req := &Request{NAT: &NAT{Kind: NATApply}}
	if n := testing.AllocsPerRun(500, func() {
		copy(out.Data(), origOut)
		out.Parse()
		out.Key.CTState = 0
		ct.Execute(out, req)
		copy(in.Data(), origIn)
		in.Parse()
		in.Key.CTState = 0
		ct.Execute(in, req)
	}); n != 0 {
		t.Fatalf("%v allocations per NATed packet", n)
	}
	if in.Key.DstIPv4 != ipA.As4() || out.Key.SrcIPv4 != ipN.As4() {
		t.Fatal("not NATed")
	}
}

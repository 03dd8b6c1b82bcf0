package conntrack

import (
	"encoding/binary"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"gvs/packet"
)

func TestUDPStates(t *testing.T) {
	ct, clk := newTestTracker(t, Config{})
	commit := Request{Commit: true}
	wantState(t, "first", run(ct, udpPkt(ipA, ipB, 5000, 53), commit), trk|nw)
	timeout := func() time.Duration {
		var d time.Duration
		ct.Dump(AllZones, func(e *Entry) bool { d = e.Timeout; return false })
		return d
	}
	if d := timeout(); d != 60*time.Second {
		t.Fatalf("udp_first %v", d)
	}
	// More packets from the same side: still +new (udp_single).
	wantState(t, "second", run(ct, udpPkt(ipA, ipB, 5000, 53), Request{}), trk|nw)
	wantState(t, "reply", run(ct, udpPkt(ipB, ipA, 53, 5000), Request{}), trk|est|rpl)
	if d := timeout(); d != 30*time.Second {
		t.Fatalf("udp_multiple %v", d)
	}
	wantState(t, "after reply", run(ct, udpPkt(ipA, ipB, 5000, 53), Request{}), trk|est)
	clk.advance(31 * time.Second)
	wantState(t, "expired", run(ct, udpPkt(ipB, ipA, 53, 5000), Request{}), trk|nw)
}

func TestUncommittedIsNotTracked(t *testing.T) {
	ct, _ := newTestTracker(t, Config{})
	wantState(t, "no commit", run(ct, udpPkt(ipA, ipB, 5000, 53), Request{}), trk|nw)
	wantState(t, "reply of nothing", run(ct, udpPkt(ipB, ipA, 53, 5000), Request{}), trk|nw)
	if n := ct.Stats().Conns; n != 0 {
		t.Fatalf("%d conns without commit", n)
	}
}

func TestICMPEcho(t *testing.T) {
	for _, v6 := range []bool{false, true} {
		ct, _ := newTestTracker(t, Config{})
		a, b, req, rep, name := ipA, ipB, uint8(8), uint8(0), "icmp"
		if v6 {
			a, b, req, rep, name = ip6A, ip6B, 128, 129, "icmpv6"
		}
		commit := Request{Commit: true}
		wantState(t, "request", run(ct, icmpPkt(a, b, req, 77), commit), trk|nw)
		wantState(t, "reply", run(ct, icmpPkt(b, a, rep, 77), commit), trk|est|rpl)
		wantState(t, "request again", run(ct, icmpPkt(a, b, req, 77), commit), trk|est)
		// A reply with another id is not of the connection, and cannot
		// open one.
		wantState(t, "stray reply", run(ct, icmpPkt(b, a, rep, 78), commit), trk|inv)
		got := dumpAll(ct)
		want := name + ",orig=(src=" + a.String() + ",dst=" + b.String() + ",id=77,type=" + itoa(req) + ",code=0),reply=(src=" + b.String() + ",dst=" + a.String() + ",id=77,type=" + itoa(rep) + ",code=0)"
		if len(got) != 1 || got[0] != want {
			t.Fatalf("dump %q, want %q", got, want)
		}
	}
}

func itoa(v uint8) string { return strconv.Itoa(int(v)) }

// icmpError builds an ICMP(v6) error from r to dst quoting the first
// bytes of inner (an IP packet).
func icmpError(r, dst netip.Addr, inner []byte) *packet.Buffer {
	quote := inner[:min(len(inner), 28+20)]
	if r.Is4() {
		return frame(ipPacket(r, dst, packet.ProtoICMP, icmpHdr(3, 3, 0, quote)))
	}
	return frame(ipPacket(r, dst, packet.ProtoICMPv6, icmpHdr(1, 4, 0, inner[:min(len(inner), 40+20)])))
}

func TestICMPRelated(t *testing.T) {
	for _, v6 := range []bool{false, true} {
		ct, _ := newTestTracker(t, Config{})
		a, b, r := ipA, ipB, ipR
		if v6 {
			a, b, r = ip6A, ip6B, netip.MustParseAddr("2001:2::99")
		}
		commit := Request{Zone: 3, Commit: true}
		orig := ipPacket(a, b, packet.ProtoUDP, udpHdr(5000, 53, 10))
		wantState(t, "udp", run(ct, frame(orig), commit), trk|nw)
		// The error comes back to A about its packet: related, reply.
		pkt := icmpError(r, a, orig)
		wantState(t, "error", run(ct, pkt, Request{Zone: 3}), trk|rel|rpl)
		if pkt.Key.CTNwProto != packet.ProtoUDP || pkt.Key.CTTpSrc != 5000 || pkt.Key.CTTpDst != 53 {
			t.Fatalf("orig tuple of related: proto %d ports %d %d", pkt.Key.CTNwProto, pkt.Key.CTTpSrc, pkt.Key.CTTpDst)
		}
		// An error about a packet of no connection is invalid, as is
		// one in another zone.
		other := ipPacket(a, b, packet.ProtoUDP, udpHdr(5001, 53, 10))
		wantState(t, "unrelated", run(ct, icmpError(r, a, other), Request{Zone: 3}), trk|inv)
		wantState(t, "other zone", run(ct, icmpError(r, a, orig), Request{Zone: 4}), trk|inv)
		// An error quoting a packet that did not come from its destination.
		wantState(t, "spoofed", run(ct, icmpError(r, b, orig), Request{Zone: 3}), trk|inv)
	}
}

func TestZonesIsolated(t *testing.T) {
	ct, _ := newTestTracker(t, Config{})
	wantState(t, "zone 1", run(ct, udpPkt(ipA, ipB, 1, 2), Request{Zone: 1, Commit: true}), trk|nw)
	wantState(t, "zone 2 reply", run(ct, udpPkt(ipB, ipA, 2, 1), Request{Zone: 2}), trk|nw)
	wantState(t, "zone 1 reply", run(ct, udpPkt(ipB, ipA, 2, 1), Request{Zone: 1}), trk|est|rpl)
	n := 0
	ct.Dump(2, func(*Entry) bool { n++; return true })
	if n != 0 {
		t.Fatal("zone 2 has entries")
	}
	if ct.Flush(2, nil) != 0 || ct.Flush(1, nil) != 1 {
		t.Fatal("flush by zone")
	}
}

func TestZoneChangeResetsState(t *testing.T) {
	ct, _ := newTestTracker(t, Config{})
	run(ct, udpPkt(ipA, ipB, 1, 2), Request{Zone: 1, Commit: true})
	b := udpPkt(ipB, ipA, 2, 1)
	wantState(t, "zone 1", run(ct, b, Request{Zone: 1}), trk|est|rpl)
	wantState(t, "then zone 2", run(ct, b, Request{Zone: 2}), trk|nw)
	if b.Key.CTZone != 2 {
		t.Fatalf("zone %d", b.Key.CTZone)
	}
}

func TestLimits(t *testing.T) {
	ct, _ := newTestTracker(t, Config{MaxConns: 10})
	ct.SetZoneLimits([]ZoneLimit{{Zone: 5, Limit: 3}, {Zone: DefaultZoneLimit, Limit: 4}})
	commit := func(zone uint16, port uint16) uint32 {
		return run(ct, udpPkt(ipA, ipB, port, 53), Request{Zone: zone, Commit: true})
	}
	for p := uint16(1); p <= 3; p++ {
		commit(5, p)
	}
	// Over the zone's limit: +new, but not committed.
	wantState(t, "over zone limit", commit(5, 4), trk|nw)
	if got := ct.ZoneLimits([]uint16{5, 6}); got[1] != (ZoneLimit{Zone: 5, Limit: 3, Count: 3}) || got[2] != (ZoneLimit{Zone: 6, Limit: 4}) || got[0].Limit != 4 {
		t.Fatalf("limits %+v", got)
	}
	// Established connections keep working at the limit.
	wantState(t, "established at limit", run(ct, udpPkt(ipB, ipA, 53, 1), Request{Zone: 5}), trk|est|rpl)
	for p := uint16(1); p <= 5; p++ {
		commit(6, p) // default limit 4 per zone
	}
	for p := uint16(1); p <= 5; p++ {
		commit(7, p) // table limit 10: 3+4+3
	}
	s := ct.Stats()
	if s.Conns != 10 || s.DroppedFull != 1+1+2 {
		t.Fatalf("stats %+v", s)
	}
	ct.DelZoneLimits([]uint16{5})
	ct.SetMaxConns(100)
	wantState(t, "after del", commit(5, 9), trk|nw)
	if got := ct.ZoneLimits(nil); len(got) != 1 {
		t.Fatalf("limits %+v", got)
	}
	if ct.ZoneLimits([]uint16{5})[1].Count != 4 {
		t.Fatal("zone 5 count")
	}
}

func TestTimeoutPolicy(t *testing.T) {
	ct, clk := newTestTracker(t, Config{})
	ct.SetTimeoutPolicy(7, TimeoutPolicy{"udp_first": 5, "udp_multiple": 9, "icmp_first": 2})
	ct.SetZonePolicy(3, 7)
	run(ct, udpPkt(ipA, ipB, 1, 2), Request{Zone: 3, Commit: true})
	run(ct, udpPkt(ipA, ipB, 1, 2), Request{Zone: 4, Commit: true})
	left := map[uint16]time.Duration{}
	ct.Dump(AllZones, func(e *Entry) bool { left[e.Zone] = e.Timeout; return true })
	if left[3] != 5*time.Second || left[4] != 60*time.Second {
		t.Fatalf("timeouts %v", left)
	}
	clk.advance(6 * time.Second)
	ct.sweep(ct.now())
	if n := ct.Stats().Conns; n != 1 {
		t.Fatalf("%d conns after policy expiry", n)
	}
	// Replies move to udp_multiple of the policy.
	run(ct, udpPkt(ipA, ipB, 1, 2), Request{Zone: 3, Commit: true})
	run(ct, udpPkt(ipB, ipA, 2, 1), Request{Zone: 3})
	ct.Dump(3, func(e *Entry) bool { left[3] = e.Timeout; return true })
	if left[3] != 9*time.Second {
		t.Fatalf("udp_multiple %v", left[3])
	}
	// An explicit policy in the request wins; a deleted policy is the
	// defaults.
	ct.DelTimeoutPolicy(7)
	run(ct, udpPkt(ipB, ipA, 2, 1), Request{Zone: 3})
	ct.Dump(3, func(e *Entry) bool { left[3] = e.Timeout; return true })
	if left[3] != 30*time.Second {
		t.Fatalf("after delete %v", left[3])
	}
}

func TestMarkLabelAndOrigTuple(t *testing.T) {
	ct, _ := newTestTracker(t, Config{})
	var label, mask [16]byte
	label[15], mask[15] = 0x5, 0xff
	b := tcpPkt(ipA, ipB, 40000, 5201, seg{flags: fSYN, seq: 1, win: 1000, wscale: -1})
	run(ct, b, Request{Zone: 1, Commit: true, SetMark: true, Mark: 5, MarkMask: 0xffffffff, SetLabel: true, Label: label, LabelMask: mask})
	if b.Key.CTMark != 5 || b.Key.CTLabel != label {
		t.Fatalf("mark %d label %x", b.Key.CTMark, b.Key.CTLabel)
	}
	r := tcpPkt(ipB, ipA, 5201, 40000, seg{flags: fSYN | fACK, seq: 9, ack: 2, win: 1000, wscale: -1})
	wantState(t, "reply", run(ct, r, Request{Zone: 1}), trk|est|rpl)
	k := &r.Key
	if k.CTMark != 5 || k.CTZone != 1 || k.CTNwSrc != ipA.As4() || k.CTNwDst != ipB.As4() || k.CTTpSrc != 40000 || k.CTTpDst != 5201 || k.CTNwProto != 6 {
		t.Fatalf("reply key %+v", k)
	}
	got := dumpAll(ct)
	if len(got) != 1 || !strings.Contains(got[0], ",zone=1,mark=5,labels=0x5,protoinfo=(state=ESTABLISHED)") {
		t.Fatalf("dump %q", got)
	}
	// Invalid packets carry no tuple.
	bad := frame(ipPacket(ipA, ipB, packet.ProtoTCP, tcpHdr(1, 2, seg{flags: fSYN, wscale: -1})[:10]))
	wantState(t, "truncated", run(ct, bad, Request{Zone: 1}), trk|inv)
	if bad.Key.CTNwProto != 0 || bad.Key.CTMark != 0 {
		t.Fatal("invalid packet has ct fields")
	}
}

func TestBadChecksumInvalid(t *testing.T) {
	ct, _ := newTestTracker(t, Config{})
	b := udpPkt(ipA, ipB, 1, 2)
	b.Data()[len(b.Data())-1] ^= 0xff
	wantState(t, "bad l4 csum", run(ct, b, Request{Commit: true}), trk|inv)
	b = udpPkt(ipA, ipB, 1, 2)
	b.Data()[14+8] ^= 1 // TTL: IPv4 header checksum now wrong
	wantState(t, "bad ip csum", run(ct, b, Request{Commit: true}), trk|inv)
	b = udpPkt(ipA, ipB, 1, 2)
	b.Data()[len(b.Data())-1] ^= 0xff
	b.HasVnet, b.Vnet.Flags = true, packet.VnetDataValid
	wantState(t, "offloaded csum", run(ct, b, Request{Commit: true}), trk|nw)
}

func TestForce(t *testing.T) {
	ct, _ := newTestTracker(t, Config{})
	run(ct, udpPkt(ipA, ipB, 1, 2), Request{Commit: true, SetMark: true, Mark: 1, MarkMask: ^uint32(0)})
	// Seen from B with force: A's connection goes, B's starts.
	b := udpPkt(ipB, ipA, 2, 1)
	wantState(t, "forced", run(ct, b, Request{Commit: true, Force: true}), trk|nw)
	got := dumpAll(ct)
	if len(got) != 1 || !strings.HasPrefix(got[0], "udp,orig=(src=198.18.0.2,dst=198.18.0.1,sport=2,dport=1)") || strings.Contains(got[0], "mark") {
		t.Fatalf("dump %q", got)
	}
	// Same direction with force: nothing changes.
	wantState(t, "forced same dir", run(ct, udpPkt(ipB, ipA, 2, 1), Request{Commit: true, Force: true}), trk|nw)
	if ct.Stats().Conns != 1 {
		t.Fatal("conns")
	}
}

func TestSecondCtSameZoneKeepsState(t *testing.T) {
	ct, _ := newTestTracker(t, Config{})
	b := udpPkt(ipA, ipB, 1, 2)
	// ct(zone=1),then ct(commit,zone=1): the first finds nothing.
	wantState(t, "first ct", run(ct, b, Request{Zone: 1}), trk|nw)
	wantState(t, "commit", run(ct, b, Request{Zone: 1, Commit: true}), trk|nw)
	// Established: the second ct in the zone does not run the tracker
	// again (the state stays the first ct's).
	r := udpPkt(ipB, ipA, 2, 1)
	wantState(t, "reply", run(ct, r, Request{Zone: 1}), trk|est|rpl)
	wantState(t, "reply again", run(ct, r, Request{Zone: 1, Commit: true, SetMark: true, Mark: 9, MarkMask: 0xff}), trk|est|rpl)
	if r.Key.CTMark != 9 {
		t.Fatal("mark not set on the fast path")
	}
}

func TestFlushTuple(t *testing.T) {
	ct, _ := newTestTracker(t, Config{})
	run(ct, udpPkt(ipA, ipB, 1, 2), Request{Zone: 1, Commit: true})
	run(ct, udpPkt(ipA, ipB, 1, 3), Request{Zone: 1, Commit: true})
	run(ct, icmpPkt(ipA, ipB, 8, 7), Request{Commit: true})
	var m Match
	if err := ParseTuple("ct_nw_src=198.18.0.1,ct_nw_dst=198.18.0.2,ct_nw_proto=17,ct_tp_src=1,ct_tp_dst=2", &m, false); err != nil {
		t.Fatal(err)
	}
	if n := FlushMatching(ct, AllZones, &m); n != 0 {
		t.Fatalf("5-tuple without zone flushed %d (zone 0)", n)
	}
	if n := FlushMatching(ct, 1, &m); n != 1 {
		t.Fatalf("flushed %d", n)
	}
	m = Match{}
	if err := ParseTuple("ct_nw_proto=1,icmp_type=8,icmp_code=0,icmp_id=7,ct_nw_dst=198.18.0.2,ct_nw_src=198.18.0.1", &m, false); err != nil {
		t.Fatal(err)
	}
	if n := FlushMatching(ct, AllZones, &m); n != 1 {
		t.Fatalf("icmp flushed %d", n)
	}
	m = Match{}
	if err := ParseTuple("ct_nw_src=198.18.0.2", &m, true); err != nil {
		t.Fatal(err)
	}
	if n := FlushMatching(ct, AllZones, &m); n != 1 {
		t.Fatalf("reply partial flushed %d", n)
	}
}

func TestParseTupleErrors(t *testing.T) {
	for in, want := range map[string]string{
		"ct_nw_src":                           "field ct_nw_src missing value",
		"ct_nw_src=1.2.3.4,ct_ipv6_dst=::1":   "the L3 protocol does not match ::1",
		"ct_nw_src=1.2.3.4,ct_nw_src=1.2.3.5": "ct_nw_src is set multiple times",
		"ct_nw_src=1.2.3":                     "failed to parse field ct_nw_src",
		"ct_tp_src=70000":                     "failed to parse field ct_tp_src",
		"icmp_type=8":                         "invalid L4 fields",
		"foo=1":                               "invalid conntrack tuple field: foo",
		"ct_tp_src=1":                         "port is set without protocol",
		"ct_ipv6_src=1.2.3.4":                 "failed to parse field ct_ipv6_src",
	} {
		var m Match
		err := ParseTuple(in, &m, false)
		if err == nil || err.Error() != want {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

func TestFormatEntryVerbose(t *testing.T) {
	ct, _ := newTestTracker(t, Config{})
	handshake(t, ct, 0)
	var got string
	ct.Dump(AllZones, func(e *Entry) bool { e.ID = 0; got = FormatEntry(e, true); return false })
	want := "tcp,orig=(src=198.18.0.1,dst=198.18.0.2,sport=40000,dport=5201),reply=(src=198.18.0.2,dst=198.18.0.1,sport=5201,dport=40000),id=0,status=0,protoinfo=(state_orig=ESTABLISHED,state_reply=ESTABLISHED,wscale_orig=7,wscale_reply=7,flags_orig=WINDOW_SCALE,flags_reply=WINDOW_SCALE)"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	ct.Dump(AllZones, func(e *Entry) bool { got = FormatEntryStats(e, false, true); return false })
	if !strings.Contains(got, "),timeout=86400,protoinfo=(state=ESTABLISHED)") {
		t.Fatalf("stats: %s", got)
	}
}

func TestIPv6TCP(t *testing.T) {
	ct, _ := newTestTracker(t, Config{})
	wantState(t, "syn", run(ct, tcpPkt(ip6A, ip6B, 1000, 80, seg{flags: fSYN, seq: 1, win: 1000, wscale: -1}), Request{Commit: true}), trk|nw)
	r := tcpPkt(ip6B, ip6A, 80, 1000, seg{flags: fSYN | fACK, seq: 50, ack: 2, win: 1000, wscale: -1})
	wantState(t, "syn-ack", run(ct, r, Request{}), trk|est|rpl)
	if r.Key.CTIPv6Src != ip6A.As16() || r.Key.CTNwSrc != [4]byte{} {
		t.Fatal("ipv6 orig tuple")
	}
	got := dumpAll(ct)
	if len(got) != 1 || !strings.HasPrefix(got[0], "tcp,orig=(src=2001:2::1,dst=2001:2::2,sport=1000,dport=80),reply=(src=2001:2::2,dst=2001:2::1,sport=80,dport=1000)") {
		t.Fatalf("dump %q", got)
	}
}

func TestOtherProtocolAndFragments(t *testing.T) {
	ct, _ := newTestTracker(t, Config{})
	gre := frame(ipPacket(ipA, ipB, 47, make([]byte, 8)))
	wantState(t, "gre", run(ct, gre, Request{Commit: true}), trk|nw)
	wantState(t, "gre reply", run(ct, frame(ipPacket(ipB, ipA, 47, make([]byte, 8))), Request{}), trk|est|rpl)
	if got := dumpAll(ct); len(got) != 1 || got[0] != "47,orig=(src=198.18.0.1,dst=198.18.0.2,sport=0,dport=0),reply=(src=198.18.0.2,dst=198.18.0.1,sport=0,dport=0)" {
		t.Fatalf("dump %q", got)
	}
	ip := ipPacket(ipA, ipB, packet.ProtoUDP, udpHdr(1, 2, 10))
	binary.BigEndian.PutUint16(ip[6:], 0x2000) // more fragments
	ip[10], ip[11] = 0, 0
	binary.BigEndian.PutUint16(ip[10:], ^packet.Checksum(ip[:20], 0))
	wantState(t, "fragment", run(ct, frame(ip), Request{Commit: true}), trk|inv)
}

func TestNATStubSNAT(t *testing.T) {
	ct, _ := newTestTracker(t, Config{})
	nat := &NAT{Kind: NATSrc, AddrMin: ipN}
	b := tcpPkt(ipA, ipB, 40000, 5201, seg{flags: fSYN, seq: 1, win: 1000, wscale: -1})
	wantState(t, "snat syn", run(ct, b, Request{Commit: true, NAT: nat}), trk|nw|StateSrcNAT)
	if b.Key.SrcIPv4 != ipN.As4() {
		t.Fatalf("source not rewritten: %v", b.Key.SrcIPv4)
	}
	reparsed := frame(b.Data()[14:])
	if reparsed.Key.SrcIPv4 != ipN.As4() || !extract(reparsed, 0, &lookupCtx{}) {
		t.Fatal("rewritten packet does not parse or has bad checksums")
	}
	// The reply comes to the NAT address and is un-NATed to A by a bare nat.
	r := tcpPkt(ipB, ipN, 5201, 40000, seg{flags: fSYN | fACK, seq: 7, ack: 2, win: 1000, wscale: -1})
	wantState(t, "reply", run(ct, r, Request{NAT: &NAT{Kind: NATApply}}), trk|est|rpl|StateDstNAT)
	if r.Key.DstIPv4 != ipA.As4() {
		t.Fatalf("reply not un-NATed: %v", r.Key.DstIPv4)
	}
	got := dumpAll(ct)
	if len(got) != 1 || !strings.HasPrefix(got[0], "tcp,orig=(src=198.18.0.1,dst=198.18.0.2,sport=40000,dport=5201),reply=(src=198.18.0.2,dst=198.18.1.100,sport=5201,dport=40000)") {
		t.Fatalf("dump %q", got)
	}
	// A second connection from another host with the same port gets
	// another port.
	b2 := tcpPkt(ipR, ipB, 40000, 5201, seg{flags: fSYN, seq: 1, win: 1000, wscale: -1})
	run(ct, b2, Request{Commit: true, NAT: nat})
	if b2.Key.SrcPort == 40000 || b2.Key.SrcIPv4 != ipN.As4() {
		t.Fatalf("second snat: %v:%d", b2.Key.SrcIPv4, b2.Key.SrcPort)
	}
}

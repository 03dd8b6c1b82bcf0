package conntrack

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net/netip"
	"testing"

	"gvs/packet"
)

// ntFamily holds the addresses of one test network: client A, server B,
// NAT address N (SNAT) and virtual address V (DNAT), router R.
type ntFamily struct {
	name          string
	a, b, n, v, r netip.Addr
}

var ntFamilies = []ntFamily{
	{"ipv4", ntAddr("198.18.0.1"), ntAddr("198.18.1.2"), ntAddr("198.18.2.10"), ntAddr("198.18.4.80"), ntAddr("198.18.3.1")},
	{"ipv6", ntAddr("2001:2::1"), ntAddr("2001:2:0:1::2"), ntAddr("2001:2:0:2::10"), ntAddr("2001:2:0:4::80"), ntAddr("2001:2:0:3::1")},
}

// ntProto is one L4 protocol under test.
type ntProto struct {
	name  string
	proto uint8
	ports bool // the tuple has ports (TCP, UDP, SCTP) or an echo id (ICMP)
	icmp  bool
	noCsm bool // UDP with checksum 0
}

var ntProtos = []ntProto{
	{name: "tcp", proto: packet.ProtoTCP, ports: true},
	{name: "udp", proto: packet.ProtoUDP, ports: true},
	{name: "udp-nocsum", proto: packet.ProtoUDP, ports: true, noCsm: true},
	{name: "sctp", proto: packet.ProtoSCTP, ports: true},
	{name: "icmp-echo", ports: true, icmp: true},
	{name: "udplite", proto: packet.ProtoUDPLite},
	{name: "gre", proto: 47},
}

func (p ntProto) ipProto(f ntFamily) uint8 {
	if p.icmp {
		if f.a.Is6() {
			return packet.ProtoICMPv6
		}
		return packet.ProtoICMP
	}
	return p.proto
}

// ntTuple builds a tuple; for ICMP echo sport is the identifier and
// DstPort the type and code.
func ntTuple(f ntFamily, p ntProto, src, dst netip.Addr, sport, dport uint16, request bool) Tuple {
	t := Tuple{Src: src, Dst: dst, Proto: p.ipProto(f), Zone: 3}
	switch {
	case p.icmp:
		t.SrcPort = sport
		t.DstPort = uint16(ntEchoType(f, request)) << 8
	case p.ports:
		t.SrcPort, t.DstPort = sport, dport
	}
	return t
}

func ntEchoType(f ntFamily, request bool) uint8 {
	switch {
	case f.a.Is6() && request:
		return natICMP6EchoRequest
	case f.a.Is6():
		return natICMP6EchoReply
	case request:
		return natICMPEchoRequest
	}
	return natICMPEchoReply
}

// ntPacket builds a packet of protocol p.
func ntPacket(f ntFamily, p ntProto, src, dst netip.Addr, sport, dport uint16, request bool) ntPkt {
	k := ntPkt{src: src, dst: dst, proto: p.ipProto(f), payload: []byte("hello, conntrack!"), udpNoCsum: p.noCsm}
	switch {
	case p.icmp:
		k.icmpType, k.icmpID = ntEchoType(f, request), sport
	case p.ports:
		k.sport, k.dport = sport, dport
	}
	return k
}

// ntCase is one rewrite: a connection, a packet, and what it must become.
type ntCase struct {
	name        string
	orig, reply Tuple
	kind        NATKind
	isReply     bool
	related     bool
	in, want    []byte // IP packets
	state       uint32
}

// ntCases builds, for every family and protocol, SNAT (A:1000 -> B:80
// leaves as N:2000) and DNAT (A:1000 -> V:80 goes to B:8080) in both
// directions.
func ntCases() []ntCase {
	var cs []ntCase
	for _, f := range ntFamilies {
		for _, p := range ntProtos {
			pre := f.name + "/" + p.name + "/"
			// SNAT: orig A:1000->B:80, reply B:80->N:2000.
			orig := ntTuple(f, p, f.a, f.b, 1000, 80, true)
			reply := ntTuple(f, p, f.b, f.n, 80, 2000, false)
			if p.icmp {
				reply = ntTuple(f, p, f.b, f.n, 2000, 0, false)
			}
			sid := uint16(2000) // the NATed echo id
			cs = append(cs,
				ntCase{pre + "snat/original", orig, reply, NATSrc, false, false,
					ntIP(ntPacket(f, p, f.a, f.b, 1000, 80, true)),
					ntIP(ntPacket(f, p, f.n, f.b, ntPick(p, 2000, sid), 80, true)), StateSrcNAT},
				ntCase{pre + "snat/reply", orig, reply, NATSrc, true, false,
					ntIP(ntPacket(f, p, f.b, f.n, ntPick(p, 80, sid), 2000, false)),
					ntIP(ntPacket(f, p, f.b, f.a, ntPick(p, 80, 1000), 1000, false)), StateDstNAT},
			)
			// DNAT: orig A:1000->V:80, reply B:8080->A:1000.
			orig = ntTuple(f, p, f.a, f.v, 1000, 80, true)
			reply = ntTuple(f, p, f.b, f.a, 8080, 1000, false)
			if p.icmp {
				reply = ntTuple(f, p, f.b, f.a, 1000, 0, false)
			}
			cs = append(cs,
				ntCase{pre + "dnat/original", orig, reply, NATDst, false, false,
					ntIP(ntPacket(f, p, f.a, f.v, 1000, 80, true)),
					ntIP(ntPacket(f, p, f.a, f.b, 1000, ntPick(p, 8080, 0), true)), StateDstNAT},
				ntCase{pre + "dnat/reply", orig, reply, NATDst, true, false,
					ntIP(ntPacket(f, p, f.b, f.a, ntPick(p, 8080, 1000), 1000, false)),
					ntIP(ntPacket(f, p, f.v, f.a, ntPick(p, 80, 1000), 1000, false)), StateSrcNAT},
			)
		}
	}
	return cs
}

// ntPick is port for a protocol with ports, echoID for ICMP echo (which
// the builder takes as sport), anything for one without.
func ntPick(p ntProto, port, echoID uint16) uint16 {
	if p.icmp {
		return echoID
	}
	return port
}

// ntErrorPkt builds an ICMP or ICMPv6 error from src to dst quoting q
// (cut to cut bytes of the quoted packet when cut > 0).
func ntErrorPkt(src, dst netip.Addr, q []byte, cut int) []byte {
	if cut > 0 && cut < len(q) {
		q = q[:cut]
	}
	e := ntPkt{src: src, dst: dst, proto: packet.ProtoICMP, icmpType: 3, icmpCode: 4, quote: q}
	if src.Is6() {
		e.proto, e.icmpType, e.icmpCode = packet.ProtoICMPv6, 1, 4
	}
	return ntIP(e)
}

// ntRelatedCases: ICMP errors of SNAT and DNAT connections in both
// directions, quoting whole packets and (IPv4) the minimum 8 bytes of L4.
func ntRelatedCases() []ntCase {
	var cs []ntCase
	for _, f := range ntFamilies {
		for _, p := range ntProtos {
			if !p.ports {
				continue
			}
			for _, cut := range []int{0, 28} {
				if cut != 0 && f.a.Is6() {
					cut = 48
				}
				pre := fmt.Sprintf("%s/%s/cut%d/", f.name, p.name, cut)
				q := func(src, dst netip.Addr, sport, dport uint16, req bool) []byte {
					return ntIP(ntPacket(f, p, src, dst, sport, dport, req))
				}
				// SNAT: orig A:1000->B:80, reply B:80->N:2000.
				orig := ntTuple(f, p, f.a, f.b, 1000, 80, true)
				reply := ntTuple(f, p, f.b, f.n, 80, 2000, false)
				if p.icmp {
					reply = ntTuple(f, p, f.b, f.n, 2000, 0, false)
				}
				cs = append(cs,
					// R tells N that N:2000->B:80 could not pass.
					ntCase{pre + "snat/reply-error", orig, reply, NATSrc, true, true,
						ntErrorPkt(f.r, f.n, q(f.n, f.b, ntPick(p, 2000, 2000), 80, true), cut),
						ntErrorPkt(f.r, f.a, q(f.a, f.b, 1000, 80, true), cut), StateDstNAT},
					// A tells B that B:80->A:1000 could not be delivered.
					ntCase{pre + "snat/original-error", orig, reply, NATSrc, false, true,
						ntErrorPkt(f.a, f.b, q(f.b, f.a, ntPick(p, 80, 1000), 1000, false), cut),
						ntErrorPkt(f.n, f.b, q(f.b, f.n, ntPick(p, 80, 2000), 2000, false), cut), StateSrcNAT},
				)
				// DNAT: orig A:1000->V:80, reply B:8080->A:1000.
				orig = ntTuple(f, p, f.a, f.v, 1000, 80, true)
				reply = ntTuple(f, p, f.b, f.a, 8080, 1000, false)
				if p.icmp {
					reply = ntTuple(f, p, f.b, f.a, 1000, 0, false)
				}
				cs = append(cs,
					// B tells A that A:1000->B:8080 could not pass.
					ntCase{pre + "dnat/reply-error", orig, reply, NATDst, true, true,
						ntErrorPkt(f.b, f.a, q(f.a, f.b, 1000, ntPick(p, 8080, 0), true), cut),
						ntErrorPkt(f.v, f.a, q(f.a, f.v, 1000, 80, true), cut), StateSrcNAT},
					// A tells V that V:80->A:1000 could not be delivered.
					ntCase{pre + "dnat/original-error", orig, reply, NATDst, false, true,
						ntErrorPkt(f.a, f.v, q(f.v, f.a, ntPick(p, 80, 1000), 1000, false), cut),
						ntErrorPkt(f.a, f.b, q(f.b, f.a, ntPick(p, 8080, 1000), 1000, false), cut), StateDstNAT},
				)
			}
		}
	}
	return cs
}

// ntRun runs one case on a frame (with a VLAN tag when vlan) and checks
// the bytes, the checksums and the key.
func ntRun(t *testing.T, c ntCase, vlan bool) {
	t.Helper()
	b := ntBuffer(ntFrame(c.in, vlan))
	if err := ntCheckIP(c.in); err != nil {
		t.Fatalf("test input: %v", err)
	}
	if err := ntCheckIP(c.want); err != nil {
		t.Fatalf("test expectation: %v", err)
	}
	state := natPacket(b, &c.orig, &c.reply, c.kind, c.isReply, c.related)
	if state != c.state {
		t.Errorf("state %#x, want %#x", state, c.state)
	}
	got := ntIPOf(b.Data())
	if err := ntCheckIP(got); err != nil {
		t.Errorf("after NAT: %v", err)
	}
	if !bytes.Equal(got, c.want) {
		t.Errorf("after NAT:\n got %x\nwant %x", got, c.want)
	}
	var fresh packet.Key
	fresh.InPort = b.Key.InPort
	packet.Parse(b.Data(), &fresh)
	if fresh != b.Key {
		t.Errorf("key out of step with the bytes:\n key %+v\nbytes %+v", b.Key, fresh)
	}
}

func TestNATPacket(t *testing.T) {
	for _, c := range ntCases() {
		t.Run(c.name, func(t *testing.T) {
			ntRun(t, c, false)
			ntRun(t, c, true)
		})
	}
}

func TestNATPacketRelated(t *testing.T) {
	for _, c := range ntRelatedCases() {
		t.Run(c.name, func(t *testing.T) { ntRun(t, c, false) })
	}
}

// A connection without NAT, or NATApply, leaves the packet alone.
func TestNATPacketNoKind(t *testing.T) {
	c := ntCases()[0]
	b := ntBuffer(ntFrame(c.in, false))
	before := append([]byte(nil), b.Data()...)
	if s := natPacket(b, &c.orig, &c.reply, NATApply, false, false); s != 0 {
		t.Errorf("state %#x, want 0", s)
	}
	if !bytes.Equal(before, b.Data()) {
		t.Error("packet changed")
	}
}

// IPv4 options move the L4 header; the rewrite must follow the offsets.
func TestNATPacketIPv4Options(t *testing.T) {
	f, p := ntFamilies[0], ntProtos[0]
	in := ntPacket(f, p, f.a, f.b, 1000, 80, true)
	in.ipOptions = 3
	want := ntPacket(f, p, f.n, f.b, 2000, 80, true)
	want.ipOptions = 3
	ntRun(t, ntCase{
		orig: ntTuple(f, p, f.a, f.b, 1000, 80, true), reply: ntTuple(f, p, f.b, f.n, 80, 2000, false),
		kind: NATSrc, in: ntIP(in), want: ntIP(want), state: StateSrcNAT,
	}, true)
}

// A later fragment has no L4 header: only the address changes.
func TestNATPacketLaterFragment(t *testing.T) {
	f, p := ntFamilies[0], ntProto{name: "frag", proto: packet.ProtoUDP}
	in := ntPacket(f, p, f.a, f.b, 0, 0, true)
	in.ipFrag = 100
	want := in
	want.src = f.n
	ntRun(t, ntCase{
		orig: ntTuple(f, ntProtos[1], f.a, f.b, 1000, 80, true), reply: ntTuple(f, ntProtos[1], f.b, f.n, 80, 2000, false),
		kind: NATSrc, in: ntIP(in), want: ntIP(want), state: StateSrcNAT,
	}, false)
}

// ntPartial turns the TCP or UDP checksum of a frame into a partial one
// (the pseudo-header sum, virtio NEEDS_CSUM) and marks the buffer so.
func ntPartial(t *testing.T, b *packet.Buffer) {
	t.Helper()
	d := b.Data()
	l4 := int(b.Offsets.L4)
	field := 16
	if b.Key.IPProto == packet.ProtoUDP {
		field = 6
	}
	n := len(d) - l4
	var sum uint16
	if b.Key.EtherType == packet.EtherTypeIPv4 {
		sum = packet.PseudoHeaderSumV4(b.Key.SrcIPv4, b.Key.DstIPv4, b.Key.IPProto, uint16(n))
	} else {
		sum = packet.PseudoHeaderSumV6(b.Key.SrcIPv6, b.Key.DstIPv6, b.Key.IPProto, uint32(n))
	}
	binary.BigEndian.PutUint16(d[l4+field:], sum)
	b.HasVnet = true
	b.Vnet = packet.VnetHdr{Flags: packet.VnetNeedsCsum, CsumStart: uint16(l4), CsumOffset: uint16(field)}
	if !packet.IsPartialChecksum(d, &b.Key, b.Offsets) {
		t.Fatal("test setup: checksum not partial")
	}
}

// A partial checksum stays partial, for the new pseudo-header, and
// completes to the checksum of the rewritten packet.
func TestNATPacketPartialChecksum(t *testing.T) {
	for _, c := range ntCases() {
		if _, proto, _ := ntL4(c.in); proto != packet.ProtoTCP && proto != packet.ProtoUDP {
			continue
		}
		if bytes.Contains([]byte(c.name), []byte("nocsum")) {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			b := ntBuffer(ntFrame(c.in, false))
			ntPartial(t, b)
			natPacket(b, &c.orig, &c.reply, c.kind, c.isReply, c.related)
			if !packet.IsPartialChecksum(b.Data(), &b.Key, b.Offsets) {
				t.Fatal("checksum no longer the partial sum of the new pseudo-header")
			}
			if !b.CompleteVnetChecksum() {
				t.Fatal("CompleteVnetChecksum failed")
			}
			if got := ntIPOf(b.Data()); !bytes.Equal(got, c.want) {
				t.Errorf("completed:\n got %x\nwant %x", got, c.want)
			}
		})
	}
}

// A related error on a buffer marked NEEDS_CSUM gets a complete ICMP
// checksum and loses the mark.
func TestNATPacketRelatedClearsPartial(t *testing.T) {
	c := ntRelatedCases()[0]
	b := ntBuffer(ntFrame(c.in, false))
	b.HasVnet = true
	b.Vnet = packet.VnetHdr{Flags: packet.VnetNeedsCsum, CsumStart: b.Offsets.L4, CsumOffset: 2}
	natPacket(b, &c.orig, &c.reply, c.kind, c.isReply, c.related)
	if b.Vnet.Flags&packet.VnetNeedsCsum != 0 {
		t.Error("NEEDS_CSUM still set")
	}
	if got := ntIPOf(b.Data()); !bytes.Equal(got, c.want) {
		t.Errorf("got %x\nwant %x", got, c.want)
	}
}

// Truncated and malformed frames never panic, whatever the offsets say.
func TestNATPacketShortFrames(t *testing.T) {
	for _, c := range append(ntCases(), ntRelatedCases()...) {
		full := ntFrame(c.in, false)
		for n := 0; n <= len(full); n++ {
			b := ntBuffer(full)
			b.SetLen(n) // keep the key and offsets of the whole frame
			natPacket(b, &c.orig, &c.reply, c.kind, c.isReply, c.related)
		}
	}
}

func TestNATPacketAllocs(t *testing.T) {
	cases := []ntCase{ntCases()[0], ntCases()[1], ntRelatedCases()[0], ntRelatedCases()[len(ntRelatedCases())-1]}
	for _, c := range cases {
		b := ntBuffer(ntFrame(c.in, false))
		n := testing.AllocsPerRun(100, func() {
			natPacket(b, &c.orig, &c.reply, c.kind, c.isReply, c.related)
		})
		if n != 0 {
			t.Errorf("%s: %v allocations per packet", c.name, n)
		}
	}
}

func BenchmarkNATPacket(b *testing.B) {
	// Two SNAT connections, A:1000 -> N:2000 and back, so that every
	// iteration really rewrites the packet.
	f, p := ntFamilies[0], ntProtos[0]
	there := ntCase{orig: ntTuple(f, p, f.a, f.b, 1000, 80, true), reply: ntTuple(f, p, f.b, f.n, 80, 2000, false)}
	back := ntCase{orig: ntTuple(f, p, f.n, f.b, 2000, 80, true), reply: ntTuple(f, p, f.b, f.a, 80, 1000, false)}
	buf := ntBuffer(ntFrame(ntIP(ntPacket(f, p, f.a, f.b, 1000, 80, true)), false))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		c := &there
		if i%2 == 1 {
			c = &back
		}
		natPacket(buf, &c.orig, &c.reply, NATSrc, false, false)
	}
}

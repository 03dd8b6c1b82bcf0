package dpif

import (
	"bytes"
	"testing"
	"time"

	"gvs/packet"
)

// execOn runs actions (ending with an output to port 2) on frame through
// Execute and returns what port 2 got.
func execOn(t *testing.T, fx *fixture, frame []byte, actions Actions) []byte {
	t.Helper()
	fx.devs[2].TakeSent()
	if err := fx.dp.Execute(frame, 1, append(actions, Output(2))); err != nil {
		t.Fatal(err)
	}
	got := fx.devs[2].WaitSent(1, 5*time.Second)
	if len(got) != 1 {
		t.Fatalf("port 2 got %d frames", len(got))
	}
	return got[0].Data
}

// TestSetActionsRewriteFramesAndChecksums: every set action gives the
// frame that building it with the new values gives, checksums included
// (the IPv4 header's, TCP/UDP/ICMPv6 over the pseudo-header, ICMP, SCTP's
// CRC32c), and the result verifies as a receiver checks it.
func TestSetActionsRewriteFramesAndChecksums(t *testing.T) {
	fx := newFixture(t, Config{}, 2)
	full := packet.FullMask()
	payload := []byte("some payload bytes, odd length")
	base4 := func(proto uint8) fspec {
		return fspec{dst: mac(2), src: mac(1), src4: ip4("198.18.0.1"), dst4: ip4("198.18.0.2"), tos: 0x10, ttl: 64,
			proto: proto, sport: 1000, dport: 2000, icmpType: 8, icmpRest: 0x12345678, payload: payload}
	}
	base6 := func(proto uint8) fspec {
		return fspec{v6: true, dst: mac(2), src: mac(1), src6: ip6("2001:db8::1"), dst6: ip6("2001:db8::2"), tos: 0x20, ttl: 64,
			label: 0x12345, proto: proto, sport: 1000, dport: 2000, icmpType: 128, payload: payload}
	}
	key := func(f func(k *packet.Key)) *packet.Key {
		var k packet.Key
		f(&k)
		return &k
	}
	mask := func(f func(m *packet.Mask)) *packet.Mask {
		var m packet.Mask
		f(&m)
		return &m
	}
	ndPayload := func(target [16]byte, sll, tll [6]byte) []byte {
		p := append([]byte(nil), target[:]...)
		p = append(p, 1, 1)
		p = append(p, sll[:]...)
		p = append(p, 2, 1)
		return append(p, tll[:]...)
	}
	cases := []struct {
		name     string
		in       fspec
		actions  Actions
		want     func(s *fspec)
		wantSame bool // the set does not apply to this packet
	}{
		{"eth", base4(packet.ProtoUDP), Actions{Set(AttrEthernet, key(func(k *packet.Key) { k.SrcMAC, k.DstMAC = mac(7), mac(8) }))},
			func(s *fspec) { s.src, s.dst = mac(7), mac(8) }, false},
		{"eth masked", base4(packet.ProtoUDP), Actions{SetMasked(AttrEthernet, key(func(k *packet.Key) { k.DstMAC = [6]byte{0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff} }),
			mask(func(m *packet.Mask) { m.DstMAC = [6]byte{0, 0, 0, 0xff, 0xff, 0xff} }))},
			func(s *fspec) { s.dst = [6]byte{0x02, 0, 0, 0xdd, 0xee, 0xff} }, false},
		{"ipv4 src tcp", base4(packet.ProtoTCP), Actions{SetMasked(AttrIPv4, key(func(k *packet.Key) { k.SrcIPv4 = ip4("198.19.7.9") }), mask(func(m *packet.Mask) { m.SrcIPv4 = full.SrcIPv4 }))},
			func(s *fspec) { s.src4 = ip4("198.19.7.9") }, false},
		{"ipv4 dst udp partial mask", base4(packet.ProtoUDP), Actions{SetMasked(AttrIPv4, key(func(k *packet.Key) { k.DstIPv4 = ip4("10.20.30.40") }),
			mask(func(m *packet.Mask) { m.DstIPv4 = [4]byte{0, 0, 255, 255} }))},
			func(s *fspec) { s.dst4 = ip4("198.18.30.40") }, false},
		{"ipv4 udp without checksum", func() fspec { s := base4(packet.ProtoUDP); s.noUDPCsum = true; return s }(),
			Actions{SetMasked(AttrIPv4, key(func(k *packet.Key) { k.SrcIPv4 = ip4("198.19.0.1") }), mask(func(m *packet.Mask) { m.SrcIPv4 = full.SrcIPv4 }))},
			func(s *fspec) { s.src4 = ip4("198.19.0.1") }, false},
		{"ipv6 udp with a zero checksum keeps it", func() fspec { s := base6(packet.ProtoUDP); s.noUDPCsum = true; return s }(),
			Actions{SetMasked(AttrIPv6, key(func(k *packet.Key) { k.SrcIPv6 = ip6("2001:db8::7") }), mask(func(m *packet.Mask) { m.SrcIPv6 = full.SrcIPv6 })),
				Set(AttrUDP, key(func(k *packet.Key) { k.SrcPort, k.DstPort = 7, 8 }))},
			func(s *fspec) { s.src6, s.sport, s.dport = ip6("2001:db8::7"), 7, 8 }, false},
		{"ipv4 ttl tos icmp", base4(packet.ProtoICMP), Actions{SetMasked(AttrIPv4, key(func(k *packet.Key) { k.IPTTL, k.IPTOS = 63, 0xb8 }),
			mask(func(m *packet.Mask) { m.IPTTL, m.IPTOS = 0xff, 0xfc }))},
			func(s *fspec) { s.ttl, s.tos = 63, 0xb8 }, false},
		{"ipv4 full set sctp", base4(packet.ProtoSCTP), Actions{Set(AttrIPv4, key(func(k *packet.Key) {
			k.SrcIPv4, k.DstIPv4, k.IPTOS, k.IPTTL = ip4("198.18.9.9"), ip4("198.18.8.8"), 0x04, 9
		}))}, func(s *fspec) { s.src4, s.dst4, s.tos, s.ttl = ip4("198.18.9.9"), ip4("198.18.8.8"), 0x04, 9 }, false},
		{"ipv4 set on ipv6 does nothing", base6(packet.ProtoUDP), Actions{SetMasked(AttrIPv4, key(func(k *packet.Key) { k.SrcIPv4 = ip4("1.2.3.4") }), &full)},
			nil, true},
		{"ipv6 src dst tcp", base6(packet.ProtoTCP), Actions{SetMasked(AttrIPv6, key(func(k *packet.Key) {
			k.SrcIPv6, k.DstIPv6 = ip6("2001:db8:1::7"), ip6("2001:db8:2::8")
		}), mask(func(m *packet.Mask) { m.SrcIPv6, m.DstIPv6 = full.SrcIPv6, full.DstIPv6 }))}, func(s *fspec) { s.src6, s.dst6 = ip6("2001:db8:1::7"), ip6("2001:db8:2::8") }, false},
		{"ipv6 dst udp", base6(packet.ProtoUDP), Actions{SetMasked(AttrIPv6, key(func(k *packet.Key) { k.DstIPv6 = ip6("fe80::99") }), mask(func(m *packet.Mask) { m.DstIPv6 = full.DstIPv6 }))},
			func(s *fspec) { s.dst6 = ip6("fe80::99") }, false},
		{"ipv6 src icmpv6", base6(packet.ProtoICMPv6), Actions{SetMasked(AttrIPv6, key(func(k *packet.Key) { k.SrcIPv6 = ip6("fe80::1") }), mask(func(m *packet.Mask) { m.SrcIPv6 = full.SrcIPv6 }))},
			func(s *fspec) { s.src6 = ip6("fe80::1") }, false},
		{"ipv6 tclass label hlimit", base6(packet.ProtoUDP), Actions{SetMasked(AttrIPv6, key(func(k *packet.Key) { k.IPTOS, k.FlowLabel, k.IPTTL = 0xfc, 0xabcde, 1 }),
			mask(func(m *packet.Mask) { m.IPTOS, m.FlowLabel, m.IPTTL = 0xff, 0xfffff, 0xff }))},
			func(s *fspec) { s.tos, s.label, s.ttl = 0xfc, 0xabcde, 1 }, false},
		{"tcp ports", base4(packet.ProtoTCP), Actions{Set(AttrTCP, key(func(k *packet.Key) { k.SrcPort, k.DstPort = 443, 8443 }))},
			func(s *fspec) { s.sport, s.dport = 443, 8443 }, false},
		{"udp dst port masked", base6(packet.ProtoUDP), Actions{SetMasked(AttrUDP, key(func(k *packet.Key) { k.DstPort = 0x1234 }), mask(func(m *packet.Mask) { m.DstPort = 0xff00 }))},
			func(s *fspec) { s.dport = 0x12d0 }, false},
		{"udp on tcp does nothing", base4(packet.ProtoTCP), Actions{Set(AttrUDP, key(func(k *packet.Key) { k.SrcPort = 1 }))}, nil, true},
		{"sctp ports", base4(packet.ProtoSCTP), Actions{Set(AttrSCTP, key(func(k *packet.Key) { k.SrcPort, k.DstPort = 3868, 3869 }))},
			func(s *fspec) { s.sport, s.dport = 3868, 3869 }, false},
		{"icmp type code", base4(packet.ProtoICMP), Actions{Set(AttrICMP, key(func(k *packet.Key) { k.ICMPType, k.ICMPCode = 0, 3 }))},
			func(s *fspec) { s.icmpType, s.icmpCode = 0, 3 }, false},
		{"icmpv6 type", base6(packet.ProtoICMPv6), Actions{SetMasked(AttrICMPv6, key(func(k *packet.Key) { k.ICMPType = 129 }), mask(func(m *packet.Mask) { m.ICMPType = 0xff }))},
			func(s *fspec) { s.icmpType = 129 }, false},
		{"nd target sll tll", func() fspec {
			s := base6(packet.ProtoICMPv6)
			s.icmpType, s.payload = 135, ndPayload(ip6("2001:db8::2"), mac(1), mac(2))
			return s
		}(), Actions{Set(AttrND, key(func(k *packet.Key) { k.NDTarget, k.ARPSHA, k.ARPTHA = ip6("2001:db8::77"), mac(0x11), mac(0x22) }))},
			func(s *fspec) { s.payload = ndPayload(ip6("2001:db8::77"), mac(0x11), mac(0x22)) }, false},
		{"arp", fspec{dst: mac(2), src: mac(1), arp: &arpSpec{op: 1, sha: mac(1), spa: ip4("198.18.0.1"), tpa: ip4("198.18.0.2")}},
			Actions{SetMasked(AttrARP, key(func(k *packet.Key) { k.ARPOp, k.ARPTHA, k.DstIPv4 = 2, mac(9), ip4("198.18.0.9") }),
				mask(func(m *packet.Mask) { m.ARPOp, m.ARPTHA, m.DstIPv4 = 0xffff, full.ARPTHA, full.DstIPv4 }))},
			func(s *fspec) {
				s.arp = &arpSpec{op: 2, sha: mac(1), spa: ip4("198.18.0.1"), tha: mac(9), tpa: ip4("198.18.0.9")}
			}, false},
		{"vlan-tagged ipv4 ttl", func() fspec { s := base4(packet.ProtoTCP); s.vid = 10; return s }(),
			Actions{SetMasked(AttrIPv4, key(func(k *packet.Key) { k.IPTTL = 1 }), mask(func(m *packet.Mask) { m.IPTTL = 0xff }))},
			func(s *fspec) { s.ttl = 1 }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := buildFrame(c.in)
			checkChecksums(t, in)
			got := execOn(t, fx, in, c.actions)
			want := in
			if !c.wantSame {
				s := c.in
				c.want(&s)
				want = buildFrame(s)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("frame\n got % x\nwant % x", got, want)
			}
			checkChecksums(t, got)
		})
	}
}

// TestSetActionsKeepPartialChecksums: on a frame whose TCP checksum is
// partial (virtio NEEDS_CSUM: the field holds the pseudo-header sum), an
// address change updates that sum and a port change leaves it, so the
// checksum completed on output verifies.
func TestSetActionsKeepPartialChecksums(t *testing.T) {
	s := fspec{dst: mac(2), src: mac(1), src4: ip4("198.18.0.1"), dst4: ip4("198.18.0.2"), ttl: 64, proto: packet.ProtoTCP, sport: 1, dport: 2, payload: []byte("data")}
	frame := buildFrame(s)
	var k packet.Key
	var o packet.Offsets
	packet.ParseOffsets(frame, &k, &o)
	seg := frame[o.L4:]
	ph := packet.PseudoHeaderSumV4(k.SrcIPv4, k.DstIPv4, k.IPProto, uint16(len(seg)))
	seg[16], seg[17] = byte(ph>>8), byte(ph)

	b := packet.NewBuffer(packet.DefaultHeadroom, 2048)
	b.SetLen(copy(b.Room(), frame))
	b.HasVnet = true
	b.Vnet = packet.VnetHdr{Flags: packet.VnetNeedsCsum, CsumStart: o.L4, CsumOffset: 16}
	b.Parse()
	var v packet.Key
	v.SrcIPv4, v.SrcPort = ip4("203.0.113.5"), 4242
	full := packet.FullMask()
	applySet(b, SetMasked(AttrIPv4, &v, &full).Set)
	applySet(b, SetMasked(AttrTCP, &v, &packet.Mask{SrcPort: 0xffff}).Set)
	d := b.Data()
	if !packet.CompletePartialChecksum(d, int(o.L4), 16) {
		t.Fatal("complete failed")
	}
	checkChecksums(t, d)
	if b.Key.SrcIPv4 != v.SrcIPv4 || b.Key.SrcPort != 4242 {
		t.Fatalf("key not updated: %+v", b.Key)
	}
}

// TestSetUpdatesTheKey: after a set, the buffer's key shows the new
// values (a following hash or recirculation sees the packet as it is).
func TestSetUpdatesTheKey(t *testing.T) {
	frame := buildFrame(fspec{dst: mac(2), src: mac(1), src4: ip4("198.18.0.1"), dst4: ip4("198.18.0.2"), ttl: 64, proto: packet.ProtoUDP, sport: 1, dport: 2})
	b := packet.NewBuffer(packet.DefaultHeadroom, 2048)
	b.SetLen(copy(b.Room(), frame))
	b.Parse()
	var v packet.Key
	v.DstIPv4, v.IPTTL, v.DstPort, v.PktMark, v.SkbPriority = ip4("198.18.5.5"), 7, 99, 0xab, 3
	full := packet.FullMask()
	for _, a := range []Action{SetMasked(AttrIPv4, &v, &full), Set(AttrUDP, &v), SetPktMark(0xab, 0xff), SetSkbPriority(3, ^uint32(0))} {
		applySet(b, a.Set)
	}
	var reparsed packet.Key
	reparsed = b.Key
	packet.Parse(b.Data(), &reparsed)
	if reparsed != b.Key {
		t.Fatalf("key after sets\n got %+v\nwant %+v", b.Key, reparsed)
	}
	if b.Key.PktMark != 0xab || b.Key.SkbPriority != 3 || b.Key.IPTTL != 7 || b.Key.DstPort != 99 {
		t.Fatalf("key %+v", b.Key)
	}
}

// TestSetIPv6DstWithRoutingHeader: with segments left in a routing
// header, the L4 checksum covers the final destination, so rewriting the
// IPv6 destination leaves it as it was.
func TestSetIPv6DstWithRoutingHeader(t *testing.T) {
	udp := []byte{0, 1, 0, 2, 0, 8, 0x12, 0x34}
	rh := []byte{packet.ProtoUDP, 2, 0, 1, 0, 0, 0, 0}
	rh = append(rh, make([]byte, 16)...)
	frame := buildFrame(fspec{v6: true, dst: mac(2), src: mac(1), src6: ip6("2001:db8::1"), dst6: ip6("2001:db8::2"), ttl: 64, proto: packet.ProtoRouting, payload: append(rh, udp...)})
	for _, segsLeft := range []byte{1, 0} {
		f := bytes.Clone(frame)
		f[14+40+3] = segsLeft
		b := packet.NewBuffer(packet.DefaultHeadroom, 2048)
		b.SetLen(copy(b.Room(), f))
		b.Parse()
		v := packet.Key{DstIPv6: ip6("2001:db8::99")}
		applySet(b, SetMasked(AttrIPv6, &v, &packet.Mask{DstIPv6: packet.FullMask().DstIPv6}).Set)
		d := b.Data()
		if !bytes.Equal(d[14+24:14+40], v.DstIPv6[:]) {
			t.Fatal("destination not written")
		}
		csum := d[len(d)-2:]
		if changed := !bytes.Equal(csum, []byte{0x12, 0x34}); changed != (segsLeft == 0) {
			t.Fatalf("segments left %d: checksum changed %v", segsLeft, changed)
		}
	}
}

package packet

import (
	"testing"
)

// Expected keys start from these and change what the case is about.
func l2Key(et uint16, tags ...VLANTag) Key {
	k := Key{DstMAC: macB, SrcMAC: macA, EtherType: et}
	copy(k.VLANs[:], tags)
	return k
}

func v4Key(proto uint8, edit func(*Key)) Key {
	k := l2Key(EtherTypeIPv4)
	k.SrcIPv4, k.DstIPv4, k.IPProto, k.IPTTL = ip4A, ip4B, proto, 64
	if edit != nil {
		edit(&k)
	}
	return k
}

func v6Key(proto uint8, edit func(*Key)) Key {
	k := l2Key(EtherTypeIPv6)
	k.SrcIPv6, k.DstIPv6, k.IPProto, k.IPTTL = ip6A, ip6B, proto, 255
	if edit != nil {
		edit(&k)
	}
	return k
}

func ports(sp, dp uint16) func(*Key) {
	return func(k *Key) { k.SrcPort, k.DstPort = sp, dp }
}

type parseCase struct {
	name   string
	frame  []byte
	status Status
	key    Key
	off    Offsets
}

var (
	tagQ  = VLANTag{TPID: EtherTypeVLAN, TCI: 0x2064} // PCP 1, VID 100
	tagAD = VLANTag{TPID: EtherTypeQinQ, TCI: 0x0fff}
	v4TCP = ipv4Spec{proto: ProtoTCP, ttl: 64}
	v4UDP = ipv4Spec{proto: ProtoUDP, ttl: 64}
)

func parseCases() []parseCase {
	syn := TCPFlagSYN | TCPFlagACK | TCPFlagECE
	return []parseCase{
		{"tcp4", cat(ether(EtherTypeIPv4), ipv4(ipv4Spec{proto: ProtoTCP, ttl: 64, tos: 0xb8}, tcp(40000, 443, syn, 0, []byte("hello")))),
			StatusOK, v4Key(ProtoTCP, func(k *Key) { k.SrcPort, k.DstPort, k.TCPFlags, k.IPTOS = 40000, 443, syn, 0xb8 }), Offsets{14, 34}},
		{"tcp4 options", cat(ether(EtherTypeIPv4), ipv4(ipv4Spec{proto: ProtoTCP, ttl: 64, options: []byte{1, 1, 1, 0}}, tcp(1, 2, TCPFlagNS|TCPFlagFIN, 3, nil))),
			StatusOK, v4Key(ProtoTCP, func(k *Key) { k.SrcPort, k.DstPort, k.TCPFlags = 1, 2, TCPFlagNS|TCPFlagFIN }), Offsets{14, 38}},
		{"udp4 padded", pad(cat(ether(EtherTypeIPv4), ipv4(v4UDP, udp(53, 5353, []byte{1})))),
			StatusOK, v4Key(ProtoUDP, ports(53, 5353)), Offsets{14, 34}},
		{"icmp4", cat(ether(EtherTypeIPv4), ipv4(ipv4Spec{proto: ProtoICMP, ttl: 64}, icmp(8, 0))),
			StatusOK, v4Key(ProtoICMP, func(k *Key) { k.ICMPType = 8 }), Offsets{14, 34}},
		{"sctp4", cat(ether(EtherTypeIPv4), ipv4(ipv4Spec{proto: ProtoSCTP, ttl: 64}, sctp(3868, 3869))),
			StatusOK, v4Key(ProtoSCTP, ports(3868, 3869)), Offsets{14, 34}},
		{"ipv4 dont-fragment", cat(ether(EtherTypeIPv4), ipv4(ipv4Spec{proto: ProtoUDP, ttl: 64, frag: 0x4000}, udp(1, 2, nil))),
			StatusOK, v4Key(ProtoUDP, ports(1, 2)), Offsets{14, 34}},
		{"ipv4 first fragment", cat(ether(EtherTypeIPv4), ipv4(ipv4Spec{proto: ProtoUDP, ttl: 64, frag: 0x2000}, udp(1, 2, make([]byte, 16)))),
			StatusOK, v4Key(ProtoUDP, func(k *Key) { k.SrcPort, k.DstPort, k.IPFrag = 1, 2, FragAny }), Offsets{14, 34}},
		{"ipv4 later fragment", cat(ether(EtherTypeIPv4), ipv4(ipv4Spec{proto: ProtoUDP, ttl: 64, frag: 185}, udp(1, 2, nil))),
			StatusOK, v4Key(ProtoUDP, func(k *Key) { k.IPFrag = FragAny | FragLater }), Offsets{14, 0}},
		{"ipv4 last fragment", cat(ether(EtherTypeIPv4), ipv4(ipv4Spec{proto: ProtoUDP, ttl: 64, frag: 0x0001}, []byte{1, 2, 3, 4, 5, 6, 7, 8})),
			StatusOK, v4Key(ProtoUDP, func(k *Key) { k.IPFrag = FragAny | FragLater }), Offsets{14, 0}},
		{"vlan tcp4", cat(ether(EtherTypeIPv4, tagQ), ipv4(v4TCP, tcp(5, 6, TCPFlagRST, 0, nil))),
			StatusOK, v4Key(ProtoTCP, func(k *Key) { k.VLANs[0], k.SrcPort, k.DstPort, k.TCPFlags = tagQ, 5, 6, TCPFlagRST }), Offsets{18, 38}},
		{"qinq udp6", cat(ether(EtherTypeIPv6, tagAD, tagQ), ipv6(ipv6Spec{next: ProtoUDP, hop: 255}, udp(7, 8, nil))),
			StatusOK, v6Key(ProtoUDP, func(k *Key) { k.VLANs, k.SrcPort, k.DstPort = [2]VLANTag{tagAD, tagQ}, 7, 8 }), Offsets{22, 62}},
		{"three tags", cat(ether(EtherTypeIPv4, tagAD, tagQ, tagQ), ipv4(v4TCP, tcp(1, 2, 0, 0, nil))),
			StatusOK, l2Key(EtherTypeVLAN, tagAD, tagQ), Offsets{22, 0}},
		{"tcp6", cat(ether(EtherTypeIPv6), ipv6(ipv6Spec{next: ProtoTCP, hop: 255, tc: 0x2e, flowLabel: 0xabcde}, tcp(22, 50000, TCPFlagPSH|TCPFlagACK, 0, nil))),
			StatusOK, v6Key(ProtoTCP, func(k *Key) {
				k.IPTOS, k.FlowLabel, k.SrcPort, k.DstPort, k.TCPFlags = 0x2e, 0xabcde, 22, 50000, TCPFlagPSH|TCPFlagACK
			}), Offsets{14, 54}},
		{"ipv6 ext chain", cat(ether(EtherTypeIPv6), ipv6(ipv6Spec{next: ProtoHopByHop, hop: 255},
			cat(ext6(ProtoDstOpts, 0), ext6(ProtoRouting, 1), ext6(ProtoUDP, 0), udp(9, 10, nil)))),
			StatusOK, v6Key(ProtoUDP, ports(9, 10)), Offsets{14, 54 + 8 + 16 + 8}},
		{"ipv6 ah", cat(ether(EtherTypeIPv6), ipv6(ipv6Spec{next: ProtoAH, hop: 255},
			cat([]byte{ProtoTCP, 4, 0, 0}, make([]byte, 20), tcp(1, 2, TCPFlagSYN, 0, nil)))),
			StatusOK, v6Key(ProtoTCP, func(k *Key) { k.SrcPort, k.DstPort, k.TCPFlags = 1, 2, TCPFlagSYN }), Offsets{14, 54 + 24}},
		{"ipv6 esp", cat(ether(EtherTypeIPv6), ipv6(ipv6Spec{next: ProtoESP, hop: 255}, make([]byte, 32))),
			StatusOK, v6Key(ProtoESP, nil), Offsets{14, 54}},
		{"ipv6 first fragment", cat(ether(EtherTypeIPv6), ipv6(ipv6Spec{next: ProtoFragment, hop: 255}, cat(frag6(ProtoUDP, 0, true), udp(11, 12, make([]byte, 8))))),
			StatusOK, v6Key(ProtoUDP, func(k *Key) { k.SrcPort, k.DstPort, k.IPFrag = 11, 12, FragAny }), Offsets{14, 62}},
		{"ipv6 atomic fragment", cat(ether(EtherTypeIPv6), ipv6(ipv6Spec{next: ProtoFragment, hop: 255}, cat(frag6(ProtoUDP, 0, false), udp(11, 12, make([]byte, 8))))),
			StatusOK, v6Key(ProtoUDP, func(k *Key) { k.SrcPort, k.DstPort = 11, 12 }), Offsets{14, 62}},
		{"ipv6 later fragment", cat(ether(EtherTypeIPv6), ipv6(ipv6Spec{next: ProtoFragment, hop: 255}, cat(frag6(ProtoUDP, 181, false), udp(11, 12, nil)))),
			StatusOK, v6Key(ProtoUDP, func(k *Key) { k.IPFrag = FragAny | FragLater }), Offsets{14, 0}},
		{"icmp6", cat(ether(EtherTypeIPv6), ipv6(ipv6Spec{next: ProtoICMPv6, hop: 255}, icmp(128, 0))),
			StatusOK, v6Key(ProtoICMPv6, func(k *Key) { k.ICMPType = 128 }), Offsets{14, 54}},
		{"nd solicit sll", cat(ether(EtherTypeIPv6), ipv6(ipv6Spec{next: ProtoICMPv6, hop: 255}, nd(135, 0, ip6B, ndOpt(1, macA)))),
			StatusOK, v6Key(ProtoICMPv6, func(k *Key) { k.ICMPType, k.NDTarget, k.ARPSHA, k.NDOptionsType = 135, ip6B, macA, 1 }), Offsets{14, 54}},
		{"nd advert tll flags", cat(ether(EtherTypeIPv6), ipv6(ipv6Spec{next: ProtoICMPv6, hop: 255}, nd(136, 0x60000000, ip6A, ndOpt(2, macB)))),
			StatusOK, v6Key(ProtoICMPv6, func(k *Key) {
				k.ICMPType, k.NDReserved, k.NDTarget, k.ARPTHA, k.NDOptionsType = 136, 0x60000000, ip6A, macB, 2
			}), Offsets{14, 54}},
		{"nd both options, unknown one skipped", cat(ether(EtherTypeIPv6), ipv6(ipv6Spec{next: ProtoICMPv6, hop: 255},
			nd(136, 0, ip6A, cat([]byte{14, 1, 0, 0, 0, 0, 0, 0}, ndOpt(2, macB), ndOpt(1, macA))))),
			StatusOK, v6Key(ProtoICMPv6, func(k *Key) { k.ICMPType, k.NDTarget, k.ARPSHA, k.ARPTHA, k.NDOptionsType = 136, ip6A, macA, macB, 2 }), Offsets{14, 54}},
		{"nd option twice is invalid", cat(ether(EtherTypeIPv6), ipv6(ipv6Spec{next: ProtoICMPv6, hop: 255},
			nd(135, 0, ip6A, cat(ndOpt(1, macA), ndOpt(1, macB))))),
			StatusOK, v6Key(ProtoICMPv6, func(k *Key) { k.ICMPType, k.NDOptionsType = 135, 1 }), Offsets{14, 54}},
		{"nd zero-length option stops", cat(ether(EtherTypeIPv6), ipv6(ipv6Spec{next: ProtoICMPv6, hop: 255},
			nd(135, 0, ip6A, cat([]byte{1, 0, 0, 0, 0, 0, 0, 0}, ndOpt(1, macA))))),
			StatusOK, v6Key(ProtoICMPv6, func(k *Key) { k.ICMPType, k.NDTarget = 135, ip6A }), Offsets{14, 54}},
		{"nd target cut", cat(ether(EtherTypeIPv6), ipv6(ipv6Spec{next: ProtoICMPv6, hop: 255}, nd(135, 7, ip6A, nil)[:20])),
			StatusOK, v6Key(ProtoICMPv6, func(k *Key) { k.ICMPType, k.NDReserved = 135, 7 }), Offsets{14, 54}},
		{"nd with a code is not nd", cat(ether(EtherTypeIPv6), ipv6(ipv6Spec{next: ProtoICMPv6, hop: 255}, func() []byte { b := nd(135, 0, ip6A, ndOpt(1, macA)); b[1] = 1; return b }())),
			StatusOK, v6Key(ProtoICMPv6, func(k *Key) { k.ICMPType, k.ICMPCode = 135, 1 }), Offsets{14, 54}},
		{"icmp4 number in ipv6 is not icmp", cat(ether(EtherTypeIPv6), ipv6(ipv6Spec{next: ProtoICMP, hop: 255}, icmp(8, 0))),
			StatusOK, v6Key(ProtoICMP, nil), Offsets{14, 54}},
		{"arp request", pad(cat(ether(EtherTypeARP), arp(1, EtherTypeIPv4, 1))),
			StatusOK, func() Key {
				k := l2Key(EtherTypeARP)
				k.ARPOp, k.ARPSHA, k.SrcIPv4, k.ARPTHA, k.DstIPv4 = 1, macA, ip4A, macB, ip4B
				return k
			}(), Offsets{14, 0}},
		{"rarp reply", pad(cat(ether(EtherTypeRARP), arp(1, EtherTypeIPv4, 4))),
			StatusOK, func() Key {
				k := l2Key(EtherTypeRARP)
				k.ARPOp, k.ARPSHA, k.SrcIPv4, k.ARPTHA, k.DstIPv4 = 4, macA, ip4A, macB, ip4B
				return k
			}(), Offsets{14, 0}},
		{"arp other hardware", pad(cat(ether(EtherTypeARP), arp(6, EtherTypeIPv4, 1))),
			StatusOK, l2Key(EtherTypeARP), Offsets{14, 0}},
		{"llc stp", pad(cat(macB[:], macA[:], put16(38), []byte{0x42, 0x42, 0x03, 0, 0})),
			StatusOK, l2Key(EtherTypeNone), Offsets{14, 0}},
		{"snap ipv4", cat(macB[:], macA[:], put16(8+48), []byte{0xaa, 0xaa, 0x03, 0, 0, 0}, put16(EtherTypeIPv4), ipv4(v4UDP, udp(1, 2, nil))),
			StatusOK, v4Key(ProtoUDP, ports(1, 2)), Offsets{22, 42}},
		{"unknown ethertype", pad(cat(ether(0x88cc), []byte{1, 2, 3})),
			StatusOK, l2Key(0x88cc), Offsets{14, 0}},

		// Malformed and truncated frames.
		{"empty", nil, StatusTruncatedL2, Key{}, Offsets{}},
		{"short ethernet", macB[:], StatusTruncatedL2, Key{}, Offsets{}},
		{"cut vlan", cat(macB[:], macA[:], put16(EtherTypeVLAN), []byte{0, 1, 8}),
			StatusTruncatedL2, l2Key(0), Offsets{}},
		{"cut ipv4", cat(ether(EtherTypeIPv4), make([]byte, 10)), StatusTruncatedL3, l2Key(EtherTypeIPv4), Offsets{14, 0}},
		{"ipv4 wrong version", cat(ether(EtherTypeIPv4), ipv6(ipv6Spec{next: ProtoUDP}, udp(1, 2, nil))),
			StatusMalformedL3, l2Key(EtherTypeIPv4), Offsets{14, 0}},
		{"ipv4 ihl 4", cat(ether(EtherTypeIPv4), func() []byte { p := ipv4(v4UDP, udp(1, 2, nil)); p[0] = 0x44; return p }()),
			StatusMalformedL3, l2Key(EtherTypeIPv4), Offsets{14, 0}},
		{"ipv4 ihl beyond frame", cat(ether(EtherTypeIPv4), func() []byte { p := ipv4(v4UDP, nil); p[0] = 0x4f; return p }()),
			StatusTruncatedL3, l2Key(EtherTypeIPv4), Offsets{14, 0}},
		{"ipv4 total beyond frame", cat(ether(EtherTypeIPv4), ipv4(v4UDP, udp(1, 2, nil))[:27]),
			StatusTruncatedL3, l2Key(EtherTypeIPv4), Offsets{14, 0}},
		{"ipv4 total below ihl", cat(ether(EtherTypeIPv4), func() []byte { p := ipv4(v4UDP, udp(1, 2, nil)); p[3] = 19; return p }()),
			StatusMalformedL3, l2Key(EtherTypeIPv4), Offsets{14, 0}},
		{"cut tcp", cat(ether(EtherTypeIPv4), ipv4(v4TCP, tcp(1, 2, 0, 0, nil)[:10])),
			StatusTruncatedL4, v4Key(ProtoTCP, nil), Offsets{14, 34}},
		{"tcp offset 4", cat(ether(EtherTypeIPv4), ipv4(v4TCP, func() []byte { t := tcp(1, 2, 0, 0, nil); t[12] = 0x40; return t }())),
			StatusMalformedL4, v4Key(ProtoTCP, nil), Offsets{14, 34}},
		{"tcp options cut", cat(ether(EtherTypeIPv4), ipv4(v4TCP, tcp(1, 2, 0, 10, nil)[:40])),
			StatusTruncatedL4, v4Key(ProtoTCP, nil), Offsets{14, 34}},
		{"cut udp", cat(ether(EtherTypeIPv4), ipv4(v4UDP, udp(1, 2, nil)[:4])),
			StatusTruncatedL4, v4Key(ProtoUDP, nil), Offsets{14, 34}},
		{"udp cut by ipv4 length, then padding", pad(cat(ether(EtherTypeIPv4), ipv4(v4UDP, udp(1, 2, nil)[:4]))),
			StatusTruncatedL4, v4Key(ProtoUDP, nil), Offsets{14, 34}},
		{"udp cut by ipv6 length, then trailer", cat(ether(EtherTypeIPv6), ipv6(ipv6Spec{next: ProtoUDP, hop: 255}, udp(1, 2, nil)[:4]), make([]byte, 8)),
			StatusTruncatedL4, v6Key(ProtoUDP, nil), Offsets{14, 54}},
		{"cut sctp", cat(ether(EtherTypeIPv4), ipv4(ipv4Spec{proto: ProtoSCTP, ttl: 64}, sctp(1, 2)[:8])),
			StatusTruncatedL4, v4Key(ProtoSCTP, nil), Offsets{14, 34}},
		{"cut icmp4", cat(ether(EtherTypeIPv4), ipv4(ipv4Spec{proto: ProtoICMP, ttl: 64}, icmp(8, 0)[:4])),
			StatusTruncatedL4, v4Key(ProtoICMP, nil), Offsets{14, 34}},
		{"cut icmp6", cat(ether(EtherTypeIPv6), ipv6(ipv6Spec{next: ProtoICMPv6, hop: 255}, []byte{128, 0})),
			StatusTruncatedL4, v6Key(ProtoICMPv6, nil), Offsets{14, 54}},
		{"cut ipv6", cat(ether(EtherTypeIPv6), make([]byte, 30)), StatusTruncatedL3, l2Key(EtherTypeIPv6), Offsets{14, 0}},
		{"ipv6 wrong version", cat(ether(EtherTypeIPv6), func() []byte { p := ipv6(ipv6Spec{next: ProtoUDP}, udp(1, 2, nil)); p[0] = 0x45; return p }()),
			StatusMalformedL3, l2Key(EtherTypeIPv6), Offsets{14, 0}},
		{"ipv6 payload beyond frame", cat(ether(EtherTypeIPv6), ipv6(ipv6Spec{next: ProtoUDP}, udp(1, 2, nil))[:45]),
			StatusTruncatedL3, l2Key(EtherTypeIPv6), Offsets{14, 0}},
		{"ipv6 ext header cut", cat(ether(EtherTypeIPv6), ipv6(ipv6Spec{next: ProtoHopByHop, hop: 255}, []byte{ProtoUDP})),
			StatusTruncatedL3, v6Key(0, nil), Offsets{14, 0}},
		{"ipv6 ext header beyond payload", cat(ether(EtherTypeIPv6), ipv6(ipv6Spec{next: ProtoHopByHop, hop: 255}, ext6(ProtoUDP, 3)[:16])),
			StatusTruncatedL3, v6Key(0, nil), Offsets{14, 0}},
		{"ipv6 fragment header cut", cat(ether(EtherTypeIPv6), ipv6(ipv6Spec{next: ProtoFragment, hop: 255}, frag6(ProtoUDP, 0, true)[:6])),
			StatusTruncatedL3, v6Key(0, nil), Offsets{14, 0}},
		{"ipv6 too many ext headers", cat(ether(EtherTypeIPv6), ipv6(ipv6Spec{next: ProtoDstOpts, hop: 255}, func() []byte {
			var b []byte
			for range maxIPv6ExtHeaders {
				b = cat(b, ext6(ProtoDstOpts, 0))
			}
			return cat(b, ext6(ProtoUDP, 0), udp(1, 2, nil))
		}())),
			StatusMalformedL3, v6Key(ProtoDstOpts, nil), Offsets{14, 0}},
		{"arp cut", cat(ether(EtherTypeARP), arp(1, EtherTypeIPv4, 1)[:20]),
			StatusTruncatedL3, l2Key(EtherTypeARP), Offsets{14, 0}},
		{"arp fixed part cut", cat(ether(EtherTypeARP), []byte{0, 1, 8}),
			StatusTruncatedL3, l2Key(EtherTypeARP), Offsets{14, 0}},
	}
}

func TestParse(t *testing.T) {
	for _, tc := range parseCases() {
		t.Run(tc.name, func(t *testing.T) {
			// Start from garbage to prove Parse overwrites every packet
			// field and keeps every metadata field.
			k := FullMask()
			key := Key(k)
			key.InPort = 7
			var off Offsets
			st := ParseOffsets(tc.frame, &key, &off)
			want := Key(FullMask())
			want.InPort = 7
			meta := want
			want = tc.key
			copy(want.words()[:metadataWords], meta.words()[:metadataWords])
			if st != tc.status {
				t.Errorf("status = %v, want %v", st, tc.status)
			}
			if key != want {
				t.Errorf("key mismatch\n got %+v\nwant %+v", key, want)
			}
			if off != tc.off {
				t.Errorf("offsets = %+v, want %+v", off, tc.off)
			}
			var k2 Key
			if st2 := Parse(tc.frame, &k2); st2 != st || k2.InPort != 0 {
				t.Errorf("Parse = %v (InPort %d), ParseOffsets = %v", st2, k2.InPort, st)
			}
		})
	}
}

func TestBufferParse(t *testing.T) {
	b := NewBuffer(DefaultHeadroom, 2048)
	f := cat(ether(EtherTypeIPv4, tagQ), ipv4(v4TCP, tcp(5, 6, TCPFlagSYN, 0, nil)))
	b.SetLen(copy(b.Room(), f))
	b.InPort = 3
	if st := b.Parse(); st != StatusOK {
		t.Fatalf("status %v", st)
	}
	if b.Key.InPort != 3 || b.Key.DstPort != 6 || b.Offsets != (Offsets{18, 38}) {
		t.Fatalf("key %+v offsets %+v", b.Key, b.Offsets)
	}
}

func TestStatusString(t *testing.T) {
	seen := map[string]bool{}
	for s := range NumStatus {
		name := s.String()
		if name == "" || name == "unknown" || seen[name] {
			t.Errorf("status %d has name %q", s, name)
		}
		seen[name] = true
	}
	if NumStatus.String() != "unknown" {
		t.Errorf("out of range status named %q", NumStatus.String())
	}
}

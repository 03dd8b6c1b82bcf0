package tunnel

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"testing"

	"gvs/packet"
)

// innerFrame returns an Ethernet/IPv4/UDP frame with an odd-length payload.
func innerFrame() []byte {
	payload := []byte("inner payload, odd length")
	f := make([]byte, 14+20+8+len(payload))
	copy(f[0:6], []byte{2, 0, 0, 0, 0, 2})
	copy(f[6:12], []byte{2, 0, 0, 0, 0, 1})
	binary.BigEndian.PutUint16(f[12:], 0x0800)
	ip := f[14:34]
	ip[0], ip[8], ip[9] = 0x45, 64, 17
	binary.BigEndian.PutUint16(ip[2:], uint16(20+8+len(payload)))
	copy(ip[12:], []byte{198, 18, 9, 1})
	copy(ip[16:], []byte{198, 18, 9, 2})
	binary.BigEndian.PutUint16(ip[10:], packet.IPv4HeaderChecksum(ip))
	binary.BigEndian.PutUint16(f[34:], 1000)
	binary.BigEndian.PutUint16(f[36:], 2000)
	binary.BigEndian.PutUint16(f[38:], uint16(8+len(payload)))
	copy(f[42:], payload)
	return f
}

// innerFrameV6 returns an Ethernet/IPv6/UDP frame (UDP checksum set)
// to UDP port dport.
func innerFrameV6(dport uint16) []byte {
	payload := []byte("inner v6 payload")
	f := make([]byte, 14+40+8+len(payload))
	copy(f[0:6], []byte{2, 0, 0, 0, 0, 2})
	copy(f[6:12], []byte{2, 0, 0, 0, 0, 1})
	binary.BigEndian.PutUint16(f[12:], 0x86dd)
	ip := f[14:54]
	binary.BigEndian.PutUint32(ip[0:], 6<<28|0x12345)
	binary.BigEndian.PutUint16(ip[4:], uint16(8+len(payload)))
	ip[6], ip[7] = 17, 64
	src, dst := netip.MustParseAddr("2001:2:9::1").As16(), netip.MustParseAddr("2001:2:9::2").As16()
	copy(ip[8:], src[:])
	copy(ip[24:], dst[:])
	udp := f[54:]
	binary.BigEndian.PutUint16(udp[0:], 1000)
	binary.BigEndian.PutUint16(udp[2:], dport)
	binary.BigEndian.PutUint16(udp[4:], uint16(8+len(payload)))
	copy(udp[8:], payload)
	binary.BigEndian.PutUint16(udp[6:], ^packet.Checksum(udp, packet.PseudoHeaderSumV6(src, dst, 17, uint32(len(udp)))))
	return f
}

// innerICMP returns an Ethernet/IPv4/ICMP echo request.
func innerICMP(tos uint8) []byte {
	f := make([]byte, 14+20+8+8)
	copy(f[0:6], []byte{2, 0, 0, 0, 0, 2})
	copy(f[6:12], []byte{2, 0, 0, 0, 0, 1})
	binary.BigEndian.PutUint16(f[12:], 0x0800)
	ip := f[14:34]
	ip[0], ip[1], ip[8], ip[9] = 0x45, tos, 64, 1
	binary.BigEndian.PutUint16(ip[2:], 36)
	copy(ip[12:], []byte{198, 18, 9, 1})
	copy(ip[16:], []byte{198, 18, 9, 3})
	binary.BigEndian.PutUint16(ip[10:], packet.IPv4HeaderChecksum(ip))
	icmp := f[34:]
	icmp[0] = 8
	binary.BigEndian.PutUint32(icmp[4:], 0x12340001)
	binary.BigEndian.PutUint16(icmp[2:], ^packet.Checksum(icmp, 0))
	return f
}

func bufferWith(frame []byte) *packet.Buffer {
	b := packet.NewBuffer(packet.DefaultHeadroom+MaxHeaderLen, 9000)
	b.SetLen(len(frame))
	copy(b.Data(), frame)
	return b
}

var (
	local4     = netip.MustParseAddr("198.18.1.1")
	remote4    = netip.MustParseAddr("198.18.1.2")
	local6     = netip.MustParseAddr("2001:2::1")
	remote6    = netip.MustParseAddr("2001:2::2")
	genevePing = []byte{0xff, 0xff, 0x80, 0x01, 0, 0, 0, 0x0a} // class 0xffff, type 0x80 (critical), 4 bytes
)

func params(kind Kind, v6 bool) BuildParams {
	p := BuildParams{Kind: kind, DstMAC: [6]byte{0xf8, 0xbc, 0x12, 0x44, 0x34, 0xb6}, SrcMAC: [6]byte{0xaa, 0x55, 0xaa, 0x55, 0, 0},
		Src: local4, Dst: remote4, TTL: 64, TOS: 0x28, DontFragment: true, TunID: 0x7b}
	if v6 {
		p.Src, p.Dst = local6, remote6
	}
	switch kind {
	case Geneve:
		p.DstPort = GenevePort
	case VXLAN:
		p.DstPort = VXLANPort
	case GRE:
		p.GREKey = true
	}
	return p
}

// checkOuter verifies the pushed frame's outer headers independently of
// Pop: lengths and every checksum.
func checkOuter(t *testing.T, f []byte, h *Header, inner int) {
	t.Helper()
	l4 := int(h.L4)
	if h.IPv6 {
		if got := int(binary.BigEndian.Uint16(f[14+4:])); got != len(f)-l4 {
			t.Errorf("ipv6 payload length %d, want %d", got, len(f)-l4)
		}
	} else {
		if got := int(binary.BigEndian.Uint16(f[14+2:])); got != len(f)-14 {
			t.Errorf("ipv4 total length %d, want %d", got, len(f)-14)
		}
		if packet.Checksum(f[14:34], 0) != 0xffff {
			t.Error("bad ipv4 header checksum")
		}
	}
	if len(f)-int(h.Len) != inner {
		t.Errorf("inner length %d, want %d", len(f)-int(h.Len), inner)
	}
	var k packet.Key
	var o packet.Offsets
	if st := packet.ParseOffsets(f, &k, &o); st != packet.StatusOK {
		t.Fatalf("outer frame parses as %v", st)
	}
	if h.Kind.UDP() {
		udp := f[l4:]
		if got := int(binary.BigEndian.Uint16(udp[4:])); got != len(udp) {
			t.Errorf("udp length %d, want %d", got, len(udp))
		}
		sp := binary.BigEndian.Uint16(udp[0:])
		if sp < DefaultSrcPortMin || sp >= DefaultSrcPortMax {
			t.Errorf("udp source port %d out of range", sp)
		}
		if c := binary.BigEndian.Uint16(udp[6:]); c != 0 {
			var sum uint16
			if h.IPv6 {
				sum = packet.PseudoHeaderSumV6(k.SrcIPv6, k.DstIPv6, 17, uint32(len(udp)))
			} else {
				sum = packet.PseudoHeaderSumV4(k.SrcIPv4, k.DstIPv4, 17, uint16(len(udp)))
			}
			if packet.Checksum(udp, sum) != 0xffff {
				t.Error("bad udp checksum")
			}
		} else if h.UDPCsum {
			t.Error("udp checksum missing")
		}
	} else if h.GRECsum && packet.Checksum(f[l4:], 0) != 0xffff {
		t.Error("bad gre checksum")
	}
}

func TestRoundTrip(t *testing.T) {
	type variant struct {
		name string
		mod  func(*BuildParams)
		pop  PopConfig
		want func(k *packet.Key)
	}
	for _, kind := range []Kind{Geneve, VXLAN, GRE} {
		variants := []variant{{name: "plain"}, {name: "csum", mod: func(p *BuildParams) { p.Csum = true }}}
		switch kind {
		case Geneve:
			variants = append(variants,
				variant{name: "options", mod: func(p *BuildParams) { p.GeneveOptions = genevePing; p.OAM = true }},
				variant{name: "options 16", mod: func(p *BuildParams) { p.GeneveOptions = append(append([]byte{}, genevePing...), genevePing...) }})
		case VXLAN:
			variants = append(variants, variant{name: "gbp", mod: func(p *BuildParams) { p.GBP, p.GBPID, p.GBPFlags = true, 0x1234, 0x48 },
				pop: PopConfig{GBP: true}, want: func(k *packet.Key) { k.TunGBPID, k.TunGBPFlags = 0x1234, 0x48 }})
		case GRE:
			variants = append(variants,
				variant{name: "no key", mod: func(p *BuildParams) { p.GREKey = false }},
				variant{name: "seq and csum", mod: func(p *BuildParams) { p.GRESeq, p.Csum = true, true }})
		}
		for _, v6 := range []bool{false, true} {
			for _, v := range variants {
				name := kind.String() + "/ipv4/" + v.name
				if v6 {
					name = kind.String() + "/ipv6/" + v.name
				}
				t.Run(name, func(t *testing.T) {
					p := params(kind, v6)
					if v.mod != nil {
						v.mod(&p)
					}
					h, err := Build(&p)
					if err != nil {
						t.Fatal(err)
					}
					in := innerFrame()
					b := bufferWith(in)
					if err := Push(b, &h, 0x9abcdef0, 7); err != nil {
						t.Fatal(err)
					}
					checkOuter(t, b.Data(), &h, len(in))
					pushed := append([]byte(nil), b.Data()...)
					// Ethernet padding after the outer packet is cut.
					b.SetLen(b.Len() + 3)
					b.Key.TunID = 0xdead // stale metadata is cleared
					c := v.pop
					c.Kind = kind
					if d := Pop(b, c); d != DropNone {
						t.Fatalf("pop: %v", d)
					}
					if !bytes.Equal(b.Data(), in) {
						t.Fatalf("inner frame\n got % x\nwant % x", b.Data(), in)
					}
					var want packet.Key
					want.TunTOS, want.TunTTL = p.TOS, p.TTL
					if v6 {
						want.TunIPv6Src, want.TunIPv6Dst = p.Src.As16(), p.Dst.As16()
					} else {
						want.TunSrc, want.TunDst = p.Src.As4(), p.Dst.As4()
					}
					if kind.UDP() {
						want.TunTpSrc = binary.BigEndian.Uint16(pushed[h.L4:])
						want.TunTpDst = p.DstPort
						if p.Csum || v6 {
							want.TunFlags |= FlagCsum
						}
					} else if p.Csum {
						want.TunFlags |= FlagCsum
					}
					if kind != GRE || p.GREKey {
						want.TunID = p.TunID
						want.TunFlags |= FlagKey
					}
					if kind == Geneve {
						want.TunFlags |= FlagUDPIF
						if p.OAM {
							want.TunFlags |= FlagOAM
						}
						want.TunMetaLen = uint8(copy(want.TunMetadata[:], p.GeneveOptions))
					}
					if v.want != nil {
						v.want(&want)
					}
					var got packet.Key
					got = b.Key
					if got != want {
						t.Errorf("key\n got %+v\nwant %+v", got, want)
					}
				})
			}
		}
	}
}

func TestSourcePortRange(t *testing.T) {
	for _, h := range []uint32{0, 1, 1 << 31, ^uint32(0)} {
		p := SourcePort(h, DefaultSrcPortMin, DefaultSrcPortMax)
		if p < DefaultSrcPortMin || p >= DefaultSrcPortMax {
			t.Errorf("hash %#x: port %d", h, p)
		}
	}
	if SourcePort(0, 32768, 61000) != 32768 || SourcePort(^uint32(0), 32768, 61000) != 60999 {
		t.Error("range ends")
	}
}

func TestPushHeadroom(t *testing.T) {
	p := params(Geneve, true)
	h, _ := Build(&p)
	b := packet.NewBuffer(10, 200)
	b.SetLen(60)
	if err := Push(b, &h, 0, 0); err != ErrHeadroom || b.Len() != 60 {
		t.Fatalf("err %v len %d", err, b.Len())
	}
}

func TestBuildErrors(t *testing.T) {
	p := params(Geneve, false)
	p.Dst = remote6
	if _, err := Build(&p); err != ErrFamily {
		t.Errorf("mixed families: %v", err)
	}
	p = params(Geneve, false)
	p.GeneveOptions = []byte{1, 2, 3}
	if _, err := Build(&p); err != ErrOptions {
		t.Errorf("odd options: %v", err)
	}
}

// TestPopDrops: each malformation gives its reason, the window and the
// tunnel metadata stay as they were (zero).
func TestPopDrops(t *testing.T) {
	build := func(kind Kind, v6 bool, mod func(*BuildParams)) []byte {
		p := params(kind, v6)
		if mod != nil {
			mod(&p)
		}
		h, err := Build(&p)
		if err != nil {
			t.Fatal(err)
		}
		b := bufferWith(innerFrame())
		if err := Push(b, &h, 1, 1); err != nil {
			t.Fatal(err)
		}
		return append([]byte(nil), b.Data()...)
	}
	fixIP := func(f []byte) {
		binary.BigEndian.PutUint16(f[24:], 0)
		ihl := int(f[14]&0xf) * 4
		binary.BigEndian.PutUint16(f[24:], ^packet.Checksum(f[14:14+ihl], 0))
	}
	cases := []struct {
		name string
		kind Kind
		f    []byte
		want Drop
	}{
		{"short", Geneve, build(Geneve, false, nil)[:30], DropTruncated},
		{"ip length beyond frame", Geneve, build(Geneve, false, nil)[:60], DropTruncated},
		{"arp", Geneve, func() []byte { f := build(Geneve, false, nil); f[13] = 6; return f }(), DropNotIP},
		{"ip checksum", VXLAN, func() []byte { f := build(VXLAN, false, nil); f[24] ^= 1; return f }(), DropIPChecksum},
		{"ip options", VXLAN, func() []byte { f := build(VXLAN, false, nil); f[14] = 0x46; fixIP(f); return f }(), DropIPOptions},
		{"ipv6 fragment", GRE, func() []byte {
			f := build(GRE, true, nil)
			ext := []byte{47, 0, 0, 1, 0, 0, 0, 1}
			f = append(append(append([]byte{}, f[:54]...), ext...), f[54:]...)
			f[14+6] = 44
			binary.BigEndian.PutUint16(f[18:], binary.BigEndian.Uint16(f[18:])+8)
			return f
		}(), DropFragment},
		{"ipv6 extension past the packet", GRE, func() []byte {
			f := build(GRE, true, nil)
			f[14+6], f[55] = 60, 200
			return f
		}(), DropWrongProtocol},
		{"fragment", VXLAN, func() []byte { f := build(VXLAN, false, nil); f[20] |= 0x20; fixIP(f); return f }(), DropFragment},
		{"later fragment", GRE, func() []byte { f := build(GRE, false, nil); f[21] = 8; fixIP(f); return f }(), DropFragment},
		{"gre on a vxlan port", VXLAN, build(GRE, false, nil), DropWrongProtocol},
		{"udp checksum", Geneve, func() []byte { f := build(Geneve, true, nil); f[len(f)-1] ^= 0xff; return f }(), DropChecksum},
		{"gre checksum", GRE, func() []byte {
			f := build(GRE, false, func(p *BuildParams) { p.Csum = true })
			f[len(f)-1] ^= 0xff
			return f
		}(), DropChecksum},
		{"geneve version", Geneve, func() []byte { f := build(Geneve, false, nil); f[42] |= 0x40; return f }(), DropBadVersion},
		{"gre version", GRE, func() []byte { f := build(GRE, false, nil); f[35] |= 1; return f }(), DropBadVersion},
		{"gre routing flag", GRE, func() []byte { f := build(GRE, false, nil); f[34] |= 0x40; return f }(), DropBadVersion},
		{"vxlan flags", VXLAN, func() []byte { f := build(VXLAN, false, nil); f[43] = 1; return f }(), DropBadFlags},
		{"vxlan gbp on a plain port", VXLAN, build(VXLAN, false, func(p *BuildParams) { p.GBP, p.GBPID = true, 5 }), DropBadFlags},
		{"vxlan vni reserved", VXLAN, func() []byte { f := build(VXLAN, false, nil); f[49] = 1; return f }(), DropBadFlags},
		{"geneve payload", Geneve, func() []byte { f := build(Geneve, false, nil); f[45] = 0; return f }(), DropPayloadType},
		{"geneve options past packet", Geneve, func() []byte { f := build(Geneve, false, nil); f[42] = 0x3f; return f }(), DropOptionsTooLong},
		{"geneve options past key", Geneve, build(Geneve, false, func(p *BuildParams) {
			p.GeneveOptions = bytes.Repeat(genevePing, 3)
		}), DropOptionsUnsupported},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := bufferWith(c.f)
			if d := Pop(b, PopConfig{Kind: c.kind}); d != c.want {
				t.Errorf("drop %v, want %v", d, c.want)
			}
			if !bytes.Equal(b.Data(), c.f) {
				t.Error("frame changed")
			}
			if b.Key != (packet.Key{}) {
				t.Errorf("key %+v", b.Key)
			}
		})
	}
}

func TestAllocs(t *testing.T) {
	for _, kind := range []Kind{Geneve, VXLAN, GRE} {
		p := params(kind, kind == VXLAN)
		p.Csum = true
		if kind == Geneve {
			p.GeneveOptions = genevePing
		}
		h, err := Build(&p)
		if err != nil {
			t.Fatal(err)
		}
		in := innerFrame()
		b := bufferWith(in)
		var k packet.Key
		packet.Parse(in, &k)
		allocs := testing.AllocsPerRun(200, func() {
			b.SetLen(len(in))
			if err := Push(b, &h, OVSFlowHash(&k), 4); err != nil {
				t.Fatal(err)
			}
			if d := Pop(b, PopConfig{Kind: kind}); d != DropNone {
				t.Fatal(d)
			}
		})
		if allocs != 0 {
			t.Errorf("%v: %v allocations per hash, push and pop", kind, allocs)
		}
	}
}

func FuzzPop(f *testing.F) {
	for _, kind := range []Kind{Geneve, VXLAN, GRE} {
		for _, v6 := range []bool{false, true} {
			p := params(kind, v6)
			if kind == Geneve {
				p.GeneveOptions = genevePing
			}
			h, _ := Build(&p)
			b := bufferWith(innerFrame())
			Push(b, &h, 5, 6)
			f.Add(append([]byte(nil), b.Data()...), uint8(kind), true, uint8(0), uint16(0), uint16(0))
			f.Add(append([]byte(nil), b.Data()...), uint8(kind), false, packet.VnetNeedsCsum, h.L4, uint16(6))
		}
	}
	f.Fuzz(func(t *testing.T, frame []byte, kind uint8, gbp bool, vnetFlags uint8, csumStart, csumOffset uint16) {
		// The frame sits at the very end of its backing array, so a
		// read past it panics.
		b := packet.NewBuffer(MaxHeaderLen, len(frame))
		b.SetLen(len(frame))
		copy(b.Data(), frame)
		c := PopConfig{Kind: Kind(kind % 4), GBP: gbp}
		if vnetFlags != 0 {
			b.HasVnet = true
			b.Vnet = packet.VnetHdr{Flags: vnetFlags, CsumStart: csumStart, CsumOffset: csumOffset}
		}
		before := append([]byte(nil), b.Data()...)
		d := Pop(b, c)
		if d >= NumDrops {
			t.Fatalf("drop %d", d)
		}
		if d != DropNone {
			if !bytes.Equal(b.Data(), before) || b.Key != (packet.Key{}) {
				t.Fatal("a dropped packet was changed")
			}
			return
		}
		if b.Len() > len(frame) || !bytes.Contains(before, b.Data()) {
			t.Fatal("the inner frame is not part of the outer one")
		}
		if int(b.Key.TunMetaLen) > len(b.Key.TunMetadata) {
			t.Fatal("metadata length")
		}
	})
}

// TestPopIPv6Extensions: a destination options header (Linux's ip6gre
// encapsulation limit) between IPv6 and GRE is skipped.
func TestPopIPv6Extensions(t *testing.T) {
	p := params(GRE, true)
	h, _ := Build(&p)
	in := innerFrame()
	b := bufferWith(in)
	Push(b, &h, 0, 0)
	f := b.Data()
	ext := []byte{47, 0, 4, 1, 4, 1, 1, 0} // next GRE; tunnel encapsulation limit 4, PadN
	f = append(append(append([]byte{}, f[:54]...), ext...), f[54:]...)
	f[14+6] = 60
	binary.BigEndian.PutUint16(f[18:], binary.BigEndian.Uint16(f[18:])+8)
	b = bufferWith(f)
	if d := Pop(b, PopConfig{Kind: GRE}); d != DropNone || !bytes.Equal(b.Data(), in) || b.Key.TunID != p.TunID {
		t.Fatalf("%v % x", d, b.Data())
	}
}

// TestPopVnet: a partial outer checksum (a local sender's offload) is
// not verified and leaves no trace in the inner frame's header; a
// partial inner one moves with the frame.
func TestPopVnet(t *testing.T) {
	p := params(VXLAN, true)
	h, err := Build(&p)
	if err != nil {
		t.Fatal(err)
	}
	in := innerFrame()
	b := bufferWith(in)
	if err := Push(b, &h, 1, 0); err != nil {
		t.Fatal(err)
	}
	outer := append([]byte(nil), b.Data()...)
	binary.BigEndian.PutUint16(outer[h.L4+6:], 0x1234) // not the real sum

	b = bufferWith(outer)
	if d := Pop(b, PopConfig{Kind: VXLAN}); d != DropChecksum {
		t.Fatalf("without a vnet header: %v", d)
	}
	b.HasVnet = true
	b.Vnet = packet.VnetHdr{Flags: packet.VnetNeedsCsum, CsumStart: h.L4, CsumOffset: 6, HdrLen: h.Len + 42}
	if d := Pop(b, PopConfig{Kind: VXLAN}); d != DropNone {
		t.Fatalf("partial outer checksum: %v", d)
	}
	if b.Vnet != (packet.VnetHdr{HdrLen: 42}) || b.Key.TunFlags&FlagCsum == 0 {
		t.Errorf("vnet %+v flags %#x", b.Vnet, b.Key.TunFlags)
	}

	b = bufferWith(outer)
	b.HasVnet = true
	b.Vnet = packet.VnetHdr{Flags: packet.VnetNeedsCsum, CsumStart: h.Len + 34, CsumOffset: 6}
	if d := Pop(b, PopConfig{Kind: VXLAN}); d != DropChecksum {
		t.Fatalf("partial inner checksum, bad outer one: %v", d)
	}
	b.HasVnet, b.Vnet = false, packet.VnetHdr{}
	good := append([]byte(nil), outer...)
	binary.BigEndian.PutUint16(good[h.L4+6:], 0)
	binary.BigEndian.PutUint16(good[h.L4+6:], ^packet.Checksum(good[h.L4:], pseudoSum(good, true, protoUDP, len(good)-int(h.L4))))
	b = bufferWith(good)
	b.HasVnet = true
	b.Vnet = packet.VnetHdr{Flags: packet.VnetNeedsCsum | packet.VnetDataValid, CsumStart: h.Len + 34, CsumOffset: 6}
	if d := Pop(b, PopConfig{Kind: VXLAN}); d != DropNone {
		t.Fatal(d)
	}
	if b.Vnet != (packet.VnetHdr{Flags: packet.VnetNeedsCsum, CsumStart: 34, CsumOffset: 6}) {
		t.Errorf("inner partial checksum: %+v", b.Vnet)
	}
}

func TestGeneveOptionMapping(t *testing.T) {
	m := TLVMapping{Class: 0xffff, Type: 0x80, Len: 4}
	var v [16]byte
	raw := append([]byte{0x01, 0x02, 0x03, 0x00}, genevePing...) // an unmapped, non-critical option first
	if ok, err := MapGeneveOptions(raw, &m, &v); !ok || err != nil || v != [16]byte{15: 0x0a} {
		t.Fatalf("map: %v %v %x", ok, err, v)
	}
	var buf [20]byte
	if n := UnmapGeneveOption(buf[:], m, &v); n != 8 || !bytes.Equal(buf[:n], genevePing) {
		t.Errorf("unmap: % x", buf[:n])
	}
	if _, err := MapGeneveOptions(genevePing, nil, &v); err != ErrCriticalOption {
		t.Errorf("critical unmapped: %v", err)
	}
	if _, err := MapGeneveOptions(genevePing, &TLVMapping{Class: 0xffff, Type: 0x80, Len: 8}, &v); err != ErrOptionLength {
		t.Errorf("length: %v", err)
	}
	if _, err := MapGeneveOptions(genevePing[:6], &m, &v); err != ErrOptionList {
		t.Errorf("truncated: %v", err)
	}
	if ok, err := MapGeneveOptions(nil, &m, &v); ok || err != nil {
		t.Errorf("none: %v %v", ok, err)
	}
	if n := testing.AllocsPerRun(100, func() { MapGeneveOptions(raw, &m, &v); UnmapGeneveOption(buf[:], m, &v) }); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

// TestPushPartialChecksum: an inner UDP checksum left partial stays for
// the outer device; once it completes it, both checksums hold.
func TestPushPartialChecksum(t *testing.T) {
	for _, kind := range []Kind{Geneve, GRE} {
		p := params(kind, kind == Geneve)
		p.Csum = true
		h, err := Build(&p)
		if err != nil {
			t.Fatal(err)
		}
		in := innerFrame()
		udp := in[34:]
		binary.BigEndian.PutUint16(udp[6:], packet.PseudoHeaderSumV4([4]byte(in[26:30]), [4]byte(in[30:34]), 17, uint16(len(udp))))
		b := bufferWith(in)
		b.HasVnet = true
		b.Vnet = packet.VnetHdr{Flags: packet.VnetNeedsCsum, CsumStart: 34, CsumOffset: 6, HdrLen: 42}
		if err := Push(b, &h, 1, 0); err != nil {
			t.Fatal(err)
		}
		if b.Vnet.CsumStart != 34+h.Len || b.Vnet.HdrLen != 42+h.Len {
			t.Fatalf("vnet %+v", b.Vnet)
		}
		f := append([]byte(nil), b.Data()...)
		if !packet.CompletePartialChecksum(f, int(b.Vnet.CsumStart), int(b.Vnet.CsumOffset)) {
			t.Fatal("complete")
		}
		checkOuter(t, f, &h, len(in))
		ib := bufferWith(f)
		if d := Pop(ib, PopConfig{Kind: kind}); d != DropNone {
			t.Fatalf("%v: pop %v", kind, d)
		}
		iu := ib.Data()[34:]
		if packet.Checksum(iu, packet.PseudoHeaderSumV4([4]byte(ib.Data()[26:30]), [4]byte(ib.Data()[30:34]), 17, uint16(len(iu)))) != 0xffff {
			t.Errorf("%v: inner checksum", kind)
		}
		g := bufferWith(in)
		g.HasVnet = true
		g.Vnet = packet.VnetHdr{GSOType: packet.VnetGSOTCPv4, GSOSize: 1000}
		if err := Push(g, &h, 1, 0); err != ErrGSO || g.Len() != len(in) {
			t.Errorf("gso: %v", err)
		}
	}
}

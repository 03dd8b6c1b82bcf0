package packet

import (
	"bytes"
	"encoding/binary"
	"testing"
)

type l4Frame struct {
	name  string
	frame []byte // with the checksum field zero
	l4    int    // offset of the L4 header
	end   int    // end of the IP payload
	field int    // checksum offset inside L4
	v6    bool
	proto uint8
}

func l4Frames() []l4Frame {
	payload := []byte("checksummed payload of odd length")
	tcp4 := cat(ether(EtherTypeIPv4), ipv4(v4TCP, tcp(1, 2, TCPFlagACK, 1, payload)))
	udp4 := cat(ether(EtherTypeIPv4, tagQ), ipv4(v4UDP, udp(3, 4, []byte{9})))
	udp4len := len(udp4)
	udp4 = pad(udp4) // Ethernet padding must not enter the sum
	tcp6 := cat(ether(EtherTypeIPv6), ipv6(ipv6Spec{next: ProtoTCP, hop: 64}, tcp(5, 6, TCPFlagSYN, 0, payload)))
	udp6 := cat(ether(EtherTypeIPv6), ipv6(ipv6Spec{next: ProtoDstOpts, hop: 64}, cat(ext6(ProtoUDP, 0), udp(7, 8, payload))))
	return []l4Frame{
		{"tcp4", tcp4, 34, len(tcp4), 16, false, ProtoTCP},
		{"udp4 vlan padded", udp4, 38, udp4len, 6, false, ProtoUDP},
		{"tcp6", tcp6, 54, len(tcp6), 16, true, ProtoTCP},
		{"udp6 ext", udp6, 62, len(udp6), 6, true, ProtoUDP},
	}
}

func (f l4Frame) pseudo() uint16 {
	n := f.end - f.l4
	if f.v6 {
		return refPseudo(ip6A[:], ip6B[:], f.proto, n)
	}
	return refPseudo(ip4A[:], ip4B[:], f.proto, n)
}

// withPartial returns a copy whose checksum field holds the pseudo sum.
func (f l4Frame) withPartial() []byte {
	b := bytes.Clone(f.frame)
	binary.BigEndian.PutUint16(b[f.l4+f.field:], f.pseudo())
	return b
}

// withFull returns a copy with the correct checksum (reference code).
func (f l4Frame) withFull() []byte {
	b := bytes.Clone(f.frame)
	c := ^refSum(b[f.l4:f.end], uint32(f.pseudo()))
	if c == 0 {
		c = 0xffff
	}
	binary.BigEndian.PutUint16(b[f.l4+f.field:], c)
	return b
}

func TestPartialChecksumDetectAndFix(t *testing.T) {
	for _, f := range l4Frames() {
		t.Run(f.name, func(t *testing.T) {
			var k Key
			var o Offsets
			partial := f.withPartial()
			if st := ParseOffsets(partial, &k, &o); st != StatusOK || int(o.L4) != f.l4 {
				t.Fatalf("parse %v offsets %+v", st, o)
			}
			if !IsPartialChecksum(partial, &k, o) {
				t.Fatal("partial checksum not detected")
			}
			if !FixPartialChecksum(partial, &k, o) {
				t.Fatal("not fixed")
			}
			if full := f.withFull(); !bytes.Equal(partial, full) {
				t.Fatalf("fixed frame differs from reference\n got % x\nwant % x", partial, full)
			}
			// A complete checksum is left alone.
			if IsPartialChecksum(partial, &k, o) || FixPartialChecksum(partial, &k, o) {
				t.Error("complete checksum taken for partial")
			}
		})
	}
}

func TestBufferFixPartialChecksum(t *testing.T) {
	f := l4Frames()[0]
	b := loadBuffer(t, f.withPartial())
	b.Parse()
	if !b.FixPartialChecksum() || !bytes.Equal(b.Data(), f.withFull()) {
		t.Fatal("buffer fix")
	}
}

func TestPartialChecksumNotApplicable(t *testing.T) {
	var k Key
	var o Offsets
	check := func(name string, frame []byte) {
		t.Helper()
		ParseOffsets(frame, &k, &o)
		if IsPartialChecksum(frame, &k, o) || FixPartialChecksum(frame, &k, o) {
			t.Errorf("%s: reported partial", name)
		}
	}
	check("icmp", cat(ether(EtherTypeIPv4), ipv4(ipv4Spec{proto: ProtoICMP, ttl: 1}, icmp(8, 0))))
	check("arp", pad(cat(ether(EtherTypeARP), arp(1, EtherTypeIPv4, 1))))
	check("udp4 without checksum", cat(ether(EtherTypeIPv4), ipv4(v4UDP, udp(1, 2, nil))))

	// A first fragment whose field happens to hold the pseudo sum of the
	// fragment must not be "completed": the sum spans other fragments.
	fr := cat(ether(EtherTypeIPv4), ipv4(ipv4Spec{proto: ProtoUDP, ttl: 1, frag: 0x2000}, udp(1, 2, make([]byte, 16))))
	ParseOffsets(fr, &k, &o)
	binary.BigEndian.PutUint16(fr[34+6:], PseudoHeaderSumV4(k.SrcIPv4, k.DstIPv4, ProtoUDP, 24))
	if IsPartialChecksum(fr, &k, o) {
		t.Error("fragment reported partial")
	}

	// Offsets and keys that do not describe the frame never panic.
	f := l4Frames()[0].withPartial()
	ParseOffsets(f, &k, &o)
	for _, bad := range []Offsets{{0, 34}, {14, 0}, {14, 14}, {14, 2000}, {200, 300}, {60, 65}} {
		if IsPartialChecksum(f, &k, bad) {
			t.Errorf("offsets %+v reported partial", bad)
		}
	}
	if IsPartialChecksum(f[:40], &k, o) || IsPartialChecksum(f[:16], &k, Offsets{15, 16}) {
		t.Error("cut frame reported partial")
	}
	k6 := k
	k6.EtherType = EtherTypeIPv6
	if IsPartialChecksum(f[:50], &k6, o) {
		t.Error("mismatched key reported partial")
	}
}

func TestCompleteVnetChecksum(t *testing.T) {
	f := l4Frames()[2]
	b := loadBuffer(t, f.withPartial())
	if !b.CompleteVnetChecksum() || !bytes.Equal(b.Data(), f.withPartial()) {
		t.Fatal("frame without vnet header changed")
	}
	b.HasVnet = true
	b.Vnet = VnetHdr{Flags: VnetNeedsCsum, CsumStart: uint16(f.l4), CsumOffset: uint16(f.field)}
	if !b.CompleteVnetChecksum() || !bytes.Equal(b.Data(), f.withFull()) {
		t.Fatal("not completed")
	}
	if b.Vnet.Flags != VnetDataValid {
		t.Errorf("flags %#x", b.Vnet.Flags)
	}
	b.Vnet = VnetHdr{Flags: VnetNeedsCsum, CsumStart: 60000, CsumOffset: 16}
	if b.CompleteVnetChecksum() || b.Vnet.Flags != VnetNeedsCsum {
		t.Error("out-of-range offsets accepted")
	}
}

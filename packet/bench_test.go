package packet

import "testing"

func benchParse(b *testing.B, frame []byte) {
	var k Key
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		Parse(frame, &k)
	}
}

func BenchmarkParseTCPv4(b *testing.B) {
	benchParse(b, cat(ether(EtherTypeIPv4), ipv4(v4TCP, tcp(40000, 443, TCPFlagACK, 3, make([]byte, 1400)))))
}

func BenchmarkParseTCPv4VLAN(b *testing.B) {
	benchParse(b, cat(ether(EtherTypeIPv4, tagQ), ipv4(v4TCP, tcp(40000, 443, TCPFlagACK, 3, make([]byte, 1400)))))
}

func BenchmarkParseIPv6(b *testing.B) {
	benchParse(b, cat(ether(EtherTypeIPv6), ipv6(ipv6Spec{next: ProtoUDP, hop: 64, flowLabel: 7}, udp(1, 2, make([]byte, 1400)))))
}

func BenchmarkParseIPv6Ext(b *testing.B) {
	benchParse(b, cat(ether(EtherTypeIPv6), ipv6(ipv6Spec{next: ProtoHopByHop, hop: 64},
		cat(ext6(ProtoFragment, 0), frag6(ProtoTCP, 0, true), tcp(1, 2, 0, 0, make([]byte, 1000))))))
}

func BenchmarkHash(b *testing.B) {
	k := sampleKey()
	b.ReportAllocs()
	var sink uint64
	for b.Loop() {
		sink += k.Hash()
	}
	_ = sink
}

func BenchmarkApplyMask(b *testing.B) {
	k := sampleKey()
	m := Mask{EtherType: 0xffff, DstPort: 0xffff, DstIPv6: [16]byte{0xff, 0xff}}
	var out Key
	b.ReportAllocs()
	for b.Loop() {
		k.ApplyMask(&m, &out)
	}
}

func benchChecksum(b *testing.B, n int) {
	buf := make([]byte, n)
	for i := range buf {
		buf[i] = byte(i * 31)
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	var sink uint16
	for b.Loop() {
		sink += Checksum(buf, 0)
	}
	_ = sink
}

func BenchmarkChecksum1500(b *testing.B) { benchChecksum(b, 1500) }
func BenchmarkChecksum64K(b *testing.B)  { benchChecksum(b, 65535) }

// BenchmarkChecksumReference is the textbook loop, for comparison.
func BenchmarkChecksumReference1500(b *testing.B) {
	buf := make([]byte, 1500)
	b.SetBytes(1500)
	var sink uint16
	for b.Loop() {
		sink += refSum(buf, 0)
	}
	_ = sink
}

// The detection cost the design note asks about: paid by every TCP/UDP
// frame from a port without checksum metadata.
func BenchmarkIsPartialChecksum(b *testing.B) {
	f := l4Frames()[0].withFull()
	var k Key
	var o Offsets
	ParseOffsets(f, &k, &o)
	b.ReportAllocs()
	for b.Loop() {
		IsPartialChecksum(f, &k, o)
	}
}

// The completion cost, paid only by frames that were partial: a 1500-byte
// TCP frame.
func BenchmarkFixPartialChecksum1500(b *testing.B) {
	lf := l4Frame{}
	for _, f := range l4Frames() {
		if f.name == "tcp4" {
			lf = f
		}
	}
	lf.frame = cat(ether(EtherTypeIPv4), ipv4(v4TCP, tcp(1, 2, TCPFlagACK, 0, make([]byte, 1460))))
	lf.end = len(lf.frame)
	frame := lf.withPartial()
	var k Key
	var o Offsets
	ParseOffsets(frame, &k, &o)
	pseudo := lf.pseudo()
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		frame[lf.l4+lf.field], frame[lf.l4+lf.field+1] = byte(pseudo>>8), byte(pseudo)
		FixPartialChecksum(frame, &k, o)
	}
}

func BenchmarkPoolGetPut(b *testing.B) {
	p := smallPool(b, 64)
	b.ReportAllocs()
	for b.Loop() {
		p.Put(p.Get())
	}
}

func BenchmarkPushPopVLAN(b *testing.B) {
	buf := loadBuffer(b, cat(ether(EtherTypeIPv4), ipv4(v4TCP, tcp(1, 2, 0, 0, make([]byte, 1400)))))
	buf.Parse()
	b.ReportAllocs()
	for b.Loop() {
		buf.PushVLAN(100)
		buf.PopVLAN()
	}
}

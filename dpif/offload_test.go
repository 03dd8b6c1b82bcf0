package dpif

import (
	"bytes"
	"encoding/binary"
	"testing"

	"gvs/netdev"
	"gvs/netdev/netdevtest"
	"gvs/packet"
)

// tsoFrame builds what a TSO sender hands a vnet-header port: an
// Ethernet/IPv4/TCP frame with the whole payload, the pseudo-header sum
// in the TCP checksum field, and the virtio_net_hdr asking for
// segments of mss bytes.
func tsoFrame(payload []byte, mss int) ([]byte, packet.VnetHdr) {
	dst, src := mac(2), mac(1)
	f := append(dst[:], src[:]...)
	f = binary.BigEndian.AppendUint16(f, packet.EtherTypeIPv4)
	ip := []byte{0x45, 0, 0, 0, 0xab, 0xcd, 0x40, 0, 64, packet.ProtoTCP, 0, 0, 198, 18, 0, 1, 198, 18, 0, 2}
	binary.BigEndian.PutUint16(ip[2:], uint16(20+20+len(payload)))
	binary.BigEndian.PutUint16(ip[10:], textbookChecksum(ip, 0))
	f = append(f, ip...)
	tcp := make([]byte, 20)
	binary.BigEndian.PutUint16(tcp[0:], 40000)
	binary.BigEndian.PutUint16(tcp[2:], 5201)
	binary.BigEndian.PutUint32(tcp[4:], 1_000_000)
	tcp[12], tcp[13] = 5<<4, 0x18|0x01 // ACK PSH FIN
	binary.BigEndian.PutUint16(tcp[16:], ^pseudo4(ip, 20+len(payload)))
	f = append(f, tcp...)
	f = append(f, payload...)
	return f, packet.VnetHdr{Flags: packet.VnetNeedsCsum, GSOType: packet.VnetGSOTCPv4, GSOSize: uint16(mss),
		HdrLen: 54, CsumStart: 34, CsumOffset: 16}
}

// textbookChecksum is RFC 1071 done the slow way, independent of package
// packet: complement of the folded 16-bit big-endian sum plus initial.
func textbookChecksum(b []byte, initial uint32) uint16 {
	s := initial
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		s += uint32(b[len(b)-1]) << 8
	}
	for s > 0xffff {
		s = s>>16 + s&0xffff
	}
	return ^uint16(s)
}

// pseudo4 is the complemented pseudo-header sum for a TCP segment of n
// bytes behind the IPv4 header ip.
func pseudo4(ip []byte, n int) uint16 {
	ph := append(append([]byte(nil), ip[12:20]...), 0, ip[9], byte(n>>8), byte(n))
	return textbookChecksum(ph, 0)
}

// inject puts one buffer with frame and vnet header into the PMD's
// receive batch, as a vnet-header device's Recv would.
func inject(p *pmd, frame []byte, h packet.VnetHdr) {
	b := p.pool.Get()
	b.SetLen(copy(b.Room(), frame))
	b.HasVnet, b.Vnet = true, h
	p.rx.Append(b)
}

// offloadFixture: port 1 has vnet headers (system), port 2 has none
// (afxdp-like), port 3 has them; flows send 1 -> 2 and 3.
func offloadFixture(t testing.TB) (*fixture, *pmd, *port) {
	return offloadFixtureWith(t, false, Output(2), Output(3))
}

func offloadFixtureWith(t testing.TB, discard bool, actions ...Action) (*fixture, *pmd, *port) {
	cfg := Config{manual: true, PMDs: 1, FrameSize: packet.DefaultFrameSize, PoolBuffers: 128}
	fx := newFixture(t, cfg, 0)
	vnet := netdev.Capabilities{VnetHdr: true, MaxFrame: 65536}
	fx.addPort(netdevtest.Config{Name: "sys", Caps: vnet})
	fx.addPort(netdevtest.Config{Name: "xdp", Type: "afxdp", Discard: discard})
	fx.addPort(netdevtest.Config{Name: "tap", Caps: vnet, Discard: discard})
	fx.dp.SetUpcallHandler(handlerFunc(func(u *Upcall) UpcallResult {
		u.Mask = l2Mask()
		u.Actions = append(u.Actions, actions...)
		return UpcallInstall
	}))
	p := fx.dp.pmdList()[0]
	plan := p.takePlan(nil)
	return fx, p, plan.ports.list[0]
}

func TestGSOSegmentedForPortWithoutVnet(t *testing.T) {
	fx, p, in := offloadFixture(t)
	payload := make([]byte, 60000)
	for i := range payload {
		payload[i] = byte(i * 13)
	}
	const mss = 1448
	frame, h := tsoFrame(payload, mss)
	inject(p, frame, h)
	p.processBatch(in)

	segs := fx.devs[2].TakeSent()
	if want := (len(payload) + mss - 1) / mss; len(segs) != want {
		t.Fatalf("%d segments on the afxdp port, want %d", len(segs), want)
	}
	var got []byte
	for i, s := range segs {
		d := s.Data
		ip, tcp := d[14:34], d[34:]
		if s.Meta.HasVnet || len(d) > 14+20+20+mss {
			t.Fatalf("segment %d: vnet %v, %d bytes", i, s.Meta.HasVnet, len(d))
		}
		if textbookChecksum(ip, 0) != 0 || int(binary.BigEndian.Uint16(ip[2:])) != len(d)-14 {
			t.Fatalf("segment %d: bad IPv4 header", i)
		}
		if textbookChecksum(tcp, uint32(^pseudo4(ip, len(tcp)))) != 0 {
			t.Fatalf("segment %d: bad TCP checksum", i)
		}
		if seq := binary.BigEndian.Uint32(tcp[4:]); seq != 1_000_000+uint32(len(got)) {
			t.Fatalf("segment %d: seq %d", i, seq)
		}
		if fin := tcp[13]&0x09 != 0; fin != (i == len(segs)-1) {
			t.Fatalf("segment %d: flags %#x", i, tcp[13])
		}
		got = append(got, tcp[20:]...)
	}
	if !bytes.Equal(got, payload) {
		t.Fatal("segments do not reassemble to the payload")
	}
	// The vnet-header port gets the super-frame untouched.
	whole := fx.devs[3].TakeSent()
	if len(whole) != 1 || !bytes.Equal(whole[0].Data, frame) || !whole[0].Meta.HasVnet || whole[0].Meta.Vnet != h {
		t.Fatalf("vnet port got %d frames", len(whole))
	}
	st, err := fx.dp.PortStats(2)
	if err != nil || st.TxSegmented != 1 || int(st.TxSegments) != len(segs) || st.Drops() != 0 {
		t.Fatalf("port stats %+v, %v", st, err)
	}
	if s := p.pool.Stats(); s.Free != s.Buffers {
		t.Fatalf("pool leak: %+v", s)
	}
}

func TestPartialChecksumCompletedForPortWithoutVnet(t *testing.T) {
	fx, p, in := offloadFixture(t)
	frame, h := tsoFrame([]byte("a small segment"), 1448)
	h.GSOType, h.GSOSize = packet.VnetGSONone, 0
	inject(p, frame, h)
	p.processBatch(in)
	sent := fx.devs[2].TakeSent()
	if len(sent) != 1 {
		t.Fatalf("%d frames", len(sent))
	}
	d := sent[0].Data
	if textbookChecksum(d[34:], uint32(^pseudo4(d[14:34], len(d)-34))) != 0 {
		t.Fatal("checksum not completed")
	}
	if st, _ := fx.dp.PortStats(2); st.TxCsumCompleted != 1 {
		t.Fatalf("port stats %+v", st)
	}
}

func TestMalformedGSOCountedAsOffloadDrop(t *testing.T) {
	fx, p, in := offloadFixture(t)
	frame, h := tsoFrame(make([]byte, 5000), 1448)
	h.GSOSize = 0
	inject(p, frame, h)
	p.processBatch(in)
	if n := len(fx.devs[2].TakeSent()); n != 0 {
		t.Fatalf("%d frames sent", n)
	}
	p.publish()
	st, _ := fx.dp.PortStats(2)
	if st.TxOffloadDrops != 1 || fx.totals().TxDrops != 1 {
		t.Fatalf("port stats %+v, pmd tx drops %d", st, fx.totals().TxDrops)
	}
}

// TestGSOPathAllocatesNothing: segmenting a 64 KiB frame for an AF_XDP
// port, through the whole packet path, allocates nothing.
func TestGSOPathAllocatesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("alloc counts are meaningful in full runs only")
	}
	fx, p, in := offloadFixtureWith(t, true, Output(2))
	frame, h := tsoFrame(make([]byte, 64000), 1448)
	inject(p, frame, h)
	p.processBatch(in) // installs the flow
	n := testing.AllocsPerRun(50, func() {
		inject(p, frame, h)
		p.processBatch(in)
	})
	if n != 0 {
		t.Fatalf("%v allocations per GSO frame", n)
	}
	if fx.devs[2].Stats().TxPackets < 50*45 {
		t.Fatalf("only %d segments sent", fx.devs[2].Stats().TxPackets)
	}
}

// BenchmarkGSOToPortWithoutVnet: a 64 KiB TSO frame from a vnet-header
// port through the packet path to a port without one: 45 segments of
// 1448 bytes with full checksums. Reports the cost per frame and per
// byte of payload.
func BenchmarkGSOToPortWithoutVnet(b *testing.B) {
	_, p, in := offloadFixtureWith(b, true, Output(2))
	frame, h := tsoFrame(make([]byte, 64000), 1448)
	inject(p, frame, h)
	p.processBatch(in)
	b.SetBytes(64000)
	b.ReportAllocs()
	for b.Loop() {
		inject(p, frame, h)
		p.processBatch(in)
	}
}

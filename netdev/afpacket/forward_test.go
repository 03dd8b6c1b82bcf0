package afpacket

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"gvs/netdev"
	"gvs/netdev/internal/nettest"
	"gvs/packet"
)

func TestOpenMissingDevice(t *testing.T) {
	_, err := Open(Config{Name: "gvsnd-missing0"})
	if !errors.Is(err, netdev.ErrNoDevice) {
		t.Fatalf("Open of a missing device: %v, want ErrNoDevice", err)
	}
}

func TestForwardPingAndTCP(t *testing.T) { eachMode(t, testForwardPingAndTCP) }

func testForwardPingAndTCP(t *testing.T, cfg Config) {
	tp := newTopo(t, cfg)
	if got := pingRTTs(t, tp.ns1, addr2, 3, 56, false); len(got) != 0 {
		t.Fatalf("ping succeeded without a forwarder: %v", got)
	}
	fw := nettest.StartForwarder(t, tp.d1, tp.d2)
	rtts := pingRTTs(t, tp.ns1, addr2, 20, 56, false)
	if len(rtts) < 18 {
		t.Fatalf("only %d of 20 pings answered", len(rtts))
	}
	t.Logf("ping RTT through the forwarder: min %v median %v max %v", rtts[0], median(rtts), rtts[len(rtts)-1])

	before := tp.d1.Stats()
	res, err := tp.env.IperfTCP(tp.ns2, tp.ns1, addr2.String(), 2*time.Second)
	if err != nil {
		t.Fatalf("TCP through the forwarder (offloads at kernel defaults): %v", err)
	}
	after := tp.d1.Stats()
	rx := after.RxPackets - before.RxPackets
	s2 := tp.d2.Stats()
	t.Logf("TCP through the forwarder: %.2f Gbit/s, %d retransmits, %d frames of %d bytes on average; drops: kernel %d+%d, tx %d+%d",
		res.Gbps, res.Retransmits, rx, (after.RxBytes-before.RxBytes)/max(rx, 1), after.RxKernelDrops, s2.RxKernelDrops, after.TxDrops, s2.TxDrops)
	if res.Gbps < 0.1 {
		t.Errorf("TCP rate %.3f Gbit/s", res.Gbps)
	}
	if avg := (after.RxBytes - before.RxBytes) / max(rx, 1); avg <= 1514 {
		t.Errorf("average frame %d bytes: no GSO frames came through the vnet header path", avg)
	}
	if fw.RecvErrors.Load()+fw.SendErrors.Load() != 0 {
		t.Errorf("forwarder errors: recv %d send %d", fw.RecvErrors.Load(), fw.SendErrors.Load())
	}
}

func TestOversizeFramesDroppedAndCounted(t *testing.T) { eachMode(t, testOversize) }

func testOversize(t *testing.T, cfg Config) {
	tp := newTopo(t, cfg)
	// Jumbo frames may enter on the ns1 side but not leave on b2.
	tp.env.NSRun(tp.ns1, "ip", "link", "set", "a1", "mtu", "9000")
	tp.env.Run("ip", "link", "set", tp.b1, "mtu", "9000")
	nettest.StartForwarder(t, tp.d1, tp.d2)
	// The first ping also waits for neighbour resolution and the
	// forwarder's first poll, which on a loaded machine can outlast one
	// ping's timeout: wait for one answer before counting.
	for i := 0; len(pingRTTs(t, tp.ns1, addr2, 1, 56, true)) == 0; i++ {
		if i == 10 {
			t.Fatal("no small ping answered in 10 tries")
		}
	}
	if got := pingRTTs(t, tp.ns1, addr2, 3, 56, true); len(got) != 3 {
		t.Fatalf("small pings: %d of 3 answered", len(got))
	}
	before := tp.d2.Stats().TxDrops
	if got := pingRTTs(t, tp.ns1, addr2, 5, 4000, true); len(got) != 0 {
		t.Fatalf("4000-byte DF pings crossed a 1500-byte MTU: %v", got)
	}
	if drops := tp.d2.Stats().TxDrops - before; drops != 5 {
		t.Errorf("TxDrops grew by %d, want 5", drops)
	}
	if got := pingRTTs(t, tp.ns1, addr2, 3, 56, true); len(got) != 3 {
		t.Fatalf("after oversize frames, small pings: %d of 3 answered (wedged?)", len(got))
	}
}

// TestVLANTagsSurvive sends tagged frames (802.1Q, 802.1ad, and QinQ)
// into x1 -- b1 [forwarder] b2 -- x2 and checks they leave x2 with their
// tags: veth strips the outer tag into metadata, so the forwarder must put
// it back on receive.
func TestVLANTagsSurvive(t *testing.T) { eachMode(t, testVLANTagsSurvive) }

func testVLANTagsSurvive(t *testing.T, cfg Config) {
	env := nettest.New(t)
	x1, b1, b2, x2 := env.IfName("x1"), env.IfName("b1"), env.IfName("b2"), env.IfName("x2")
	env.Veth(x1, "", b1, "")
	env.Veth(b2, "", x2, "")
	in, out := openT(t, x1, cfg), openT(t, x2, cfg)
	nettest.StartForwarder(t, openT(t, b1, cfg), openT(t, b2, cfg))
	pool, err := packet.NewPool(packet.PoolConfig{Buffers: 64})
	if err != nil {
		t.Fatal(err)
	}
	for _, tags := range [][]packet.VLANTag{
		{{TPID: packet.EtherTypeVLAN, TCI: 100}},
		{{TPID: packet.EtherTypeVLAN, TCI: 0x6000 | 7}}, // priority 3
		{{TPID: packet.EtherTypeQinQ, TCI: 200}},
		{{TPID: packet.EtherTypeQinQ, TCI: 300}, {TPID: packet.EtherTypeVLAN, TCI: 42}},
	} {
		want := udpFrame(t, pool, tags)
		var batch packet.Batch
		batch.Append(want)
		wantBytes := append([]byte(nil), want.Data()...)
		if err := in.Send(0, &batch); err != nil {
			t.Fatal(err)
		}
		got := recvOne(t, out, pool, func(b *packet.Buffer) bool { return len(b.Data()) == len(wantBytes) })
		if got == nil {
			t.Fatalf("tags %v: frame lost", tags)
		}
		if !bytes.Equal(got.Data(), wantBytes) {
			t.Errorf("tags %v: frame changed on the way:\n got % x\nwant % x", tags, got.Data()[:22], wantBytes[:22])
		}
		pool.Put(got)
	}
	t.Run("gso", func(t *testing.T) { testTaggedGSO(t, in, out, pool) })
}

// testTaggedGSO sends a VLAN-tagged 3000-byte TCP GSO frame with a partial
// checksum: it must arrive whole, tag restored, with the checksum offsets
// still pointing at the TCP checksum behind the tag.
func testTaggedGSO(t *testing.T, in, out *Device, pool *packet.Pool) {
	b := pool.Get()
	const payload = 3000
	f := b.Room()[:14+20+20+payload]
	clear(f)
	copy(f, []byte{0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00})
	ip := f[14:]
	ip[0], ip[8], ip[9] = 0x45, 64, packet.ProtoTCP
	binary.BigEndian.PutUint16(ip[2:], 20+20+payload)
	copy(ip[12:], []byte{198, 18, 9, 1, 198, 18, 9, 2})
	binary.BigEndian.PutUint16(ip[10:], packet.IPv4HeaderChecksum(ip[:20]))
	tcp := ip[20:]
	binary.BigEndian.PutUint16(tcp[0:], 40000)
	binary.BigEndian.PutUint16(tcp[2:], 5201)
	tcp[12], tcp[13] = 5<<4, 0x18 // PSH ACK
	binary.BigEndian.PutUint16(tcp[16:], packet.PseudoHeaderSumV4([4]byte{198, 18, 9, 1}, [4]byte{198, 18, 9, 2}, packet.ProtoTCP, 20+payload))
	for i := range payload {
		tcp[20+i] = byte(i)
	}
	b.SetLen(len(f))
	b.HasVnet = true
	b.Vnet = packet.VnetHdr{Flags: packet.VnetNeedsCsum, GSOType: packet.VnetGSOTCPv4, HdrLen: 54,
		GSOSize: 1448, CsumStart: 34, CsumOffset: 16}
	b.PushVLAN(100)
	want, wantHdr := append([]byte(nil), b.Data()...), b.Vnet
	var batch packet.Batch
	batch.Append(b)
	if err := in.Send(0, &batch); err != nil {
		t.Fatal(err)
	}
	got := recvOne(t, out, pool, func(b *packet.Buffer) bool { return b.Len() == len(want) })
	if got == nil {
		t.Fatalf("tagged GSO frame lost; stats in %+v out %+v", in.Stats(), out.Stats())
	}
	defer pool.Put(got)
	if !bytes.Equal(got.Data(), want) {
		t.Errorf("frame changed:\n got % x\nwant % x", got.Data()[:60], want[:60])
	}
	g := got.Vnet
	if !got.HasVnet || g.GSOType != wantHdr.GSOType || g.GSOSize != wantHdr.GSOSize ||
		g.Flags&packet.VnetNeedsCsum == 0 || g.CsumStart != wantHdr.CsumStart || g.CsumOffset != wantHdr.CsumOffset {
		t.Errorf("virtio_net_hdr %+v, want %+v", g, wantHdr)
	}
}

// udpFrame builds a broadcast IPv4/UDP frame with the given tags.
func udpFrame(t testing.TB, pool *packet.Pool, tags []packet.VLANTag) *packet.Buffer {
	b := pool.Get()
	f := b.Room()[:14+20+8+32]
	copy(f, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00})
	ip := f[14:]
	ip[0], ip[8], ip[9] = 0x45, 64, packet.ProtoUDP
	binary.BigEndian.PutUint16(ip[2:], 20+8+32)
	copy(ip[12:], []byte{198, 18, 9, 1, 198, 18, 9, 255})
	binary.BigEndian.PutUint16(ip[10:], packet.IPv4HeaderChecksum(ip[:20]))
	binary.BigEndian.PutUint16(ip[20:], 9)
	binary.BigEndian.PutUint16(ip[22:], 9)
	binary.BigEndian.PutUint16(ip[24:], 8+32)
	b.SetLen(len(f))
	for i := len(tags) - 1; i >= 0; i-- {
		if !b.PushVLANTag(tags[i]) {
			t.Fatal("PushVLANTag failed")
		}
	}
	return b
}

// recvOne polls d's queue 0 for up to a second for a frame match accepts;
// others are freed.
func recvOne(t testing.TB, d netdev.Device, pool *packet.Pool, match func(*packet.Buffer) bool) *packet.Buffer {
	var batch packet.Batch
	for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
		if _, err := d.Recv(0, &batch, pool); err != nil {
			t.Fatal(err)
		}
		var found *packet.Buffer
		for _, b := range batch.Buffers() {
			if found == nil && match(b) {
				found = b
			} else {
				pool.Put(b)
			}
		}
		batch.Reset()
		if found != nil {
			return found
		}
	}
	return nil
}

package tap

import (
	"encoding/binary"
	"net"
	"net/netip"
	"slices"
	"testing"
	"time"

	"gvs/netdev/afpacket"
	"gvs/netdev/internal/nettest"
	"gvs/packet"
)

// TestForwardAFPacketToTap forwards between ns1 (a1 -- b1, afpacket) and a
// tap device moved into ns2, as an internal port would be: ping and TCP in
// both directions with offloads at kernel defaults.
func TestForwardAFPacketToTap(t *testing.T) {
	env := nettest.New(t)
	ns1, ns2 := env.NS("ns1"), env.NS("ns2")
	b1, tp := env.IfName("b1"), env.IfName("tp")
	env.Veth("a1", ns1, b1, "")
	env.Addr(ns1, "a1", "198.18.1.1/24")
	tapDev := openT(t, Config{Name: tp, Type: "internal"})
	env.Run("ip", "link", "set", tp, "netns", ns2)
	env.NSRun(ns2, "ip", "link", "set", tp, "up")
	env.Addr(ns2, tp, "198.18.1.2/24")
	sys, err := afpacket.Open(afpacket.Config{Name: b1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sys.Close() })
	fw := nettest.StartForwarder(t, sys, tapDev)

	p, err := nettest.NewPinger(ns1, false)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var rtts []time.Duration
	for range 10 {
		if rtt, err := p.Ping(netip.MustParseAddr("198.18.1.2"), 56, 500*time.Millisecond); err == nil {
			rtts = append(rtts, rtt)
		}
	}
	if len(rtts) < 9 {
		t.Fatalf("%d of 10 pings answered through the tap", len(rtts))
	}
	slices.Sort(rtts)
	t.Logf("ping RTT afpacket<->tap: median %v", rtts[len(rtts)/2])
	for _, dir := range []struct {
		name  string
		extra []string
	}{{"afpacket->tap", nil}, {"tap->afpacket", []string{"-R"}}} {
		before := tapDev.Stats()
		res, err := env.IperfTCP(ns2, ns1, "198.18.1.2", 2*time.Second, dir.extra...)
		if err != nil {
			t.Fatalf("TCP %s: %v", dir.name, err)
		}
		after := tapDev.Stats()
		t.Logf("TCP %s: %.2f Gbit/s, %d retransmits; tap rx %d frames avg %d B, tx %d frames avg %d B, drops tx %d kernel %d",
			dir.name, res.Gbps, res.Retransmits,
			after.RxPackets-before.RxPackets, (after.RxBytes-before.RxBytes)/max(1, after.RxPackets-before.RxPackets),
			after.TxPackets-before.TxPackets, (after.TxBytes-before.TxBytes)/max(1, after.TxPackets-before.TxPackets),
			after.TxDrops-before.TxDrops, after.RxKernelDrops)
		if res.Gbps < 0.1 {
			t.Errorf("TCP %s: %.3f Gbit/s", dir.name, res.Gbps)
		}
	}
	if s := tapDev.Stats(); s.RxBytes/max(1, s.RxPackets) <= 1514 {
		t.Errorf("no GSO frames read from the tap (avg %d B): TUNSETOFFLOAD not in effect", s.RxBytes/max(1, s.RxPackets))
	}
	if fw.RecvErrors.Load()+fw.SendErrors.Load() != 0 {
		t.Errorf("forwarder errors: recv %d send %d", fw.RecvErrors.Load(), fw.SendErrors.Load())
	}
}

// TestRecvSendNoAllocs writes ICMP echo requests into a tap device whose
// namespace answers them, and reads the replies: in steady state neither
// Send nor Recv allocates.
func TestRecvSendNoAllocs(t *testing.T) {
	env := nettest.New(t)
	ns := env.NS("ns")
	name := env.IfName("tp")
	d := openT(t, Config{Name: name, Type: "internal"})
	tapMAC := d.MAC()
	peerMAC := net.HardwareAddr{2, 0, 0, 0, 0, 2}
	env.Run("ip", "link", "set", name, "netns", ns)
	env.NSRun(ns, "ip", "link", "set", name, "up")
	env.Addr(ns, name, "198.18.3.1/24")
	env.NSRun(ns, "ip", "neigh", "add", "198.18.3.2", "lladdr", peerMAC.String(), "dev", name)
	pool, err := packet.NewPool(packet.PoolConfig{Buffers: 64})
	if err != nil {
		t.Fatal(err)
	}
	req := echoRequest(pool, tapMAC, peerMAC)
	var tx, rx packet.Batch
	replies := 0
	round := func() {
		tx.Append(pool.Clone(req))
		if err := d.Send(0, &tx); err != nil {
			t.Fatal(err)
		}
		for end := time.Now().Add(time.Second); time.Now().Before(end); {
			if _, err := d.Recv(0, &rx, pool); err != nil {
				t.Fatal(err)
			}
			got := false
			for _, b := range rx.Buffers() {
				got = got || b.Len() == req.Len() && b.Data()[14+20] == 0 // echo reply
			}
			pool.PutBatch(&rx)
			if got {
				replies++
				return
			}
		}
	}
	round()
	if allocs := testing.AllocsPerRun(50, round); allocs != 0 {
		t.Errorf("Send+Recv allocate %v times per round", allocs)
	}
	if replies != 52 { // AllocsPerRun runs once more to warm up
		t.Errorf("%d echo replies, want 52", replies)
	}
	if s := d.Stats(); s.TxPackets != 52 || s.RxPackets < 52 {
		t.Errorf("stats %+v", s)
	}
	pool.Put(req)
}

func echoRequest(pool *packet.Pool, dst, src net.HardwareAddr) *packet.Buffer {
	b := pool.Get()
	f := b.Room()[:14+20+8+56]
	clear(f)
	copy(f, dst)
	copy(f[6:], src)
	binary.BigEndian.PutUint16(f[12:], packet.EtherTypeIPv4)
	ip := f[14:]
	ip[0], ip[8], ip[9] = 0x45, 64, packet.ProtoICMP
	binary.BigEndian.PutUint16(ip[2:], 20+8+56)
	copy(ip[12:], []byte{198, 18, 3, 2, 198, 18, 3, 1})
	binary.BigEndian.PutUint16(ip[10:], packet.IPv4HeaderChecksum(ip[:20]))
	icmp := ip[20:]
	icmp[0] = 8
	binary.BigEndian.PutUint16(icmp[4:], 0x4756)
	binary.BigEndian.PutUint16(icmp[2:], ^packet.Checksum(icmp, 0))
	b.SetLen(len(f))
	return b
}

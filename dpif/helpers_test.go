package dpif

import (
	"encoding/binary"
	"testing"
	"time"

	"gvs/netdev/netdevtest"
	"gvs/packet"
)

// udpFrame builds an Ethernet/IPv4/UDP frame, with an 802.1Q tag if vid
// is not 0.
func udpFrame(dst, src [6]byte, vid uint16, srcIP, dstIP [4]byte, sport, dport uint16) []byte {
	f := make([]byte, 0, 64)
	f = append(f, dst[:]...)
	f = append(f, src[:]...)
	if vid != 0 {
		f = binary.BigEndian.AppendUint16(f, packet.EtherTypeVLAN)
		f = binary.BigEndian.AppendUint16(f, vid)
	}
	f = binary.BigEndian.AppendUint16(f, packet.EtherTypeIPv4)
	ip := []byte{0x45, 0, 0, 28 + 4, 0, 0, 0, 0, 64, packet.ProtoUDP, 0, 0}
	ip = append(ip, srcIP[:]...)
	ip = append(ip, dstIP[:]...)
	binary.BigEndian.PutUint16(ip[10:], packet.IPv4HeaderChecksum(ip))
	f = append(f, ip...)
	f = binary.BigEndian.AppendUint16(f, sport)
	f = binary.BigEndian.AppendUint16(f, dport)
	f = binary.BigEndian.AppendUint16(f, 12)
	f = append(f, 0, 0, 'p', 'i', 'n', 'g')
	return f
}

func mac(b byte) [6]byte { return [6]byte{0x02, 0, 0, 0, 0, b} }

// fixture is a datapath with fake ports.
type fixture struct {
	t    testing.TB
	dp   *Datapath
	devs map[uint32]*netdevtest.Device
}

func newFixture(t testing.TB, cfg Config, nports int) *fixture {
	t.Helper()
	if cfg.PoolBuffers == 0 {
		cfg.PoolBuffers = 256
	}
	if cfg.FrameSize == 0 {
		cfg.FrameSize = 2048
	}
	if cfg.PMDs == 0 {
		cfg.PMDs = 2
	}
	dp, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	fx := &fixture{t: t, dp: dp, devs: map[uint32]*netdevtest.Device{}}
	t.Cleanup(func() { dp.Close() })
	for range nports {
		fx.addPort(netdevtest.Config{})
	}
	return fx
}

func (fx *fixture) addPort(c netdevtest.Config) (uint32, *netdevtest.Device) {
	fx.t.Helper()
	if c.Name == "" {
		c.Name = "p" + string(rune('a'+len(fx.devs)))
	}
	if c.TxQueues == 0 {
		c.TxQueues = 4
	}
	d := netdevtest.MustNew(c)
	no, err := fx.dp.PortAdd(d, AutoPortNo)
	if err != nil {
		fx.t.Fatal(err)
	}
	fx.devs[no] = d
	return no, d
}

// waitFor polls cond for up to 5 s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// totals sums the PMD statistics.
func (fx *fixture) totals() PMDStats {
	var s PMDStats
	for _, p := range fx.dp.PMDStats() {
		s.Packets += p.Packets
		s.EMCHits += p.EMCHits
		s.MegaflowHits += p.MegaflowHits
		s.Misses += p.Misses
		s.Upcalls += p.Upcalls
		s.LostUpcalls += p.LostUpcalls
		s.TxPackets += p.TxPackets
		s.TxDrops += p.TxDrops
		s.BusyNs += p.BusyNs
		s.Iterations += p.Iterations
		s.PoolFree += p.PoolFree
		s.PoolSize += p.PoolSize
	}
	return s
}

// handlerFunc adapts a function to UpcallHandler.
type handlerFunc func(u *Upcall) UpcallResult

func (h handlerFunc) Upcall(u *Upcall) UpcallResult { return h(u) }

// l2Mask matches in_port and both MAC addresses.
func l2Mask() packet.Mask {
	return packet.Mask{InPort: ^uint32(0), DstMAC: [6]byte{255, 255, 255, 255, 255, 255}, SrcMAC: [6]byte{255, 255, 255, 255, 255, 255}}
}

package ofproto

import (
	"encoding/binary"
	"testing"
	"time"

	"gvs/dpif"
	"gvs/netdev/netdevtest"
	"gvs/packet"
)

func mac(b byte) [6]byte { return [6]byte{0x02, 0, 0, 0, 0, b} }

var broadcast = [6]byte{255, 255, 255, 255, 255, 255}

// frame builds an Ethernet/IPv4/UDP frame; tci != 0 adds an 802.1Q tag,
// tagged forces a tag even for tci 0 (priority or VID 0 tag).
func frame(dst, src [6]byte, tci uint16, tagged bool) []byte {
	f := append(append([]byte{}, dst[:]...), src[:]...)
	if tci != 0 || tagged {
		f = binary.BigEndian.AppendUint16(f, packet.EtherTypeVLAN)
		f = binary.BigEndian.AppendUint16(f, tci)
	}
	f = binary.BigEndian.AppendUint16(f, packet.EtherTypeIPv4)
	ip := []byte{0x45, 0, 0, 32, 0, 0, 0, 0, 64, packet.ProtoUDP, 0, 0, 198, 18, 0, 1, 198, 18, 0, 2}
	binary.BigEndian.PutUint16(ip[10:], packet.IPv4HeaderChecksum(ip))
	f = append(f, ip...)
	return append(f, 0x30, 0x39, 0x00, 0x35, 0, 12, 0, 0, 'g', 'v', 's', '!')
}

type fixture struct {
	t        testing.TB
	dp       *dpif.Datapath
	sw       *Switch
	br       *Bridge
	devs     map[uint32]*netdevtest.Device
	injected uint64
}

// newFixture: a datapath with one PMD, a bridge "br0" and n ports with
// the given configurations (port numbers 1..n).
func newFixture(t testing.TB, dcfg dpif.Config, bcfg BridgeConfig, ports ...PortConfig) *fixture {
	t.Helper()
	dcfg.PMDs = max(dcfg.PMDs, 1)
	if dcfg.PoolBuffers == 0 {
		dcfg.PoolBuffers = 512
	}
	if dcfg.FrameSize == 0 {
		dcfg.FrameSize = 2048
	}
	dp, err := dpif.New(dcfg)
	if err != nil {
		t.Fatal(err)
	}
	fx := &fixture{t: t, dp: dp, sw: New(dp, nil), devs: map[uint32]*netdevtest.Device{}}
	t.Cleanup(func() { fx.sw.Close(); dp.Close() })
	fx.br, err = fx.sw.AddBridge("br0", bcfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, pc := range ports {
		fx.addPort(fx.br, pc)
	}
	return fx
}

func (fx *fixture) addPort(br *Bridge, pc PortConfig) uint32 {
	fx.t.Helper()
	d := netdevtest.MustNew(netdevtest.Config{Name: "p" + string(rune('1'+len(fx.devs))), TxQueues: 4})
	no, err := fx.dp.PortAdd(d, dpif.AutoPortNo)
	if err != nil {
		fx.t.Fatal(err)
	}
	fx.devs[no] = d
	if err := br.AddPort(no, pc); err != nil {
		fx.t.Fatal(err)
	}
	return no
}

// send injects a frame on port and waits until the datapath has handled
// it, then returns what every port sent because of it.
func (fx *fixture) send(port uint32, f []byte) map[uint32][][]byte {
	fx.t.Helper()
	for _, d := range fx.devs {
		d.TakeSent()
	}
	fx.devs[port].Inject(0, f)
	fx.injected++
	fx.settle()
	out := map[uint32][][]byte{}
	for no, d := range fx.devs {
		for _, s := range d.TakeSent() {
			out[no] = append(out[no], s.Data)
		}
	}
	return out
}

// settle waits until the PMDs have processed every injected packet.
func (fx *fixture) settle() {
	fx.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var n uint64
		for _, s := range fx.dp.PMDStats() {
			n += s.Packets
		}
		if n >= fx.injected {
			return
		}
		if time.Now().After(deadline) {
			fx.t.Fatalf("datapath handled %d of %d packets", n, fx.injected)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// expect checks that exactly the ports in want got one frame each, with
// the given outer VLAN tag (0: untagged).
func (fx *fixture) expect(what string, got map[uint32][][]byte, want map[uint32]uint16) {
	fx.t.Helper()
	for no, frames := range got {
		tci, ok := want[no]
		if !ok {
			fx.t.Errorf("%s: port %d got %d frames, want none", what, no, len(frames))
			continue
		}
		if len(frames) != 1 {
			fx.t.Errorf("%s: port %d got %d frames, want 1", what, no, len(frames))
			continue
		}
		var k packet.Key
		packet.Parse(frames[0], &k)
		if gotTCI := k.VLANs[0].TCI; gotTCI != tci || k.VLANs[0].Present() != (tci != 0) {
			fx.t.Errorf("%s: port %d got tag %#x (present %v), want %#x", what, no, gotTCI, k.VLANs[0].Present(), tci)
		}
		if k.VLANs[1].Present() {
			fx.t.Errorf("%s: port %d got a second tag", what, no)
		}
	}
	for no := range want {
		if len(got[no]) == 0 {
			fx.t.Errorf("%s: port %d got nothing", what, no)
		}
	}
}

func (fx *fixture) pmdTotals() dpif.PMDStats {
	var t dpif.PMDStats
	for _, s := range fx.dp.PMDStats() {
		t.EMCHits += s.EMCHits
		t.MegaflowHits += s.MegaflowHits
		t.Upcalls += s.Upcalls
		t.PoolFree += s.PoolFree
		t.PoolSize += s.PoolSize
	}
	return t
}

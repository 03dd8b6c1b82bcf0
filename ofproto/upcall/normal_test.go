package upcall_test

// NORMAL on a real datapath, ported from the NORMAL-only ofproto's tests:
// learning, flooding, VLAN rules on real frames, and what the revalidator
// now does in place of per-flow tags (flows fixed after learning, moves,
// evictions; MAC entries kept alive by the traffic of installed flows).

import (
	"encoding/binary"
	"testing"
	"time"

	"gvs/dpif"
	"gvs/netdev/netdevtest"
	maclearn "gvs/ofproto/mac"
	"gvs/ofproto/mf"
	"gvs/ofproto/ofpact"
	"gvs/ofproto/upcall"
	"gvs/ofproto/xlate"
	"gvs/ofproto/xlate/xlatetest"
	"gvs/packet"
)

var broadcast = [6]byte{255, 255, 255, 255, 255, 255}

// vframe is frame with an 802.1Q tag when tci != 0 or tagged.
func vframe(dst, src [6]byte, tci uint16, tagged bool) []byte {
	f := frame(dst, src, 2)
	if tci == 0 && !tagged {
		return f
	}
	out := append([]byte{}, f[:12]...)
	out = binary.BigEndian.AppendUint16(out, packet.EtherTypeVLAN)
	out = binary.BigEndian.AppendUint16(out, tci)
	return append(out, f[12:]...)
}

// newNormalFixture: a bridge whose table 0 says NORMAL, with ports of the
// given VLAN configurations (OpenFlow ports 1..n).
func newNormalFixture(t *testing.T, cfgs ...maclearn.PortConfig) *fixture {
	dp, err := dpif.New(dpif.Config{PMDs: 1, PoolBuffers: 512, FrameSize: 2048, EMCInsertInvProb: 1})
	if err != nil {
		t.Fatal(err)
	}
	fx := &fixture{t: t, dp: dp, br: xlatetest.NewBridge("br0"), devs: map[uint32]*netdevtest.Device{}, dpPort: map[uint32]uint32{}}
	fx.h = upcall.New(dp, upcall.Config{RevalidateInterval: time.Hour})
	dp.SetUpcallHandler(fx.h)
	t.Cleanup(func() { fx.h.Close(); dp.Close() })
	ports := upcall.Ports{}
	for i, c := range cfgs {
		no := uint32(i + 1)
		d := netdevtest.MustNew(netdevtest.Config{Name: "p" + string(rune('0'+no)), TxQueues: 4})
		dpNo, err := dp.PortAdd(d, dpif.AutoPortNo)
		if err != nil {
			t.Fatal(err)
		}
		vp, err := maclearn.NewVLANPort(c)
		if err != nil {
			t.Fatal(err)
		}
		p := &xlate.Port{OFPort: no, DPPort: dpNo, Name: d.Name(), Live: true, VLAN: vp}
		fx.br.AddPort(p)
		fx.devs[no], fx.dpPort[no] = d, dpNo
		ports[dpNo] = upcall.Binding{Bridge: fx.br, Port: p}
	}
	fx.h.SetPorts(ports)
	fx.br.AddRule(&xlatetest.Rule{Acts: []xlate.Action{&ofpact.Output{Port: mf.PortNormal}}})
	return fx
}

// sendTags injects f on port in and returns, per OpenFlow port, the outer
// tag of each frame it sent (0: untagged).
func (fx *fixture) sendTags(in uint32, f []byte) map[uint32][]uint16 {
	fx.t.Helper()
	for _, d := range fx.devs {
		d.TakeSent()
	}
	fx.devs[in].Inject(0, f)
	fx.injected++
	deadline := time.Now().Add(5 * time.Second)
	for {
		var n uint64
		for _, s := range fx.dp.PMDStats() {
			n += s.Packets
		}
		if n >= fx.injected {
			break
		}
		if time.Now().After(deadline) {
			fx.t.Fatalf("datapath handled %d of %d packets", n, fx.injected)
		}
		time.Sleep(100 * time.Microsecond)
	}
	out := map[uint32][]uint16{}
	for p, d := range fx.devs {
		for _, s := range d.TakeSent() {
			var k packet.Key
			packet.Parse(s.Data, &k)
			tci := k.VLANs[0].TCI
			if !k.VLANs[0].Present() {
				tci = 0
			}
			out[p] = append(out[p], tci)
		}
	}
	return out
}

// expect checks that exactly the ports in want sent one frame each, with
// the given tag.
func (fx *fixture) expect(what string, got map[uint32][]uint16, want map[uint32]uint16) {
	fx.t.Helper()
	for p, tags := range got {
		w, ok := want[p]
		switch {
		case !ok:
			fx.t.Errorf("%s: port %d sent %d frames, want none", what, p, len(tags))
		case len(tags) != 1:
			fx.t.Errorf("%s: port %d sent %d frames, want 1", what, p, len(tags))
		case tags[0] != w:
			fx.t.Errorf("%s: port %d sent tag %#x, want %#x", what, p, tags[0], w)
		}
	}
	for p := range want {
		if len(got[p]) == 0 {
			fx.t.Errorf("%s: port %d sent nothing", what, p)
		}
	}
}

func TestNormalLearningFloodingAndNoHairpin(t *testing.T) {
	fx := newNormalFixture(t, maclearn.PortConfig{}, maclearn.PortConfig{}, maclearn.PortConfig{})
	A, B, C := mac6(0xa), mac6(0xb), mac6(0xc)
	fx.expect("unknown unicast floods", fx.sendTags(1, vframe(B, A, 0, false)), map[uint32]uint16{2: 0, 3: 0})
	fx.expect("reply goes to the learned port", fx.sendTags(2, vframe(A, B, 0, false)), map[uint32]uint16{1: 0})
	// Learning B makes the installed A->B flood flow wrong: the
	// revalidator, woken by the learning, fixes it.
	waitFor(t, "A->B revalidated", func() bool {
		e, ok := fx.dp.Lookup(keyOf(fx, 1, vframe(B, A, 0, false)))
		return ok && e.Actions.String() == dpString(fx, 2)
	})
	fx.expect("now known unicast", fx.sendTags(1, vframe(B, A, 0, false)), map[uint32]uint16{2: 0})
	fx.expect("broadcast floods", fx.sendTags(1, vframe(broadcast, A, 0, false)), map[uint32]uint16{2: 0, 3: 0})
	fx.expect("multicast floods", fx.sendTags(3, vframe([6]byte{0x01, 0, 0x5e, 0, 0, 1}, C, 0, false)), map[uint32]uint16{1: 0, 2: 0})
	fx.expect("no hairpin to a MAC learned on the input port", fx.sendTags(1, vframe(A, C, 0, false)), nil)
	fx.expect("reserved multicast is dropped", fx.sendTags(1, vframe([6]byte{0x01, 0x80, 0xc2, 0, 0, 0}, A, 0, false)), nil)
	if s := fx.br.MACs().Stats(); s.Learned != 3 || s.Entries != 3 || s.Moved != 1 {
		t.Fatalf("mac stats %+v", s)
	}
	for _, f := range fx.dp.Dump() {
		if f.Mask.InPort != ^uint32(0) || f.Mask.SrcMAC != broadcast || f.Mask.DstMAC != broadcast || f.Mask.DstPort != 0 || f.Mask.SrcIPv4 != [4]byte{} {
			t.Fatalf("megaflow mask wider than NORMAL needs: %+v", f.Mask)
		}
	}
}

func mac6(b byte) [6]byte { return [6]byte{0x02, 0, 0, 0, 0, b} }

func keyOf(fx *fixture, in uint32, f []byte) *packet.Key {
	var k packet.Key
	packet.Parse(f, &k)
	k.InPort = fx.dpPort[in]
	return &k
}

func dpString(fx *fixture, ofports ...uint32) string {
	var as dpif.Actions
	for _, p := range ofports {
		as = append(as, dpif.Output(fx.dpPort[p]))
	}
	return as.String()
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: timed out", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestNormalMACMove(t *testing.T) {
	fx := newNormalFixture(t, maclearn.PortConfig{}, maclearn.PortConfig{}, maclearn.PortConfig{})
	A, B := mac6(0xa), mac6(0xb)
	fx.sendTags(1, vframe(B, A, 0, false))
	fx.sendTags(2, vframe(A, B, 0, false))
	fx.expect("A on port 1", fx.sendTags(2, vframe(A, B, 0, false)), map[uint32]uint16{1: 0})
	fx.sendTags(3, vframe(B, A, 0, false)) // A moves to port 3
	fx.h.Revalidate()
	fx.expect("A moved to port 3", fx.sendTags(2, vframe(A, B, 0, false)), map[uint32]uint16{3: 0})
	// And back: A's traffic from port 1 hits the flow installed when it
	// was there (no upcall); crediting it relearns A on port 1, and the
	// next round fixes B->A (Open vSwitch's xlate_mac_learning_update).
	fx.sendTags(1, vframe(B, A, 0, false))
	fx.h.Revalidate()
	fx.h.Revalidate()
	fx.expect("A back on port 1", fx.sendTags(2, vframe(A, B, 0, false)), map[uint32]uint16{1: 0})
	if s := fx.br.MACs().Stats(); s.Moved != 2 {
		t.Fatalf("moves %d", s.Moved)
	}
}

func TestNormalVLANIsolationBetweenAccessPorts(t *testing.T) {
	fx := newNormalFixture(t, maclearn.PortConfig{Tag: 10}, maclearn.PortConfig{Tag: 10}, maclearn.PortConfig{Tag: 20}, maclearn.PortConfig{Tag: 20})
	A, B := mac6(0xa), mac6(0xb)
	fx.expect("vlan 10 broadcast", fx.sendTags(1, vframe(broadcast, A, 0, false)), map[uint32]uint16{2: 0})
	fx.expect("vlan 20 broadcast", fx.sendTags(3, vframe(broadcast, B, 0, false)), map[uint32]uint16{4: 0})
	fx.expect("same MAC, other VLAN", fx.sendTags(4, vframe(A, B, 0, false)), map[uint32]uint16{3: 0})
	fx.expect("access port drops tagged frames", fx.sendTags(1, vframe(broadcast, A, 10, false)), nil)
	fx.expect("access port takes priority tags", fx.sendTags(1, vframe(broadcast, A, 5<<13, true)), map[uint32]uint16{2: 0})
}

func TestNormalTrunkTaggingAndUntagging(t *testing.T) {
	fx := newNormalFixture(t,
		maclearn.PortConfig{Tag: 10},              // 1: access 10
		maclearn.PortConfig{},                     // 2: trunk, all VLANs
		maclearn.PortConfig{Trunks: []uint16{20}}, // 3: trunk of VLAN 20
		maclearn.PortConfig{Tag: 20})              // 4: access 20
	A, B, C := mac6(0xa), mac6(0xb), mac6(0xc)
	fx.expect("access 10 -> trunk tagged", fx.sendTags(1, vframe(broadcast, A, 0, false)), map[uint32]uint16{2: 10})
	fx.expect("trunk vlan 10 -> access untagged", fx.sendTags(2, vframe(A, B, 10, false)), map[uint32]uint16{1: 0})
	fx.expect("trunk keeps priority", fx.sendTags(2, vframe(broadcast, B, 20|3<<13, false)), map[uint32]uint16{3: 20 | 3<<13, 4: 0})
	fx.expect("vlan outside trunks dropped", fx.sendTags(3, vframe(broadcast, C, 30, false)), nil)
	fx.expect("untagged on trunk is vlan 0", fx.sendTags(2, vframe(broadcast, B, 0, false)), nil)
	fx.expect("access 20 -> both trunks", fx.sendTags(4, vframe(broadcast, C, 0, false)), map[uint32]uint16{2: 20, 3: 20})
}

func TestNormalNativeVLANModes(t *testing.T) {
	fx := newNormalFixture(t,
		maclearn.PortConfig{VLANMode: maclearn.VLANModeNativeUntagged, Tag: 10, Trunks: []uint16{20}}, // 1
		maclearn.PortConfig{VLANMode: maclearn.VLANModeTrunk},                                         // 2
		maclearn.PortConfig{VLANMode: maclearn.VLANModeNativeTagged, Tag: 10})                         // 3
	A, B := mac6(0xa), mac6(0xb)
	fx.expect("untagged on native-untagged is vlan 10", fx.sendTags(1, vframe(broadcast, A, 0, false)), map[uint32]uint16{2: 10, 3: 10})
	fx.expect("vlan 10 leaves native-untagged untagged", fx.sendTags(2, vframe(broadcast, B, 10, false)), map[uint32]uint16{1: 0, 3: 10})
	fx.expect("vlan 20 leaves native-untagged tagged", fx.sendTags(2, vframe(broadcast, B, 20, false)), map[uint32]uint16{1: 20, 3: 20})
	fx.expect("vlan 30 is not trunked on port 1", fx.sendTags(2, vframe(broadcast, B, 30, false)), map[uint32]uint16{3: 30})
	fx.expect("untagged on native-tagged is vlan 10", fx.sendTags(3, vframe(broadcast, mac6(0xc), 0, false)), map[uint32]uint16{1: 0, 2: 10})
}

// TestNormalAgingKeepAliveByFlows: an address whose traffic only hits
// installed flows (no upcall) stays learned: the revalidator credits the
// flows' use to its entry. An idle one expires, and traffic to it floods.
func TestNormalAgingKeepAliveByFlows(t *testing.T) {
	fx := newNormalFixture(t, maclearn.PortConfig{}, maclearn.PortConfig{})
	fx.br.MACs().SetLimits(0, 600*time.Millisecond)
	A, B := mac6(0xa), mac6(0xb)
	fx.sendTags(1, vframe(B, A, 0, false))
	fx.sendTags(2, vframe(A, B, 0, false))
	fx.h.Revalidate()
	fx.sendTags(1, vframe(B, A, 0, false)) // installs A->B to port 2
	time.Sleep(400 * time.Millisecond)
	fx.h.Revalidate()
	fx.sendTags(1, vframe(B, A, 0, false)) // a flow hit: no upcall
	time.Sleep(400 * time.Millisecond)
	// B is 800 ms idle: expired by this round. A's flow was used 400 ms
	// ago: this round credits it and A stays.
	fx.h.Revalidate()
	if _, ok := fx.br.MACs().Lookup(0, A); !ok {
		t.Fatal("A expired although its flow carried traffic")
	}
	if _, ok := fx.br.MACs().Lookup(0, B); ok {
		t.Fatal("idle B kept")
	}
	fx.h.Revalidate() // the flows to B are revalidated: they flood again
	fx.expect("B forgotten", fx.sendTags(1, vframe(B, A, 0, false)), map[uint32]uint16{2: 0})
}

// TestNormalEvictionRevalidates: an evicted entry's flows follow.
func TestNormalEvictionRevalidates(t *testing.T) {
	fx := newNormalFixture(t, maclearn.PortConfig{}, maclearn.PortConfig{}, maclearn.PortConfig{})
	fx.br.MACs().SetLimits(2, time.Hour)
	A, B, D := mac6(0xa), mac6(0xb), mac6(0xd)
	fx.sendTags(1, vframe(B, A, 0, false))
	fx.expect("A known", fx.sendTags(2, vframe(A, B, 0, false)), map[uint32]uint16{1: 0})
	fx.expect("A evicted by D", fx.sendTags(3, vframe(A, D, 0, false)), map[uint32]uint16{1: 0, 2: 0})
	if s := fx.br.MACs().Stats(); s.Entries != 2 || s.Evicted != 1 {
		t.Fatalf("stats %+v", s)
	}
	fx.h.Revalidate()
	fx.expect("B->A floods again", fx.sendTags(2, vframe(A, B, 0, false)), map[uint32]uint16{1: 0, 3: 0})
}

// TestPortsChangeRevalidates: a port joining a VLAN or leaving the bridge
// changes the flows installed before.
func TestPortsChangeRevalidates(t *testing.T) {
	fx := newNormalFixture(t, maclearn.PortConfig{Tag: 10}, maclearn.PortConfig{Tag: 10}, maclearn.PortConfig{Tag: 20})
	fx.expect("before", fx.sendTags(1, vframe(broadcast, mac6(1), 0, false)), map[uint32]uint16{2: 0})
	vp, _ := maclearn.NewVLANPort(maclearn.PortConfig{Tag: 10})
	p3 := *fx.br.Port(3)
	p3.VLAN = vp
	fx.br.AddPort(&p3)
	fx.h.Changed()
	fx.h.Revalidate()
	fx.expect("after port 3 joins vlan 10", fx.sendTags(1, vframe(broadcast, mac6(1), 0, false)), map[uint32]uint16{2: 0, 3: 0})
}

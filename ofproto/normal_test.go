package ofproto

import (
	"testing"
	"time"

	"gvs/dpif"
)

func TestLearningFloodingAndNoHairpin(t *testing.T) {
	fx := newFixture(t, dpif.Config{EMCInsertInvProb: 1}, BridgeConfig{}, PortConfig{}, PortConfig{}, PortConfig{})
	A, B, C := mac(0xa), mac(0xb), mac(0xc)

	fx.expect("unknown unicast floods", fx.send(1, frame(B, A, 0, false)), map[uint32]uint16{2: 0, 3: 0})
	fx.expect("reply goes to the learned port", fx.send(2, frame(A, B, 0, false)), map[uint32]uint16{1: 0})
	// The flood flow for A->B was deleted when B was learned.
	fx.expect("now known unicast", fx.send(1, frame(B, A, 0, false)), map[uint32]uint16{2: 0})
	fx.expect("broadcast floods", fx.send(1, frame(broadcast, A, 0, false)), map[uint32]uint16{2: 0, 3: 0})
	fx.expect("multicast floods", fx.send(3, frame([6]byte{0x01, 0, 0x5e, 0, 0, 1}, C, 0, false)), map[uint32]uint16{1: 0, 2: 0})
	fx.expect("no hairpin to a MAC learned on the input port", fx.send(1, frame(A, C, 0, false)), nil)
	fx.expect("reserved multicast is dropped", fx.send(1, frame([6]byte{0x01, 0x80, 0xc2, 0, 0, 0}, A, 0, false)), nil)

	s := fx.br.MACStats()
	if s.Learned != 3 || s.Entries != 3 || s.Moved != 1 {
		// C was learned on port 3, then moved to port 1 by the hairpin test.
		t.Fatalf("mac stats %+v", s)
	}
	// Repeats hit the installed flows, from the EMC after the first.
	up := fx.pmdTotals().Upcalls
	for range 5 {
		fx.expect("repeat", fx.send(2, frame(A, B, 0, false)), map[uint32]uint16{1: 0})
	}
	if tot := fx.pmdTotals(); tot.Upcalls != up || tot.EMCHits < 4 {
		t.Fatalf("upcalls %d -> %d, emc hits %d", up, tot.Upcalls, tot.EMCHits)
	}
	for _, f := range fx.dp.Dump() {
		if f.Mask.InPort != ^uint32(0) || f.Mask.SrcMAC != broadcast || f.Mask.DstMAC != broadcast || f.Mask.DstPort != 0 {
			t.Fatalf("megaflow mask wider than needed: %+v", f.Mask)
		}
	}
}

func TestMACMove(t *testing.T) {
	fx := newFixture(t, dpif.Config{}, BridgeConfig{}, PortConfig{}, PortConfig{}, PortConfig{})
	A, B := mac(0xa), mac(0xb)
	fx.send(1, frame(B, A, 0, false))
	fx.send(2, frame(A, B, 0, false))
	fx.expect("A on port 1", fx.send(2, frame(A, B, 0, false)), map[uint32]uint16{1: 0})
	fx.send(3, frame(B, A, 0, false)) // A moves to port 3
	fx.expect("A moved to port 3", fx.send(2, frame(A, B, 0, false)), map[uint32]uint16{3: 0})
	// And back: the flow from A on port 1 was deleted, so A is relearned.
	fx.send(1, frame(B, A, 0, false))
	fx.expect("A back on port 1", fx.send(2, frame(A, B, 0, false)), map[uint32]uint16{1: 0})
	if s := fx.br.MACStats(); s.Moved != 2 {
		t.Fatalf("moves %d", s.Moved)
	}
}

func TestVLANIsolationBetweenAccessPorts(t *testing.T) {
	fx := newFixture(t, dpif.Config{}, BridgeConfig{}, PortConfig{Tag: 10}, PortConfig{Tag: 10}, PortConfig{Tag: 20}, PortConfig{Tag: 20})
	A, B := mac(0xa), mac(0xb)
	fx.expect("vlan 10 broadcast", fx.send(1, frame(broadcast, A, 0, false)), map[uint32]uint16{2: 0})
	fx.expect("vlan 20 broadcast", fx.send(3, frame(broadcast, B, 0, false)), map[uint32]uint16{4: 0})
	// A is known in VLAN 10 only: from VLAN 20 it is unknown, flooded in 20.
	fx.expect("same MAC, other VLAN", fx.send(4, frame(A, B, 0, false)), map[uint32]uint16{3: 0})
	fx.expect("access port drops tagged frames", fx.send(1, frame(broadcast, A, 10, false)), nil)
	fx.expect("access port takes priority tags", fx.send(1, frame(broadcast, A, 5<<13, true)), map[uint32]uint16{2: 0})
}

func TestTrunkTaggingAndUntagging(t *testing.T) {
	fx := newFixture(t, dpif.Config{}, BridgeConfig{},
		PortConfig{Tag: 10},              // 1: access 10
		PortConfig{},                     // 2: trunk, all VLANs
		PortConfig{Trunks: []uint16{20}}, // 3: trunk of VLAN 20
		PortConfig{Tag: 20})              // 4: access 20
	A, B, C := mac(0xa), mac(0xb), mac(0xc)
	fx.expect("access 10 -> trunk tagged", fx.send(1, frame(broadcast, A, 0, false)), map[uint32]uint16{2: 10})
	fx.expect("trunk vlan 10 -> access untagged", fx.send(2, frame(A, B, 10, false)), map[uint32]uint16{1: 0})
	fx.expect("trunk keeps priority", fx.send(2, frame(broadcast, B, 20|3<<13, false)), map[uint32]uint16{3: 20 | 3<<13, 4: 0})
	fx.expect("vlan outside trunks dropped", fx.send(3, frame(broadcast, C, 30, false)), nil)
	fx.expect("untagged on trunk is vlan 0", fx.send(2, frame(broadcast, B, 0, false)), nil)
	fx.expect("access 20 -> both trunks", fx.send(4, frame(broadcast, C, 0, false)), map[uint32]uint16{2: 20, 3: 20})
}

func TestNativeVLANModes(t *testing.T) {
	fx := newFixture(t, dpif.Config{}, BridgeConfig{},
		PortConfig{VLANMode: VLANModeNativeUntagged, Tag: 10, Trunks: []uint16{20}}, // 1
		PortConfig{VLANMode: VLANModeTrunk},                                         // 2
		PortConfig{VLANMode: VLANModeNativeTagged, Tag: 10})                         // 3
	A, B := mac(0xa), mac(0xb)
	fx.expect("untagged on native-untagged is vlan 10", fx.send(1, frame(broadcast, A, 0, false)), map[uint32]uint16{2: 10, 3: 10})
	fx.expect("vlan 10 leaves native-untagged untagged", fx.send(2, frame(broadcast, B, 10, false)), map[uint32]uint16{1: 0, 3: 10})
	fx.expect("vlan 20 leaves native-untagged tagged", fx.send(2, frame(broadcast, B, 20, false)), map[uint32]uint16{1: 20, 3: 20})
	fx.expect("vlan 30 is not trunked on port 1", fx.send(2, frame(broadcast, B, 30, false)), map[uint32]uint16{3: 30})
	fx.expect("untagged on native-tagged is vlan 10", fx.send(3, frame(broadcast, mac(0xc), 0, false)), map[uint32]uint16{1: 0, 2: 10})
}

func TestAgingAndKeepAliveByFlows(t *testing.T) {
	fx := newFixture(t, dpif.Config{}, BridgeConfig{MACAgingTime: 600 * time.Millisecond, AgingInterval: time.Hour},
		PortConfig{}, PortConfig{})
	A, B := mac(0xa), mac(0xb)
	fx.send(1, frame(B, A, 0, false))
	fx.send(2, frame(A, B, 0, false))
	fx.send(1, frame(B, A, 0, false)) // installs A->B to port 2
	if n := fx.br.RunAging(time.Now()); n != 0 || fx.br.MACStats().Entries != 2 {
		t.Fatalf("expired %d young entries", n)
	}
	time.Sleep(400 * time.Millisecond)
	fx.send(1, frame(B, A, 0, false)) // a flow hit: no upcall refreshes A
	time.Sleep(400 * time.Millisecond)
	// B is 800 ms old and idle: expired. A's entry is as old, but its
	// flow was used 400 ms ago: kept.
	if n := fx.br.RunAging(time.Now()); n != 1 {
		t.Fatalf("expired %d, want 1 (B)", n)
	}
	macs := fx.br.MACs()
	if len(macs) != 1 || [6]byte(macs[0].MAC) != A {
		t.Fatalf("table %+v", macs)
	}
	// B's flows are gone: traffic to B floods again.
	fx.expect("B forgotten", fx.send(1, frame(B, A, 0, false)), map[uint32]uint16{2: 0})
	if n := fx.br.RunAging(time.Now().Add(time.Second)); n != 1 || fx.br.MACStats().Expired != 2 {
		t.Fatalf("expired %d", n)
	}
}

// TestEvictionForgetsFlows: an evicted entry takes the flows to it along.
func TestEvictionForgetsFlows(t *testing.T) {
	fx := newFixture(t, dpif.Config{}, BridgeConfig{MACTableSize: 2}, PortConfig{}, PortConfig{}, PortConfig{})
	A, B, D := mac(0xa), mac(0xb), mac(0xd)
	fx.send(1, frame(B, A, 0, false))
	fx.expect("A known", fx.send(2, frame(A, B, 0, false)), map[uint32]uint16{1: 0})
	// Learning D evicts A before A is looked up: ports 1 and 2 hold one
	// entry each, and the tie goes to the lower port number.
	fx.expect("A evicted by D", fx.send(3, frame(A, D, 0, false)), map[uint32]uint16{1: 0, 2: 0})
	s := fx.br.MACStats()
	if s.Entries != 2 || s.Evicted != 1 || s.Learned != 3 {
		t.Fatalf("stats %+v", s)
	}
	// B's flow to A went with A's entry.
	fx.expect("B->A floods again", fx.send(2, frame(A, B, 0, false)), map[uint32]uint16{1: 0, 3: 0})
}

func TestTwoBridgesPartitionPorts(t *testing.T) {
	fx := newFixture(t, dpif.Config{}, BridgeConfig{}, PortConfig{}, PortConfig{})
	br1, err := fx.sw.AddBridge("br1", BridgeConfig{})
	if err != nil {
		t.Fatal(err)
	}
	fx.addPort(br1, PortConfig{})
	fx.addPort(br1, PortConfig{})
	fx.expect("br0 floods in br0", fx.send(1, frame(broadcast, mac(1), 0, false)), map[uint32]uint16{2: 0})
	fx.expect("br1 floods in br1", fx.send(4, frame(broadcast, mac(1), 0, false)), map[uint32]uint16{3: 0})
	if err := br1.AddPort(1, PortConfig{}); err == nil {
		t.Fatal("a port joined two bridges")
	}
	if err := fx.sw.DelBridge("br1"); err != nil {
		t.Fatal(err)
	}
	fx.expect("ports of a deleted bridge drop", fx.send(3, frame(broadcast, mac(1), 0, false)), nil)
}

func TestPortReconfigurationRevalidates(t *testing.T) {
	fx := newFixture(t, dpif.Config{}, BridgeConfig{}, PortConfig{Tag: 10}, PortConfig{Tag: 10}, PortConfig{Tag: 20})
	fx.expect("before", fx.send(1, frame(broadcast, mac(1), 0, false)), map[uint32]uint16{2: 0})
	if err := fx.br.SetPort(3, PortConfig{Tag: 10}); err != nil {
		t.Fatal(err)
	}
	fx.expect("after port 3 joins vlan 10", fx.send(1, frame(broadcast, mac(1), 0, false)), map[uint32]uint16{2: 0, 3: 0})
	if err := fx.br.DelPort(2); err != nil {
		t.Fatal(err)
	}
	fx.expect("after port 2 left", fx.send(1, frame(broadcast, mac(1), 0, false)), map[uint32]uint16{3: 0})
	if err := fx.br.SetPort(2, PortConfig{}); err == nil {
		t.Fatal("SetPort on a removed port succeeded")
	}
}

func TestBridgeConfigAndAgingGoroutine(t *testing.T) {
	fx := newFixture(t, dpif.Config{}, BridgeConfig{MACAgingTime: 100 * time.Millisecond, AgingInterval: 10 * time.Millisecond},
		PortConfig{}, PortConfig{})
	bpdu := [6]byte{0x01, 0x80, 0xc2, 0, 0, 0}
	fx.expect("BPDU dropped", fx.send(1, frame(bpdu, mac(1), 0, false)), nil)
	for i := range 4 {
		fx.send(1, frame(broadcast, mac(byte(10+i)), 0, false))
	}
	if n := fx.br.MACStats().Entries; n != 4 {
		t.Fatalf("%d entries", n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for fx.br.MACStats().Entries != 0 {
		if time.Now().After(deadline) {
			t.Fatal("aging goroutine expired nothing")
		}
		time.Sleep(10 * time.Millisecond)
	}
	fx.br.SetConfig(BridgeConfig{MACTableSize: 2, MACAgingTime: time.Hour, ForwardBPDU: true})
	fx.expect("BPDU forwarded", fx.send(1, frame(bpdu, mac(1), 0, false)), map[uint32]uint16{2: 0})
	for i := range 4 {
		fx.send(2, frame(broadcast, mac(byte(20+i)), 0, false))
	}
	s := fx.br.MACStats()
	if s.Entries != 2 || s.Max != 2 || s.Evicted < 2 {
		t.Fatalf("stats %+v", s)
	}
	fx.br.FlushMACs()
	if fx.br.MACStats().Entries != 0 || len(fx.br.MACs()) != 0 {
		t.Fatal("FlushMACs left entries")
	}
	// The totals are counters (exported as Prometheus counters): a flush
	// keeps them, as Open vSwitch's mac_learning_flush does.
	if after := fx.br.MACStats(); after.Learned != s.Learned || after.Evicted != s.Evicted || after.Expired != s.Expired {
		t.Fatalf("FlushMACs reset the totals: before %+v, after %+v", s, after)
	}
}

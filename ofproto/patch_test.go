package ofproto

import (
	"testing"
	"time"

	"gvs/dpif"
	"gvs/netdev/netdevtest"
)

// TestPatchPairing: patch ports pair when both exist and name each other
// (in bridges of one datapath type), unpair when either goes; traffic
// crosses the pair in one datapath pass (NORMAL on both bridges);
// removing the peer revalidates the installed flows; the crossings are
// counted on both ports.
func TestPatchPairing(t *testing.T) {
	f := newSwitchFixture(t)
	f.br.SetFailMode(FailStandalone)
	br1, err := f.sw.AddBridge("br1", BridgeConfig{DatapathType: "netdev"})
	if err != nil {
		t.Fatal(err)
	}
	br1.SetFailMode(FailStandalone)
	d3 := netdevtest.MustNew(netdevtest.Config{Name: "p3", RxQueues: 1, TxQueues: 2})
	no, err := f.sw.dp.PortAdd(d3, dpif.AutoPortNo)
	if err != nil {
		t.Fatal(err)
	}
	if _, errs := br1.AddPorts([]PortSpec{{Name: "p3", DPPort: no, Request: 1}}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	f.br.SetDatapathType("netdev")

	if _, errs := f.br.AddPorts([]PortSpec{{Name: "pa", Request: 5, Patch: true, PatchPeer: "pb"}}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	if got, want := f.br.PatchError("pa"), "No usable peer 'pb' exists in 'netdev' datapath."; got != want {
		t.Fatalf("unpaired error %q, want %q", got, want)
	}
	if _, errs := br1.AddPorts([]PortSpec{{Name: "pb", Request: 6, Patch: true, PatchPeer: "pa"}}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	pa, pb := f.br.Port(5), br1.Port(6)
	if pa == nil || pa.Patch == nil || pa.Patch.Peer == nil || pa.Patch.Peer.Bridge != br1 || pa.Patch.Peer.OFPort != 6 {
		t.Fatalf("pa not paired with pb: %+v", pa)
	}
	if pb.Patch.Peer == nil || pb.Patch.Peer.Bridge != f.br || pb.Patch.Peer.OFPort != 5 {
		t.Fatalf("pb not paired with pa: %+v", pb.Patch)
	}
	if e := f.br.PatchError("pa") + br1.PatchError("pb"); e != "" {
		t.Fatalf("paired ports report %q", e)
	}
	if f.br.PortByDatapath(pa.DPPort) != nil {
		t.Fatal("a patch port has a datapath port")
	}

	// p1 -> NORMAL floods to p2 and pa -> br1 NORMAL floods to p3.
	a, b := testMAC(1), testMAC(2)
	d3.TakeSent()
	if got := f.send(t, 1, testFrame(b, a)); got != [2]int{0, 1} {
		t.Fatalf("flood in br0: %v", got)
	}
	if n := waitSent(d3); n != 1 {
		t.Fatalf("p3 (behind the patch) sent %d frames", n)
	}
	f.sw.Handler().Revalidate()
	st, ok := f.br.PatchStats("pa")
	st1, _ := br1.PatchStats("pb")
	if !ok || st.TxPackets != 1 || st1.RxPackets != 1 || st.RxPackets != 0 {
		t.Fatalf("patch counters pa %+v pb %+v", st, st1)
	}

	// pb goes: pa loses its peer and the installed flow stops crossing.
	if err := br1.DelPort("pb"); err != nil {
		t.Fatal(err)
	}
	if f.br.Port(5).Patch.Peer != nil || f.br.PatchError("pa") == "" {
		t.Fatal("pa still paired after pb went")
	}
	f.sw.Handler().Revalidate()
	d3.TakeSent()
	if got := f.send(t, 1, testFrame(b, a)); got != [2]int{0, 1} {
		t.Fatalf("flood in br0 after unpairing: %v", got)
	}
	if n := waitSent(d3); n != 0 {
		t.Fatalf("p3 still gets br0's traffic after the peer went: %d", n)
	}

	// A peer of another datapath type does not pair.
	br2, err := f.sw.AddBridge("br2", BridgeConfig{DatapathType: "dummy"})
	if err != nil {
		t.Fatal(err)
	}
	br2.AddPorts([]PortSpec{{Name: "pb", Request: 6, Patch: true, PatchPeer: "pa"}})
	if f.br.Port(5).Patch.Peer != nil {
		t.Fatal("paired across datapath types")
	}
	// br2 becomes a netdev bridge: the pair forms.
	br2.SetDatapathType("netdev")
	if p := f.br.Port(5).Patch.Peer; p == nil || p.Bridge != br2 {
		t.Fatal("no pairing after the datapath type changed")
	}
}

func waitSent(d *netdevtest.Device) int {
	deadline := time.Now().Add(200 * time.Millisecond)
	for time.Now().Before(deadline) {
		if n := len(d.Sent()); n > 0 {
			time.Sleep(20 * time.Millisecond)
			return len(d.Sent())
		}
		time.Sleep(2 * time.Millisecond)
	}
	return 0
}

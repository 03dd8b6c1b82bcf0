package xlate_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"gvs/dpif"
	"gvs/ofproto/mf"
	"gvs/ofproto/ofpact"
	"gvs/ofproto/xlate"
	"gvs/ofproto/xlate/xlatetest"
)

// patchPair returns br0 (ports 1, 2; patch port 5) and br1 (ports 1, 2
// at datapath ports 21, 22; patch port 6), pa (br0 5) and pb (br1 6)
// paired, and the counters of pa and pb.
func patchPair(t *testing.T) (br0, br1 *xlatetest.Bridge, pa, pb *xlate.PatchCounters) {
	t.Helper()
	br0, br1 = newBridge(t), xlatetest.NewBridge("br1")
	br1.NameV = "br1"
	for i := uint32(1); i <= 2; i++ {
		br1.AddPort(&xlate.Port{OFPort: i, DPPort: 20 + i, Name: "q" + string(rune('0'+i)), Live: true})
	}
	pa, pb = new(xlate.PatchCounters), new(xlate.PatchCounters)
	br0.AddPort(&xlate.Port{OFPort: 5, DPPort: xlate.NoDPPort, Name: "pa", Live: true,
		Patch: &xlate.PatchPort{PeerName: "pb", Peer: &xlate.PatchPeer{Bridge: br1, OFPort: 6}, Counters: pa}})
	br1.AddPort(&xlate.Port{OFPort: 6, DPPort: xlate.NoDPPort, Name: "pb", Live: true,
		Patch: &xlate.PatchPort{PeerName: "pa", Peer: &xlate.PatchPeer{Bridge: br0, OFPort: 5}, Counters: pb}})
	return br0, br1, pa, pb
}

func acts(a ...xlate.Action) []xlate.Action { return a }

// A packet output to a patch port goes through the peer bridge's tables
// from table 0 with in_port the peer, metadata and registers cleared, in
// the same datapath actions; the calling bridge then goes on with its own
// flow (the peer's changes undone by set actions), and the crossing is
// counted on both ports from the flow's statistics.
func TestPatchCrossesIntoPeer(t *testing.T) {
	br0, br1, pa, pb := patchPair(t)
	br0.AddRule(&xlatetest.Rule{Prio: 100, M: matchInPort(1), Acts: acts(
		setField(t, "reg0", 7), setField(t, "metadata", 5), &ofpact.Output{Port: 5}, &ofpact.Output{Port: 2})})
	// Only a packet that arrives with reg0 and metadata cleared matches.
	m := matchInPort(6)
	m.Flow.Regs[0], m.Wildcards.Masks.Regs[0] = 0, ^uint32(0)
	m.Flow.Metadata, m.Wildcards.Masks.Metadata = 0, ^uint64(0)
	br1.AddRule(&xlatetest.Rule{Prio: 100, M: m, Acts: acts(setField(t, "eth_src", 0x020000000009), &ofpact.Output{Port: 1})})

	tr := xlate.NewTrace(nil)
	res := xlate.NewTranslator().Translate(&xlate.Input{Bridge: br0, Version: br0.Version(), Flow: ipFlow(1), Trace: tr})
	if res.Error != nil {
		t.Fatal(res.Error)
	}
	want := "set(eth(src=02:00:00:00:00:09)),21,set(eth(src=02:00:00:00:00:01)),12"
	if got := res.Actions.String(); got != want {
		t.Fatalf("actions %s, want %s\n%s", got, want, tr)
	}
	if res.FinalFlow.Regs[0] != 7 || res.FinalFlow.Metadata != 5 || res.FinalFlow.InPort != 1 {
		t.Fatalf("the calling bridge's flow was not restored: %+v", res.FinalFlow)
	}
	if s := tr.String(); !strings.Contains(s, "bridge(\"br1\")\n") || !strings.Contains(s, "in_port=6") {
		t.Fatalf("trace does not show the peer bridge:\n%s", s)
	}
	if len(res.Cache.Patches) != 1 || len(res.Cache.Rules) != 2 {
		t.Fatalf("cache: %d crossings, %d rules", len(res.Cache.Patches), len(res.Cache.Rules))
	}
	xlate.PushStats(br0, &res.Cache, xlate.Stats{Packets: 3, Bytes: 300, Used: epoch})
	if got := pa.Snapshot(); got != (xlate.PatchStats{TxPackets: 3, TxBytes: 300}) {
		t.Fatalf("pa counters %+v", got)
	}
	if got := pb.Snapshot(); got != (xlate.PatchStats{RxPackets: 3, RxBytes: 300}) {
		t.Fatalf("pb counters %+v", got)
	}
}

// The peer bridge's exit and errors stay behind: the calling bridge
// carries on; a patch loop ends at the depth limit without failing the
// translation (Open vSwitch resets the error after the crossing).
func TestPatchExitAndLoop(t *testing.T) {
	br0, br1, _, _ := patchPair(t)
	br0.AddRule(&xlatetest.Rule{Prio: 100, M: matchInPort(1), Acts: acts(&ofpact.Output{Port: 5}, &ofpact.Output{Port: 2})})
	br1.AddRule(&xlatetest.Rule{Prio: 100, M: matchInPort(6), Acts: acts(&ofpact.Output{Port: 1}, &ofpact.Exit{}, &ofpact.Output{Port: 2})})
	if got := translate(br0, ipFlow(1)).Actions.String(); got != "21,12" {
		t.Fatalf("exit in the peer: actions %s, want 21,12", got)
	}

	// br0 port 5 -> br1 port 6 -> back through 6 -> 5 ... forever.
	br1.ClearTable(0)
	br1.AddRule(&xlatetest.Rule{Prio: 100, M: matchInPort(6), Acts: acts(&ofpact.Output{Port: mf.PortInPort})})
	br0.AddRule(&xlatetest.Rule{Prio: 200, M: matchInPort(5), Acts: acts(&ofpact.Output{Port: mf.PortInPort})})
	tr := xlate.NewTrace(nil)
	res := xlate.NewTranslator().Translate(&xlate.Input{Bridge: br0, Version: br0.Version(), Flow: ipFlow(1), Trace: tr})
	if res.Error != nil || res.Actions.String() != "12" {
		t.Fatalf("patch loop: error %v, actions %s", res.Error, res.Actions)
	}
	if !strings.Contains(tr.String(), "over max translation depth 64") {
		t.Fatalf("the loop did not stop at the depth limit:\n%s", tr)
	}
}

// An unpaired patch port, and a peer configured no_recv, take nothing.
func TestPatchUnpairedAndNoRecv(t *testing.T) {
	br0, br1, _, _ := patchPair(t)
	br0.AddRule(&xlatetest.Rule{Prio: 100, M: matchInPort(1), Acts: acts(&ofpact.Output{Port: 5})})
	br1.AddRule(&xlatetest.Rule{Prio: 100, M: matchInPort(6), Acts: acts(&ofpact.Output{Port: 1})})
	if got := translate(br0, ipFlow(1)).Actions.String(); got != "21" {
		t.Fatalf("paired: %s", got)
	}
	br1.AddPort(&xlate.Port{OFPort: 6, DPPort: xlate.NoDPPort, Name: "pb", Live: true, Config: xlate.PortNoRecv,
		Patch: &xlate.PatchPort{PeerName: "pa", Peer: &xlate.PatchPeer{Bridge: br0, OFPort: 5}, Counters: new(xlate.PatchCounters)}})
	if got := translate(br0, ipFlow(1)).Actions.String(); got != "drop" && got != "" {
		t.Fatalf("peer no_recv: %q", got)
	}
	br0.AddPort(&xlate.Port{OFPort: 5, DPPort: xlate.NoDPPort, Name: "pa", Live: true,
		Patch: &xlate.PatchPort{PeerName: "pb", Counters: new(xlate.PatchCounters)}})
	res := translate(br0, ipFlow(1))
	if len(res.Actions) != 0 || len(res.Cache.Patches) != 0 {
		t.Fatalf("unpaired: actions %s, crossings %d", res.Actions, len(res.Cache.Patches))
	}
}

// The peer's first rule with an action the flow cannot undo (ct) runs in
// a datapath clone when the calling bridge has more to do; a trailing
// clone is embedded (Open vSwitch's xlate_optimize_odp_actions).
func TestPatchCloneForIrreversibleActions(t *testing.T) {
	br0, br1, _, _ := patchPair(t)
	br0.AddRule(&xlatetest.Rule{Prio: 100, M: matchInPort(1), Acts: acts(&ofpact.Output{Port: 5}, &ofpact.Output{Port: 2})})
	br0.AddRule(&xlatetest.Rule{Prio: 100, M: matchInPort(3), Acts: acts(&ofpact.Output{Port: 5})})
	br1.AddRule(&xlatetest.Rule{Prio: 100, M: matchInPort(6), Acts: acts(&ofpact.CT{Flags: ofpact.CTCommit, ZoneImm: 5, RecircTable: ofpact.CTNoRecirc}, &ofpact.Output{Port: 1})})
	res := translate(br0, ipFlow(1))
	if len(res.Actions) != 2 || res.Actions[0].Kind != dpif.ActClone || res.Actions.String() != "clone(ct(commit,zone=5),21),12" {
		t.Fatalf("not last: %s", res.Actions)
	}
	if got := translate(br0, ipFlow(3)).Actions.String(); got != "ct(commit,zone=5),21" {
		t.Fatalf("last: %s", got)
	}
}

// NORMAL behind a patch port learns in the peer bridge's MAC table: the
// cache names that table (statistics refresh it there) and its change
// count is part of what the revalidator watches.
func TestPatchNormalLearnsInPeer(t *testing.T) {
	br0, br1, _, _ := patchPair(t)
	br0.AddRule(&xlatetest.Rule{Prio: 100, M: matchInPort(1), Acts: acts(&ofpact.Output{Port: 5})})
	br1.AddRule(&xlatetest.Rule{Prio: 0, Acts: acts(&ofpact.Output{Port: mf.PortNormal})})
	br1.SetConfig(xlate.Config{Now: func() time.Time { return epoch }})
	in := &xlate.Input{Bridge: br0, Version: br0.Version(), Flow: ipFlow(1), SideEffects: true}
	res := xlate.NewTranslator().Translate(in)
	if port, ok := br1.MACs().Lookup(0, mac6(1)); !ok || port != 6 {
		t.Fatalf("br1 did not learn the source on pb: %d %v", port, ok)
	}
	if _, ok := br0.MACs().Lookup(0, mac6(1)); ok {
		t.Fatal("br0 learned from br1's NORMAL")
	}
	if len(res.Cache.Normal) != 1 || res.Cache.Normal[0].Table != br1.MACs() || len(res.Cache.PeerMACs) != 1 {
		t.Fatalf("cache: %+v, peer tables %d", res.Cache.Normal, len(res.Cache.PeerMACs))
	}
	if !res.Cache.PeerMACsChanged() {
		t.Fatal("learning in the peer's table does not show as a change")
	}
	seq := res.Cache.PeerMACSeq()
	br1.MACs().Learn(0, mac6(2), 1, epoch)
	if res.Cache.PeerMACSeq() == seq {
		t.Fatal("a change in the peer's MAC table does not show in PeerMACSeq")
	}
	// Flooded to q1 and q2 (datapath 21, 22), not back to pb.
	if got := res.Actions.String(); got != "21,22" {
		t.Fatalf("actions %s", got)
	}
}

// output_trunc to a patch port is refused, as Open vSwitch does.
func TestPatchOutputTrunc(t *testing.T) {
	br0, br1, _, _ := patchPair(t)
	br0.AddRule(&xlatetest.Rule{Prio: 100, M: matchInPort(1), Acts: acts(&ofpact.OutputTrunc{Port: 5, MaxLen: 100}, &ofpact.Output{Port: 2})})
	br1.AddRule(&xlatetest.Rule{Prio: 100, M: matchInPort(6), Acts: acts(&ofpact.Output{Port: 1})})
	tr := xlate.NewTrace(nil)
	res := xlate.NewTranslator().Translate(&xlate.Input{Bridge: br0, Version: br0.Version(), Flow: ipFlow(1), Trace: tr})
	if got := res.Actions.String(); got != "12" || !strings.Contains(tr.String(), "output_trunc does not support patch port 5") {
		t.Fatalf("actions %s\n%s", got, tr)
	}
	if errors.Is(res.Error, xlate.ErrRecursionTooDeep) {
		t.Fatal(res.Error)
	}
}

// BenchmarkTranslatePatch: one translation through two bridges joined by
// a patch pair, against the same rules in one bridge (the cost of the
// crossing: saving and restoring the caller's state, the peer's lookup).
func BenchmarkTranslatePatch(b *testing.B) {
	t := &testing.T{}
	br0, br1, _, _ := patchPair(t)
	br0.AddRule(&xlatetest.Rule{Prio: 100, M: matchInPort(1), Acts: acts(&ofpact.Output{Port: 5})})
	br1.AddRule(&xlatetest.Rule{Prio: 100, M: matchInPort(6), Acts: acts(&ofpact.Output{Port: 1})})
	direct := newBridge(t)
	direct.AddRule(&xlatetest.Rule{Prio: 100, M: matchInPort(1), Acts: acts(&ofpact.Resubmit{InPort: 3, TableID: 0})})
	direct.AddRule(&xlatetest.Rule{Prio: 100, M: matchInPort(3), Acts: acts(&ofpact.Output{Port: 2})})
	for _, c := range []struct {
		name string
		br   xlate.Bridge
	}{{"patch", br0}, {"resubmit", direct}} {
		b.Run(c.name, func(b *testing.B) {
			tr := xlate.NewTranslator()
			in := &xlate.Input{Bridge: c.br, Version: c.br.Version(), Flow: ipFlow(1)}
			b.ReportAllocs()
			for b.Loop() {
				tr.Translate(in)
			}
		})
	}
}

// A translation across a patch pair allocates nothing once the
// Translator has warmed up (upcalls translate on the PMDs).
func TestPatchTranslateAllocs(t *testing.T) {
	br0, br1, _, _ := patchPair(t)
	br0.AddRule(&xlatetest.Rule{Prio: 100, M: matchInPort(1), Acts: acts(setField(t, "reg0", 1), &ofpact.Output{Port: 5}, &ofpact.Output{Port: 2})})
	br1.AddRule(&xlatetest.Rule{Prio: 100, M: matchInPort(6), Acts: acts(&ofpact.PushVLAN{EtherType: 0x8100}, setField(t, "vlan_vid", 0x1000|10), &ofpact.Output{Port: 1})})
	tr := xlate.NewTranslator()
	in := &xlate.Input{Bridge: br0, Version: br0.Version(), Flow: ipFlow(1)}
	if got := tr.Translate(in).Actions.String(); got != "push_vlan(vid=10,pcp=0),21,pop_vlan,12" {
		t.Fatalf("actions %s", got)
	}
	if n := testing.AllocsPerRun(100, func() { tr.Translate(in) }); n != 0 {
		t.Fatalf("%v allocations per translation across a patch pair", n)
	}
}

package xlate_test

import (
	"errors"
	"testing"
	"time"

	"gvs/ofproto/mac"
	"gvs/ofproto/mf"
	"gvs/ofproto/ofpact"
	"gvs/ofproto/xlate"
	"gvs/ofproto/xlate/xlatetest"
	"gvs/packet"
)

// Test fixtures: a bridge with ports 1..4 (datapath ports 11..14).

func newBridge(t testing.TB) *xlatetest.Bridge {
	t.Helper()
	br := xlatetest.NewBridge("br0")
	for i := uint32(1); i <= 4; i++ {
		br.AddPort(&xlate.Port{OFPort: i, DPPort: 10 + i, Name: "p" + string(rune('0'+i)), Live: true})
	}
	return br
}

func mac6(b byte) [6]byte { return [6]byte{0x02, 0, 0, 0, 0, b} }

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// ipFlow returns a TCP/IPv4 flow from in_port.
func ipFlow(inPort uint32) mf.Flow {
	var f mf.Flow
	f.InPort = inPort
	f.EtherType = packet.EtherTypeIPv4
	f.SrcMAC, f.DstMAC = mac6(1), mac6(2)
	f.SrcIPv4, f.DstIPv4 = [4]byte{198, 18, 0, 1}, [4]byte{198, 18, 0, 2}
	f.IPProto, f.IPTTL = 6, 64
	f.SrcPort, f.DstPort = 1234, 80
	return f
}

func matchInPort(p uint32) mf.Match {
	var m mf.Match
	m.Flow.InPort, m.Wildcards.Masks.InPort = p, ^uint32(0)
	return m
}

func field(t testing.TB, name string) *mf.Field {
	t.Helper()
	f := mf.FieldByName(name)
	if f == nil {
		t.Fatalf("no field %s", name)
	}
	return f
}

func setField(t testing.TB, name string, v uint64) *ofpact.SetField {
	fd := field(t, name)
	return &ofpact.SetField{Field: fd, Value: mf.ValueFromUint(v, fd.Bytes), Mask: fd.AllOnes()}
}

func translate(br xlate.Bridge, f mf.Flow) *xlate.Result {
	return xlate.NewTranslator().Translate(&xlate.Input{Bridge: br, Version: br.Version(), Flow: f})
}

func TestOutputAndWildcards(t *testing.T) {
	br := newBridge(t)
	br.AddRule(&xlatetest.Rule{Prio: 100, M: matchInPort(1), Acts: []xlate.Action{&ofpact.Output{Port: 2}}})
	res := translate(br, ipFlow(1))
	if got := res.Actions.String(); got != "12" {
		t.Fatalf("actions %q, want 12", got)
	}
	m := res.Wildcards.DatapathMask()
	if m.InPort != ^uint32(0) || m.EtherType != 0xffff {
		t.Fatalf("in_port/dl_type not exact: %+v", m)
	}
	if m.SrcIPv4 != [4]byte{} || m.DstPort != 0 || m.SrcMAC != [6]byte{} {
		t.Fatalf("unconsulted fields in the mask: %+v", m)
	}
	// Output to the input port is skipped; IN_PORT is allowed.
	br.AddRule(&xlatetest.Rule{Prio: 200, M: matchInPort(2), Acts: []xlate.Action{&ofpact.Output{Port: 2}, &ofpact.Output{Port: mf.PortInPort}}})
	if got := translate(br, ipFlow(2)).Actions.String(); got != "12" {
		t.Fatalf("in_port output: %q", got)
	}
}

func TestResubmitChainAndSetField(t *testing.T) {
	br := newBridge(t)
	br.AddRule(&xlatetest.Rule{Prio: 1, Acts: []xlate.Action{&ofpact.Resubmit{InPort: mf.PortInPort, TableID: 1}}})
	br.AddRule(&xlatetest.Rule{Table: 1, Prio: 1, Acts: []xlate.Action{
		setField(t, "eth_dst", 0x0200000000aa), setField(t, "reg0", 7),
		&ofpact.Resubmit{InPort: mf.PortInPort, TableID: 2}}})
	var m mf.Match
	m.Flow.Regs[0], m.Wildcards.Masks.Regs[0] = 7, ^uint32(0)
	br.AddRule(&xlatetest.Rule{Table: 2, Prio: 5, M: m, Acts: []xlate.Action{&ofpact.Output{Port: 3}}})
	br.AddRule(&xlatetest.Rule{Table: 2, Prio: 1, Acts: []xlate.Action{&ofpact.Output{Port: 4}}})
	res := translate(br, ipFlow(1))
	if res.Error != nil {
		t.Fatal(res.Error)
	}
	want := "set(eth(dst=02:00:00:00:00:aa)),13"
	if got := res.Actions.String(); got != want {
		t.Fatalf("actions %q, want %q", got, want)
	}
	if res.Wildcards.Masks.DstMAC != [6]byte{255, 255, 255, 255, 255, 255} {
		t.Fatalf("set_field did not unwildcard eth_dst: %v", res.Wildcards.Masks.DstMAC)
	}
	if len(res.Cache.Rules) != 3 {
		t.Fatalf("xlate cache has %d rules, want 3", len(res.Cache.Rules))
	}
	// The packet already has the destination: no set action, but the
	// field stays exact so the megaflow does not take other packets.
	f := ipFlow(1)
	f.DstMAC = [6]byte{2, 0, 0, 0, 0, 0xaa}
	res = translate(br, f)
	if got := res.Actions.String(); got != "13" {
		t.Fatalf("actions %q, want 13", got)
	}
}

func TestResubmitLoopHitsDepthLimit(t *testing.T) {
	br := newBridge(t)
	br.AddRule(&xlatetest.Rule{Prio: 1, Acts: []xlate.Action{&ofpact.Output{Port: 2}, &ofpact.Resubmit{InPort: mf.PortInPort, TableID: 0}}})
	res := translate(br, ipFlow(1))
	if !errors.Is(res.Error, xlate.ErrRecursionTooDeep) {
		t.Fatalf("error %v, want %v", res.Error, xlate.ErrRecursionTooDeep)
	}
	if len(res.Actions) != 0 {
		t.Fatalf("a failed translation must drop, got %v", res.Actions)
	}
}

func TestTooManyResubmits(t *testing.T) {
	br := newBridge(t)
	// Each table resubmits twice to the next: 2^n lookups, never deep.
	for tb := uint8(0); tb < 20; tb++ {
		br.AddRule(&xlatetest.Rule{Table: tb, Prio: 1, Acts: []xlate.Action{
			&ofpact.Resubmit{InPort: mf.PortInPort, TableID: tb + 1},
			&ofpact.Resubmit{InPort: mf.PortInPort, TableID: tb + 1}}})
	}
	res := translate(br, ipFlow(1))
	if !errors.Is(res.Error, xlate.ErrTooManyResubmits) {
		t.Fatalf("error %v, want %v", res.Error, xlate.ErrTooManyResubmits)
	}
}

func TestTableMiss(t *testing.T) {
	br := newBridge(t)
	res := translate(br, ipFlow(1))
	if len(res.Actions) != 0 || res.Slow != 0 {
		t.Fatalf("miss under MissDefault without controller: %v slow %d", res.Actions, res.Slow)
	}
	br.SetConfig(xlate.Config{PacketInOnMiss: true, MissSendLen: 128})
	tr := xlate.NewTranslator()
	pkt := []byte{1, 2, 3}
	res = tr.Translate(&xlate.Input{Bridge: br, Version: br.Version(), Flow: ipFlow(1), Packet: pkt, SideEffects: true})
	if res.Slow&xlate.SlowController == 0 || len(res.PacketIns) != 1 {
		t.Fatalf("miss with a controller: slow %d, packet-ins %d", res.Slow, len(res.PacketIns))
	}
	if pi := res.PacketIns[0]; pi.Reason != xlate.ReasonImplicitMiss || pi.MaxLen != 0xffff || pi.TableID != 0 {
		t.Fatalf("packet-in %+v", pi)
	}
	// MissContinue goes on to the next table.
	br.SetTableMiss(0, xlate.MissContinue)
	br.AddRule(&xlatetest.Rule{Table: 1, Prio: 1, Acts: []xlate.Action{&ofpact.Output{Port: 3}}})
	if got := translate(br, ipFlow(1)).Actions.String(); got != "13" {
		t.Fatalf("continue: %q", got)
	}
}

func TestVLANActionsCommit(t *testing.T) {
	br := newBridge(t)
	br.AddRule(&xlatetest.Rule{Prio: 1, Acts: []xlate.Action{
		&ofpact.PushVLAN{EtherType: packet.EtherTypeVLAN}, &ofpact.SetVLANVID{VID: 10}, &ofpact.Output{Port: 2},
		&ofpact.StripVLAN{}, &ofpact.Output{Port: 3}}})
	res := translate(br, ipFlow(1))
	want := "push_vlan(vid=10,pcp=0),12,pop_vlan,13"
	if got := res.Actions.String(); got != want {
		t.Fatalf("actions %q, want %q", got, want)
	}
	// A tagged packet never shares the untagged packet's megaflow.
	if m := res.Wildcards.DatapathMask(); m.VLANs[0].TPID != 0xffff {
		t.Fatalf("VLAN presence not matched: %+v", m.VLANs)
	}
}

func TestIPv4RewriteAndDecTTL(t *testing.T) {
	br := newBridge(t)
	br.AddRule(&xlatetest.Rule{Prio: 1, Acts: []xlate.Action{
		&ofpact.SetIPv4Src{Addr: [4]byte{198, 18, 9, 9}}, &ofpact.DecTTL{}, &ofpact.SetL4DstPort{Port: 8080}, &ofpact.Output{Port: 2}}})
	res := translate(br, ipFlow(1))
	if res.Error != nil {
		t.Fatal(res.Error)
	}
	want := "set(ipv4(src=198.18.9.9,ttl=63)),set(tcp(dst=8080)),12"
	if got := res.Actions.String(); got != want {
		t.Fatalf("datapath actions %q, want %q", got, want)
	}
	if res.FinalFlow.IPTTL != 63 || res.FinalFlow.SrcIPv4 != [4]byte{198, 18, 9, 9} || res.FinalFlow.DstPort != 8080 {
		t.Fatalf("final flow %+v", res.FinalFlow.Key)
	}
	m := res.Wildcards.Masks
	if m.IPTTL != 0xff || m.SrcIPv4 != [4]byte{255, 255, 255, 255} || m.DstPort != 0xffff {
		t.Fatalf("rewritten fields not exact in the megaflow")
	}
	// TTL 1: to the controllers, invalid_ttl, and the list stops.
	f := ipFlow(1)
	f.IPTTL = 1
	res = xlate.NewTranslator().Translate(&xlate.Input{Bridge: br, Version: br.Version(), Flow: f, Packet: []byte{0}, SideEffects: true})
	if len(res.PacketIns) != 1 || res.PacketIns[0].Reason != xlate.ReasonInvalidTTL {
		t.Fatalf("ttl 1: packet-ins %+v", res.PacketIns)
	}
	for _, a := range res.Actions {
		if a.String() == "12" {
			t.Fatalf("ttl 1 still output: %v", res.Actions)
		}
	}
}

func TestActionSetAndGotoTable(t *testing.T) {
	br := newBridge(t)
	br.AddRule(&xlatetest.Rule{Prio: 1, Acts: []xlate.Action{
		&ofpact.WriteActions{Actions: []ofpact.Action{&ofpact.Output{Port: 2}}},
		&ofpact.GotoTable{TableID: 3}}})
	br.AddRule(&xlatetest.Rule{Table: 3, Prio: 1, Acts: []xlate.Action{
		&ofpact.WriteActions{Actions: []ofpact.Action{setField(t, "eth_src", 0x0200000000bb), &ofpact.Output{Port: 4}}}}})
	res := translate(br, ipFlow(1))
	want := "set(eth(src=02:00:00:00:00:bb)),14"
	if got := res.Actions.String(); got != want {
		t.Fatalf("actions %q, want %q", got, want)
	}
	// clear_actions empties the set.
	br.AddRule(&xlatetest.Rule{Table: 3, Prio: 2, Acts: []xlate.Action{&ofpact.ClearActions{}}})
	if got := translate(br, ipFlow(1)).Actions.String(); got != "drop" {
		t.Fatalf("after clear_actions: %q", got)
	}
}

func TestGroups(t *testing.T) {
	br := newBridge(t)
	out := func(p uint32) []xlate.Action { return []xlate.Action{&ofpact.Output{Port: p}} }
	br.SetGroup(&xlatetest.Group{ID: 1, Type: xlate.GroupAll, B: []xlate.Bucket{
		{ID: 0, WatchPort: mf.PortNone, WatchGroup: xlate.GroupAny, Actions: out(2)},
		{ID: 1, WatchPort: mf.PortNone, WatchGroup: xlate.GroupAny, Actions: []xlate.Action{setField(t, "eth_dst", 0x020000000099), &ofpact.Output{Port: 3}}}}})
	br.SetGroup(&xlatetest.Group{ID: 2, Type: xlate.GroupFastFailover, B: []xlate.Bucket{
		{ID: 0, WatchPort: 2, WatchGroup: xlate.GroupAny, Actions: out(2)},
		{ID: 1, WatchPort: 3, WatchGroup: xlate.GroupAny, Actions: out(3)}}})
	br.AddRule(&xlatetest.Rule{Prio: 1, M: matchInPort(1), Acts: []xlate.Action{&ofpact.Group{ID: 1}, &ofpact.Output{Port: 4}}})
	br.AddRule(&xlatetest.Rule{Prio: 1, M: matchInPort(4), Acts: []xlate.Action{&ofpact.Group{ID: 2}}})
	// all: every bucket on a copy; the output after the group sees the
	// packet as it was.
	want := "12,set(eth(dst=02:00:00:00:00:99)),13,set(eth(dst=02:00:00:00:00:02)),14"
	if got := translate(br, ipFlow(1)).Actions.String(); got != want {
		t.Fatalf("all group: %q, want %q", got, want)
	}
	// fast failover follows liveness.
	if got := translate(br, ipFlow(4)).Actions.String(); got != "12" {
		t.Fatalf("ff, port 2 live: %q", got)
	}
	br.AddPort(&xlate.Port{OFPort: 2, DPPort: 12, Live: false})
	if got := translate(br, ipFlow(4)).Actions.String(); got != "13" {
		t.Fatalf("ff, port 2 down: %q", got)
	}
	// A missing group stops the action list.
	br.AddRule(&xlatetest.Rule{Prio: 1, M: matchInPort(3), Acts: []xlate.Action{&ofpact.Group{ID: 99}, &ofpact.Output{Port: 4}}})
	if got := translate(br, ipFlow(3)).Actions.String(); got != "drop" {
		t.Fatalf("missing group: %q", got)
	}
}

func TestSelectGroupSpreadsAndIsStable(t *testing.T) {
	br := newBridge(t)
	var bs []xlate.Bucket
	for i := uint32(0); i < 3; i++ {
		bs = append(bs, xlate.Bucket{ID: i, Weight: 100, WatchPort: mf.PortNone, WatchGroup: xlate.GroupAny, Actions: []xlate.Action{&ofpact.Output{Port: 2 + i}}})
	}
	br.SetGroup(&xlatetest.Group{ID: 5, Type: xlate.GroupSelect, B: bs})
	br.AddRule(&xlatetest.Rule{Prio: 1, Acts: []xlate.Action{&ofpact.Group{ID: 5}}})
	seen := map[string]int{}
	for i := 0; i < 300; i++ {
		f := ipFlow(1)
		f.SrcPort = uint16(1000 + i)
		res := translate(br, f)
		seen[res.Actions.String()]++
		if res.Wildcards.Masks.SrcPort != 0xffff {
			t.Fatalf("select hash did not unwildcard the ports")
		}
		if again := translate(br, f).Actions.String(); again != res.Actions.String() {
			t.Fatalf("same flow, different bucket")
		}
	}
	if len(seen) != 3 {
		t.Fatalf("select spread over %v", seen)
	}
	for k, n := range seen {
		if n < 50 {
			t.Fatalf("bucket %s got only %d of 300", k, n)
		}
	}
}

func TestCloneRestoresFlow(t *testing.T) {
	br := newBridge(t)
	br.AddRule(&xlatetest.Rule{Prio: 1, Acts: []xlate.Action{
		&ofpact.Clone{Actions: []ofpact.Action{setField(t, "eth_src", 0x0200000000cc), &ofpact.Output{Port: 2}}},
		&ofpact.Output{Port: 3}}})
	res := translate(br, ipFlow(1))
	want := "set(eth(src=02:00:00:00:00:cc)),12,set(eth(src=02:00:00:00:00:01)),13"
	if got := res.Actions.String(); got != want {
		t.Fatalf("clone: %q, want %q", got, want)
	}
}

func TestNormal(t *testing.T) {
	br := newBridge(t)
	br.AddRule(&xlatetest.Rule{Prio: 0, Acts: []xlate.Action{&ofpact.Output{Port: mf.PortNormal}}})
	tr := xlate.NewTranslator()
	run := func(in uint32, src, dst byte) *xlate.Result {
		f := ipFlow(in)
		f.SrcMAC, f.DstMAC = mac6(src), mac6(dst)
		return tr.Translate(&xlate.Input{Bridge: br, Version: br.Version(), Flow: f, SideEffects: true})
	}
	if got := run(1, 0xa, 0xb).Actions.String(); got != "12,13,14" {
		t.Fatalf("unknown destination floods: %q", got)
	}
	res := run(2, 0xb, 0xa)
	if got := res.Actions.String(); got != "11" {
		t.Fatalf("learned destination: %q", got)
	}
	m := res.Wildcards.DatapathMask()
	// An untagged packet: the tag's absence is matched, not its TCI.
	if m.SrcMAC != [6]byte{255, 255, 255, 255, 255, 255} || m.DstMAC != m.SrcMAC || m.VLANs[0].TPID != 0xffff || m.VLANs[0].TCI != 0 {
		t.Fatalf("NORMAL's wildcards: %+v", m)
	}
	if m.SrcIPv4 != [4]byte{} {
		t.Fatalf("NORMAL consulted L3")
	}
	if len(res.Cache.Normal) != 1 || res.Cache.Normal[0].Port != 2 {
		t.Fatalf("NORMAL learning not in the cache: %+v", res.Cache.Normal)
	}
	// Learned on the input port: drop.
	if got := run(1, 0xc, 0xa).Actions.String(); got != "drop" {
		t.Fatalf("hairpin: %q", got)
	}
}

func TestNormalVLANs(t *testing.T) {
	br := xlatetest.NewBridge("br0")
	access := func(tag uint16) *mac.VLANPort {
		p, err := mac.NewVLANPort(mac.PortConfig{Tag: tag})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	trunk, _ := mac.NewVLANPort(mac.PortConfig{VLANMode: mac.VLANModeTrunk})
	br.AddPort(&xlate.Port{OFPort: 1, DPPort: 1, VLAN: access(10)})
	br.AddPort(&xlate.Port{OFPort: 2, DPPort: 2, VLAN: access(10)})
	br.AddPort(&xlate.Port{OFPort: 3, DPPort: 3, VLAN: access(20)})
	br.AddPort(&xlate.Port{OFPort: 4, DPPort: 4, VLAN: trunk})
	br.AddRule(&xlatetest.Rule{Acts: []xlate.Action{&ofpact.Output{Port: mf.PortNormal}}})
	f := ipFlow(1)
	if got := translate(br, f).Actions.String(); got != "2,push_vlan(vid=10,pcp=0),4" {
		t.Fatalf("access 10 flood: %q", got)
	}
	f = ipFlow(4)
	f.VLANs[0] = packet.VLANTag{TPID: packet.EtherTypeVLAN, TCI: 20}
	if got := translate(br, f).Actions.String(); got != "pop_vlan,3" {
		t.Fatalf("trunk vlan 20 flood: %q", got)
	}
	f = ipFlow(1)
	f.VLANs[0] = packet.VLANTag{TPID: packet.EtherTypeVLAN, TCI: 10}
	if got := translate(br, f).Actions.String(); got != "drop" {
		t.Fatalf("tagged frame on an access port: %q", got)
	}
}

// BenchmarkTranslate45TableChain: a 45-table pipeline (OVN's depth),
// each table's rule matching on in_port and a register and resubmitting
// to the next, the last setting a field and outputting.
func BenchmarkTranslate45TableChain(b *testing.B) {
	b.Run("linear", func(b *testing.B) { bench45(b, false) })
	b.Run("classifier", func(b *testing.B) { bench45(b, true) })
}

func bench45(b *testing.B, useClassifier bool) {
	br := newBridge(b)
	for tb := uint8(0); tb < 45; tb++ {
		m := matchInPort(1)
		m.Flow.Regs[1], m.Wildcards.Masks.Regs[1] = uint32(tb), ^uint32(0)
		acts := []xlate.Action{setField(b, "reg1", uint64(tb+1)), &ofpact.Resubmit{InPort: mf.PortInPort, TableID: tb + 1}}
		if tb == 44 {
			acts = []xlate.Action{setField(b, "eth_dst", 0x0200000000aa), &ofpact.Output{Port: 2}}
		}
		// A few non-matching rules per table, as real pipelines have.
		for j := uint32(2); j < 5; j++ {
			br.AddRule(&xlatetest.Rule{Table: tb, Prio: 200, M: matchInPort(j), Acts: []xlate.Action{&ofpact.Output{Port: 3}}})
		}
		br.AddRule(&xlatetest.Rule{Table: tb, Prio: 100, M: m, Acts: acts})
	}
	if useClassifier {
		xlatetest.UseClassifier(br)
	}
	tr := xlate.NewTranslator()
	in := xlate.Input{Bridge: br, Version: br.Version(), Flow: ipFlow(1)}
	if got := tr.Translate(&in).Actions.String(); got != "set(eth(dst=02:00:00:00:00:aa)),12" {
		b.Fatalf("chain: %q", got)
	}
	b.ReportAllocs()
	for b.Loop() {
		tr.Translate(&in)
	}
}

func TestNormalSpecialCases(t *testing.T) {
	br := newBridge(t)
	br.AddRule(&xlatetest.Rule{Acts: []xlate.Action{&ofpact.Output{Port: mf.PortNormal}}})
	tr := xlate.NewTranslator()
	run := func(f mf.Flow) string {
		return tr.Translate(&xlate.Input{Bridge: br, Version: br.Version(), Flow: f, SideEffects: true}).Actions.String()
	}
	// Reserved multicast (STP, LLDP...) is not forwarded unless
	// forward-bpdu.
	f := ipFlow(1)
	f.DstMAC = [6]byte{0x01, 0x80, 0xc2, 0, 0, 0x0e}
	if got := run(f); got != "drop" {
		t.Fatalf("LLDP forwarded: %q", got)
	}
	br.SetConfig(xlate.Config{ForwardBPDU: true})
	if got := run(f); got != "12,13,14" {
		t.Fatalf("forward-bpdu: %q", got)
	}
	// A MAC moves: the table follows.
	f = ipFlow(1)
	f.SrcMAC = mac6(0x20)
	run(f)
	f.InPort = 3
	run(f)
	g := ipFlow(2)
	g.DstMAC = mac6(0x20)
	if got := run(g); got != "13" {
		t.Fatalf("after the move: %q", got)
	}
	// A packet-out from the controller: no input port, floods to all,
	// learns nothing.
	po := ipFlow(mf.PortController)
	po.SrcMAC = mac6(0x30)
	res := tr.Translate(&xlate.Input{Bridge: br, Version: br.Version(), Flow: po, SideEffects: true,
		Actions: []xlate.Action{&ofpact.Output{Port: mf.PortNormal}}})
	if got := res.Actions.String(); got != "11,12,13,14" {
		t.Fatalf("packet-out NORMAL: %q", got)
	}
	if _, ok := br.MACs().Lookup(0, mac6(0x30)); ok {
		t.Fatal("learned from the controller")
	}
	// A port with no_flood is left out of floods.
	br.AddPort(&xlate.Port{OFPort: 4, DPPort: 14, Config: xlate.PortNoFlood, Live: true})
	f = ipFlow(1)
	f.DstMAC = mac6(0x77)
	if got := run(f); got != "12,13" {
		t.Fatalf("no_flood: %q", got)
	}
}

func TestSelectByDPHashRecirculates(t *testing.T) {
	br := newBridge(t)
	br.SetGroup(&xlatetest.Group{ID: 1, Type: xlate.GroupSelect, Method: xlate.SelectDPHash, B: []xlate.Bucket{
		{ID: 0, Weight: 1, WatchPort: mf.PortNone, WatchGroup: xlate.GroupAny, Actions: []xlate.Action{&ofpact.Output{Port: 2}}}}})
	br.AddRule(&xlatetest.Rule{Prio: 1, Acts: []xlate.Action{setField(t, "eth_dst", 0x0200000000aa), &ofpact.Group{ID: 1}}})
	rt := xlate.NewRecircTable()
	tr := xlate.NewTranslator()
	res := tr.Translate(&xlate.Input{Bridge: br, Version: br.Version(), Flow: ipFlow(1), Recirc: rt})
	if got := res.Actions.String(); got != "set(eth(dst=02:00:00:00:00:aa)),hash(l4(0)),recirc(0x1)" {
		t.Fatalf("first pass: %q", got)
	}
	if m := res.Wildcards.DatapathMask(); m.SrcPort != 0 || m.DPHash != 0 {
		t.Fatalf("first pass mask: %+v", m)
	}
	// The same translation again reuses the frozen state.
	tr.Translate(&xlate.Input{Bridge: br, Version: br.Version(), Flow: ipFlow(1), Recirc: rt})
	if rt.Len() != 1 {
		t.Fatalf("%d frozen states, want 1", rt.Len())
	}
	fz := rt.Lookup(1)
	k := ipFlow(1).Key
	k.RecircID, k.DPHash, k.DstMAC = 1, 0x1234, [6]byte{2, 0, 0, 0, 0, 0xaa}
	res = tr.Translate(&xlate.Input{Bridge: br, Version: br.Version(), Flow: fz.Thaw(&k), Frozen: fz, Actions: fz.Actions, Recirc: rt})
	if got := res.Actions.String(); got != "12" {
		t.Fatalf("second pass: %q", got)
	}
	if m := res.Wildcards.DatapathMask(); m.DPHash == 0 || m.RecircID != ^uint32(0) {
		t.Fatalf("second pass mask: %+v", m)
	}
}

func TestControllerIsCachedAsUserspace(t *testing.T) {
	br := newBridge(t)
	br.AddRule(&xlatetest.Rule{Prio: 1, CookieV: 0x5, Acts: []xlate.Action{
		setField(t, "reg3", 9), &ofpact.Controller{MaxLen: 0xffff, Reason: ofpact.ReasonAction, Userdata: []byte{0xab}}, &ofpact.Output{Port: 2}}})
	rt := xlate.NewRecircTable()
	res := xlate.NewTranslator().Translate(&xlate.Input{Bridge: br, Version: br.Version(), Flow: ipFlow(1), Recirc: rt, SideEffects: true, Packet: []byte{1}})
	want := "userspace(pid=0,controller(reason=1,dont_send=0,continuation=0,recirc_id=1,rule_cookie=0x5,controller_id=0,max_len=65535)),12"
	if got := res.Actions.String(); got != want {
		t.Fatalf("actions %q, want %q", got, want)
	}
	if res.Slow != 0 || len(res.PacketIns) != 0 {
		t.Fatalf("a cached controller action sends no packet-in at translation: slow %d, %d packet-ins", res.Slow, len(res.PacketIns))
	}
	fz := rt.Lookup(1)
	if fz == nil || fz.Flow.Regs[3] != 9 || string(fz.Userdata) != "\xab" || fz.Cookie != 5 {
		t.Fatalf("frozen state %+v", fz)
	}
}

func sub(t testing.TB, name string, ofs, n int) mf.Subfield {
	return mf.Subfield{Field: field(t, name), Ofs: ofs, NBits: n}
}

func TestRegistersStackAndMisc(t *testing.T) {
	br := newBridge(t)
	br.AddRule(&xlatetest.Rule{Prio: 1, Acts: []xlate.Action{
		setField(t, "reg0", 3),
		&ofpact.StackPush{Field: sub(t, "reg0", 0, 16)},
		setField(t, "reg0", 0),
		&ofpact.StackPop{Field: sub(t, "reg1", 0, 16)},
		&ofpact.RegMove{Src: sub(t, "reg1", 0, 16), Dst: sub(t, "reg2", 0, 16)},
		&ofpact.WriteMetadata{Metadata: 0xf0, Mask: 0xff},
		&ofpact.OutputReg{Src: sub(t, "reg2", 0, 16)},
		&ofpact.Note{Data: []byte("x")},
		&ofpact.Exit{},
		&ofpact.Output{Port: 4}}})
	res := translate(br, ipFlow(1))
	if got := res.Actions.String(); got != "13" {
		t.Fatalf("actions %q, want 13 (output_reg to reg2=3, nothing after exit)", got)
	}
	if ff := res.FinalFlow; ff.Regs[1] != 3 || ff.Regs[2] != 3 || ff.Metadata != 0xf0 {
		t.Fatalf("final registers %v metadata %#x", ff.Regs[:3], ff.Metadata)
	}
	// Registers never reach the datapath mask.
	if m := res.Wildcards.DatapathMask(); m.InPort != ^uint32(0) || m.SrcIPv4 != [4]byte{} {
		t.Fatalf("mask %+v", m)
	}
}

func TestCheckPktLarger(t *testing.T) {
	br := newBridge(t)
	br.AddRule(&xlatetest.Rule{Prio: 1, Acts: []xlate.Action{
		&ofpact.CheckPktLarger{Len: 1000, Dst: sub(t, "reg0", 0, 1)},
		&ofpact.Resubmit{InPort: mf.PortInPort, TableID: 1}}})
	var m mf.Match
	m.Flow.Regs[0], m.Wildcards.Masks.Regs[0] = 1, 1
	br.AddRule(&xlatetest.Rule{Table: 1, Prio: 2, M: m, Acts: []xlate.Action{&ofpact.Output{Port: 2}}})
	br.AddRule(&xlatetest.Rule{Table: 1, Prio: 1, Acts: []xlate.Action{&ofpact.Output{Port: 3}}})
	res := translate(br, ipFlow(1))
	if got := res.Actions.String(); got != "check_pkt_len(size=1000,gt(12),le(13))" {
		t.Fatalf("actions %q", got)
	}
}

func TestLearnProducesFlow(t *testing.T) {
	br := newBridge(t)
	learn := &ofpact.Learn{TableID: 5, Priority: 9, IdleTimeout: 30, Cookie: 0x77, Specs: []ofpact.LearnSpec{
		{SrcType: ofpact.LearnSrcField, DstType: ofpact.LearnDstMatch, NBits: 48, Src: mf.WholeField(field(t, "eth_src")), Dst: mf.WholeField(field(t, "eth_dst"))},
		{SrcType: ofpact.LearnSrcImmediate, DstType: ofpact.LearnDstLoad, NBits: 16, Imm: []byte{0x12, 0x34}, Dst: sub(t, "reg5", 0, 16)},
		{SrcType: ofpact.LearnSrcField, DstType: ofpact.LearnDstOutput, NBits: 16, Src: mf.WholeField(field(t, "in_port"))},
	}}
	br.AddRule(&xlatetest.Rule{Prio: 1, Acts: []xlate.Action{learn}})
	res := translate(br, ipFlow(1))
	if len(res.Cache.Learned) != 1 {
		t.Fatalf("%d learned flows", len(res.Cache.Learned))
	}
	lf := res.Cache.Learned[0]
	if lf.TableID != 5 || lf.Priority != 9 || lf.IdleTimeout != 30 || lf.Cookie != 0x77 {
		t.Fatalf("learned flow %+v", lf)
	}
	if lf.Match.Flow.DstMAC != mac6(1) || lf.Match.Wildcards.Masks.DstMAC != [6]byte{255, 255, 255, 255, 255, 255} {
		t.Fatalf("learned match %+v", lf.Match.Flow.Key)
	}
	if got := ofpact.Format(lf.Actions); got != "load:0x1234->NXM_NX_REG5[0..15],output:1" {
		t.Fatalf("learned actions %q", got)
	}
	// The learned flow depends on the packet's eth_src and in_port.
	if m := res.Wildcards.Masks; m.SrcMAC != [6]byte{255, 255, 255, 255, 255, 255} {
		t.Fatalf("learn did not unwildcard its source fields")
	}
}

// resume translates a frozen state's second pass for flow f.
func resume(br xlate.Bridge, rt *xlate.RecircTable, id uint32, k packet.Key) *xlate.Result {
	fz := rt.Lookup(id)
	k.RecircID = id
	return xlate.NewTranslator().Translate(&xlate.Input{Bridge: br, Version: br.Version(), Flow: fz.Thaw(&k),
		Frozen: fz, Table: fz.Table, Actions: fz.Actions, Recirc: rt})
}

// A freeze deep in a resubmit chain keeps every level's remaining actions
// (each in its own table), the action set and the registers.
func TestFreezeUnrollsTheWholePipeline(t *testing.T) {
	br := newBridge(t)
	br.SetGroup(&xlatetest.Group{ID: 1, Type: xlate.GroupSelect, Method: xlate.SelectDPHash, B: []xlate.Bucket{
		{ID: 0, Weight: 1, WatchPort: mf.PortNone, WatchGroup: xlate.GroupAny, Actions: []xlate.Action{&ofpact.Output{Port: 2}}}}})
	br.AddRule(&xlatetest.Rule{Prio: 1, Acts: []xlate.Action{
		&ofpact.WriteActions{Actions: []ofpact.Action{&ofpact.Output{Port: 4}}},
		setField(t, "reg2", 5),
		&ofpact.Resubmit{InPort: mf.PortInPort, TableID: 1},
		&ofpact.Resubmit{InPort: mf.PortInPort, TableID: 255}}}) // "this table": 0 again, which has a rule for reg2=6
	var m mf.Match
	m.Flow.Regs[2], m.Wildcards.Masks.Regs[2] = 6, ^uint32(0)
	br.AddRule(&xlatetest.Rule{Prio: 9, M: m, Acts: []xlate.Action{&ofpact.Output{Port: 3}}})
	br.AddRule(&xlatetest.Rule{Table: 1, Prio: 1, Acts: []xlate.Action{&ofpact.Group{ID: 1}, setField(t, "reg2", 6)}})
	rt := xlate.NewRecircTable()
	res := xlate.NewTranslator().Translate(&xlate.Input{Bridge: br, Version: br.Version(), Flow: ipFlow(1), Recirc: rt})
	if got := res.Actions.String(); got != "hash(l4(0)),recirc(0x1)" {
		t.Fatalf("first pass %q", got)
	}
	k := ipFlow(1).Key
	k.DPHash = 0x77
	res = resume(br, rt, 1, k)
	// bucket output:2; reg2=6 (table 1's rest); resubmit(,255) back in
	// table 0 finds reg2=6 -> output:3; the action set's output:4.
	if got := res.Actions.String(); got != "12,13,14" {
		t.Fatalf("resumed pass %q, want 12,13,14", got)
	}
	// Translating the first pass again reuses the frozen state.
	xlate.NewTranslator().Translate(&xlate.Input{Bridge: br, Version: br.Version(), Flow: ipFlow(1), Recirc: rt})
	if rt.Len() != 1 {
		t.Fatalf("%d frozen states, want 1", rt.Len())
	}
}

func TestPauseContinuation(t *testing.T) {
	br := newBridge(t)
	br.AddRule(&xlatetest.Rule{Prio: 1, Acts: []xlate.Action{&ofpact.Resubmit{InPort: mf.PortInPort, TableID: 1}, &ofpact.Output{Port: 3}}})
	br.AddRule(&xlatetest.Rule{Table: 1, Prio: 1, CookieV: 9, Acts: []xlate.Action{
		&ofpact.Output{Port: 2}, &ofpact.Controller{MaxLen: 0xffff, Pause: true, Reason: ofpact.ReasonAction}, &ofpact.Output{Port: 4}}})
	rt := xlate.NewRecircTable()
	res := xlate.NewTranslator().Translate(&xlate.Input{Bridge: br, Version: br.Version(), Flow: ipFlow(1), Recirc: rt})
	want := "12,userspace(pid=0,controller(reason=1,dont_send=0,continuation=1,recirc_id=1,rule_cookie=0x9,controller_id=0,max_len=65535))"
	if got := res.Actions.String(); got != want {
		t.Fatalf("paused: %q, want %q", got, want)
	}
	fz := rt.Lookup(1)
	if fz.Table != 1 || !fz.Pause {
		t.Fatalf("frozen %+v", fz)
	}
	// NXT_RESUME: the rest of table 1, then table 0's rest.
	if got := resume(br, rt, 1, ipFlow(1).Key).Actions.String(); got != "14,13" {
		t.Fatalf("resumed %q, want 14,13", got)
	}
}

// A packet out's controller action has no rule: its packet-in carries
// the all-ones cookie (Open vSwitch's rule_cookie of OVS_BE64_MAX), which
// ovs-ofctl does not print.
func TestPacketOutPacketInCookie(t *testing.T) {
	br := newBridge(t)
	res := xlate.NewTranslator().Translate(&xlate.Input{Bridge: br, Version: br.Version(), Flow: ipFlow(1), SideEffects: true,
		Packet: []byte{1}, PacketOut: true, Actions: []xlate.Action{&ofpact.Controller{MaxLen: 0xffff, Reason: ofpact.ReasonAction}}})
	if len(res.PacketIns) != 1 {
		t.Fatalf("%d packet-ins, want 1", len(res.PacketIns))
	}
	if c := res.PacketIns[0].Cookie; c != ^uint64(0) {
		t.Fatalf("packet-in cookie %#x, want all ones", c)
	}
}

// NORMAL asks whether a broadcast ARP is gratuitous (is_gratuitous_arp),
// which un-wildcards the opcode (exact in the datapath key) and, for a
// request, the sender and target addresses; a unicast ARP only the
// destination MAC.
func TestNormalGratuitousARPWildcards(t *testing.T) {
	br := newBridge(t)
	br.AddRule(&xlatetest.Rule{Acts: []xlate.Action{&ofpact.Output{Port: mf.PortNormal}}})
	var f mf.Flow
	f.InPort, f.EtherType, f.ARPOp = 1, packet.EtherTypeARP, 1
	f.SrcMAC, f.DstMAC = mac6(1), [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	f.SrcIPv4, f.DstIPv4 = [4]byte{198, 18, 0, 1}, [4]byte{198, 18, 0, 2}
	m := translate(br, f).Wildcards.Masks
	if m.ARPOp != 0xffff || m.SrcIPv4 != [4]byte{255, 255, 255, 255} || m.DstIPv4 != [4]byte{255, 255, 255, 255} {
		t.Fatalf("broadcast ARP request: op mask %#x, sip %v, tip %v", m.ARPOp, m.SrcIPv4, m.DstIPv4)
	}
	f.DstMAC = mac6(2)
	m = translate(br, f).Wildcards.Masks
	if m.ARPOp != 0 || m.SrcIPv4 != [4]byte{} || m.DstIPv4 != [4]byte{} {
		t.Fatalf("unicast ARP: op mask %#x, sip %v, tip %v", m.ARPOp, m.SrcIPv4, m.DstIPv4)
	}
}

func TestNoRecvPortDrops(t *testing.T) {
	br := newBridge(t)
	br.AddRule(&xlatetest.Rule{Prio: 1, Acts: []xlate.Action{&ofpact.Output{Port: 3}}})
	br.AddPort(&xlate.Port{OFPort: 1, DPPort: 11, Config: xlate.PortNoRecv, Live: true})
	if got := translate(br, ipFlow(1)).Actions.String(); got != "drop" {
		t.Fatalf("no_recv port: %q", got)
	}
	if got := translate(br, ipFlow(2)).Actions.String(); got != "13" {
		t.Fatalf("other port: %q", got)
	}
}

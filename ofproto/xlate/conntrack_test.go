package xlate_test

import (
	"net/netip"
	"strings"
	"testing"

	"gvs/dpif"
	"gvs/dpif/conntrack"
	"gvs/ofproto/mf"
	"gvs/ofproto/ofpact"
	"gvs/ofproto/xlate"
	"gvs/ofproto/xlate/xlatetest"
	"gvs/packet"
)

const (
	trk = conntrack.StateTracked
	est = conntrack.StateEstablished
	nw  = conntrack.StateNew
)

func matchCTState(st, mask uint32) mf.Match {
	var m mf.Match
	m.Flow.EtherType, m.Wildcards.Masks.EtherType = packet.EtherTypeIPv4, 0xffff
	m.Flow.CTState, m.Wildcards.Masks.CTState = st, mask
	return m
}

// findCT returns the datapath ct action of as.
func findCT(t *testing.T, as dpif.Actions) *conntrack.Request {
	t.Helper()
	for i := range as {
		if as[i].Kind == dpif.ActCT {
			return as[i].CT
		}
	}
	t.Fatalf("no ct action in %v", as)
	return nil
}

// A firewall's two passes: ct(table=1) emits ct and recirc with the
// megaflow ignoring ct_state (no lookup looked at it); the resumed pass
// finds the ct_state the tracker set, and its megaflow matches the
// ct_state bits its lookups consulted, with the recirc_id.
func TestCTTableRecirculates(t *testing.T) {
	br := newBridge(t)
	br.AddRule(&xlatetest.Rule{Prio: 1, Acts: []xlate.Action{&ofpact.CT{ZoneImm: 5, RecircTable: 1}}})
	br.AddRule(&xlatetest.Rule{Table: 1, Prio: 10, M: matchCTState(trk|est, trk|est), Acts: []xlate.Action{&ofpact.Output{Port: 2}}})
	br.AddRule(&xlatetest.Rule{Table: 1, Prio: 5, M: matchCTState(trk|nw, trk|nw), Acts: []xlate.Action{
		&ofpact.CT{ZoneImm: 5, Flags: ofpact.CTCommit, RecircTable: ofpact.CTNoRecirc}, &ofpact.Output{Port: 3}}})
	rt := xlate.NewRecircTable()
	res := xlate.NewTranslator().Translate(&xlate.Input{Bridge: br, Version: br.Version(), Flow: ipFlow(1), Recirc: rt})
	if got := res.Actions.String(); got != "ct(zone=5),recirc(0x1)" {
		t.Fatalf("first pass %q", got)
	}
	if m := res.Wildcards.Masks; m.CTState != 0 || m.CTZone != 0 || m.CTMark != 0 {
		t.Fatalf("first pass matches conntrack fields: state %#x zone %#x mark %#x", m.CTState, m.CTZone, m.CTMark)
	}
	if req := findCT(t, res.Actions); req.Zone != 5 || req.Commit || req.NAT != nil {
		t.Fatalf("request %+v", req)
	}
	fz := rt.Lookup(1)
	if fz == nil || fz.Table != 1 || !fz.Conntracked || len(fz.Actions) != 0 {
		t.Fatalf("frozen state %+v", fz)
	}

	k := ipFlow(1).Key
	k.CTState, k.CTZone = trk|est, 5
	res = resume(br, rt, 1, k)
	if got := res.Actions.String(); got != "12" {
		t.Fatalf("established %q", got)
	}
	if m := res.Wildcards.Masks; m.CTState != trk|est || m.RecircID != ^uint32(0) || m.CTZone != 0 {
		t.Fatalf("established megaflow: ct_state %#x recirc_id %#x ct_zone %#x", m.CTState, m.RecircID, m.CTZone)
	}
	k.CTState = trk | nw
	res = resume(br, rt, 1, k)
	if got := res.Actions.String(); got != "ct(commit,zone=5),13" {
		t.Fatalf("new %q", got)
	}
	if res.FinalFlow.CTState != 0 || res.FinalFlow.CTZone != 0 {
		t.Fatalf("after ct without table the flow is untracked: %+v", res.FinalFlow.Key)
	}
	// Translating the first pass again shares the frozen state.
	xlate.NewTranslator().Translate(&xlate.Input{Bridge: br, Version: br.Version(), Flow: ipFlow(1), Recirc: rt})
	if rt.Len() != 1 {
		t.Fatalf("%d frozen states, want 1", rt.Len())
	}
}

// A zone from a register: the register's value, its bits in the
// megaflow; in a resumed pass the frozen state fixes the register and
// the megaflow need not match it.
func TestCTZoneFromRegister(t *testing.T) {
	br := newBridge(t)
	zone := mf.Subfield{Field: field(t, "reg6"), Ofs: 0, NBits: 16}
	br.AddRule(&xlatetest.Rule{Prio: 1, Acts: []xlate.Action{&ofpact.CT{ZoneSrc: zone, RecircTable: ofpact.CTNoRecirc}, &ofpact.Output{Port: 2}}})
	f := ipFlow(1)
	f.Regs[6] = 0x12345
	res := translate(br, f)
	if got := res.Actions.String(); got != "ct(zone=9029),12" {
		t.Fatalf("actions %q", got)
	}
	if m := res.Wildcards.Masks.Regs[6]; m != 0xffff {
		t.Fatalf("reg6 mask %#x, want 0xffff", m)
	}

	// Resumed: set by the first pass, frozen with it.
	br2 := newBridge(t)
	br2.AddRule(&xlatetest.Rule{Prio: 1, Acts: []xlate.Action{setField(t, "reg6", 9), &ofpact.CT{ZoneImm: 1, RecircTable: 1}}})
	br2.AddRule(&xlatetest.Rule{Table: 1, Prio: 1, Acts: []xlate.Action{
		&ofpact.CT{ZoneSrc: zone, Flags: ofpact.CTCommit, RecircTable: ofpact.CTNoRecirc}, &ofpact.Output{Port: 2}}})
	rt := xlate.NewRecircTable()
	xlate.NewTranslator().Translate(&xlate.Input{Bridge: br2, Version: br2.Version(), Flow: ipFlow(1), Recirc: rt})
	k := ipFlow(1).Key
	k.CTState = trk | nw
	res = resume(br2, rt, 1, k)
	if got := res.Actions.String(); got != "ct(commit,zone=9),12" {
		t.Fatalf("resumed %q", got)
	}
	if m := res.Wildcards.Masks.Regs[6]; m != 0 {
		t.Fatalf("resumed reg6 mask %#x, want 0 (frozen metadata)", m)
	}
}

// The changes before ct are committed first: the tracker sees the packet
// as modified. exec's set_field of ct_mark and ct_label become the
// request's mark and label under their masks; nat becomes its clause.
func TestCTCommitMarkLabelNAT(t *testing.T) {
	br := newBridge(t)
	label := field(t, "ct_label")
	lv := mf.ValueFromUint(0xab, label.Bytes)
	lm := mf.ValueFromUint(0xff, label.Bytes)
	br.AddRule(&xlatetest.Rule{Prio: 1, Acts: []xlate.Action{
		&ofpact.SetIPv4Dst{Addr: [4]byte{198, 18, 0, 9}},
		&ofpact.CT{ZoneImm: 3, Flags: ofpact.CTCommit, Alg: ofpact.CTAlgFTP, RecircTable: ofpact.CTNoRecirc, Actions: []ofpact.Action{
			&ofpact.SetField{Field: field(t, "ct_mark"), Value: mf.ValueFromUint(0x10, 4), Mask: mf.ValueFromUint(0xf0, 4)},
			&ofpact.SetField{Field: label, Value: lv, Mask: lm},
			&ofpact.NAT{Flags: ofpact.NATSrc | ofpact.NATProtoRandom, AddrMin: netip.MustParseAddr("198.18.5.1"), AddrMax: netip.MustParseAddr("198.18.5.3"), PortMin: 1000, PortMax: 2000},
		}},
		&ofpact.Output{Port: 2}}})
	res := translate(br, ipFlow(1))
	got := res.Actions.String()
	if !strings.HasPrefix(got, "set(ipv4(dst=198.18.0.9)),ct(commit,zone=3,mark=0x10/0xf0,label=0xab/0xff,helper=ftp,nat(src=198.18.5.1-198.18.5.3:1000-2000,random)),12") {
		t.Fatalf("actions %q", got)
	}
	req := findCT(t, res.Actions)
	if !req.SetMark || req.Mark != 0x10 || req.MarkMask != 0xf0 || !req.SetLabel || req.Label[15] != 0xab || req.LabelMask[15] != 0xff ||
		req.Helper != conntrack.HelperFTP || req.NAT == nil || req.NAT.Kind != conntrack.NATSrc || !req.NAT.Random {
		t.Fatalf("request %+v nat %+v", req, req.NAT)
	}
	// The megaflow does not match ct_mark or ct_label for the action's
	// sake: they are what ct writes, not what the packet had.
	if m := res.Wildcards.Masks; m.CTMark != 0 || m.CTLabel != ([16]byte{}) {
		t.Fatalf("megaflow matches ct_mark %#x / ct_label %x", m.CTMark, m.CTLabel)
	}

	// A plain nat applies the existing binding.
	br.ClearTable(0)
	br.AddRule(&xlatetest.Rule{Prio: 1, Acts: []xlate.Action{
		&ofpact.CT{RecircTable: 1, Actions: []ofpact.Action{&ofpact.NAT{}}}}})
	rt := xlate.NewRecircTable()
	res = xlate.NewTranslator().Translate(&xlate.Input{Bridge: br, Version: br.Version(), Flow: ipFlow(1), Recirc: rt})
	if got := res.Actions.String(); got != "ct(nat),recirc(0x1)" {
		t.Fatalf("plain nat %q", got)
	}
	if req := findCT(t, res.Actions); req.NAT == nil || req.NAT.Kind != conntrack.NATApply {
		t.Fatalf("plain nat request %+v", req)
	}
}

// ct_clear acts only on a packet that may be tracked.
func TestCTClear(t *testing.T) {
	br := newBridge(t)
	br.AddRule(&xlatetest.Rule{Prio: 1, Acts: []xlate.Action{&ofpact.CTClear{}, &ofpact.Output{Port: 2}}})
	res := translate(br, ipFlow(1))
	if got := res.Actions.String(); got != "12" {
		t.Fatalf("untracked: %q", got)
	}
	f := ipFlow(1)
	f.CTState, f.CTZone, f.CTMark = trk|est, 4, 7
	res = translate(br, f)
	if got := res.Actions.String(); got != "ct_clear,12" {
		t.Fatalf("tracked: %q", got)
	}
	if ff := res.FinalFlow; ff.CTState != 0 || ff.CTZone != 0 || ff.CTMark != 0 {
		t.Fatalf("final flow keeps conntrack state: %+v", ff.Key)
	}
	// After ct without table= the packet is untracked already.
	br.ClearTable(0)
	br.AddRule(&xlatetest.Rule{Prio: 1, Acts: []xlate.Action{&ofpact.CT{RecircTable: ofpact.CTNoRecirc}, &ofpact.CTClear{}, &ofpact.Output{Port: 2}}})
	if got := translate(br, f).Actions.String(); got != "ct,12" {
		t.Fatalf("ct then ct_clear: %q", got)
	}
}

// resubmit(,N,ct) looks table N up with the conntrack original tuple in
// place of the packet's, the megaflow matching the tuple's bits; the
// rule's actions see the packet's own fields.
func TestResubmitCTTuple(t *testing.T) {
	br := newBridge(t)
	br.AddRule(&xlatetest.Rule{Prio: 1, Acts: []xlate.Action{&ofpact.Resubmit{InPort: mf.PortInPort, TableID: 1, WithCTOrig: true}}})
	var m mf.Match
	m.Flow.EtherType, m.Wildcards.Masks.EtherType = packet.EtherTypeIPv4, 0xffff
	m.Flow.DstIPv4, m.Wildcards.Masks.DstIPv4 = [4]byte{198, 18, 9, 9}, [4]byte{255, 255, 255, 255}
	br.AddRule(&xlatetest.Rule{Table: 1, Prio: 5, M: m, Acts: []xlate.Action{setField(t, "reg0", 1), &ofpact.Output{Port: 2}}})
	br.AddRule(&xlatetest.Rule{Table: 1, Prio: 1, Acts: []xlate.Action{&ofpact.Output{Port: 3}}})
	f := ipFlow(1)
	f.CTState = trk | est
	f.CTNwProto, f.CTNwSrc, f.CTNwDst, f.CTTpSrc, f.CTTpDst = 6, [4]byte{198, 18, 0, 1}, [4]byte{198, 18, 9, 9}, 1234, 80
	res := translate(br, f)
	if got := res.Actions.String(); got != "12" {
		t.Fatalf("actions %q, want 12 (looked up with ct_nw_dst)", got)
	}
	w := res.Wildcards.Masks
	if w.CTNwDst != [4]byte{255, 255, 255, 255} || w.DstIPv4 != ([4]byte{}) {
		t.Fatalf("megaflow: ct_nw_dst %v nw_dst %v", w.CTNwDst, w.DstIPv4)
	}
	if res.FinalFlow.DstIPv4 != f.DstIPv4 || res.FinalFlow.CTNwDst != f.CTNwDst {
		t.Fatal("the tuples were not swapped back")
	}
	// No tuple: no lookup (Open vSwitch reports it in traces only).
	f.CTNwProto = 0
	if res := translate(br, f); res.Error != nil || len(res.Actions) != 0 {
		t.Fatalf("untracked resubmit(ct): error %v actions %v", res.Error, res.Actions)
	}
}

// ct(table=N) inside a clone: a datapath clone holds ct and recirc; the
// original packet goes on as it was.
func TestCTInClone(t *testing.T) {
	br := newBridge(t)
	br.AddRule(&xlatetest.Rule{Prio: 1, Acts: []xlate.Action{
		&ofpact.Clone{Actions: []ofpact.Action{&ofpact.CT{ZoneImm: 2, Flags: ofpact.CTCommit, RecircTable: 1}}},
		&ofpact.Output{Port: 2}}})
	rt := xlate.NewRecircTable()
	res := xlate.NewTranslator().Translate(&xlate.Input{Bridge: br, Version: br.Version(), Flow: ipFlow(1), Recirc: rt})
	if got := res.Actions.String(); got != "clone(ct(commit,zone=2),recirc(0x1)),12" {
		t.Fatalf("actions %q", got)
	}
}

// The action set and the stack travel with the recirculation.
func TestCTFreezesActionSetAndStack(t *testing.T) {
	br := newBridge(t)
	br.AddRule(&xlatetest.Rule{Prio: 1, Acts: []xlate.Action{
		&ofpact.StackPush{Field: mf.Subfield{Field: field(t, "reg1"), NBits: 32}},
		&ofpact.CT{RecircTable: 1},
		&ofpact.WriteActions{Actions: []ofpact.Action{&ofpact.Output{Port: 4}}}}})
	br.AddRule(&xlatetest.Rule{Table: 1, Prio: 1, Acts: []xlate.Action{
		&ofpact.StackPop{Field: mf.Subfield{Field: field(t, "reg2"), NBits: 32}}, &ofpact.Output{Port: 2}}})
	rt := xlate.NewRecircTable()
	f := ipFlow(1)
	res := xlate.NewTranslator().Translate(&xlate.Input{Bridge: br, Version: br.Version(), Flow: f, Recirc: rt})
	// The action set written after ct runs in this pass too (Open
	// vSwitch's fork: both pipelines go on).
	if got := res.Actions.String(); got != "ct,recirc(0x1),14" {
		t.Fatalf("first pass %q", got)
	}
	fz := rt.Lookup(1)
	if len(fz.Stack) != 1 || len(fz.ActionSet) != 0 {
		t.Fatalf("frozen stack %v action set %v", fz.Stack, fz.ActionSet)
	}
	k := f.Key
	k.CTState = trk | nw
	if got := resume(br, rt, 1, k).Actions.String(); got != "12" {
		t.Fatalf("resumed %q", got)
	}
}

// BenchmarkConntrackFirewall: the two translations a new connection's
// first packet costs in a ct firewall (the first pass with ct and recirc,
// and the resumed pass that commits), against a plain output.
func BenchmarkConntrackFirewall(b *testing.B) {
	br := newBridge(b)
	br.AddRule(&xlatetest.Rule{Prio: 10, M: matchCTState(0, trk), Acts: []xlate.Action{&ofpact.CT{ZoneImm: 5, RecircTable: 1}}})
	br.AddRule(&xlatetest.Rule{Table: 1, Prio: 10, M: matchCTState(trk|nw, trk|nw), Acts: []xlate.Action{
		&ofpact.CT{ZoneImm: 5, Flags: ofpact.CTCommit, RecircTable: ofpact.CTNoRecirc}, &ofpact.Output{Port: 2}}})
	br.AddRule(&xlatetest.Rule{Table: 1, Prio: 9, M: matchCTState(trk|est, trk|est), Acts: []xlate.Action{&ofpact.Output{Port: 2}}})
	br.AddRule(&xlatetest.Rule{Table: 2, Prio: 1, Acts: []xlate.Action{&ofpact.Output{Port: 2}}})
	xlatetest.UseClassifier(br)
	rt := xlate.NewRecircTable()
	tr := xlate.NewTranslator()
	first := xlate.Input{Bridge: br, Version: br.Version(), Flow: ipFlow(1), Recirc: rt}
	if got := tr.Translate(&first).Actions.String(); got != "ct(zone=5),recirc(0x1)" {
		b.Fatalf("first pass %q", got)
	}
	fz := rt.Lookup(1)
	k := ipFlow(1).Key
	k.RecircID, k.CTState, k.CTZone = 1, trk|nw, 5
	resumed := xlate.Input{Bridge: br, Version: br.Version(), Flow: fz.Thaw(&k), Frozen: fz, Table: fz.Table, Recirc: rt}
	plain := xlate.Input{Bridge: br, Version: br.Version(), Flow: ipFlow(1), Table: 2}
	for _, c := range []struct {
		name string
		in   *xlate.Input
	}{{"first-pass", &first}, {"resumed-commit", &resumed}, {"plain-output", &plain}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				tr.Translate(c.in)
			}
		})
	}
}

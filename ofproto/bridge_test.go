package ofproto

import (
	"gvs/ofproto/ofpact"
	"sync"
	"testing"
	"time"

	maclearn "gvs/ofproto/mac"
	"gvs/ofproto/mf"
	"gvs/ofproto/pipeline"
	"gvs/ofproto/xlate"
)

type eventLog struct {
	mu      sync.Mutex
	status  []PortReason
	descs   []PortDesc
	removed []pipeline.FlowRemoved
	updates []pipeline.FlowUpdate
	pins    int
}

func (e *eventLog) PacketIn(*xlate.PacketIn) { e.mu.Lock(); e.pins++; e.mu.Unlock() }
func (e *eventLog) FlowMonitor(u *pipeline.FlowUpdate) {
	e.mu.Lock()
	e.updates = append(e.updates, *u)
	e.mu.Unlock()
}
func (e *eventLog) FlowRemoved(fr *pipeline.FlowRemoved) {
	e.mu.Lock()
	e.removed = append(e.removed, *fr)
	e.mu.Unlock()
}
func (e *eventLog) WantsPacketInOnMiss() bool { return false }
func (e *eventLog) PortStatus(r PortReason, _, d *PortDesc) {
	e.mu.Lock()
	e.status = append(e.status, r)
	e.descs = append(e.descs, *d)
	e.mu.Unlock()
}

func allFlows(t *testing.T, b *Bridge) []*pipeline.Rule {
	t.Helper()
	rules, err := b.Pipeline().Flows(&pipeline.FlowQuery{TableID: pipeline.TableAll, OutPort: mf.PortNone, OutGroup: pipeline.GroupAny})
	if err != nil {
		t.Fatal(err)
	}
	return rules
}

func isDefaultFlow(r *pipeline.Rule) bool {
	return r.TableID == 0 && r.Priority == 0 && actionsAreNormal(r.Actions) && r.Match == mf.Match{}
}

// TestDefaultFlow: a standalone bridge without controllers has
// "priority=0 actions=NORMAL" in table 0 and nothing else; secure mode or
// a controller takes it away; back to standalone without controllers
// brings it back (connmgr_flushed).
func TestDefaultFlow(t *testing.T) {
	b := NewBridge("br0", BridgeConfig{})
	if rules := allFlows(t, b); len(rules) != 0 {
		t.Fatalf("new bridge flows: %v", rules)
	}
	b.SetFailMode(FailStandalone)
	rules := allFlows(t, b)
	if len(rules) != 1 || !isDefaultFlow(rules[0]) {
		t.Fatalf("standalone bridge flows: %v", rules)
	}
	var wc mf.Wildcards
	f := &mf.Flow{}
	f.InPort = 1
	r := b.LookupRule(b.Version(), 0, f, &wc)
	if r == nil || r.Priority() != 0 {
		t.Fatalf("lookup: %v", r)
	}
	if acts := r.Actions(); len(acts) != 1 || acts[0].(*ofpact.Output).Port != mf.PortNormal {
		t.Fatalf("default flow actions %v", acts)
	}

	b.SetFailMode(FailSecure)
	if rules := allFlows(t, b); len(rules) != 0 {
		t.Fatalf("secure bridge flows: %v", rules)
	}
	b.SetFailMode(FailStandalone)
	if rules := allFlows(t, b); len(rules) != 1 {
		t.Fatalf("standalone again: %v", rules)
	}
	b.SetHaveControllers(true)
	if rules := allFlows(t, b); len(rules) != 0 {
		t.Fatalf("with a controller: %v", rules)
	}
	// Fail mode changes with controllers configured do not flush.
	mustAdd(t, b, 5)
	b.SetFailMode(FailSecure)
	if rules := allFlows(t, b); len(rules) != 1 {
		t.Fatalf("fail mode change with controllers flushed: %v", rules)
	}
	b.SetFailMode(FailStandalone)
	b.SetHaveControllers(false)
	if rules := allFlows(t, b); len(rules) != 1 || !isDefaultFlow(rules[0]) {
		t.Fatalf("controllers gone: %v", rules)
	}
	// Adding the default flow again keeps its counters.
	rules = allFlows(t, b)
	rules[0].Credit(3, 300, time.Now())
	b.AddNormalFlow(0)
	if pk, _, _ := allFlows(t, b)[0].Stats(); pk != 3 {
		t.Fatalf("AddNormalFlow replaced the existing flow (%d packets)", pk)
	}
	// A hidden fail-open flow is invisible to OpenFlow, visible to lookups.
	b.AddNormalFlow(0xf0f0f0)
	if rules := allFlows(t, b); len(rules) != 1 {
		t.Fatalf("hidden flow shown: %v", rules)
	}
	if r := b.LookupRule(b.Version(), 0, f, nil); r == nil || r.(xrule).r.Priority != 0xf0f0f0 {
		t.Fatalf("lookup with the fail-open flow: %v", r)
	}
	b.DeleteFlow(&mf.Match{}, 0xf0f0f0)
	if r := b.LookupRule(b.Version(), 0, f, nil); r == nil || r.(xrule).r.Priority != 0 {
		t.Fatalf("fail-open flow not deleted: %v", r)
	}
}

func mustAdd(t *testing.T, b *Bridge, port uint32) {
	t.Helper()
	var m mf.Match
	m.Flow.InPort, m.Wildcards.Masks.InPort = port, ^uint32(0)
	err := b.Pipeline().FlowMod(&pipeline.FlowMod{Command: pipeline.FlowAdd, Match: m, Priority: 10,
		OutPort: mf.PortNone, OutGroup: pipeline.GroupAny, BufferID: pipeline.BufferNone,
		Actions: []pipeline.Action{&ofpact.Output{Port: 1}}})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPortNumbers: ofport_request wins when free, a previous number is
// kept, new ports are numbered in name order skipping numbers in use and
// numbers given up within the hour; the bridge's own port is LOCAL.
func TestPortNumbers(t *testing.T) {
	clock := time.Unix(1_000_000, 0)
	b := NewBridge("br0", BridgeConfig{Now: func() time.Time { return clock }})
	ev := &eventLog{}
	b.SetEvents(ev)
	nums, errs := b.AddPorts([]PortSpec{
		{Name: "br0", DPPort: 1},
		{Name: "c", DPPort: 2},
		{Name: "b", DPPort: 3, Previous: 7},
		{Name: "a", DPPort: 4, Request: 1},
		{Name: "d", DPPort: 5, Request: 7}, // 7 requested: wins over b's previous 7
	})
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	want := []uint32{mf.PortLocal, 3, 2, 1, 7}
	// b lost 7 to d's request; new numbers in name order: b=2, c=3.
	for i := range want {
		if nums[i] != want[i] {
			t.Fatalf("numbers %v, want %v", nums, want)
		}
	}
	if p := b.PortByDatapath(2); p == nil || p.OFPort != 3 || p.Name != "c" {
		t.Fatalf("PortByDatapath(2) = %+v", p)
	}
	if p := b.Port(mf.PortLocal); p == nil || p.DPPort != 1 {
		t.Fatalf("Port(LOCAL) = %+v", p)
	}
	ports := b.Ports()
	for i := 1; i < len(ports); i++ {
		if ports[i-1].OFPort >= ports[i].OFPort {
			t.Fatalf("ports not in order: %v", ports)
		}
	}
	if len(ev.status) != 5 || ev.status[0] != PortAdded {
		t.Fatalf("port status events %v", ev.status)
	}
	if _, errs := b.AddPorts([]PortSpec{{Name: "a", DPPort: 9}}); errs[0] == nil {
		t.Fatal("adding a port twice succeeded")
	}
	// c gives up 3: the next new port does not get it for an hour.
	if err := b.DelPort("c"); err != nil {
		t.Fatal(err)
	}
	nums, _ = b.AddPorts([]PortSpec{{Name: "e", DPPort: 6}})
	if nums[0] != 4 {
		t.Fatalf("new port after a delete got %d, want 4", nums[0])
	}
	if b.PortByDatapath(2) != nil {
		t.Fatal("deleted port still visible")
	}
	clock = clock.Add(2 * time.Hour)
	b.alloc.last = 2
	nums, _ = b.AddPorts([]PortSpec{{Name: "f", DPPort: 7}})
	if nums[0] != 3 {
		t.Fatalf("after an hour 3 is free again; got %d", nums[0])
	}
}

func TestPortAllocatorExhaustion(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	a := NewPortNumbers()
	full := map[uint32]bool{}
	for n := uint32(1); n <= ofportAutoMax; n++ {
		full[n] = true
	}
	delete(full, 3)
	delete(full, 9)
	a.Freed(3, now.Add(-time.Minute))
	a.Freed(9, now.Add(-2*time.Minute))
	if n := a.pick(func(n uint32) bool { return full[n] }, now); n != 9 {
		t.Fatalf("pick with only recent numbers free = %d, want 9 (freed first)", n)
	}
	a.last = ofportAutoMax
	if n := a.pick(func(uint32) bool { return false }, now); n != 1 {
		t.Fatalf("pick after %d = %d, want 1", ofportAutoMax, n)
	}
}

func TestPortModAndLink(t *testing.T) {
	b := NewBridge("br0", BridgeConfig{})
	ev := &eventLog{}
	b.SetEvents(ev)
	hw := [6]byte{2, 0, 0, 0, 0, 1}
	nums, _ := b.AddPorts([]PortSpec{{Name: "p1", DPPort: 3, MAC: hw, VLAN: maclearn.PortConfig{Tag: 10}}})
	n := nums[0]
	if err := b.PortMod(n, [6]byte{9}, xlate.PortNoFlood, xlate.PortNoFlood); err != errBadHWAddr {
		t.Fatalf("port mod with the wrong address: %v", err)
	}
	if err := b.PortMod(99, hw, 0, 0); err != errBadPort {
		t.Fatalf("port mod of a missing port: %v", err)
	}
	if err := b.PortMod(n, hw, xlate.PortNoFlood|xlate.PortDown, xlate.PortNoFlood|xlate.PortDown); err != nil {
		t.Fatal(err)
	}
	p := b.Port(n)
	if p.Config != xlate.PortNoFlood|xlate.PortDown || p.Live {
		t.Fatalf("after port mod: %+v", p)
	}
	if err := b.PortMod(n, hw, 0, xlate.PortDown); err != nil {
		t.Fatal(err)
	}
	b.SetPortLink("p1", false)
	if p := b.Port(n); !p.LinkDown || p.Live || p.Config != xlate.PortNoFlood {
		t.Fatalf("link down: %+v", p)
	}
	b.SetPortLink("p1", false) // no change, no event
	got := ev.status
	if len(got) != 4 || got[1] != PortModified || got[3] != PortModified {
		t.Fatalf("events %v", got)
	}
	if p.VLAN == nil {
		t.Fatal("no VLAN config")
	}
	descs := b.PortDescs()
	if len(descs) != 1 || descs[0].HWAddr != hw || !descs[0].LinkDown {
		t.Fatalf("port descs %+v", descs)
	}
}

// TestLearn: a learned flow is added (modify-strict that adds), the same
// flow learned again only restarts its hard timeout, and timers expire
// it with flow removed.
func TestLearn(t *testing.T) {
	clock := time.Unix(1_000_000, 0)
	b := NewBridge("br0", BridgeConfig{Now: func() time.Time { return clock }})
	ev := &eventLog{}
	b.SetEvents(ev)
	var m mf.Match
	m.Flow.EtherType, m.Wildcards.Masks.EtherType = 0x0800, 0xffff
	lf := &xlate.LearnedFlow{TableID: 1, Priority: 7, Cookie: 0x42, HardTimeout: 10, Flags: ofpffSendFlowRem,
		Match: m, Actions: []xlate.Action{&ofpact.Output{Port: 3}}}
	if err := b.Learn(lf); err != nil {
		t.Fatal(err)
	}
	v := b.Version()
	learned := b.findExactly(1, &m, 7)
	if learned == nil || learned.Cookie != 0x42 || learned.HardTimeout != 10 || learned.Flags != pipeline.FlagSendFlowRem {
		t.Fatalf("learned flow %+v", learned)
	}
	clock = clock.Add(8 * time.Second)
	if err := b.Learn(lf); err != nil {
		t.Fatal(err)
	}
	if b.Version() != v {
		t.Fatal("relearning the same flow changed the tables")
	}
	clock = clock.Add(8 * time.Second)
	if n, _ := b.RunTimers(clock); n != 0 {
		t.Fatal("relearned flow expired from its first hard timeout")
	}
	clock = clock.Add(3 * time.Second)
	if n, _ := b.RunTimers(clock); n != 1 {
		t.Fatal("learned flow did not expire")
	}
	if len(ev.removed) != 1 || ev.removed[0].Reason != pipeline.RemovedHardTimeout || ev.removed[0].Rule.Cookie != 0x42 {
		t.Fatalf("flow removed %+v", ev.removed)
	}
	// Different actions replace the flow.
	if err := b.Learn(lf); err != nil {
		t.Fatal(err)
	}
	lf.Actions = []xlate.Action{&ofpact.Output{Port: 4}}
	if err := b.Learn(lf); err != nil {
		t.Fatal(err)
	}
	if r := b.findExactly(1, &m, 7); r == nil || r.Actions[0].(*ofpact.Output).Port != 4 {
		t.Fatalf("relearned with new actions: %+v", r)
	}
}

func TestSetPortRequest(t *testing.T) {
	b := NewBridge("br0", BridgeConfig{})
	nums, _ := b.AddPorts([]PortSpec{{Name: "a", DPPort: 1}, {Name: "b", DPPort: 2}})
	if nums[0] != 1 || nums[1] != 2 {
		t.Fatalf("numbers %v", nums)
	}
	ev := &eventLog{}
	b.SetEvents(ev)
	if n, _ := b.SetPortRequest("a", 2); n != 1 {
		t.Fatalf("request for a number in use renumbered to %d", n)
	}
	if n, _ := b.SetPortRequest("a", 10); n != 10 || b.Port(10) == nil || b.Port(1) != nil {
		t.Fatalf("renumbering: %d", n)
	}
	if len(ev.status) != 2 || ev.status[0] != PortDeleted || ev.status[1] != PortAdded {
		t.Fatalf("events %v", ev.status)
	}
	if _, err := b.SetPortRequest("zz", 3); err == nil {
		t.Fatal("missing port")
	}
}

func xlateStats(packets, bytes uint64, used time.Time) xlate.Stats {
	return xlate.Stats{Packets: packets, Bytes: bytes, Used: used}
}

func TestHiddenFlowsNotCounted(t *testing.T) {
	b := NewBridge("br0", BridgeConfig{})
	b.AddNormalFlow(0)
	b.AddNormalFlow(0xf0f0f0)
	if ts := b.TableStats(); ts[0].ActiveCount != 1 {
		t.Fatalf("table 0 active %d, want 1 (the fail-open flow is hidden)", ts[0].ActiveCount)
	}
	b.DeleteFlow(&mf.Match{}, 0xf0f0f0)
	if ts := b.TableStats(); ts[0].ActiveCount != 1 {
		t.Fatalf("table 0 active %d", ts[0].ActiveCount)
	}
}

package ofproto

import (
	"errors"
	"sync"
	"testing"

	"gvs/ofproto/connmgr"
	"gvs/ofproto/mf"
	"gvs/ofproto/ofp"
	"gvs/ofproto/ofpact"
	"gvs/ofproto/ofperr"
	"gvs/ofproto/pipeline"
	"gvs/ofproto/xlate"
)

// managerEvents records what a bridge reports to its connection manager.
type managerEvents struct {
	mu      sync.Mutex
	pins    []uint16 // controller ids
	removed []ofp.FlowRemoved
	changed []uint8 // port reasons
	olds    []*ofp.Port
	flows   []connmgr.FlowChange
	origins []connmgr.Origin
	miss    bool
}

var _ connmgr.Events = (*managerEvents)(nil)

func (e *managerEvents) PacketIn(*ofp.PacketIn) {
	e.mu.Lock()
	e.pins = append(e.pins, 0)
	e.mu.Unlock()
}
func (e *managerEvents) PacketInTo(id uint16, _ *ofp.PacketIn) {
	e.mu.Lock()
	e.pins = append(e.pins, id)
	e.mu.Unlock()
}
func (e *managerEvents) FlowRemoved(fr *ofp.FlowRemoved) {
	e.mu.Lock()
	e.removed = append(e.removed, *fr)
	e.mu.Unlock()
}
func (e *managerEvents) PortStatus(uint8, *ofp.Port) {}
func (e *managerEvents) PortChanged(r uint8, old, _ *ofp.Port, _ connmgr.Origin) {
	e.mu.Lock()
	e.changed, e.olds = append(e.changed, r), append(e.olds, old)
	e.mu.Unlock()
}
func (e *managerEvents) FlowMonitor(*ofp.FlowUpdate, connmgr.Origin) {}
func (e *managerEvents) FlowChanged(fc *connmgr.FlowChange, o connmgr.Origin) {
	e.mu.Lock()
	e.flows, e.origins = append(e.flows, *fc), append(e.origins, o)
	e.mu.Unlock()
}
func (e *managerEvents) ControllerConnected() bool { return false }
func (e *managerEvents) WantsPacketInOnMiss() bool { e.mu.Lock(); defer e.mu.Unlock(); return e.miss }

// TestConnect: a bridge handed to a connection manager starts empty and
// reports in the manager's terms.
func TestConnect(t *testing.T) {
	b := NewBridge("br0", BridgeConfig{})
	b.SetFailMode(FailStandalone)
	ev := &managerEvents{}
	c := b.Connect(ev)
	var _ connmgr.Bridge = c
	if n := len(allFlows(t, b)); n != 0 {
		t.Fatalf("a connected bridge keeps %d flows", n)
	}
	hw := [6]byte{2, 0, 0, 0, 0, 1}
	b.AddPorts([]PortSpec{{Name: "p1", DPPort: 3, MAC: hw}})
	b.SetPortLink("p1", false)
	if len(ev.changed) != 2 || ev.changed[0] != ofp.PortReasonAdd || ev.changed[1] != ofp.PortReasonModify ||
		ev.olds[0] != nil || ev.olds[1] == nil || ev.olds[1].State&ofp.PortStateLinkDown != 0 {
		t.Fatalf("port changes %v %+v", ev.changed, ev.olds)
	}
	var m mf.Match
	m.Flow.InPort, m.Wildcards.Masks.InPort = 1, ^uint32(0)
	o := connmgr.Origin{Conn: 3, XID: 4}
	fm := &ofp.FlowMod{Command: 0, Match: m, Priority: 9, BufferID: ofp.BufferNone, OutPort: mf.PortNone,
		OutGroup: ofp.GroupAny, Flags: ofp.FlowFlagSendFlowRem, Actions: []ofp.Action{&ofpact.Output{Port: 7}}}
	if err := c.FlowMod(fm, o); err != nil {
		t.Fatal(err)
	}
	if len(ev.flows) != 1 || ev.origins[0] != o || ev.flows[0].Update.Event != ofp.UpdateAdded {
		t.Fatalf("flow changes %+v %+v", ev.flows, ev.origins)
	}
	if out := ev.flows[0].OutputsTo; !out(7, ofp.GroupAny) || out(8, ofp.GroupAny) || !out(mf.PortNone, ofp.GroupAny) || out(mf.PortNone, 1) {
		t.Fatal("OutputsTo does not follow the flow's actions")
	}
	del := *fm
	del.Command = 3
	if err := c.FlowMod(&del, o); err != nil {
		t.Fatal(err)
	}
	if len(ev.removed) != 1 || ev.removed[0].Priority != 9 || ev.removed[0].Reason != uint8(pipeline.RemovedDelete) {
		t.Fatalf("flow removed %+v", ev.removed)
	}
	b.SendPacketIn(&xlate.PacketIn{ControllerID: 5})
	b.SendPacketIn(&xlate.PacketIn{})
	if len(ev.pins) != 2 || ev.pins[0] != 5 || ev.pins[1] != 0 {
		t.Fatalf("packet-ins by controller id: %v", ev.pins)
	}
	ev.mu.Lock()
	ev.miss = true
	ev.mu.Unlock()
	b.RunTimers(b.now())
	if !b.Config().PacketInOnMiss {
		t.Fatal("WantsPacketInOnMiss did not reach translation's settings")
	}
}

// TestResumeContinuation: a packet-in from a paused translation carries a
// continuation that NXT_RESUME hands back; an unknown one is stale.
func TestResumeContinuation(t *testing.T) {
	b := NewBridge("br0", BridgeConfig{})
	ev := &pinEvents{}
	c := b.Connect(ev)
	var got *xlate.Frozen
	b.SetResume(func(_ *Bridge, fz *xlate.Frozen, frame []byte) error { got = fz; return nil })
	fz := &xlate.Frozen{Table: 7}
	b.SendPacketIn(&xlate.PacketIn{Continuation: fz})
	if len(ev.conts) != 1 || len(ev.conts[0]) == 0 {
		t.Fatalf("packet-in continuations %v", ev.conts)
	}
	r := &ofp.Resume{}
	r.Continuation = ev.conts[0]
	if err := c.Resume(r, connmgr.Origin{}); err != nil || got == nil || got.Table != fz.Table {
		t.Fatalf("resume: %v, frozen %v", err, got)
	}
	r.Continuation = []byte("not a continuation")
	if err := c.Resume(r, connmgr.Origin{}); !errors.Is(err, ofperr.NXR_STALE) {
		t.Fatalf("bad continuation: %v", err)
	}
}

type pinEvents struct {
	managerEvents
	conts [][]byte
}

func (e *pinEvents) PacketIn(pin *ofp.PacketIn) { e.conts = append(e.conts, pin.Continuation) }

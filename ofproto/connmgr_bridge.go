package ofproto

import (
	"gvs/ofproto/connmgr"
	"gvs/ofproto/mf"
	"gvs/ofproto/ofp"
	"gvs/ofproto/pipeline"
	"gvs/ofproto/xlate"
)

// ConnBridge is the connection manager's Bridge.
var _ connmgr.Bridge = (*ConnBridge)(nil)

// Connect hands the bridge to a connection manager: its tables start
// empty (the manager installs the flows the switch owns, as Open
// vSwitch's connmgr does for a new ofproto) and its asynchronous messages
// go to events from now on.
func (b *Bridge) Connect(events connmgr.Events) *ConnBridge {
	cb := NewConnBridge(b)
	b.FlushFlows()
	b.SetEvents(connEvents{events, b})
	return cb
}

// CommitBundle implements connmgr.Bridge: each message is converted just
// before it is applied.
func (c *ConnBridge) CommitBundle(msgs []connmgr.BundleMsg, flags uint16, o connmgr.Origin) (int, error) {
	var fm pipeline.FlowMod
	return c.b.commitBundle(len(msgs), func(i int, out *BundleMsg) error {
		m := &msgs[i]
		var err error
		switch {
		case m.Prepared != nil:
			out.Add, out.AddRequester = m.Prepared.(*pipeline.PreparedAdd), o
		case m.FlowMod != nil:
			err = fillFlowMod(&fm, m.FlowMod, o)
			out.FlowMod = &fm
		case m.GroupMod != nil:
			out.GroupMod, err = pipelineGroupMod(m.GroupMod)
		case m.PortMod != nil:
			out.PortMod = portMod(m.PortMod)
		case m.PacketOut != nil:
			out.PacketOut, err = c.packetOut(m.PacketOut)
		}
		return err
	}, flags&connmgr.BundleAtomic != 0)
}

// flowChangeWanter is what connmgr.Manager adds to its Events: whether a
// flow monitor would take flow changes at all. Sinks without it get every
// change.
type flowChangeWanter interface{ WantsFlowChanges() bool }

var _ connmgr.BundlePreparer = (*ConnBridge)(nil)

// PrepareBundleMsg implements connmgr.BundlePreparer: an add flow mod
// becomes its rule now (the decoded message is dropped), unless it would
// fail, which it then does at commit as before.
func (c *ConnBridge) PrepareBundleMsg(m *connmgr.BundleMsg) {
	if m.FlowMod == nil || pipeline.Command(m.FlowMod.Command) != pipeline.FlowAdd {
		return
	}
	var fm pipeline.FlowMod
	if fillFlowMod(&fm, m.FlowMod, connmgr.Origin{}) != nil {
		return
	}
	pa, err := c.b.pipe.PrepareAdd(&fm)
	if err != nil {
		return
	}
	m.FlowMod, m.Prepared = nil, pa
}

// connEvents converts the bridge's reports to the manager's messages.
type connEvents struct {
	e connmgr.Events
	b *Bridge
}

// PacketIn sends a packet-in; a paused translation's frozen state stays
// with the bridge, the packet-in carries its continuation id.
func (e connEvents) PacketIn(pi *xlate.PacketIn) {
	var cont []byte
	if pi.Continuation != nil {
		cont = e.b.saveContinuation(pi.Continuation)
	}
	md := packetInMetadata(&pi.Flow)
	pin := &ofp.PacketIn{Packet: pi.Packet, TotalLen: uint32(len(pi.Packet)), BufferID: ofp.BufferNone,
		TableID: pi.TableID, Cookie: pi.Cookie, Reason: uint8(pi.Reason), Metadata: md, Userdata: pi.Userdata,
		Continuation: cont}
	if pi.ControllerID != 0 {
		e.e.PacketInTo(pi.ControllerID, pin)
		return
	}
	e.e.PacketIn(pin)
}

func (e connEvents) FlowRemoved(fr *pipeline.FlowRemoved) { e.e.FlowRemoved(flowRemoved(fr)) }

func (e connEvents) PortStatus(reason PortReason, old, d *PortDesc) {
	p := ofpPort(d)
	var op *ofp.Port
	if old != nil {
		x := ofpPort(old)
		op = &x
	}
	e.e.PortChanged(uint8(reason), op, &p, connmgr.Origin{})
}

func (e connEvents) FlowMonitor(u *pipeline.FlowUpdate) {
	if w, ok := e.e.(flowChangeWanter); ok && !w.WantsFlowChanges() {
		return // no flow monitor: a table load makes no garbage here
	}
	o, _ := u.Requester.(connmgr.Origin)
	acts, old := u.Rule.Actions, u.OldActions
	e.e.FlowChanged(&connmgr.FlowChange{Update: flowUpdate(u), OutputsTo: func(port, group uint32) bool {
		outs := func(a []pipeline.Action) bool {
			return (port == mf.PortNone || pipeline.ActionsOutputTo(a, port)) &&
				(group == ofp.GroupAny || pipeline.ActionsOutputToGroup(a, group))
		}
		return outs(acts) || old != nil && outs(old)
	}}, o)
}

func (e connEvents) WantsPacketInOnMiss() bool { return e.e.WantsPacketInOnMiss() }

// packetInMetadata is the metadata a packet-in carries (Open vSwitch's
// flow_get_metadata): in_port, and the pipeline and datapath metadata
// fields that are not zero (metadata, registers, pkt_mark, tun_id, the
// conntrack state).
func packetInMetadata(f *mf.Flow) mf.Match {
	var md mf.Match
	w := &md.Wildcards.Masks
	w.InPort = ^uint32(0)
	if f.Metadata != 0 {
		w.Metadata = ^uint64(0)
	}
	for i, r := range f.Regs {
		if r != 0 {
			w.Regs[i] = ^uint32(0)
		}
	}
	if f.PktMark != 0 {
		w.PktMark = ^uint32(0)
	}
	if f.TunID != 0 {
		w.TunID = ^uint64(0)
	}
	if f.CTState != 0 {
		w.CTState, w.CTZone, w.CTMark = ^uint32(0), ^uint16(0), ^uint32(0)
		w.CTLabel = [16]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	}
	md.Flow = *f
	md.Normalize()
	return md
}

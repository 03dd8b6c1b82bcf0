//go:build ofpconn

package ofproto

import (
	"gvs/ofproto/connmgr"
	"gvs/ofproto/mf"
	"gvs/ofproto/ofp"
	"gvs/ofproto/pipeline"
	"gvs/ofproto/xlate"
)

// Until connmgr's Bridge and Events use ofproto/ofp's messages on main,
// ConnBridge implements connmgr.Bridge only with the ofpconn build tag.
var _ connmgr.Bridge = (*ConnBridge)(nil)

// Connect hands the bridge to a connection manager: its tables start
// empty (the manager installs the flows the switch owns, as Open
// vSwitch's connmgr does for a new ofproto) and its asynchronous messages
// go to events from now on.
func (b *Bridge) Connect(events connmgr.Events) *ConnBridge {
	cb := NewConnBridge(b)
	b.FlushFlows()
	b.SetEvents(connEvents{events})
	return cb
}

// CommitBundle implements connmgr.Bridge.
func (c *ConnBridge) CommitBundle(msgs []connmgr.BundleMsg, flags uint16, o connmgr.Origin) (int, error) {
	out := make([]BundleMsg, len(msgs))
	for i, m := range msgs {
		var err error
		switch {
		case m.FlowMod != nil:
			out[i].FlowMod, err = c.pipelineFlowMod(m.FlowMod, o)
		case m.GroupMod != nil:
			out[i].GroupMod, err = pipelineGroupMod(m.GroupMod)
		case m.PortMod != nil:
			out[i].PortMod = portMod(m.PortMod)
		case m.PacketOut != nil:
			out[i].PacketOut, err = c.packetOut(m.PacketOut)
		}
		if err != nil {
			return i, err
		}
	}
	return c.b.CommitBundle(out, flags&connmgr.BundleAtomic != 0)
}

// connEvents converts the bridge's reports to the manager's messages.
type connEvents struct{ e connmgr.Events }

func (e connEvents) PacketIn(pi *xlate.PacketIn) {
	var md mf.Match
	md.Flow = pi.Flow
	md.Wildcards.Masks.InPort = ^uint32(0)
	pin := &ofp.PacketIn{Packet: pi.Packet, TotalLen: uint32(len(pi.Packet)), BufferID: ofp.BufferNone,
		TableID: pi.TableID, Cookie: pi.Cookie, Reason: uint8(pi.Reason), Metadata: md, Userdata: pi.Userdata}
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

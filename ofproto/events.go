package ofproto

import (
	"gvs/ofproto/ofperr"

	"gvs/ofproto/pipeline"
	"gvs/ofproto/xlate"
)

// Events is where a bridge reports asynchronous messages: the connection
// manager (connmgr.Events once it is on main; this is the shape it has
// there, with the bridge's own types until ofproto/ofp's land).
type Events interface {
	PacketIn(pi *xlate.PacketIn)
	FlowRemoved(fr *pipeline.FlowRemoved)
	// PortStatus: old is the description before a modification (nil
	// otherwise).
	PortStatus(reason PortReason, old, desc *PortDesc)
	FlowMonitor(u *pipeline.FlowUpdate)
	// WantsPacketInOnMiss: a table miss should go to the controller
	// (connmgr_wants_packet_in_on_miss). The bridge polls it.
	WantsPacketInOnMiss() bool
}

// PortReason is a port status reason (OFPPR_*).
type PortReason uint8

const (
	PortAdded    PortReason = 0
	PortDeleted  PortReason = 1
	PortModified PortReason = 2
)

// PortDesc describes a port as OpenFlow does (struct ofputil_phy_port).
type PortDesc struct {
	OFPort   uint32
	Name     string
	HWAddr   [6]byte
	Config   xlate.PortFlags // OFPPC_*
	LinkDown bool            // OFPPS_LINK_DOWN
	Live     bool            // OFPPS_LIVE
	// Features (OpenFlow 1.1's OFPPF_* layout) and speeds in kbit/s.
	Curr, Advertised, Supported uint32
	CurrSpeed, MaxSpeed         uint32
}

// Port mod errors, as Open vSwitch's handle_port_mod returns them.
var (
	errBadPort   error = ofperr.OFPPMFC_BAD_PORT
	errBadHWAddr error = ofperr.OFPPMFC_BAD_HW_ADDR
)

type eventsBox struct{ e Events }

// SetEvents connects the bridge to its controllers' connections (nil:
// asynchronous messages are dropped).
func (b *Bridge) SetEvents(e Events) { b.events.Store(&eventsBox{e}) }

func (b *Bridge) sink() Events {
	if box := b.events.Load(); box != nil {
		return box.e
	}
	return nil
}

func (b *Bridge) portStatus(reason PortReason, old, p *portState) {
	if e := b.sink(); e != nil {
		d := p.desc()
		var od *PortDesc
		if old != nil {
			x := old.desc()
			od = &x
		}
		e.PortStatus(reason, od, &d)
	}
}

func (p *portState) desc() PortDesc {
	return PortDesc{OFPort: p.OFPort, Name: p.Name, HWAddr: p.hw, Config: p.Config, LinkDown: p.LinkDown, Live: p.Live,
		Curr: p.curr, CurrSpeed: p.currSpeed, MaxSpeed: p.maxSpeed}
}

// PortDescs describes every port in OpenFlow number order (LOCAL last).
func (b *Bridge) PortDescs() []PortDesc {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]PortDesc, 0, len(b.byName))
	for _, xp := range b.ports.Load().sorted {
		if p := b.byName[xp.Name]; p != nil {
			out = append(out, p.desc())
		}
	}
	return out
}

// SendPacketIn implements upcall.Bridge: hand a packet-in to the
// controllers.
func (b *Bridge) SendPacketIn(pi *xlate.PacketIn) {
	if e := b.sink(); e != nil {
		e.PacketIn(pi)
	}
}

// flowRemovedSink passes the pipeline's flow removed messages on.
type flowRemovedSink struct{ b *Bridge }

func (s flowRemovedSink) FlowRemoved(fr pipeline.FlowRemoved) {
	if e := s.b.sink(); e != nil {
		e.FlowRemoved(&fr)
	}
}

func (s flowRemovedSink) FlowChanged(u pipeline.FlowUpdate) {
	e := s.b.sink()
	if e == nil {
		return
	}
	if w, ok := e.(flowChangeWanter); ok && !w.WantsFlowChanges() {
		return // a table load makes no garbage here
	}
	sendFlowMonitor(e, u)
}

// sendFlowMonitor hands e a copy of u that escapes (in a function of its
// own, so that FlowChanged's u stays on the stack when nobody monitors).
func sendFlowMonitor(e Events, u pipeline.FlowUpdate) { e.FlowMonitor(&u) }

package xlate

import (
	"gvs/dpif"
	"gvs/ofproto/mf"
)

// output is Open vSwitch's xlate_output_action: port is an OpenFlow port
// number, real or reserved.
func (ctx *context) output(port uint32, maxLen uint16) {
	switch port {
	case mf.PortInPort:
		ctx.outputPort(ctx.flow.InPort)
	case mf.PortTable:
		if ctx.inPacketOut {
			// packet-out's output:TABLE runs the packet through the
			// tables from table 0.
			ctx.lookupAndRun(ctx.flow.InPort, 0, true, true, false)
		}
	case mf.PortNormal:
		ctx.normal()
	case mf.PortFlood:
		ctx.flood(false)
	case mf.PortAll:
		ctx.flood(true)
	case mf.PortController:
		reason := ReasonAction
		switch {
		case ctx.inPacketOut: // the whole of a packet-out, as Open vSwitch's in_packet_out
			reason = ReasonPacketOut
		case ctx.inGroup:
			reason = ReasonGroup
		case ctx.inActionSet:
			reason = ReasonActionSet
		}
		ctx.controller(controllerArgs{maxLen: maxLen, reason: reason})
	case mf.PortNone:
	default:
		if port == ctx.flow.InPort {
			ctx.warn("skipping output to input port")
			return
		}
		ctx.outputPort(port)
	}
}

// outputPort sends the packet as the flow now is to one port (Open
// vSwitch's compose_output_action__ for a plain port).
func (ctx *context) outputPort(ofport uint32) {
	p := ctx.br.Port(ofport)
	if p == nil {
		ctx.warn("Nonexistent output port")
		return
	}
	if p.Config&PortNoFwd != 0 {
		ctx.detail("OFPPC_NO_FWD set, skipping output")
		return
	}
	if p.Patch != nil {
		last := ctx.outputLast
		ctx.outputLast = false
		if p.Patch.Peer == nil {
			return // a patch port without its peer goes nowhere
		}
		ctx.patchOutput(p, last)
		return
	}
	ctx.commit()
	ctx.emit(dpif.Output(p.DPPort))
}

// flood outputs to every port but the input port: all of them (ALL) or
// those without OFPPC_NO_FLOOD (FLOOD), in OpenFlow port order.
func (ctx *context) flood(all bool) {
	for _, p := range ctx.br.Ports() {
		if p.OFPort == ctx.flow.InPort {
			continue
		}
		if all || p.Config&PortNoFlood == 0 {
			ctx.outputPort(p.OFPort)
		}
	}
}

// controllerArgs are a controller action's parameters.
type controllerArgs struct {
	maxLen       uint16
	reason       PacketInReason
	controllerID uint16
	userdata     []byte
	pause        bool
	meterID      uint32
}

// controller sends the packet, as the actions so far made it, to the
// controllers. The datapath has no userspace action yet, so a flow that
// reaches a controller action is slow-pathed: every packet comes to the
// handler, which sends it (Input.SideEffects with a packet).
func (ctx *context) controller(a controllerArgs) { ctx.controllerFrozen(a, nil) }

// controllerFrozen is controller with a continuation (pause).
func (ctx *context) controllerFrozen(a controllerArgs, fz *Frozen) {
	if a.reason == ReasonAction && ctx.rule != nil && isTableMissRule(ctx.rule) {
		a.reason = ReasonExplicitMiss
	}
	if ctx.in.Recirc != nil && ctx.controllerUserspace(a, fz) {
		return
	}
	ctx.res.Slow |= SlowController
	if !ctx.in.SideEffects || ctx.in.Packet == nil {
		return
	}
	pi := PacketIn{
		Reason:       a.reason,
		TableID:      ctx.tableID,
		Cookie:       ctx.cookie,
		ControllerID: a.controllerID,
		MaxLen:       a.maxLen,
		Userdata:     a.userdata,
		Flow:         ctx.flow,
		Packet:       ctx.in.Packet,
		Continuation: fz,
	}
	ctx.res.PacketIns = append(ctx.res.PacketIns, pi)
}

// isTableMissRule reports a priority-0 rule that matches everything.
func isTableMissRule(r Rule) bool {
	if r.Priority() != 0 {
		return false
	}
	m := r.Match()
	if m == nil {
		return false
	}
	for _, w := range m.Wildcards.Masks.Words() {
		if w != 0 {
			return false
		}
	}
	return true
}

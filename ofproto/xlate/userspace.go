package xlate

import (
	"gvs/dpif"
	"gvs/ofproto/ofpact"
)

// controllerUserspace makes a controller action a userspace datapath
// action whose cookie names a frozen state holding what the packet-in
// needs beyond the packet (pipeline metadata, table, userdata, the
// continuation of a pause), as Open vSwitch's put_controller_user_action:
// the megaflow then stays in the datapath and each packet that takes it
// comes up with its cookie.
func (ctx *context) controllerUserspace(a controllerArgs, fz *Frozen) bool {
	if fz == nil {
		fz = &Frozen{Bridge: ctx.br, Version: ctx.version, Flow: ctx.flow, Table: ctx.tableID, Cookie: ctx.cookie,
			Conntracked: ctx.conntracked}
	}
	fz.Userdata, fz.Reason, fz.Pause = a.userdata, a.reason, a.pause
	id := ctx.in.Recirc.Alloc(fz, ctx.now())
	ctx.commit()
	up := dpif.Userspace(dpif.UserspaceCookie{
		Type:         dpif.CookieController,
		InPort:       ctx.in.Flow.InPort,
		Reason:       uint8(a.reason),
		DontSend:     ctx.in.Trace != nil && ctx.in.Packet == nil,
		Continuation: a.pause,
		RecircID:     id,
		RuleCookie:   ctx.cookie,
		ControllerID: a.controllerID,
		MaxLen:       a.maxLen,
	})
	// controller(meter_id=N): the packet-ins go through the meter, in a
	// clone so the meter drops only the copy (put_controller_user_action).
	if a.meterID != 0 {
		if dp, ok := ctx.br.Meter(a.meterID); ok {
			ctx.emit(dpif.Clone(dpif.Actions{dpif.Meter(dp), up}))
			return true
		}
	}
	ctx.emit(up)
	return true
}

// emitHashRecirc emits hash(l4(basis)),recirc(id).
func (ctx *context) emitHashRecirc(basis, id uint32) {
	ctx.emit(dpif.Hash(dpif.HashL4, basis))
	ctx.emit(dpif.Recirc(id))
}

// missAction is the action of Open vSwitch's internal table-miss rule,
// for traces.
func missAction() Action {
	return &ofpact.Controller{MaxLen: 0xffff, Reason: uint8(ReasonImplicitMiss)}
}

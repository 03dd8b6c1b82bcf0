package xlate

import (
	"fmt"

	"gvs/dpif"
	"gvs/dpif/conntrack"
	"gvs/ofproto/mf"
	"gvs/ofproto/ofpact"
	"gvs/packet"
)

// conntrackAction translates ct(...) as Open vSwitch's
// compose_conntrack_action: the flow's pending changes are committed (the
// tracker sees the packet as the actions so far made it), the nested
// actions (exec(set_field:...->ct_mark/ct_label), nat) fill in the
// request, and a datapath ct action is emitted. With table=N the packet
// is also recirculated: a clone of it resumes the pipeline at table N
// with the conntrack fields the tracker set, while this translation goes
// on after the ct action with the packet untracked, as Open vSwitch's
// flow_clear_conntrack leaves it.
func (ctx *context) conntrackAction(a *ofpact.CT, last bool) {
	m := &ctx.wc.Masks
	zone := a.ZoneImm
	if a.ZoneSrc.Field != nil {
		zone = uint16(a.ZoneSrc.ReadUint(&ctx.flow))
		// The zone is part of the datapath action, so the megaflow
		// matches the register it came from. A resumed frozen state
		// fixes the pipeline metadata already (its recirc_id is
		// matched exactly), as Open vSwitch's mf_is_frozen_metadata.
		if ctx.in.Frozen == nil || !frozenMetadata(a.ZoneSrc.Field) {
			a.ZoneSrc.Unwildcard(ctx.wc)
		}
	}

	oldMark, oldLabel := m.CTMark, m.CTLabel
	ctx.commit()

	// The nested actions write ct_mark and ct_label into the flow and
	// their bits into the wildcards, which for the duration say which
	// bits the ct action sets.
	ctx.ctNAT = nil
	m.CTMark, m.CTLabel = 0, [16]byte{}
	ctx.doActions(a.Actions, last)

	req := conntrack.Request{Zone: zone, Commit: a.Flags&ofpact.CTCommit != 0, Force: a.Flags&ofpact.CTForce != 0}
	if req.Force {
		req.Commit = true
	}
	if req.Commit {
		req.TimeoutPolicy = ctx.cfg.CTZoneTimeoutPolicy[zone]
	}
	f := &ctx.flow
	if m.CTMark != 0 {
		req.SetMark, req.Mark, req.MarkMask = true, f.CTMark&m.CTMark, m.CTMark
	}
	if m.CTLabel != ([16]byte{}) {
		req.SetLabel, req.LabelMask = true, m.CTLabel
		for i := range req.Label {
			req.Label[i] = f.CTLabel[i] & m.CTLabel[i]
		}
	}
	switch a.Alg {
	case 0:
	case ofpact.CTAlgFTP:
		req.Helper = conntrack.HelperFTP
	case ofpact.CTAlgTFTP:
		req.Helper = conntrack.HelperTFTP
	default:
		ctx.errorMsg(fmt.Sprintf("cannot serialize ct_helper %d", a.Alg))
	}
	if ctx.ctNAT != nil {
		req.NAT = natRequest(ctx.ctNAT)
	}
	ctx.emit(dpif.CT(req))
	m.CTMark, m.CTLabel = oldMark, oldLabel

	if a.RecircTable != ofpact.CTNoRecirc {
		ctx.conntracked = true
		ctx.recirculateAndFork(a.RecircTable, zone)
	}
	ctx.ctNAT = nil

	// The ct_* fields exist only in the pipeline the recirculation
	// resumes.
	clearConntrack(f)
	ctx.detail("Sets the packet to an untracked state, and clears all the conntrack fields.")
	ctx.conntracked = false
}

// natRequest is the nat(...) clause of a datapath ct action, as Open
// vSwitch's put_ct_nat: a plain nat applies an existing binding; an
// address range's maximum only when above its minimum; a port range only
// with an address range.
func natRequest(n *ofpact.NAT) *conntrack.NAT {
	out := &conntrack.NAT{Kind: conntrack.NATApply}
	switch {
	case n.Flags&ofpact.NATSrc != 0:
		out.Kind = conntrack.NATSrc
	case n.Flags&ofpact.NATDst != 0:
		out.Kind = conntrack.NATDst
	default:
		return out
	}
	out.Persistent = n.Flags&ofpact.NATPersistent != 0
	out.Hash = n.Flags&ofpact.NATProtoHash != 0
	out.Random = !out.Hash && n.Flags&ofpact.NATProtoRandom != 0
	if n.AddrMin.IsValid() {
		out.AddrMin = n.AddrMin
		if n.AddrMax.IsValid() && n.AddrMin.Less(n.AddrMax) {
			out.AddrMax = n.AddrMax
		}
		if n.PortMin != 0 {
			out.PortMin = n.PortMin
			if n.PortMax > n.PortMin {
				out.PortMax = n.PortMax
			}
		}
	}
	return out
}

// ctClear is the ct_clear action: only a packet that may be tracked has
// anything to forget (Open vSwitch's ctx->conntracked).
func (ctx *context) ctClear() {
	// Whether a packet that resumes no frozen state is tracked is not in
	// the megaflow, as in Open vSwitch: such a packet (recirc_id 0) comes
	// from a port, and the datapath receives every packet untracked.
	if !ctx.conntracked {
		return
	}
	clearConntrack(&ctx.flow)
	ctx.conntracked = false
	ctx.emit(dpif.CTClear())
}

// recirculateAndFork is Open vSwitch's compose_recirculate_and_fork: the
// pipeline state (metadata, registers, stack, action set) is frozen to be
// resumed at table, and a recirc action names it. The current
// translation goes on with the actions after the ct action.
func (ctx *context) recirculateAndFork(table uint8, zone uint16) {
	fz := &Frozen{
		Bridge: ctx.br, Version: ctx.version, Flow: ctx.flow, Table: table,
		ActionSet:   append([]Action(nil), ctx.actionSet...),
		Stack:       append([]mf.Value(nil), ctx.stack...),
		Cookie:      ctx.cookie,
		Conntracked: ctx.conntracked,
	}
	if ctx.in.Recirc == nil {
		ctx.errorMsg("Failed to allocate recirculation id")
		ctx.setError(ErrNoRecircContext)
		return
	}
	id := ctx.in.Recirc.Alloc(fz, ctx.now())
	ctx.emit(dpif.Recirc(id))
	if ctx.trace != nil {
		rf := ctx.flow
		rf.RecircID, rf.CTZone = id, zone
		ctx.trace.recircs = append(ctx.trace.recircs, traceRecirc{id: id, flow: rf, nat: ctx.ctNAT})
		ctx.detail(fmt.Sprintf("A clone of the packet is forked to recirculate. The forked pipeline will be resumed at table %d.", table))
	}
}

// frozenMetadata reports the fields a frozen state restores (Open
// vSwitch's mf_is_frozen_metadata): in_port, metadata, registers and
// tunnel fields.
func frozenMetadata(fd *mf.Field) bool {
	id := fd.ID
	return id >= mf.TunID && id <= mf.InPortOXM || id >= mf.Reg0 && id < mf.XXReg0+mf.NumXXRegs
}

// tupleSwap exchanges the packet's 5-tuple with conntrack's original
// direction tuple in the flow and the wildcards, for resubmit(,N,ct)
// (Open vSwitch's tuple_swap).
func tupleSwap(f *mf.Flow, w *mf.Wildcards) {
	swap := func(k *packet.Key, ipv4 bool) {
		k.IPProto, k.CTNwProto = k.CTNwProto, k.IPProto
		if ipv4 {
			k.SrcIPv4, k.CTNwSrc = k.CTNwSrc, k.SrcIPv4
			k.DstIPv4, k.CTNwDst = k.CTNwDst, k.DstIPv4
		} else {
			k.SrcIPv6, k.CTIPv6Src = k.CTIPv6Src, k.SrcIPv6
			k.DstIPv6, k.CTIPv6Dst = k.CTIPv6Dst, k.DstIPv6
		}
		k.SrcPort, k.CTTpSrc = k.CTTpSrc, k.SrcPort
		k.DstPort, k.CTTpDst = k.CTTpDst, k.DstPort
	}
	ipv4 := f.EtherType == packet.EtherTypeIPv4
	swap(&f.Key, ipv4)
	swap(&w.Masks.Key, ipv4)
}

package xlate

import (
	"fmt"
	"strings"

	"gvs/dpif"
	"gvs/ofproto/mf"
	"gvs/ofproto/ofpact"
	"gvs/packet"
)

// doActions translates one action list, Open vSwitch's do_xlate_actions.
// It stops at the end of the list, on exit (the exit action, an error,
// freezing) and where an action ends the list (dec_ttl at zero, a
// missing group, check_pkt_larger, a paused controller action).
func (ctx *context) doActions(acts []Action, last bool) {
	f := &ctx.flow
	m := &ctx.wc.Masks
	if len(acts) == 0 {
		ctx.trace.report(nodeAction, "drop")
		return
	}
	for i, a := range acts {
		if ctx.exit {
			if ctx.freezing {
				ctx.frozenActs = append(ctx.frozenActs, acts[i:]...)
			}
			return
		}
		if u, ok := a.(*unrollXlate); ok {
			ctx.tableID, ctx.rule, ctx.cookie = u.table, u.rule, u.cookie
			continue
		}
		if ctx.trace != nil {
			ctx.trace.action(a)
		}
		switch a := a.(type) {
		case *ofpact.Output:
			ctx.outputLast = last && i == len(acts)-1 && len(ctx.actionSet) == 0
			ctx.output(a.Port, a.MaxLen)
			ctx.outputLast = false
		case *ofpact.Group:
			if ctx.needsDPHash(a.ID) {
				// Freeze here: the datapath hashes the packet and
				// recirculates, and the group picks its bucket from
				// dp_hash on the next pass.
				_, _, basis := ctx.br.Group(ctx.version, a.ID).Selection()
				ctx.detail("no live bucket") // as Open vSwitch reports the first pass
				ctx.startFreeze(freezeHash, acts[i:])
				ctx.hashBasis = uint32(basis)
				return
			}
			if !ctx.group(a.ID) {
				return
			}
		case *ofpact.Controller:
			args := controllerArgs{maxLen: a.MaxLen, reason: PacketInReason(a.Reason),
				controllerID: a.ControllerID, userdata: a.Userdata, meterID: a.MeterID}
			if a.Pause {
				args.pause = true
				ctx.startFreeze(freezePause, acts[i+1:])
				ctx.pauseArgs = args
				return
			}
			ctx.controller(args)
		case *ofpact.Enqueue:
			// The userspace datapath has no queues (Open vSwitch's
			// netdev datapath maps none either): a plain output.
			ctx.output(a.Port, 0)
		case *ofpact.OutputReg:
			port := a.Src.ReadUint(f)
			if port > 0xffff {
				if ctx.trace != nil {
					ctx.warn(fmt.Sprintf("output port %d is out of range", port))
				}
				break
			}
			a.Src.Unwildcard(ctx.wc)
			if ctx.trace != nil {
				ctx.detail(fmt.Sprintf("output port is %d", port))
			}
			ctx.output(uint32(port), a.MaxLen)
		case *ofpact.OutputTrunc:
			switch a.Port {
			case mf.PortTable, mf.PortNormal, mf.PortFlood, mf.PortAll, mf.PortController, mf.PortNone:
				if ctx.trace != nil {
					ctx.warn(fmt.Sprintf("output_trunc does not support port: %d", a.Port))
				}
			default:
				if a.Port == f.InPort {
					if ctx.trace != nil {
						ctx.detail("skipping output to input port")
					}
					break
				}
				if p := ctx.br.Port(a.Port); p == nil || isPatch(p) {
					// Open vSwitch refuses truncation before a port
					// without a datapath port (a patch port).
					if ctx.trace != nil {
						ctx.errorMsg(fmt.Sprintf("output_trunc does not support patch port %d", a.Port))
					}
					break
				}
				ctx.commit()
				ctx.emit(dpif.Trunc(a.MaxLen))
				ctx.output(a.Port, 0)
			}
		case *ofpact.SetField:
			ctx.setField(a.Field, a.Value, a.Mask)
		case *ofpact.SetVLANVID:
			m.VLANs[0].TCI |= 0x0fff
			m.VLANs[0].TPID = 0xffff
			if f.VLANs[0].Present() || a.PushIfNeeded {
				if !f.VLANs[0].Present() {
					f.VLANs[0].TPID = packet.EtherTypeVLAN
				}
				f.VLANs[0].TCI = f.VLANs[0].TCI&^0x0fff | a.VID&0x0fff
			}
		case *ofpact.SetVLANPCP:
			m.VLANs[0].TCI |= 0xe000
			m.VLANs[0].TPID = 0xffff
			if f.VLANs[0].Present() || a.PushIfNeeded {
				if !f.VLANs[0].Present() {
					f.VLANs[0].TPID = packet.EtherTypeVLAN
				}
				f.VLANs[0].TCI = f.VLANs[0].TCI&^0xe000 | uint16(a.PCP&7)<<13
			}
		case *ofpact.StripVLAN:
			for j := 1; j < f.NumVLANs(); j++ {
				m.VLANs[j] = packet.VLANTag{TPID: 0xffff, TCI: 0xffff}
			}
			popVLAN(f)
		case *ofpact.PushVLAN:
			for j := 0; j < f.NumVLANs(); j++ {
				m.VLANs[j] = packet.VLANTag{TPID: 0xffff, TCI: 0xffff}
			}
			pushVLAN(f, a.EtherType, 0)
		case *ofpact.SetEthSrc:
			m.SrcMAC = allOnesMAC
			f.SrcMAC = a.MAC
		case *ofpact.SetEthDst:
			m.DstMAC = allOnesMAC
			f.DstMAC = a.MAC
		case *ofpact.SetIPv4Src:
			if f.EtherType == packet.EtherTypeIPv4 {
				m.SrcIPv4 = [4]byte{0xff, 0xff, 0xff, 0xff}
				f.SrcIPv4 = a.Addr
			}
		case *ofpact.SetIPv4Dst:
			if f.EtherType == packet.EtherTypeIPv4 {
				m.DstIPv4 = [4]byte{0xff, 0xff, 0xff, 0xff}
				f.DstIPv4 = a.Addr
			}
		case *ofpact.SetIPDSCP:
			if isIP(f) {
				m.IPTOS |= 0xfc
				f.IPTOS = f.IPTOS&^0xfc | a.DSCP&0xfc
			}
		case *ofpact.SetIPECN:
			if isIP(f) {
				m.IPTOS |= 0x03
				f.IPTOS = f.IPTOS&^0x03 | a.ECN&0x03
			}
		case *ofpact.SetIPTTL:
			if isIP(f) {
				m.IPTTL = 0xff
				f.IPTTL = a.TTL
			}
		case *ofpact.SetL4SrcPort:
			if ctx.hasL4Ports() {
				m.IPProto, m.SrcPort = 0xff, 0xffff
				f.SrcPort = a.Port
			}
		case *ofpact.SetL4DstPort:
			if ctx.hasL4Ports() {
				m.IPProto, m.DstPort = 0xff, 0xffff
				f.DstPort = a.Port
			}
		case *ofpact.RegMove:
			ctx.regMove(a)
		case *ofpact.StackPush:
			a.Field.Unwildcard(ctx.wc)
			ctx.stack = append(ctx.stack, a.Field.Read(f))
		case *ofpact.StackPop:
			if n := len(ctx.stack); n > 0 {
				a.Field.Unwildcard(ctx.wc)
				a.Field.Write(f, ctx.stack[n-1])
				ctx.stack = ctx.stack[:n-1]
				ctx.reportSubfield(a.Field)
			} else if ctx.in.Packet != nil {
				ctx.errorMsg("stack underflow")
			}
		case *ofpact.DecTTL:
			if ctx.decTTL(a) {
				return
			}
		case *ofpact.SetTunnel:
			f.TunID = a.TunID
		case *ofpact.SetQueue, *ofpact.PopQueue:
			// No queues in the userspace datapath (see Enqueue).
		case *ofpact.FinTimeout:
			// Applied when the flow's statistics show a FIN or RST
			// (PushStats): the datapath actions do not depend on it.
			if ctx.rule != nil {
				ctx.res.Cache.FinTimeouts = append(ctx.res.Cache.FinTimeouts, FinTimeout{Rule: ctx.rule, IdleTimeout: a.IdleTimeout, Hard: a.HardTimeout})
			}
		case *ofpact.Resubmit:
			ctx.resubmit(a)
		case *ofpact.Learn:
			ctx.learn(a)
		case *ofpact.Conjunction, *ofpact.Note, *ofpact.Sample:
			// Conjunctions are the classifier's; notes and sampling do
			// nothing to the packet.
		case *ofpact.Multipath:
			ctx.multipath(a)
		case *ofpact.Bundle:
			ctx.bundle(a)
		case *ofpact.Exit:
			ctx.exit = true
		case *ofpact.CT:
			ctx.conntrackAction(a, last && i == len(acts)-1)
		case *ofpact.NAT:
			ctx.ctNAT = a // the enclosing ct action's (conntrackAction)
		case *ofpact.CTClear:
			ctx.ctClear()
		case *ofpact.Clone:
			ctx.clone(a.Actions, last && i == len(acts)-1)
		case *ofpact.CheckPktLarger:
			ctx.checkPktLarger(a, acts[i+1:])
			return
		case *ofpact.DebugRecirc, *ofpact.DebugSlow:
			ctx.res.Slow |= SlowAction
		case *ofpact.Meter:
			ctx.meter(a.ID)
		case *ofpact.ClearActions:
			ctx.traceActionSet("was")
			ctx.actionSet = ctx.actionSet[:0]
			f.ActsetOutput = mf.PortUnset
			ctx.actsetHasGroup = false
		case *ofpact.WriteActions:
			ctx.writeActions(a.Actions)
			ctx.traceActionSet("is")
		case *ofpact.WriteMetadata:
			f.Metadata = f.Metadata&^a.Mask | a.Metadata&a.Mask
		case *ofpact.GotoTable:
			ctx.lookupAndRun(f.InPort, a.TableID, true, true, false)
		default:
			if ctx.trace != nil {
				ctx.warn(fmt.Sprintf("action %T is not supported, skipped", a))
			}
		}
	}
}

// hasL4Ports: the flow carries TCP, UDP or SCTP ports (and is not a later
// fragment).
func (ctx *context) hasL4Ports() bool {
	f := &ctx.flow
	if !isIP(f) || f.IsLaterFragment() {
		return false
	}
	ctx.wc.Masks.IPProto = 0xff // the decision depends on it
	return f.IPProto == ipProtoTCP || f.IPProto == ipProtoUDP || f.IPProto == ipProtoSCTP
}

// setField writes value under mask into fd, if the packet has the field
// (Open vSwitch ignores a set_field whose prerequisites the packet does
// not meet), unwildcarding the bits it writes.
func (ctx *context) setField(fd *mf.Field, value, mask mf.Value) {
	if !prereqsOK(fd, &ctx.flow, ctx.wc) {
		if ctx.trace != nil {
			ctx.warn(fmt.Sprintf("unmet prerequisites for %s, set_field ignored", fd.Name))
		}
		return
	}
	// Open vSwitch's mf_set_mask_l3_prereqs: whether an L3 write
	// reaches the packet depends on the IP protocol (or ARP opcode).
	switch fd.ID {
	case mf.IPv4Src, mf.IPv4Dst, mf.IPv6Src, mf.IPv6Dst, mf.IPv6Label, mf.IPDSCP, mf.IPECN, mf.IPTTL:
		if isIP(&ctx.flow) {
			ctx.wc.Masks.IPProto = 0xff
		}
	case mf.ARPOp, mf.ARPSHA, mf.ARPTHA, mf.ARPSPA, mf.ARPTPA:
		if ctx.flow.EtherType == packet.EtherTypeARP {
			ctx.wc.Masks.ARPOp |= 0x00ff
		}
	}
	fd.UnwildcardMasked(ctx.wc, mask)
	fd.SetMasked(&ctx.flow, value, mask)
}

// regMove is the move action: src's bits into dst's, both unwildcarded.
func (ctx *context) regMove(a *ofpact.RegMove) {
	f := &ctx.flow
	if !prereqsOK(a.Src.Field, f, ctx.wc) || !prereqsOK(a.Dst.Field, f, ctx.wc) {
		ctx.warn("unmet prerequisites for move, ignored")
		return
	}
	a.Src.Unwildcard(ctx.wc)
	a.Dst.Unwildcard(ctx.wc)
	a.Dst.Write(f, a.Src.Read(f))
	ctx.reportSubfield(a.Dst)
}

// reportSubfield traces a subfield's new value, as Open vSwitch's
// xlate_report_subfield: the whole field in its own syntax, or the bits
// in hex.
func (ctx *context) reportSubfield(sf mf.Subfield) {
	if ctx.trace == nil {
		return
	}
	var v string
	if sf.Ofs == 0 && sf.NBits >= sf.Field.Bits {
		v = sf.Field.FormatValue(sf.Field.Get(&ctx.flow), nil)
	} else {
		v = hexValue(sf.Read(&ctx.flow))
	}
	ctx.detail(sf.String() + " is now " + v)
}

// hexValue is Open vSwitch's ds_put_hex: "0x" and the bytes from the
// first non-zero one, or "0".
func hexValue(v mf.Value) string {
	var b strings.Builder
	for _, c := range v {
		switch {
		case b.Len() > 0:
			fmt.Fprintf(&b, "%02x", c)
		case c != 0:
			fmt.Fprintf(&b, "0x%x", c)
		}
	}
	if b.Len() == 0 {
		return "0"
	}
	return b.String()
}

// decTTL decrements the IP TTL; at 1 or 0 the packet goes to the
// controllers (reason invalid_ttl) and the action list stops (true).
func (ctx *context) decTTL(a *ofpact.DecTTL) bool {
	f := &ctx.flow
	if !isIP(f) {
		return false
	}
	ctx.wc.Masks.IPTTL = 0xff
	ctx.wc.Masks.IPProto = 0xff // as Open vSwitch's compose_dec_ttl
	if f.IPTTL > 1 {
		f.IPTTL--
		return false
	}
	ids := a.CntIDs
	if len(ids) == 0 {
		ids = []uint16{0}
	}
	for _, id := range ids {
		ctx.controller(controllerArgs{maxLen: 0xffff, reason: ReasonInvalidTTL, controllerID: id})
	}
	if f.EtherType == packet.EtherTypeIPv4 {
		ctx.warn("IPv4 decrement TTL exception")
	} else {
		ctx.warn("IPv6 decrement TTL exception")
	}
	return true
}

// resubmit is Open vSwitch's xlate_ofpact_resubmit.
func (ctx *context) resubmit(a *ofpact.Resubmit) {
	in := a.InPort
	if in == mf.PortInPort {
		in = ctx.flow.InPort
	}
	table := a.TableID
	if table == ofpact.TableInPort {
		table = ctx.tableID
	}
	if !a.WithCTOrig {
		ctx.lookupAndRun(in, table, false, false, table <= ctx.tableID)
		return
	}
	// resubmit(,N,ct): the lookup sees conntrack's original direction
	// tuple as the packet's, as Open vSwitch's xlate_table_action. Whether
	// there is a tuple is not in the megaflow, as in Open vSwitch: the
	// rule must match a valid ct_state (ofpact's check), and the tracker
	// sets a tuple for every packet of a valid connection.
	if ctx.flow.CTNwProto == 0 || !isIP(&ctx.flow) {
		ctx.errorMsg("resubmit(ct) with non-tracked or non-IP packet!")
		return
	}
	ctx.lookupCTOrig = true
	ctx.lookupAndRun(in, table, false, false, table <= ctx.tableID)
}

// clearConntrack forgets the packet's conntrack state (ct_clear).
func clearConntrack(f *mf.Flow) {
	f.CTState, f.CTZone, f.CTMark, f.CTLabel = 0, 0, 0, [16]byte{}
	f.CTNwProto, f.CTNwSrc, f.CTNwDst = 0, [4]byte{}, [4]byte{}
	f.CTIPv6Src, f.CTIPv6Dst, f.CTTpSrc, f.CTTpDst = [16]byte{}, [16]byte{}, 0, 0
}

// writeActions adds actions to the action set, keeping actset_output
// current (Open vSwitch's xlate_write_actions__).
func (ctx *context) writeActions(acts []Action) {
	if !ctx.actsetHasGroup {
		for _, a := range acts {
			switch a := a.(type) {
			case *ofpact.Output:
				ctx.flow.ActsetOutput = a.Port
			case *ofpact.Group:
				ctx.flow.ActsetOutput = mf.PortUnset
				ctx.actsetHasGroup = true
			}
			if ctx.actsetHasGroup {
				break
			}
		}
	}
	ctx.actionSet = append(ctx.actionSet, acts...)
}

// traceActionSet reports the action set as it would execute (Open
// vSwitch's xlate_report_action_set).
func (ctx *context) traceActionSet(verb string) {
	if ctx.trace == nil {
		return
	}
	if list := actionSetList(ctx.actionSet, nil); len(list) > 0 {
		ctx.detail("action set " + verb + ": " + ofpact.Format(list))
	} else {
		ctx.detail("action set " + verb + " empty")
	}
}

// actionSetList orders an action set for execution as OpenFlow's "action
// set" section says (Open vSwitch's ofpacts_execute_action_set): the last
// pop VLAN, push VLAN and dec_ttl, every set/move in order, the last
// set_queue, then the last group, or else the last output (or resubmit):
// without one of those nothing runs.
func actionSetList(set []Action, out []Action) []Action {
	last := func(k ofpact.Kind) Action {
		for i := len(set) - 1; i >= 0; i-- {
			if set[i].(ofpact.Action).Kind() == k {
				return set[i]
			}
		}
		return nil
	}
	for _, k := range []ofpact.Kind{ofpact.KindStripVLAN, ofpact.KindPopMPLS, ofpact.KindPushMPLS, ofpact.KindPushVLAN, ofpact.KindDecTTL, ofpact.KindDecMPLSTTL} {
		if a := last(k); a != nil {
			out = append(out, a)
		}
	}
	for _, a := range set {
		if isSetOrMove(a.(ofpact.Action).Kind()) {
			out = append(out, a)
		}
	}
	if a := last(ofpact.KindSetQueue); a != nil {
		out = append(out, a)
	}
	for _, k := range []ofpact.Kind{ofpact.KindGroup, ofpact.KindOutput, ofpact.KindResubmit, ofpact.KindCT} {
		if a := last(k); a != nil {
			return append(out, a)
		}
	}
	return out[:0]
}

func isSetOrMove(k ofpact.Kind) bool {
	switch k {
	case ofpact.KindSetField, ofpact.KindRegMove, ofpact.KindSetVLANVID, ofpact.KindSetVLANPCP,
		ofpact.KindSetEthSrc, ofpact.KindSetEthDst, ofpact.KindSetIPv4Src, ofpact.KindSetIPv4Dst,
		ofpact.KindSetIPDSCP, ofpact.KindSetIPECN, ofpact.KindSetIPTTL, ofpact.KindSetL4SrcPort,
		ofpact.KindSetL4DstPort, ofpact.KindSetTunnel, ofpact.KindSetMPLSLabel, ofpact.KindSetMPLSTC,
		ofpact.KindSetMPLSTTL:
		return true
	}
	return false
}

// runActionSet executes the action set at the end of the pipeline.
func (ctx *context) runActionSet() {
	if len(ctx.actionSet) == 0 || ctx.freezing { // a frozen state keeps it
		return
	}
	if len(ctx.actionSet) == 0 {
		return
	}
	list := actionSetList(ctx.actionSet, nil)
	ctx.actionSet = ctx.actionSet[:0]
	if len(list) == 0 {
		return
	}
	saved := ctx.trace.enter(nodeTable, "--. Executing action set:")
	defer ctx.trace.leave(saved)
	ctx.inActionSet = true
	ctx.depth++
	ctx.doActions(list, true)
	ctx.depth--
	ctx.inActionSet = false
}

// clone runs acts on a copy of the packet: the flow, stack and action set
// are restored afterwards. Actions that the flow cannot undo (conntrack,
// meter, truncation) run inside a datapath clone.
func (ctx *context) clone(acts []Action, last bool) {
	oldFlow := ctx.flow
	oldStack := append([]mf.Value(nil), ctx.stack...)
	oldSet := append([]Action(nil), ctx.actionSet...)
	oldHasGroup := ctx.actsetHasGroup
	if last || reversible(acts) {
		ctx.doActions(acts, last)
		if ctx.freezing {
			ctx.finishFreeze()
		}
	} else {
		ctx.commit()
		oldBase := ctx.base
		oldConntracked := ctx.conntracked
		start := len(ctx.res.Actions)
		ctx.doActions(acts, last)
		ctx.runActionSet()
		if ctx.freezing {
			ctx.finishFreeze()
		}
		ctx.commit()
		nested := append(dpif.Actions(nil), ctx.res.Actions[start:]...)
		ctx.res.Actions = append(ctx.res.Actions[:start], dpif.Clone(nested))
		ctx.base = oldBase
		// The clone's conntrack execution does not touch the original.
		ctx.conntracked = oldConntracked
	}
	ctx.flow = oldFlow
	ctx.stack = append(ctx.stack[:0], oldStack...)
	ctx.actionSet = append(ctx.actionSet[:0], oldSet...)
	ctx.actsetHasGroup = oldHasGroup
	ctx.exit = ctx.res.Error != nil
}

// reversible: every action's effect on the packet can be undone by later
// set actions (Open vSwitch's reversible_actions).
func reversible(acts []Action) bool {
	for _, a := range acts {
		switch a.(type) {
		case *ofpact.CT, *ofpact.Meter, *ofpact.NAT, *ofpact.OutputTrunc:
			return false
		}
	}
	return true
}

// checkPktLarger translates the rest of the list twice, with the 1-bit
// destination set (packet longer than Len) and clear, into a datapath
// check_pkt_len; the translation ends there (Open vSwitch's
// xlate_check_pkt_larger).
func (ctx *context) checkPktLarger(a *ofpact.CheckPktLarger, rest []Action) {
	ctx.commit()
	oldFlow, oldBase := ctx.flow, ctx.base
	oldStack := append([]mf.Value(nil), ctx.stack...)
	oldSet := append([]Action(nil), ctx.actionSet...)
	oldHasGroup := ctx.actsetHasGroup
	oldConntracked := ctx.conntracked

	branch := func(v uint64) dpif.Actions {
		ctx.flow, ctx.base = oldFlow, oldBase
		ctx.conntracked = oldConntracked
		ctx.stack = append(ctx.stack[:0], oldStack...)
		ctx.actionSet = append(ctx.actionSet[:0], oldSet...)
		ctx.actsetHasGroup = oldHasGroup
		ctx.exit = false
		a.Dst.WriteUint(&ctx.flow, v)
		start := len(ctx.res.Actions)
		ctx.doActions(rest, true)
		ctx.runActionSet()
		if ctx.freezing {
			ctx.finishFreeze()
		}
		ctx.commit()
		out := append(dpif.Actions(nil), ctx.res.Actions[start:]...)
		ctx.res.Actions = ctx.res.Actions[:start]
		return out
	}
	gt := branch(1)
	le := branch(0)
	ctx.emit(dpif.CheckPktLen(a.Len, gt, le))
	ctx.flow, ctx.base = oldFlow, oldBase
	ctx.conntracked = oldConntracked
	ctx.exit = true
}

// meter passes the packet through the datapath meter that implements
// OpenFlow meter id, if the bridge has one.
func (ctx *context) meter(id uint32) {
	dp, ok := ctx.br.Meter(id)
	if !ok {
		if ctx.trace != nil {
			ctx.warn(fmt.Sprintf("meter %d does not exist", id))
		}
		return
	}
	ctx.emit(dpif.Meter(dp))
}

// startFreeze stops the translation here: rest (this list's remaining
// actions) and then each caller's are frozen.
func (ctx *context) startFreeze(kind freezeKind, rest []Action) {
	ctx.freezing, ctx.freezeKind, ctx.exit = true, kind, true
	ctx.frozenActs = append(ctx.frozenActs[:0], rest...)
	ctx.freezeTable, ctx.freezeCookie = ctx.tableID, ctx.cookie
}

// unrollXlate, in a frozen action list, restores the table and rule the
// following actions belong to (Open vSwitch's OFPACT_UNROLL_XLATE).
type unrollXlate struct {
	table  uint8
	rule   Rule
	cookie uint64
}

func (*unrollXlate) Kind() ofpact.Kind { return ofpact.KindNote }

// frozenKey identifies the marker by value in a frozen state's key.
func (u *unrollXlate) frozenKey() string {
	return fmt.Sprintf("unroll(%d,%p,%d)", u.table, u.rule, u.cookie)
}

func (ctx *context) unrollTo(table uint8, rule Rule, cookie uint64) {
	ctx.frozenActs = append(ctx.frozenActs, &unrollXlate{table: table, rule: rule, cookie: cookie})
}

// finishFreeze turns the frozen actions, the action set and the stack
// into a frozen state and emits what resumes it: a userspace(controller)
// action with the continuation for a pause, hash+recirc for dp_hash.
func (ctx *context) finishFreeze() {
	fz := &Frozen{
		Bridge: ctx.br, Version: ctx.version, Flow: ctx.flow, Table: ctx.freezeTable,
		Actions:     append([]Action{}, ctx.frozenActs...),
		ActionSet:   append([]Action(nil), ctx.actionSet...),
		Stack:       append([]mf.Value(nil), ctx.stack...),
		Cookie:      ctx.freezeCookie,
		Conntracked: ctx.conntracked,
	}
	ctx.freezing, ctx.frozenActs = false, ctx.frozenActs[:0]
	ctx.actionSet = ctx.actionSet[:0]
	switch ctx.freezeKind {
	case freezePause:
		savedCookie, savedTable := ctx.cookie, ctx.tableID
		ctx.cookie, ctx.tableID = ctx.freezeCookie, ctx.freezeTable
		ctx.controllerFrozen(ctx.pauseArgs, fz)
		ctx.cookie, ctx.tableID = savedCookie, savedTable
	case freezeHash:
		fz.Hashed = true
		rid := ctx.in.Recirc.Alloc(fz, ctx.now())
		ctx.commit()
		ctx.emitHashRecirc(ctx.hashBasis, rid)
	}
}

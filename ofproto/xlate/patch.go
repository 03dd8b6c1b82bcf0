package xlate

import (
	"fmt"
	"sync/atomic"

	"gvs/dpif"
	"gvs/ofproto/mac"
	"gvs/ofproto/mf"
	"gvs/packet"
)

// NoDPPort is the datapath port number of a port with none: a patch
// port (Open vSwitch's ODPP_NONE).
const NoDPPort = ^uint32(0)

// PatchPort is what a patch port (Interface type=patch) adds to a Port:
// its counters, which outlive the Port snapshots the bridge republishes,
// and its peer.
type PatchPort struct {
	// PeerName is options:peer, the interface this port wants as peer.
	PeerName string
	// Peer is the other end once both ends exist (in bridges of the same
	// datapath type) and name each other, Open vSwitch's xport->peer;
	// nil while the pair is incomplete (output to the port then drops).
	Peer *PatchPeer
	// Counters are shared by every snapshot of the port.
	Counters *PatchCounters
}

// PatchPeer is the other end of a patch pair: a port of Bridge, looked up
// by its OpenFlow number at translation time (so its port config is
// current). Immutable: the bridge publishes a new one when the pairing
// changes.
type PatchPeer struct {
	Bridge Bridge
	OFPort uint32
}

// PatchCounters count the packets and bytes that crossed a patch port, as
// Open vSwitch's netdev_vport statistics: transmitted when output to the
// port, received when output to its peer. They are credited from
// datapath flow statistics through the xlate cache (Cache.Patches), so
// a packet that crosses a patch pair counts once per datapath flow hit.
// Safe for concurrent use.
type PatchCounters struct {
	rxPackets, rxBytes, txPackets, txBytes atomic.Uint64
}

// PatchStats is a snapshot of PatchCounters.
type PatchStats struct {
	RxPackets, RxBytes, TxPackets, TxBytes uint64
}

// Snapshot returns the counters.
func (c *PatchCounters) Snapshot() PatchStats {
	return PatchStats{RxPackets: c.rxPackets.Load(), RxBytes: c.rxBytes.Load(),
		TxPackets: c.txPackets.Load(), TxBytes: c.txBytes.Load()}
}

// PatchCrossing is one patch-port crossing a translation made: the
// packet left through Tx's port and entered through Rx's.
type PatchCrossing struct {
	Tx, Rx *PatchCounters
}

func (p PatchCrossing) credit(s Stats) {
	if p.Tx != nil {
		p.Tx.txPackets.Add(s.Packets)
		p.Tx.txBytes.Add(s.Bytes)
	}
	if p.Rx != nil {
		p.Rx.rxPackets.Add(s.Packets)
		p.Rx.rxBytes.Add(s.Bytes)
	}
}

// PeerMACSeq sums the change counts of the MAC tables of other bridges
// that NORMAL consulted behind patch ports: a change to any of them may
// change the translation, as a change to the bridge's own does.
func (c *Cache) PeerMACSeq() uint64 {
	var n uint64
	for _, t := range c.PeerMACs {
		n += t.Seq()
	}
	return n
}

// notePeerMACs records that NORMAL consulted macs in a bridge other than
// the translation's own.
func (ctx *context) notePeerMACs(macs *mac.Table) {
	if macs == nil || ctx.br == ctx.in.Bridge {
		return
	}
	for _, t := range ctx.res.Cache.PeerMACs {
		if t == macs {
			return
		}
	}
	ctx.res.Cache.PeerMACs = append(ctx.res.Cache.PeerMACs, macs)
	ctx.res.Cache.peerSeqAtFirstUse += macs.Seq()
}

// PeerMACsChanged reports whether the peer bridges' MAC tables changed
// since this translation first consulted them (NORMAL behind a patch
// port learned something): flows that flooded there may now be wrong,
// as the upcall handler checks for the bridge's own table. Valid only
// for the translation that filled c.
func (c *Cache) PeerMACsChanged() bool { return c.PeerMACSeq() != c.peerSeqAtFirstUse }

// patchOutput continues the translation in the peer bridge of patch port
// in, as Open vSwitch's patch_port_output: the packet enters the peer
// bridge's table 0 with in_port the peer's number, metadata, registers,
// tunnel and conntrack fields cleared, an empty stack and action set and
// the peer bridge's table version. Afterwards the calling bridge goes on
// with the flow, stack, action set and conntrack state it had; the peer's
// exit, freezing and errors stay behind. The packet is not copied: the
// datapath actions the peer bridge adds follow in the same flow (one
// datapath pass), a datapath clone only where the peer's first rule has
// actions that cannot be undone (clone_xlate_actions).
func (ctx *context) patchOutput(in *Port, last bool) {
	pp := in.Patch.Peer
	out := pp.Bridge.Port(pp.OFPort)
	if out == nil {
		ctx.warn("Nonexistent output port")
		return
	}

	oldFlow := ctx.flow
	oldBr, oldCfg, oldVersion := ctx.br, ctx.cfg, ctx.version
	oldConntracked := ctx.conntracked
	oldStack, oldSet, oldHasGroup := ctx.stack, ctx.actionSet, ctx.actsetHasGroup
	// Fresh backing arrays: the peer bridge must not overwrite the
	// caller's stack and action set in place.
	ctx.stack, ctx.actionSet, ctx.actsetHasGroup = nil, nil, false

	f := &ctx.flow
	f.InPort = out.OFPort
	f.Metadata = 0
	f.Regs = [len(f.Regs)]uint32{}
	f.ActsetOutput = mf.PortUnset
	setTunnel(&f.Key, tunnelFields{})
	oldTunnelMask := getTunnel(&ctx.wc.Masks.Key)
	setTunnel(&ctx.wc.Masks.Key, tunnelFields{})
	clearConntrack(f)
	ctx.conntracked = false

	var saved *[]*traceNode
	if ctx.trace != nil {
		saved = ctx.trace.enter(nodeBridge, fmt.Sprintf("bridge(%q)", pp.Bridge.Name()))
	}
	ctx.br, ctx.cfg, ctx.version = pp.Bridge, pp.Bridge.Config(), pp.Bridge.Version()

	// may_receive: a peer configured no_recv takes nothing.
	if out.Config&PortNoRecv == 0 {
		ctx.cloneRule, ctx.cloneLast = true, last
		ctx.lookupAndRun(out.OFPort, 0, true, true, true)
		ctx.cloneRule = false
		if !ctx.freezing {
			ctx.runActionSet()
		}
		if ctx.freezing {
			ctx.finishFreeze()
		}
	}

	ctx.trace.leave(saved)
	ctx.br, ctx.cfg, ctx.version = oldBr, oldCfg, oldVersion
	ctx.flow = oldFlow
	setTunnel(&ctx.wc.Masks.Key, oldTunnelMask)
	ctx.stack, ctx.actionSet, ctx.actsetHasGroup = oldStack, oldSet, oldHasGroup
	ctx.conntracked = oldConntracked
	// The peer bridge's exit (an exit action, freezing, an error) does
	// not stop the calling bridge, and its errors do not come back.
	ctx.exit = false
	ctx.res.Error = nil

	var rx *PatchCounters
	if out.Patch != nil {
		rx = out.Patch.Counters
	}
	ctx.res.Cache.Patches = append(ctx.res.Cache.Patches, PatchCrossing{Tx: in.Patch.Counters, Rx: rx})
}

// cloneRuleActions runs the actions of the first rule behind a patch port
// as Open vSwitch's clone_xlate_actions: in place when they can be undone
// by later set actions (or nothing follows), inside a datapath clone
// otherwise; either way the flow, stack and action set are restored
// afterwards.
func (ctx *context) cloneRuleActions(acts []Action, last bool) {
	oldFlow := ctx.flow
	oldStack := append([]Subvalue(nil), ctx.stack...)
	oldSet := append([]Action(nil), ctx.actionSet...)
	oldHasGroup := ctx.actsetHasGroup
	if last || reversible(acts) {
		ctx.doActions(acts, last)
		if !ctx.freezing {
			ctx.runActionSet()
		}
		if ctx.freezing {
			ctx.finishFreeze()
		}
	} else {
		ctx.commit()
		oldBase, oldConntracked := ctx.base, ctx.conntracked
		start := len(ctx.res.Actions)
		ctx.doActions(acts, true)
		if !ctx.freezing {
			ctx.runActionSet()
		}
		if ctx.freezing {
			ctx.finishFreeze()
		}
		if len(ctx.res.Actions) > start {
			nested := append(dpif.Actions(nil), ctx.res.Actions[start:]...)
			ctx.res.Actions = append(ctx.res.Actions[:start], dpif.Clone(nested))
		}
		ctx.base, ctx.conntracked = oldBase, oldConntracked
	}
	ctx.flow = oldFlow
	ctx.stack = append(ctx.stack[:0], oldStack...)
	ctx.actionSet = append(ctx.actionSet[:0], oldSet...)
	ctx.actsetHasGroup = oldHasGroup
}

// isPatch reports a patch port (which has no datapath port).
func isPatch(p *Port) bool { return p != nil && p.Patch != nil }

// tunnelFields are a key's tunnel metadata: a packet crossing a patch
// port leaves its tunnel behind, and what the peer bridge consulted of
// it is not the calling bridge's (Open vSwitch saves and restores the
// tunnel masks around the crossing).
type tunnelFields struct {
	id                         uint64
	tos, ttl, gbpFlags         uint8
	metaLen                    uint8
	src, dst                   [4]byte
	ipv6Src, ipv6Dst           [16]byte
	flags, tpSrc, tpDst, gbpID uint16
	meta                       [16]byte
}

func getTunnel(k *packet.Key) tunnelFields {
	return tunnelFields{id: k.TunID, tos: k.TunTOS, ttl: k.TunTTL, gbpFlags: k.TunGBPFlags, metaLen: k.TunMetaLen,
		src: k.TunSrc, dst: k.TunDst, ipv6Src: k.TunIPv6Src, ipv6Dst: k.TunIPv6Dst, flags: k.TunFlags,
		tpSrc: k.TunTpSrc, tpDst: k.TunTpDst, gbpID: k.TunGBPID, meta: k.TunMetadata}
}

func setTunnel(k *packet.Key, t tunnelFields) {
	k.TunID, k.TunTOS, k.TunTTL, k.TunGBPFlags, k.TunMetaLen = t.id, t.tos, t.ttl, t.gbpFlags, t.metaLen
	k.TunSrc, k.TunDst, k.TunIPv6Src, k.TunIPv6Dst, k.TunFlags = t.src, t.dst, t.ipv6Src, t.ipv6Dst, t.flags
	k.TunTpSrc, k.TunTpDst, k.TunGBPID, k.TunMetadata = t.tpSrc, t.tpDst, t.gbpID, t.meta
	k.TunMetaPad = 0
}

// missText is a table miss's trace line. Open vSwitch's ofproto/trace
// recognises its internal miss rules (reg0=1: packet-in, reg0=2: drop)
// only as the ingress bridge's: behind a patch port it prints the peer
// bridge's miss rule like any other rule.
func (ctx *context) missText(text string, internalID int) string {
	if ctx.br != ctx.in.Bridge {
		return fmt.Sprintf("%2d. reg0=0x%x, priority 0", ctx.tableID, internalID)
	}
	return fmt.Sprintf("%2d. %s", ctx.tableID, text)
}

// optimizeTrailingClone embeds the actions of a clone that is the last
// datapath action (nothing follows that the clone protects), as Open
// vSwitch's xlate_optimize_odp_actions does for every translation that
// did not fail.
func optimizeTrailingClone(res *Result) {
	n := len(res.Actions)
	if n == 0 || res.Actions[n-1].Kind != dpif.ActClone {
		return
	}
	nested := res.Actions[n-1].Nested[0]
	res.Actions = append(res.Actions[:n-1], nested...)
}

// thawBridge switches to the bridge of the frozen state being resumed
// when it is not the input port's (a state frozen behind a patch port),
// with that bridge's settings and table version, as Open vSwitch's
// xlate_actions does on thaw. The trace has already named the input
// port's bridge.
func (ctx *context) thawBridge() {
	fz := ctx.in.Frozen
	if fz == nil || fz.Bridge == nil || fz.Bridge == ctx.br {
		return
	}
	ctx.br, ctx.cfg, ctx.version = fz.Bridge, fz.Bridge.Config(), fz.Bridge.Version()
}

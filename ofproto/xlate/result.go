package xlate

import (
	"gvs/dpif"
	"gvs/ofproto/mac"
	"gvs/ofproto/mf"
)

// Input is one translation's input, after Open vSwitch's struct xlate_in.
type Input struct {
	// Bridge is the bridge the packet is in.
	Bridge Bridge
	// Version is the table version to look up in (Bridge.Version() when
	// translating an upcall).
	Version uint64
	// Flow is the packet's flow: the datapath key with InPort converted
	// to the OpenFlow port number, and the pipeline state zero (or, when
	// resuming, the frozen state's).
	Flow mf.Flow
	// Packet is the packet's bytes, or nil (revalidation). Translation
	// reads it only for packet-ins; it never modifies it.
	Packet []byte

	// Actions, when non-nil, are translated instead of looking up table
	// Table (packet-out; a continuation). Otherwise translation starts
	// with a lookup in table Table (0 for a new packet).
	Actions []Action
	Table   uint8
	// PacketOut: this is an OpenFlow packet-out; Actions are translated
	// even when nil (an empty packet-out drops), output:TABLE is allowed
	// and packet-ins have reason packet_out.
	PacketOut bool

	// SideEffects lets translation change state outside the result: MAC
	// learning (NORMAL), learn actions' flows, fin_timeout, packet-ins.
	// True when translating a packet (upcall, packet-out); false when
	// revalidating or tracing without a packet. The effects are also
	// returned in the Result either way (for the xlate cache), but only
	// with SideEffects set does Result carry packet-ins.
	SideEffects bool

	// Trace, when non-nil, records each step for ofproto/trace.
	Trace *Trace

	// Frozen, when non-nil, is the frozen state being resumed (after a
	// recirculation or NXT_RESUME): its action set and stack are
	// restored; Flow and Actions/Table come from Frozen.Thaw and
	// Frozen.Actions/Table as the caller sets them.
	Frozen *Frozen
	// Recirc is the datapath's table of frozen states. With it a
	// controller action becomes a userspace datapath action (cached in
	// the megaflow) and the handler sends the packet-in when a packet
	// takes it; without it, the flow is slow-pathed.
	Recirc *RecircTable
}

// SlowReason says why a flow cannot be cached in the datapath and every
// packet must come to userspace, after Open vSwitch's enum
// slow_path_reason. Zero: cacheable.
type SlowReason uint8

const (
	// SlowController: an action sends the packet to a controller and the
	// datapath has no userspace action to do it from a cached flow.
	SlowController SlowReason = 1 << iota
	// SlowAction: an action the datapath cannot carry out (conntrack
	// until the conntrack issue lands, ...).
	SlowAction
	// SlowMatch: a match on a field the datapath cannot match.
	SlowMatch
)

// Result is one translation's output, after Open vSwitch's xlate_out plus
// the wildcards, datapath actions and xlate cache it fills.
type Result struct {
	// Wildcards holds every bit of the flow that any lookup or action
	// consulted; its datapath part is the megaflow's mask.
	Wildcards mf.Wildcards
	// Actions are the datapath actions.
	Actions dpif.Actions
	// Slow is nonzero when the flow must not be cached.
	Slow SlowReason
	// AvoidCaching: install nothing at all (the next packet upcalls
	// again), as Open vSwitch's avoid_caching.
	AvoidCaching bool
	// Error is why translation stopped early (the datapath actions then
	// drop), or nil.
	Error error

	// Cache remembers what the translation touched, so statistics and
	// side effects can be replayed without translating again.
	Cache Cache

	// PacketIns are the packet-ins to send (SideEffects only).
	PacketIns []PacketIn

	// FinalFlow is the flow as the actions left it (ofproto/trace's
	// "Final flow").
	FinalFlow mf.Flow
}

// Cache is Open vSwitch's xlate cache: the rules and groups a
// translation hit (credited with each datapath flow's statistics), the
// NORMAL learnings (refreshing the MAC table when the flow is used) and
// the learned flows (refreshed as Open vSwitch does).
type Cache struct {
	Rules   []Rule
	Groups  []GroupHit
	Normal  []MACLearning
	Learned []LearnedFlow
	// UsesMACs: NORMAL consulted the MAC table, so a change to it may
	// change this translation.
	UsesMACs bool
	// FinTimeouts are the fin_timeout actions run: applied to their rules
	// when the flow sees a TCP FIN or RST.
	FinTimeouts []FinTimeout
	// Patches are the patch ports the packet crossed (their counters are
	// credited with the flow's statistics); PeerMACs the MAC tables of
	// bridges behind patch ports that NORMAL consulted (PeerMACSeq).
	Patches  []PatchCrossing
	PeerMACs []*mac.Table
	// peerSeqAtFirstUse sums the PeerMACs' change counts as they were
	// when first consulted (PeerMACsChanged).
	peerSeqAtFirstUse uint64
}

// FinTimeout is a fin_timeout action and the rule it shortens.
type FinTimeout struct {
	Rule              Rule
	IdleTimeout, Hard uint16
}

// FinTimeoutRule is implemented by rules that honour fin_timeout: the
// rule's idle and hard timeouts drop to at most these (0: unchanged),
// as Open vSwitch's reduce_timeout.
type FinTimeoutRule interface {
	ReduceTimeouts(idle, hard uint16)
}

// TCP flags that trigger fin_timeout.
const (
	tcpFIN = 0x01
	tcpRST = 0x04
)

// Reset empties c keeping its capacity.
func (c *Cache) Reset() {
	clear(c.Rules)
	clear(c.Groups)
	clear(c.Learned)
	clear(c.FinTimeouts)
	c.Rules, c.Groups, c.Normal, c.Learned = c.Rules[:0], c.Groups[:0], c.Normal[:0], c.Learned[:0]
	c.FinTimeouts = c.FinTimeouts[:0]
	clear(c.Patches)
	clear(c.PeerMACs)
	c.Patches, c.PeerMACs, c.peerSeqAtFirstUse = c.Patches[:0], c.PeerMACs[:0], 0
	c.UsesMACs = false
}

// GroupHit is a group and the bucket translation took (-1: none, or
// every bucket of an all group counted by the group alone).
type GroupHit struct {
	Group  Group
	Bucket int
}

// MACLearning is NORMAL's source learning: mac in vlan is on port.
type MACLearning struct {
	VLAN uint16
	MAC  [6]byte
	Port uint32
	// Table is the MAC table learnt in when it is not the translation's
	// own bridge's (NORMAL behind a patch port); nil otherwise.
	Table *mac.Table
}

// PacketInReason is OpenFlow's packet-in reason, as Open vSwitch's enum
// ofp_packet_in_reason.
type PacketInReason uint8

const (
	ReasonNoMatch    PacketInReason = 0
	ReasonAction     PacketInReason = 1
	ReasonInvalidTTL PacketInReason = 2
	ReasonActionSet  PacketInReason = 3
	ReasonGroup      PacketInReason = 4
	ReasonPacketOut  PacketInReason = 5
	// ReasonExplicitMiss: a controller action in a table-miss rule
	// (priority 0, match-all): no_match to OpenFlow 1.3+, action to
	// older versions.
	ReasonExplicitMiss PacketInReason = 6
	// ReasonImplicitMiss: a table miss sent to the controller: no_match
	// to every version; the connection's miss_send_len applies.
	ReasonImplicitMiss PacketInReason = 7
)

// PacketIn is a packet for the controllers, before encoding.
type PacketIn struct {
	Reason       PacketInReason
	TableID      uint8
	Cookie       uint64
	ControllerID uint16
	MaxLen       uint16 // 0xffff (OFPCML_NO_BUFFER): the whole packet
	Userdata     []byte
	// Flow carries the packet's metadata (in_port, metadata, registers,
	// tunnel, conntrack) as of the controller action.
	Flow mf.Flow
	// Packet is the packet as the actions before the controller action
	// left it.
	Packet []byte
	// Continuation, for a controller action with pause, is the frozen
	// translation to resume with NXT_RESUME.
	Continuation *Frozen
}

// LearnedFlow is the flow mod a learn action produced, for the bridge to
// add (or, if it exists, refresh).
type LearnedFlow struct {
	TableID     uint8
	Priority    uint16
	Cookie      uint64
	IdleTimeout uint16
	HardTimeout uint16
	FinIdle     uint16
	FinHard     uint16
	Flags       uint16 // OFPFF_* (send_flow_rem...)
	// DeleteLearned: delete this flow when the learning rule goes.
	DeleteLearned bool
	// Limit: the learning rule may have at most this many learned flows
	// (0: no limit).
	Limit uint32
	Match mf.Match
	// Actions are the learned flow's actions.
	Actions []Action
	// Learner is the rule whose learn action this was.
	Learner Rule
}

// Frozen is a translation stopped to be resumed later: after
// recirculation (the datapath comes back with RecircID) or a paused
// controller action (NXT_RESUME). It holds what the datapath cannot
// carry: the pipeline state and the actions still to run.
type Frozen struct {
	Bridge  Bridge
	Version uint64
	// Flow is the flow when frozen: registers, metadata, and the packet
	// fields as modified so far.
	Flow mf.Flow
	// Table is the table to look up in next when Actions is empty.
	Table uint8
	// Actions are the actions to run on resume; ActionSet the action set.
	Actions   []Action
	ActionSet []Action
	// Stack is the push/pop stack.
	Stack []Subvalue
	// Cookie: the rule that froze (for packet-ins).
	Cookie uint64
	// The controller action that froze, for a packet-in: its userdata,
	// reason, and whether it paused (the packet-in then carries this
	// state as its continuation).
	Userdata []byte
	Reason   PacketInReason
	Pause    bool
	// Hashed: frozen for a select group by dp_hash; the resumed pass has
	// the packet's dp_hash.
	Hashed bool
	// Conntracked: the resumed packet carries conntrack state (frozen by
	// ct(table=N), or while tracked); otherwise translation resumes with
	// the flow's conntrack fields cleared.
	Conntracked bool
	// ODPInPort, when HasODPInPort, is the datapath port the packet came
	// in on, set on the per-packet copy a packet-in's continuation
	// carries (its odp_port): behind a patch port Flow.InPort names no
	// datapath port. Not part of the state's identity.
	ODPInPort    uint32
	HasODPInPort bool
}

// PushStats credits s (a datapath flow's statistics delta) to everything
// in c: each rule's and group's counters, and NORMAL's MAC entries (so
// an address that only hits installed flows stays learned). Open
// vSwitch's xlate_push_stats.
func PushStats(br Bridge, c *Cache, s Stats) { PushStatsLearning(br, c, s, true) }

// PushStatsLearning is PushStats choosing whether NORMAL learns from the
// traffic (moves or relearns addresses) or only keeps known entries
// alive: the first statistics of a new datapath flow include the packet
// whose upcall already learned, and must not relearn what changed since.
func PushStatsLearning(br Bridge, c *Cache, s Stats, learn bool) {
	for _, r := range c.Rules {
		r.Credit(s)
	}
	for _, g := range c.Groups {
		g.Group.Credit(g.Bucket, s)
	}
	if s.TCPFlags&(tcpFIN|tcpRST) != 0 {
		for _, ft := range c.FinTimeouts {
			if r, ok := ft.Rule.(FinTimeoutRule); ok {
				r.ReduceTimeouts(ft.IdleTimeout, ft.Hard)
			}
		}
	}
	for _, p := range c.Patches {
		p.credit(s)
	}
	if len(c.Normal) > 0 && !s.Used.IsZero() {
		if own := br.MACs(); own != nil || len(c.PeerMACs) > 0 {
			for _, l := range c.Normal {
				macs := own
				if l.Table != nil {
					macs = l.Table
				}
				if macs == nil {
					continue
				}
				if learn {
					macs.Refresh(l.VLAN, l.MAC, l.Port, s.Used)
				} else {
					macs.Touch(l.VLAN, l.MAC, l.Port, s.Used)
				}
			}
		}
	}
}

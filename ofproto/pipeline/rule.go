package pipeline

import (
	"math"
	"sync/atomic"
	"time"

	"gvs/ofproto/classifier"
	"gvs/ofproto/mf"
)

// Table numbers. Open vSwitch's ofproto-dpif has 255 tables; the last one
// is internal (hidden from OpenFlow, read-only).
const (
	NumTables     = 255
	TableInternal = 254
	TableAll      = 0xff // OFPTT_ALL: every table (delete, modify, stats)
)

// Versions.
const (
	// VersionMin is the version of an empty pipeline.
	VersionMin uint64 = 0
	// VersionNotRemoved marks a rule or group no transaction removed.
	VersionNotRemoved uint64 = math.MaxUint64
	// VersionMax sees everything not yet removed, also what an
	// uncommitted transaction added (OVS_VERSION_MAX): for the writer's
	// own queries.
	VersionMax uint64 = math.MaxUint64 - 1
)

// Special group, meter and cookie values.
const (
	GroupMax        uint32 = 0xffffff00 // OFPG_MAX
	GroupAll        uint32 = 0xfffffffc // OFPG_ALL
	GroupAny        uint32 = 0xffffffff // OFPG_ANY
	MeterMax        uint32 = 0xffff0000 // OFPM13_MAX
	MeterSlowpath   uint32 = 0xfffffffd
	MeterController uint32 = 0xfffffffe
	MeterAll        uint32 = 0xffffffff     // OFPM13_ALL
	CookieNone      uint64 = math.MaxUint64 // new_cookie "unchanged" (OVS_BE64_MAX)
	BufferNone      uint32 = math.MaxUint32
)

// Command is a flow mod command (OFPFC_*).
type Command uint8

// Flow mod commands, with their OpenFlow values.
const (
	FlowAdd          Command = 0
	FlowModify       Command = 1
	FlowModifyStrict Command = 2
	FlowDelete       Command = 3
	FlowDeleteStrict Command = 4
)

// Flags are flow mod flags, as Open vSwitch's enum ofputil_flow_mod_flags
// (version independent; the codec maps each version's wire bits).
type Flags uint16

const (
	FlagSendFlowRem  Flags = 1 << 0
	FlagNoPktCounts  Flags = 1 << 1
	FlagNoBytCounts  Flags = 1 << 2
	FlagCheckOverlap Flags = 1 << 3
	FlagEmerg        Flags = 1 << 4
	FlagResetCounts  Flags = 1 << 5
	// FlagNoReadonly marks the switch's own changes: they may change
	// read-only tables and hidden flows.
	FlagNoReadonly Flags = 1 << 7

	// flagsState are the flags a rule keeps and flow statistics report
	// (OFPUTIL_FF_STATE).
	flagsState = FlagSendFlowRem | FlagNoPktCounts | FlagNoBytCounts | FlagCheckOverlap | FlagResetCounts
)

// RemovedReason says why a rule went away (enum ofp_flow_removed_reason).
type RemovedReason uint8

const (
	RemovedIdleTimeout RemovedReason = 0
	RemovedHardTimeout RemovedReason = 1
	RemovedDelete      RemovedReason = 2
	RemovedGroupDelete RemovedReason = 3
	RemovedMeterDelete RemovedReason = 4
	RemovedEviction    RemovedReason = 5
)

// FlowMod is a decoded flow mod (Open vSwitch's struct ofputil_flow_mod),
// version independent.
type FlowMod struct {
	Command Command
	Match   mf.Match // normalised
	// Priority is OpenFlow's 16-bit priority; the switch's own hidden
	// flows (fail-open) use higher ones, which OpenFlow never sees.
	Priority int
	TableID  uint8 // TableAll: table 0 for add, all for modify/delete

	// Cookie and CookieMask select rules for modify and delete.
	Cookie, CookieMask uint64
	// NewCookie is the cookie an added or modified rule gets; CookieNone
	// keeps a modified rule's. ModifyCookie says whether a modify
	// changes the cookie. The codec sets both as ofputil_decode_flow_mod
	// does per version: that decides whether a modify that matched
	// nothing adds the flow (OpenFlow 1.0 and NXM: yes; 1.1 only with a
	// zero cookie mask; 1.2 and later: never).
	NewCookie    uint64
	ModifyCookie bool

	IdleTimeout, HardTimeout uint16
	Importance               uint16
	Flags                    Flags
	BufferID                 uint32
	OutPort                  uint32 // delete: mf.PortNone for any
	OutGroup                 uint32 // delete: GroupAny for any
	Actions                  []Action
	// Requester identifies who sent the flow mod (the connection and
	// message); flow monitor updates carry it.
	Requester any
}

// Rule is one flow table entry: a classifier rule (Match, Priority,
// Conjunctions; Value points back to the Rule) and what OpenFlow adds.
// Everything but the counters is fixed once its transaction committed.
//
// A table holds one Rule per flow, so its size is the switch's memory per
// rule: the small fields are packed together, times are unix nanoseconds,
// and what most rules never need (counters before the first credit, a
// learned flow's refresh, a replaced rule's successor) lives in ext,
// allocated on first use. TestRuleSizeClass keeps an allocation of it in
// the 896-byte size class.
type Rule struct {
	classifier.Rule[*Rule]

	Cookie                   uint64
	IdleTimeout, HardTimeout uint16
	Importance               uint16
	Flags                    Flags
	TableID                  uint8
	removedReason            RemovedReason
	Actions                  []Action

	created, modified int64 // unix nanoseconds
	used              atomic.Int64
	ext               atomic.Pointer[ruleExt]
}

// ruleExt is the part of a rule most rules never use.
type ruleExt struct {
	packets atomic.Uint64
	bytes   atomic.Uint64
	// refreshed restarts the hard timeout of a learned flow relearned
	// unchanged (unix nanoseconds; 0: never).
	refreshed atomic.Int64
	// next receives the credits of a rule replaced with counters kept
	// (ofproto-dpif's new_rule/forward_counts); forwardKeep is written
	// before next is published.
	next        atomic.Pointer[Rule]
	forwardKeep bool
	// finIdle, finHard are the timeouts fin_timeout lowered the rule's
	// to (0: not lowered; fintimeout.go).
	finIdle, finHard atomic.Uint32
}

// extension returns r's ext, making it on first use (any goroutine).
func (r *Rule) extension() *ruleExt {
	if e := r.ext.Load(); e != nil {
		return e
	}
	e := &ruleExt{}
	if r.ext.CompareAndSwap(nil, e) {
		return e
	}
	return r.ext.Load()
}

// Created is when the rule was added (a modification keeps it).
func (r *Rule) Created() time.Time { return time.Unix(0, r.created) }

// Modified is when the rule was added or last modified.
func (r *Rule) Modified() time.Time { return time.Unix(0, r.modified) }

// successor is the rule that replaced r keeping or resetting its
// counters, or nil.
func (r *Rule) successor() (next *Rule, keep bool) {
	e := r.ext.Load()
	if e == nil {
		return nil, false
	}
	n := e.next.Load()
	if n == nil {
		return nil, false
	}
	return n, e.forwardKeep
}

// Credit adds datapath statistics to the rule (the revalidator calls it
// with each flow's delta). A rule replaced with its counters kept passes
// the credit on to its successor.
func (r *Rule) Credit(packets, bytes uint64, used time.Time) {
	for {
		n, keep := r.successor()
		if n == nil {
			break
		}
		if !keep {
			// Only the used time moves to a rule reset by reset_counts.
			n.touch(used)
			return
		}
		r = n
	}
	if packets != 0 || bytes != 0 {
		e := r.extension()
		e.packets.Add(packets)
		e.bytes.Add(bytes)
	}
	r.touch(used)
}

func (r *Rule) touch(used time.Time) {
	u := used.UnixNano()
	for {
		old := r.used.Load()
		if u <= old || r.used.CompareAndSwap(old, u) {
			return
		}
	}
}

// Stats returns the rule's counters and when it was last used (its
// modification time if never).
func (r *Rule) Stats() (packets, bytes uint64, used time.Time) {
	if e := r.ext.Load(); e != nil {
		packets, bytes = e.packets.Load(), e.bytes.Load()
	}
	return packets, bytes, time.Unix(0, r.used.Load())
}

// hidden reports an internal rule (priority above 0xffff: the switch's
// own fail-open flow), never shown or changed through OpenFlow.
func (r *Rule) hidden() bool { return r.Priority > 0xffff }

// String helps debugging and test failures.
func (r *Rule) String() string {
	return "table=" + itoa(int(r.TableID)) + ",priority=" + itoa(int(r.Priority))
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// Refresh restarts the rule's hard timeout as of now, as a learn action
// that produced the same flow again does (ofproto_flow_mod_learn_refresh).
func (r *Rule) Refresh(now time.Time) { r.extension().refreshed.Store(now.UnixNano()) }

// hardStart is when the rule's hard timeout started.
func (r *Rule) hardStart() time.Time {
	if e := r.ext.Load(); e != nil {
		if ns := e.refreshed.Load(); ns > r.modified {
			return time.Unix(0, ns)
		}
	}
	return r.Modified()
}

// Package conntrack is the userspace datapath's connection tracker: what
// Open vSwitch's lib/conntrack*.c is to its netdev datapath. The kernel's
// conntrack cannot serve here (netlink never runs a packet held in user
// space through it), so the datapath runs the `ct` action through this
// package.
//
// # Contract
//
// A Tracker belongs to one datapath. Execute is called by many PMD
// goroutines at once, each on packets it owns; it reads and updates the
// packet's Key conntrack fields (CTState, CTZone, CTMark, CTLabel and the
// original-direction tuple CTNwSrc.. CTTpDst) and, under NAT, rewrites the
// packet bytes and the matching Key fields. The Key's conntrack fields
// are also the tracker's memory of an earlier ct in the same pass (Open
// vSwitch keeps a connection pointer in the packet's metadata): a packet
// already +trk in the same zone, not NATed since, is not run through the
// protocol tracker again; ct_clear (zeroing CTState) forgets it.
//
// Lookups of existing connections take no lock shared between PMDs and
// allocate nothing: the table is an open hash whose chains readers walk
// through atomic pointers while one writer at a time (Tracker.mu) links
// and unlinks nodes, the garbage collector standing in for RCU. A
// packet of a connection takes that connection's own lock (its TCP
// window state, mark and label), as Open vSwitch's conn->lock. Creating
// a connection (commit) takes the writer lock, bounded per zone
// (SetZoneLimits) and overall (SetMaxConns); a refused one leaves the
// packet +new and counts in Stats.DroppedFull.
//
// Expiry runs on a goroutine of the tracker's own (Start/Close), which
// also keeps the coarse clock packets read; it walks the table in small
// batches under the writer lock, never pausing lookups. Lookups skip
// connections whose time is up before the sweep unlinks them. Without
// Start, each packet reads Config.Now and nothing is swept.
//
// Dump, Flush, the limit and timeout policy setters are for the control
// plane (appctl, the reconciler, NXT_CT_FLUSH_ZONE) and safe to call
// concurrently with Execute. FormatEntry prints an Entry as
// dpctl/dump-conntrack does; ParseTuple and FlushMatching implement
// dpctl/flush-conntrack's tuple arguments.
//
// Lock order: a connection's lock, then Tracker.mu; the policy writers'
// lock stands alone (policies are published as immutable snapshots).
//
// The NAT half (nat*.go: the reply tuple's allocation and the packet
// rewrite) is called through bindings.go.
package conntrack

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
// packet bytes and the matching Key fields.
//
// Lookups of existing connections take no lock shared between PMDs and
// allocate nothing; creating a connection (commit) takes the tracker's
// write lock, bounded per zone and overall. Expiry runs on a goroutine of
// the tracker's own (Start/Close), never pausing PMDs. Dump, Flush, the
// limit and timeout setters are for the control plane (appctl, the
// reconciler, NXT_CT_FLUSH_ZONE) and safe to call concurrently with
// Execute.
package conntrack

// Package pipeline is the OpenFlow state of one bridge, after Open
// vSwitch's ofproto.c: 255 rule tables (ofproto/classifier; the last one
// internal: hidden and read-only), the group table and the meter table,
// and the semantics of the messages that change them (flow mod: add with
// replace and check_overlap, modify and delete loose and strict with
// cookies, out_port and out_group; group mod with bucket commands and
// chaining checks; meter mod over a MeterProvider) and of bundles that
// change several at once. It reports flow removed (send_flow_rem, with
// the reason: delete, idle or hard timeout, group or meter deletion) and
// flow monitor updates through an EventSink, deletes learned flows with
// their last delete_learned learning rule, and expires rules (Expire)
// from the counters the revalidator credits (Rule.Credit).
//
// # Versions
//
// Every change is made in a transaction (Txn) at a new version: the
// rules and groups it adds are visible from that version, the ones it
// replaces or deletes are invisible from it. Lookups run at the version
// Pipeline.Version returned when translation started, so they never see
// half a transaction: a bundle commits atomically, and a transaction that
// fails part way is reverted before its version is ever published. This
// is Open vSwitch's ofproto_flow_mod start/revert/finish split. Rules a
// commit hid stay in the classifiers until two Collects later (at most
// one a second, on commits and on the expiry timer), so a lookup that
// started at the previous version still finds them.
//
// A bundle's add flow mods may be prepared as they arrive (PrepareAdd:
// the rule is built then, as Open vSwitch's ofproto_flow_mod_init does)
// and applied at commit with Txn.AddPrepared, so that a bundle stages one
// copy of each rule. Churn counts the rules changes added, replaced and
// removed, for callers that act after bulk changes.
//
// Rules with equal action lists share one copy (intern.go: keyed by the
// lists' OpenFlow 1.5 encoding, held weakly), which a rule's immutability
// allows.
//
// # Goroutines and lock order
//
// One writer at a time: every change (flow mods, group mods, meter mods,
// expiry) holds Pipeline.mu for the whole transaction. Readers
// (translation on the upcall and revalidator goroutines) never take it:
// they read the published version atomically, look rules up in the
// tables (the classifier's own concurrency contract) and groups and meters
// in copy-on-write snapshots. Rule counters are atomics credited by the
// revalidator (Rule.Credit); a rule replaced with its counters kept
// forwards later credits to its successor, as ofproto-dpif does.
//
// # Ownership
//
// A Rule, Group or Meter is immutable once its transaction committed,
// except for its counters; callers must not modify one they got from a
// lookup. The events of a transaction (flow removed) are delivered to the
// EventSink after the new version is published, with Pipeline.mu held,
// so the sink must not call back into the pipeline.
package pipeline

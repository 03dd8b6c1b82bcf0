// Package ofproto is gvs's OpenFlow switch, after Open vSwitch's
// ofproto.c and the bridge half of ofproto-dpif.c.
//
// A Switch is the OpenFlow layer of one datapath: it owns the datapath's
// upcall handler and revalidator (ofproto/upcall, translating with
// ofproto/xlate), the datapath meters (DatapathMeters over dpif's meter
// table, numbered for every bridge of the datapath), and the bridges,
// which partition the datapath's ports; it republishes the datapath port
// map after every port change and runs packet outs through the upcall
// layer.
//
// A Bridge is one OpenFlow switch: its pipeline (package ofproto/pipeline:
// 255 rule tables over ofproto/classifier, groups, meters, Open vSwitch's
// flow mod semantics, versioned transactions for bundles, timeouts with
// flow removed, flow monitor updates), its ports with their OpenFlow
// numbers (PortNumbers: ofport_request, then the previous number, then
// new ones in name order; a number given up is not reused for an hour;
// the bridge's own port is LOCAL), port config and state (port mod, link)
// with port status events, its MAC table (ofproto/mac, which NORMAL
// learns in) and its timers (rule expiry, MAC aging). Its fail mode (the
// standalone default flow "priority=0 actions=NORMAL") belongs to the
// connection manager when one drives it (ConnBridge: FlushFlows and
// AddNormalFlow, as connmgr_flushed), otherwise to SetFailMode and
// SetHaveControllers. A new bridge has empty tables, as a new ofproto.
//
// Patch ports (PortSpec.Patch) have no datapath port; after every port
// change in any bridge the Switch pairs each with the port its
// options:peer names, in a bridge of the same datapath type, when that
// port names it back (patch.go, Open vSwitch's ofport_update_peer); a
// change of pairing republishes the bridge's ports and revalidates.
//
// After a bulk table change (at least 10,000 rules added, replaced or
// removed since the last time) has settled for 300 ms, the bridge returns
// the freed heap to the operating system (memtrim.go,
// runtime/debug.FreeOSMemory): a table load otherwise leaves the Go heap
// at up to twice what the tables keep. Two trims are at least 5 s apart. ConnBridge prepares a bundle's add
// flow mods as they are added (connmgr.BundlePreparer).
//
// Bridge implements xlate.Bridge and upcall.Bridge: translation and
// revalidation call it concurrently and it never blocks them (rules,
// groups and meters through the pipeline's lock-free lookups, ports and
// settings through atomically published snapshots). ConnBridge implements
// connmgr.Bridge over a Bridge, converting ofproto/ofp's messages.
//
// # Goroutines and lock order
//
// Configuration (ports, fail mode, flow/group/meter mods, bundles) comes
// from any goroutine; each bridge has a timer goroutine (Start/Close).
// Locks, outermost first: Switch.mu -> Bridge.mu -> Pipeline.mu (the
// pipeline's writer lock; classifier, groups and meters are read without
// it). Events go to the connection manager without blocking; the
// pipeline's flow removed and flow monitor reports are made with
// Pipeline.mu held.
package ofproto

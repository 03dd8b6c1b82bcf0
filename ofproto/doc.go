// Package ofproto is the translation layer above dpif, named after Open
// vSwitch's ofproto: it decides what the datapath does with packets that
// miss its flow caches and installs megaflows that remember the decision.
// Today the decision is the NORMAL action (an L2 learning switch with
// VLANs); OpenFlow tables plug in here later, as a translation that may
// end in NORMAL.
//
// A Switch owns one datapath's upcall handler and dispatches each miss by
// input port to the Bridge owning that port; bridges partition the
// datapath's ports. A Bridge has its own ports (with Open vSwitch's tag,
// trunks and vlan_mode semantics), its own MAC table (per-VLAN learning,
// aging, and a size limit evicting fairly as Open vSwitch does: the
// least recently used entry of the port holding the most entries) and
// its own flows.
//
// # Revalidation
//
// NORMAL megaflows match in_port, the outer VLAN tag and both MAC
// addresses, and are tagged with the bridge, their source's MAC entry and
// their destination's. Learning a new address deletes the flows that
// flooded to it; a move, expiry or eviction deletes the flows to and from
// the address; any port or bridge reconfiguration deletes the bridge's
// flows. Translation, learning and flow installation happen under the
// bridge's mutex, so no flow decided on an outdated table survives.
// MAC aging asks the datapath when the flows sourced by an address were
// last used, so an address that only ever hits installed flows (and so
// causes no upcall) stays learned.
//
// # Goroutines and lock order
//
// Upcall runs on PMD goroutines, concurrently; configuration methods run
// on any goroutine; each bridge has an aging goroutine (Close stops it).
// Locks, outermost first: Switch.mu -> Bridge.mu -> the datapath's flow
// lock (taken inside dpif calls). Upcall dispatch reads the port owner
// map without locking (an atomic copy-on-write snapshot).
//
// # Ownership
//
// The handler reads the upcall's key only; it never touches the packet,
// and it answers with actions the datapath executes on it.
//
// # OpenFlow bridges (Bridge)
//
// Bridge is the OpenFlow switch of Open vSwitch's ofproto.c: its
// pipeline (package ofproto/pipeline: 255 rule tables over
// ofproto/classifier, groups, meters, flow mod semantics, versioned
// transactions for bundles, timeouts), its ports with their OpenFlow
// numbers (PortNumbers: ofport_request, the previous number, then new
// ones in name order, an hour before a number is reused; the bridge's own
// port is LOCAL), port config and state (port mod, link) with port status
// events, and its MAC table. It implements xlate.Bridge and
// upcall.Bridge: translation and revalidation call it concurrently and
// it never blocks them (rules, groups and meters through the pipeline's
// lock-free lookups, ports through an atomically published snapshot).
// Its fail mode (the standalone default flow) belongs to the connection
// manager when one drives it (FlushFlows/AddNormalFlow), otherwise to
// SetFailMode/SetHaveControllers. It replaces the NORMAL-only Bridge once
// translation serves the datapath.
//
// Lock order for Bridge: Bridge.mu -> Pipeline.mu; neither is held
// while events go to the connection manager except the pipeline's flow
// removed and flow monitor reports, which must not block.
package ofproto

// Package connmgr is a bridge's OpenFlow connection manager, after Open
// vSwitch's ofproto/connmgr.c, lib/rconn.c, lib/vconn.c, ofproto/pinsched.c,
// ofproto/fail-open.c, ofproto/bundles.c and the message dispatch of
// ofproto.c's handle_openflow.
//
// Connections: the per-bridge <rundir>/<bridge>.mgmt socket (a service
// listener honouring Bridge.protocols, probing after 60 s) and
// <bridge>.snoop (each snoop connection gets a copy of every message to
// and from the most important active controller, as OVS's rconn
// monitors); the Controller table's targets: tcp: and unix: reconnect
// for ever with rconn's backoff (1 s doubling up to max_backoff, back to
// 1 s after a connection outlived its backoff), ptcp: and punix: listen;
// ssl: and pssl: fail with "Protocol not available" as OVS's do without
// SSL keys (gvs reads no SSL table). HELLO negotiation with version
// bitmaps, OVS's HELLO_FAILED text on failure; a message of another
// version gets OFPBRC_BAD_VERSION; echo requests are answered by the
// reader (so a long bundle commit never looks like a dead switch); with
// an inactivity probe interval, an idle peer gets an echo request and is
// dropped after a second interval of silence. connection_mode=in-band is
// served out-of-band (no in-band hidden flows; the bridge warns).
//
// Per-connection state as OVS's struct ofconn: role (equal, master,
// slave; generation ids; a new master demotes the old one with
// ROLE_STATUS), async config (SET_ASYNC, NXT_SET_ASYNC_CONFIG(2), per
// role, OVS's defaults), miss_send_len (service connections get no
// asynchronous message until it is non-zero), flow format (OpenFlow 1.0
// NXM flow-removed), packet-in format (standard, NXT_PACKET_IN,
// NXT_PACKET_IN2), controller id, NXT_FLOW_MOD_TABLE_ID, bundles
// (open/add/close/commit/discard, OF1.4 and the ONF 1.3 extension, per
// message errors, 10 s idle timeout), flow monitors (Nicira, ONF 1.3 and
// OF1.4 forms; initial flows, full or abbreviated updates),
// REQUESTFORWARD of group and meter mods to the other connections that ask,
// and controller_rate_limit/burst packet-in scheduling.
//
// Dispatch: each request is decoded with ofproto/ofp in its connection's
// version and handled as handle_single_part_openflow does: connection
// state here, switch state through Bridge (bridge.go, implemented by the
// ofproto core), replies encoded back and split into multipart messages
// with REPLY_MORE; a failure is an OpenFlow error in the request's
// version and xid echoing the whole request (OVS 3.1). Slaves may not
// modify (OFPBRC_IS_SECONDARY). The bridge reports asynchronous messages
// through Events, which the Manager implements. Fail mode: a standalone
// bridge without controllers gets "priority=0 actions=NORMAL" (the
// Manager starts secure, as OVS's connmgr, so the first
// SetFailMode(false) flushes and installs it); with controllers,
// fail-open adds a hidden NORMAL flow after three probe intervals
// without an admitted controller.
//
// Not done: in-band control, SSL, multipart requests split over several
// messages (OVS's ofpmp_assembler), flow monitor pause/resume on a
// backlog, IPFIX statistics requests.
//
// # Goroutines and ownership
//
// Every connection's OpenFlow state, every message, configuration call
// (SetControllers, SetFailMode, ..., which wait for it) and queued
// asynchronous event is handled by whoever holds the dispatcher lock
// (Manager.dmu), one at a time and in arrival order per connection: a
// connection's reader goroutine handles the messages it read itself
// (Open vSwitch's single-threaded loop, without a hand-off to another
// goroutine per message), a configuration call runs on its caller, and
// the Manager's run goroutine takes what no connection brings (events
// the bridge queued from its own goroutines, the one-second periodic
// work, rate-limited packet-ins). Each holder delivers the queued events
// before it lets go, so a barrier is answered after everything before
// it was processed (and after the asynchronous messages it caused), and
// the Bridge is never called concurrently by its Manager. After Close
// nothing more is dispatched.
//
// Output: messages for a connection are queued in order (unbounded;
// packet-ins are bounded by controller_queue_size and dropped beyond
// it). While its reader handles messages it has already received, the
// connection is corked; before the reader may block on its next read it
// writes everything queued with one non-blocking write (so a peer doing
// request/barrier round trips, as ovs-ofctl add-flows does, costs one
// read and one write per round trip), and what the socket does not take
// goes to the connection's writer goroutine, which also takes what other
// goroutines queue while the connection is not corked. At most one of
// the two writes at a time, so messages keep their order. Echo requests
// are answered by the reader without the dispatcher lock (a long bundle
// commit on another connection never looks like a dead switch). Each
// active target has a goroutine that connects, waits for the connection
// to end and backs off; each listener an accept goroutine, which
// dispatches the new connection before starting its goroutines.
//
// Lock order: Manager.dmu, then the leaves: service.cfgMu, service.stMu,
// service.monMu, ofconn.mu, Manager.evMu. None but dmu is held while
// calling the Bridge. Events methods only append to a queue and never
// block, so the bridge may call them from any goroutine, including from
// inside a Bridge method the dispatcher called; WantsFlowChanges tells
// it whether flow monitor reports would reach anyone.
package connmgr

// Package connmgr is a bridge's OpenFlow connection manager, after Open
// vSwitch's ofproto/connmgr.c, lib/rconn.c and lib/vconn.c and the
// message dispatch of ofproto.c's handle_openflow: the per-bridge
// <rundir>/<bridge>.mgmt and .snoop sockets, the Controller table's
// targets (tcp:, unix: with reconnection backoff; ptcp:, punix:
// listeners; ssl: and pssl: fail as Open vSwitch's do without SSL keys),
// HELLO version negotiation honouring Bridge.protocols, inactivity
// probes, and each connection's OpenFlow state (role, async config,
// miss_send_len, packet-in and flow formats, controller id, bundles,
// flow monitors). Decoded requests go to a Bridge (bridge.go: what the
// ofproto core implements); the bridge reports asynchronous messages
// through Events, which the Manager implements.
//
// Connections are out-of-band only: connection_mode=in-band is accepted
// and treated as out-of-band (no in-band hidden flows).
//
// # Goroutines and ownership
//
// One dispatcher goroutine per Manager owns every connection's OpenFlow
// state and handles, one at a time and in arrival order per connection,
// every message, configuration call (SetControllers, SetFailMode, ...,
// which wait for it) and queued asynchronous event; so a barrier is
// answered after everything before it was processed, and the Bridge is
// never called concurrently by its Manager. Each connection has a reader
// goroutine (which answers echo requests itself and probes an idle peer)
// and a writer goroutine draining an unbounded queue (packet-ins are
// bounded by controller_queue_size and dropped beyond it). Each active
// target has a goroutine that connects, waits for the connection to end
// and backs off; each listener an accept goroutine. Events methods only
// append to a queue and never block, so the bridge may call them from any
// goroutine, including from inside a Bridge method the dispatcher called.
//
// Lock order: every mutex in this package is a leaf (service.cfgMu,
// service.stMu, service.monMu, ofconn.mu, Manager.evMu); none is held
// while calling the Bridge.
package connmgr

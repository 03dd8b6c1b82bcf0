// Package dummy is Open vSwitch's "dummy" network device (lib/netdev-dummy.c)
// for gvs: a port with no kernel device behind it, whose receive queues are
// fed from user space (ovs-appctl netdev-dummy/receive) and whose transmitted
// frames are counted and, with options:tx_pcap, written to a pcap file.
// Sandboxes and test suites (Open vSwitch's, OVN's, tests/ofctl) build
// switches out of these ports on a "dummy" datapath.
//
// Options, as netdev-dummy reads them: pcap=FILE (received and sent frames
// into one file), rxq_pcap=FILE (frames queued for receiving),
// tx_pcap=FILE (frames sent), n_rxq=N (receive queues, default 1, at
// most MaxQueues), pstream=punix:PATH|ptcp:PORT[:IP] and
// stream=unix:PATH|tcp:IP:PORT (dummy ports joined by sockets, frames
// framed by a 2-byte length, see stream.go; conn-state reports stream).
// Pcap files are opened for appending; a new or empty file gets the pcap
// header first, as ovs_pcap_open(..., "ab") does.
//
// A Registry holds the open devices by name (for the netdev-dummy/*
// commands) and numbers them for their default MACs, aa:55:aa:55:00:00
// and up as Open vSwitch numbers its own; there is no package state.
//
// Contract (package netdev's): Recv on queue q is called by one goroutine at
// a time, never blocks and does not allocate; Send takes ownership of the
// batch, writes each frame to tx_pcap under the device's pcap mutex and
// returns every buffer to its pool, without allocating. Receive (queueing a
// frame, which copies it), SetAdminState, the counters and Close may be
// called from any goroutine. A receive queue holds at most MaxQueueLen
// frames (netdev-dummy's NETDEV_DUMMY_MAX_QUEUE); beyond that a frame is
// dropped and counted in RxKernelDrops. PollFD(q) is an eventfd readable
// while queue q holds frames.
//
// Registry.OnLinkChange tells the datapath adapter of set-admin-state, as
// a kernel link event would (the database's admin_state and link_state
// follow at once).
//
// Goroutines: a device with streams runs, per connection, a reader and a
// writer (Send only copies into a free buffer of the connection's bounded
// queue, dropping when it is full), plus an accept or redial loop; Close
// stops and waits for them all.
//
// Locks: each receive queue's mutex and the pcap writers' mutexes are leaves;
// Registry.mu is taken before neither, and the OnLinkChange function is
// called with no lock of this package held.
package dummy

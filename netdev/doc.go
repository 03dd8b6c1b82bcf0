// Package netdev defines the network devices the datapath receives packets
// from and sends packets to, with one sub-package per backend (afpacket for
// "system" ports, afxdp, tap for "internal" and "tap" ports) and a fake
// (netdevtest) for unit tests.
//
// Contract (like Open vSwitch's lib/netdev-provider.h):
//   - Recv(q, ...) is called by the one PMD goroutine that polls queue q; it
//     never blocks, takes buffers from the caller's pool and appends them to
//     the caller's batch. The caller owns what it received.
//   - Send(q, batch) takes ownership of every buffer in the batch, even on
//     error: each is returned to its pool before Send returns, and the batch
//     is left empty. Calls for different q may run concurrently; calls for
//     one q must be serialised by the caller (the datapath gives each PMD its
//     own transmit queue, or locks a shared one).
//   - Everything else (MTU, MAC, statistics, buffer sizes, Close) may be
//     called from any goroutine; Close must not race with Recv/Send of the
//     same device: the datapath stops polling a port before closing it.
//   - Neither Recv nor Send allocates in steady state.
package netdev

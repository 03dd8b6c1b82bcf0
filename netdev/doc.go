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
//   - PollFD(q)'s number is fixed while the device is open, but the file
//     behind it may change: an afpacket queue whose ring is resized gets a
//     new socket, dup3'd onto the same descriptor. poll(2)/ppoll users
//     see no difference; an epoll set (which registers files, not
//     numbers) must add the descriptor again when the device's
//     PollFDRenewer generation changes.
//
// Stats and Status are read for every port every few seconds (the
// statistics timer, coverage/show's sampler, metrics), so they make no
// netlink query for link attributes: the MTU a device keeps for Send
// follows the kernel through MTUFollower, and a system call that reads a
// kernel counter (afpacket's PACKET_STATISTICS, tap's tx_dropped) can be
// shared by two samplers through SharedStats. MAC, MTU and Link read the
// kernel when called (at port set-up and changes only).
//
// MemoryBudget bounds what all receive rings reserve together (the
// datapath makes one and gives it to each device); RxRingMemory is a
// device that reports its rings' memory (afpacket), for memory/show and
// metrics.
package netdev

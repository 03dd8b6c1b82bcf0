// Package afxdp implements the "afxdp" port type: a netdev.Device that
// receives and transmits through AF_XDP sockets, like Open vSwitch's
// netdev-afxdp, for kernels and drivers where that beats AF_PACKET.
//
// # What Open sets up
//
// Open(Config) loads a four-instruction XDP program, built with
// cilium/ebpf's asm package (no compiler), that redirects every frame to
// the XSKMAP slot of its receive queue and falls back to the kernel stack
// (XDP_PASS) for queues without a socket. The map has one slot per
// receive queue of the device. The program is attached through a
// bpf_link in driver ("native") mode, falling back to "generic" (SKB)
// mode unless options:xdp-mode insists. On veth, best-effort tries
// generic first: native veth XDP turns TSO off on the peer, so every
// MTU-sized frame crosses the hook on its own, while generic mode takes
// the peer's 64 KB TCP super-frames, which Recv cuts (see Receive); that
// forwards TCP with about 20% less switch CPU per Gbit/s. The program
// is loaded with BPF_F_XDP_HAS_FRAGS when the MTU exceeds about 3.5 KB,
// which native veth XDP requires. Nothing is pinned: Close, or the process exiting,
// detaches the program and frees the map.
//
// Each queue (Config.Queues, n_rxq) gets its own socket and UMEM: RingSize
// receive chunks, all handed to the fill ring up front, and RingSize
// transmit chunks, of 2048 bytes (4096 when the MTU needs it), with four
// RingSize rings mapped from the kernel. Sockets are bound in copy mode
// with XDP_USE_NEED_WAKEUP and, where the kernel has it, XDP_USE_SG
// (multi-buffer frames); native-with-zerocopy binds with XDP_ZEROCOPY
// and fails where the driver lacks it (veth does). A socket enters the
// XSKMAP only once bound.
//
// # Receive
//
// Recv copies each frame out of its UMEM chunk into a buffer from the
// caller's pool (one copy) and hands the chunk straight back to the fill
// ring, so the fill ring never runs dry while the datapath holds
// packets. It never blocks; PollFD is the socket, readable when the rx
// ring has frames (and poll(2) on it also transmits what the tx ring
// holds, in copy mode: a PMD sleeping there strands nothing).
//
// AF_XDP carries no metadata beside the frame, and two kinds of frames
// from a veth with default offloads would otherwise break TCP (Open
// vSwitch asks users to turn offloads off instead):
//   - Partial checksums: a TCP or UDP frame sent with checksum offload
//     holds only the pseudo-header sum. Recv parses each frame, detects
//     that (packet.IsPartialChecksum) and completes it in software
//     (packet.FixPartialChecksum); ChecksumsFixed counts the repairs. A
//     complete checksum that happens to equal the pseudo-header sum is
//     harmless: completing it yields the same value. Received buffers may
//     hold that parse's Key and Offsets; the caller parses again after
//     setting InPort.
//   - TSO super-frames: native veth XDP turns TSO off on the peer, but
//     generic XDP sees the peer's 64 KB TCP segments. They arrive as
//     multi-buffer frames; Recv reassembles them and cuts them into
//     MTU-sized TCP segments with full checksums, as the kernel's GSO
//     would (any cut of a byte stream is valid, so the sender's MSS need
//     not be known), over as many calls as the batch and pool need. Other
//     frames beyond the MTU (UDP_SEGMENT sends, whose datagram size is
//     lost) are dropped and counted in RxErrors.
//
// VLAN tags stay in the frame (AF_XDP does not strip them): nothing to
// restore.
//
// # Transmit
//
// Send copies frames into free transmit chunks (a frame longer than a
// chunk spans several: multi-buffer, XDP_PKT_CONTD) and puts at most
// tx-batch-size (default 32) descriptors in the tx ring per kick
// (sendto with MSG_DONTWAIT: in copy mode the kernel transmits inside
// that call), then kicks until the ring is empty, reaping the completion
// ring in between, before the next sub-batch. Open vSwitch queued 32 per
// kick while the kernel drained fewer, and descriptors left in the ring
// waited for the next packet: TCP sessions stalled. Here, if the kernel
// still holds descriptors after a few kicks, the socket is marked and
// every Recv on the queue kicks until they are gone. Frames larger than
// Capabilities().MaxFrame (the MTU plus Ethernet header and one VLAN
// tag; without multi-buffer support in the kernel, at most the chunk size
// minus 256) and frames that find no chunk or ring slot are dropped and
// counted in TxDrops.
//
// # Goroutines and ownership (see package netdev)
//
//   - Recv(q) is called by the one goroutine polling queue q; Send(q) by
//     one goroutine at a time per q (Recv and Send of one queue may run
//     on different goroutines: they share only atomics and the socket).
//   - Send takes ownership of every buffer in the batch, even on error:
//     each is returned to its pool before Send returns and the batch is
//     left empty. Buffers may come from any pool, but Send must run on
//     the goroutine that owns those pools.
//   - Stats, CustomStats, Status, MAC, MTU, SetMTU, Link,
//     SetSocketBuffers and ChecksumsFixed may be called from any
//     goroutine. Close must not race with Recv or Send; it is
//     idempotent.
//   - Neither Recv nor Send allocates (alloc_test.go).
//
// # Counters
//
// RxPackets/RxBytes count frames delivered (segments after a cut);
// RxKernelDrops sums the kernel's rx_dropped (no fill chunk, frame too
// big) and rx_ring_full (Recv too slow) from XDP_STATISTICS; RxErrors
// counts frames Recv dropped plus the kernel's invalid rx descriptors;
// TxDrops counts frames Send dropped; TxErrors counts failed kicks plus
// invalid tx descriptors. The kernel's tx_ring_empty_descs is not a drop
// (every transmit call ends with an empty ring): it is reported, with
// the rest of XDP_STATISTICS, the checksums completed and the TSO frames
// cut, by CustomStats.
//
// SetSocketBuffers reports 0/0 and no error: frames move through the
// rings and UMEM, not socket buffers, so userspace-sock-buf-size does not
// apply. (In copy mode the kernel still charges in-flight transmit skbs
// to SO_SNDBUF, which only bounds how many leave per kick: EAGAIN, and
// Send kicks again.)
//
// # Limits
//
//   - Send takes no virtio_net_hdr (Capabilities.VnetHdr is false): a GSO
//     frame from a port that has one must be segmented before it gets
//     here, and beyond MaxFrame it is dropped.
//   - One copy each way: forwarding between afxdp ports by moving
//     descriptors within a shared UMEM (XDP_SHARED_UMEM) is not done.
//     On veth both copies together cost under 10% of the switch's CPU;
//     the kernel's copy-mode transmit (which runs the receiving host's
//     stack inside sendto) dominates.
//   - Zero-copy binding is implemented but untested (veth refuses it).
//
// # Privileges
//
// Open needs CAP_NET_ADMIN and CAP_BPF (or root), and CAP_IPC_LOCK when
// the UMEMs (2 × RingSize chunks per queue: 8 MiB at the defaults) exceed
// RLIMIT_MEMLOCK.
package afxdp

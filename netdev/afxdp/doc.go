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
// Each queue (Config.Queues, n_rxq) gets its own socket with four
// RingSize rings mapped from the kernel. Sockets are bound in copy mode
// with XDP_USE_NEED_WAKEUP and, where the kernel has it, XDP_USE_SG
// (multi-buffer frames); native-with-zerocopy binds with XDP_ZEROCOPY
// and fails where the driver lacks it (veth does). A socket enters the
// XSKMAP only once bound.
//
// # UMEM: shared between ports where possible
//
// Packet memory is a UMEMGroup: one anonymous mapping of fixed-size
// chunks (2048 bytes; 4096 when the MTU needs it), registered with the
// kernel by its first socket (XDP_UMEM_REG); every other socket, of any
// device and queue, binds with XDP_SHARED_UMEM and its own fill and
// completion rings (a socket on the same device and queue as the one it
// names would share those rings, so it names another). A caller that
// wants ports to share passes one group in Config.UMEM (bridge/dpadapter
// gives every afxdp port of a datapath the same one); otherwise, or when
// the group cannot take the device (full: each queue reserves 2 ×
// RingSize chunks and the size is fixed, since the kernel cannot grow a
// registered UMEM; chunks too small for the MTU; zero-copy; the kernel
// refusing the shared bind; options:xdp-shared-umem=false), Open gives
// the device a private group sized for its queues and says why in the
// log and in Status (shared-umem=false, shared-umem-fallback). Queues of
// one device share its private group too.
//
// Free chunks are in the group's free list under a mutex, behind two
// caches per socket (chunkCache: receive side and transmit side, each
// owned by one goroutine) that take and give them a batch at a time: the
// lock is taken once per batch of up to 256 chunks, never per packet.
// The caches hand the fill ring their oldest chunks, so it gets them back
// in the order the kernel filled them and the kernel keeps writing them
// in one steady sequence (a stack scrambled that order: about 10% more
// CPU per frame); copies (transmit, TSO segments) go into the newest,
// likeliest still in the CPU's caches.
//
// Receive lends: a frame in one chunk becomes its buffer's memory
// (packet.Buffer.Lend, with the kernel's 256-byte XDP_PACKET_HEADROOM in
// front, so a VLAN push is done in place). When the buffer goes back to
// its pool the chunk returns to the socket's receive cache (Return, on
// the goroutine that received it: a lent buffer comes from that
// goroutine's pool and stays there). Every Recv tops the fill ring up
// from that cache, or from the group, so it stays full while buffers are
// out. Send of a buffer lent by a socket of the same group puts a
// descriptor of that chunk in the tx ring (address = chunk + the
// frame's offset, which aligned mode allows as long as the frame ends in
// the chunk), takes the loan over (packet.Buffer.TakeLoan), and the
// completion ring brings the chunk back to the transmit cache: a frame
// forwarded between afxdp ports, or queues, of one group is never copied
// in user space. Anything else (buffers from other port types or pool
// memory, multi-buffer frames) is copied into a free chunk as before.
// CustomStats counts both (tx_zero_copy, tx_copied) and the loans
// (rx_lent), and shows the group (umem_shared, umem_chunks,
// umem_chunks_free, umem_members, umem_chunks_lost).
//
// Close detaches the program, waits for redirects in flight (an RCU
// grace period, via membarrier), then gives the socket's chunks back:
// unread rx descriptors, the fill ring's untaken chunks, unsent and
// completed tx descriptors (after waiting briefly for the kernel to
// complete what it took), the caches. Chunks the kernel kept (its own
// free list in copy mode) are counted lost until the group's last
// member leaves, when the kernel lets go of the UMEM and the group has
// them all again. Loans still out when a socket closes become the
// group's: they come back when their buffers return to their pools, and
// the mapping stays until the group is closed, its last member gone and
// its last loan back. Closing one member leaves the others working (the
// kernel keeps the UMEM alive while any socket uses it).
//
// # Receive
//
// Recv lends each frame that fits one chunk to a buffer from the
// caller's pool (no copy; see above). It never blocks; PollFD is the
// socket, readable when the rx ring has frames. Recv also kicks out what
// an earlier Send left in the tx ring (Capabilities.RecvFlushesTx), so
// the PMDs poll these queues on every pass and every wake-up, even when
// they sleep in epoll, where the socket is not polled while nothing
// arrives.
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
//     multi-buffer frames; Recv reassembles them (one copy) and cuts them
//     into MTU-sized TCP segments with full checksums, each written into
//     a free chunk lent to its buffer (so a member sends it in place;
//     pool memory when no chunk is free), as the kernel's GSO would (any cut of a byte stream is valid, so the sender's MSS need
//     not be known), over as many calls as the batch and pool need. Other
//     frames beyond the MTU (UDP_SEGMENT sends, whose datagram size is
//     lost) are dropped and counted in RxErrors.
//
// VLAN tags stay in the frame (AF_XDP does not strip them): nothing to
// restore.
//
// # Transmit
//
// Send moves frames lent by the group as descriptors, copies the others
// into free chunks (a frame longer than a chunk spans several:
// multi-buffer, XDP_PKT_CONTD), and puts at most
// tx-batch-size (default: what the kernel drains per kick, 32 since
// Linux 5.13 and 16 before; DefaultTxBatchSize) descriptors in the tx ring per kick
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
//   - A buffer Recv returns may borrow a UMEM chunk: it must go back to
//     its pool (or through Send) on the goroutine that called Recv, as
//     every pool buffer does. It may outlive Close of the device (and
//     of the group), but its Put must not race with that Close.
//   - A UMEMGroup is safe for concurrent use; Close it when the devices
//     using it are closed or closing (order does not matter).
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
//   - Frames forwarded between an afxdp port and a port of another type,
//     or between afxdp ports in different groups (private UMEMs), are
//     copied once on transmit. Frames beyond one chunk are copied on
//     receive (reassembly) and on transmit.
//   - A group's size is fixed when it is made (DefaultGroupChunks: 32
//     MiB, four queues at the default ring size); queues beyond it get
//     private UMEMs.
//   - On veth in copy mode sharing saves no measurable CPU: the user-space
//     copies it removes were about 1-4% of the switch's CPU (profile),
//     below this machine's noise; TCP through the whole switch measured
//     within ±7% of the copying code in both directions
//     (BenchmarkSharedUMEMTCP, and tests/datapath's TestAFXDPUMEMMeasure
//     with GVSDP_UMEM_MEASURE set). The kernel's copy-mode transmit,
//     which runs the receiving host's stack inside sendto, dominates.
//     A shared UMEM also widens the set of chunks each socket's fill ring
//     cycles through (chunks come back from other members' completion
//     rings), which costs the kernel's receive path some cache misses.
//   - Zero-copy binding is implemented but untested (veth refuses it).
//
// # Privileges
//
// Open needs CAP_NET_ADMIN and CAP_BPF (or root), and CAP_IPC_LOCK when
// the UMEMs (a shared group's whole size, mapped at its first member; a
// private one's 2 × RingSize chunks per queue: 8 MiB at the defaults)
// exceed RLIMIT_MEMLOCK.
package afxdp

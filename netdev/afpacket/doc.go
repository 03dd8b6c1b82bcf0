// Package afpacket is the "system" port type: an existing kernel network
// device (a veth end, a NIC) served through AF_PACKET sockets, one per
// queue, with PACKET_VNET_HDR so that 64 KiB GSO frames and partial
// checksums pass through untouched (without it, frames from a device with
// offloads on carry partial checksums and TCP fails outright).
//
// # Receive
//
// Three modes (Config.RxMode; Interface options:rx-mode through
// ConfigFromOptions; Status()["rx_ring"] names the one in effect):
//
//   - RxRingV2 ("tpacket_v2", options:rx-mode=ring-v2, the default): a
//     TPACKET_V2 mmap ring sized from what the queue needs (below):
//     256 KiB while idle, growing under pressure. Every slot has its own
//     status word, so the kernel hands each frame over as soon as it has
//     written it: no block timer, latency as low as recvmmsg, and no
//     system call per batch while traffic flows. Recv does not copy the
//     frame: the pool buffer borrows the slot (packet.Buffer.Lend, see
//     loans.go), the packet is classified, changed and sent from there,
//     and the slot goes back to the kernel when the buffer goes back to
//     its pool. Fewer than half the slots are lent at once (frames
//     beyond are copied; the idle ring copies all), so buffers held for a
//     while (an upcall) do not leave the kernel without slots; lent slots
//     the reader comes round to stop it (the ring is full, the kernel
//     counts drops). Lending instead of copying: TCP 8.27 against 5.98
//     Gbit/s (medians of 3 interleaved runs, TestMeasureRxModes). A frame
//     larger than its slot comes whole through PACKET_COPY_THRESH: the
//     kernel queues a copy on the socket (while its receive buffer has
//     room) and marks the slot TP_STATUS_COPY; Recv reads the copy with
//     read(2). Slots are MTU-sized (2 KiB for 1500 bytes) in the minimum
//     ring (128 of them: bursts of small frames; the few GSO frames an
//     idle port sees come through the kernel's ~200 KiB receive buffer)
//     and whenever userspace-sock-buf-size is set (its receive buffer
//     takes the GSO frames); a ring that grew without it has GSO-sized
//     slots of 68 KiB (V2GSOFrameSize), so every GSO frame fits: with the
//     kernel's receive buffer alone, MTU-sized slots under a TCP stream
//     lost the GSO frames whose copy found it full (240k retransmits in
//     10 s). Status()["rx_ring_slot_size"] shows the one in use.
//   - RxRing ("tpacket_v3", rx-mode=ring-v3): a TPACKET_V3 ring of
//     256 KiB blocks into which the kernel packs frames of any size (about
//     170 MTU-sized ones a block, 32 blocks), so it absorbs the longest
//     bursts of small frames. But it hands a block over only when it is
//     full or when its retire timeout (1 ms, the smallest it takes) fires,
//     and a partially filled block cannot be read safely (frames in it
//     carry no ready flag), so a lone packet waits up to 1 ms per hop.
//   - RxRecvmmsg ("recvmmsg", rx-mode=mmsg): recvmmsg(2) straight into
//     the caller's buffers, the virtio_net_hdr first, the stripped VLAN
//     tag in PACKET_AUXDATA: no added latency and one copy fewer, at one
//     system call per Recv. It needs a receive buffer of a few MiB
//     (Config.SocketBuffer): with the kernel's 208 KiB, 64 KiB GSO frames
//     overflow it and TCP retransmits heavily.
//
// Measured (TestMeasureRxModes, GVS_RXMEASURE=5: a bare forwarder between
// two veths, ping, a 1-byte UDP request/response client and iperf3 in
// namespaces, setups interleaved run by run, 2 cores shared with other
// load). Medians of 5 runs in each of three sessions (a/b/c, ten minutes
// apart); the direct veth pair is the reference:
//
//	                    ring-v3         ring-v2            mmsg              mmsg 8 MiB        direct
//	ping RTT (µs)       1771/835/806    243/219/221        351/511/286       361/443/322       109/100/119
//	UDP 1-byte RR (/s)  723/1101/1394   14624/12843/13204  15437/9363/15594  16809/9117/13142  33178/36089/35082
//	TCP (Gbit/s)        6.05/5.57/7.24  8.44/5.66/8.84     6.52/5.04/6.40    9.08/6.58/8.33    15.2/12.2/13.0
//	TCP retransmits     0/0/1           46/6/181           164k/184k/165k    45/0/0            311/91/396
//	UDP 8 KB @1G loss % 2.5/33/18       8.7/24/7.9         10/59/20          15/23/11          4.3/10.5/5.2
//
// ring-v2 is the default: with the kernel defaults untouched it is the
// only mode with both low latency and TCP without a retransmit storm.
// Growing its ring of 68 KiB slots to 32 or 128 MiB changed none of these
// figures beyond the noise. MTU-sized slots with the kernel's receive
// buffer lost GSO frames whose copy found the buffer full (TCP: 240k
// retransmits in 10 s), hence the slot size's dependence on
// userspace-sock-buf-size; with 8 MiB they gave the best TCP figure of
// the V2 variants (7.0 Gbit/s median, no retransmits) and no kernel drops
// at UDP 8 KB @1G in most runs, where 68 KiB slots dropped. The UDP loss figures say more
// about the machine's load than about the modes (the direct pair lost
// 4-10%, and the forwarder's kernel drops show it was starved for tens of
// milliseconds at a time, longer than any ring here covers).
//
// # Ring size, budget and userspace-sock-buf-size
//
// A ring starts at Config.MinRingSize (256 KiB; 200 idle ports take
// 50 MiB of rings, where a fixed 16 MiB took 3.2 GiB) and adapts on its
// queue's polling goroutine (adapt.go): pressure (kernel drops, seen as
// TP_STATUS_LOSING or in PACKET_STATISTICS; frames truncated because the
// receive buffer was full; half the ring waiting behind a full batch; a
// lent slot reached) makes it four times as large, up to
// Config.MaxRingSize (64 MiB); userspace-sock-buf-size (Config.
// SocketBuffer, SetSocketBuffers) grows it straight to that size, at most
// an equal share of the budget; 30 s (Config.IdleShrink) without pressure
// or a full batch shrink it back to the minimum. A ring's minimum is
// always reserved from Config.Budget (netdev.MemoryBudget, machine-wide);
// growth only within it, in part if only part is left; a lowered limit
// shrinks grown rings on their next check.
//
// The kernel cannot resize a ring in place, and replacing the ring of a
// live socket leaves it deaf for two RCU grace periods; so a resize
// prepares a new socket and ring on a goroutine of its own (the
// allocation is the slow part), and the polling goroutine hands over
// once the old ring is drained: it binds the new socket and dup3s it onto
// the old descriptor (PollFD and Send keep their number), and another
// goroutine unmaps the old ring, which releases the old socket (see
// resize.go). A queue in a fanout group (n_rxq > 1) lets the old socket
// go first, one queue of the device at a time: its share of the flows
// goes to the other queues until the new socket joins. The handover took
// 18-126 µs of the polling goroutine for rings of 1 to 64 MiB (the
// Recv that made it, two runs); a ping every 10 ms through 20 ports
// whose rings all resize loses nothing (tests/bridge
// TestHugeSockBufKeepsPingAndBudget). The budget lets two rings be
// allocated at once machine-wide. Status shows "rx_ring_size" (in
// effect), "rx_ring_size_pending" and "rx_ring_slot_size_pending" until
// a handover, and "rx_ring_resizes"; Device.RxRingBytes reports the
// rings' memory (netdev.RxRingMemory).
//
// # Spare sockets
//
// Setting up a ring (PACKET_RX_RING) waits for an RCU grace period: the
// kernel's packet_set_ring calls synchronize_net even on a fresh socket
// that receives nothing yet, and that wait was most of what adding one
// port cost (see the README). Binding a socket made with protocol 0,
// which is not yet receiving, does not wait. So a SparePool
// (Config.Spares; bridge/dpadapter keeps one per datapath while it has
// system ports) holds a few sockets with the default mode's options set
// and the minimum ring of MTU-sized slots mapped, tied to no device, and
// Open of a one-queue port whose opening ring has exactly that shape
// (TPACKET_V2, MinRingSize and slot size at their defaults, an MTU whose
// slot is the 1500-byte one; userspace-sock-buf-size does not change
// the opening ring) takes one and only adds the membership and binds it.
// Anything else (ring-v3, mmsg, n_rxq > 1, another slot or minimum size)
// opens as before, as does a port that finds the pool empty. The pool's
// goroutine refills it after every take or miss; the spares' rings are
// reserved from Config.Budget within its limit (a spare the budget has
// no room for is not made) and handed to the taker's reservation; Close
// closes the spares and releases them.
//
// In every mode, a VLAN tag the kernel stripped (veth and most NICs take the
// outer tag into metadata) is put back into the frame before Recv returns,
// with its TPID (802.1Q or 802.1ad). Frames the ring truncated count as
// RxErrors. With more than one queue the sockets join a PACKET_FANOUT hash
// group, so each flow stays on one queue.
//
// # Transmit
//
// Send builds one sendmmsg(2) call per batch (virtio_net_hdr and frame as
// two iovecs; no copy in user space), with MSG_DONTWAIT and
// PACKET_QDISC_BYPASS. It never blocks: frames the socket cannot take now
// are dropped and counted (TxDrops), as are frames over MTU + Ethernet +
// one VLAN header that are not GSO; a frame the kernel refuses counts in
// TxErrors and the rest of the batch still goes. A PACKET_TX_RING was
// tried and dropped: with VNET_HDR every slot must hold a 64 KiB frame (64
// slots of 68 KiB), the copy merely moves from the kernel to us, and it
// measured slower (TCP 5.5 against 6.5 Gbit/s for sendmmsg, interleaved
// medians of four runs).
//
// # Statistics and buffers
//
// The kernel's drop counter (PACKET_STATISTICS, reset by every read) is
// read when a ring block or frame arrives marked TP_STATUS_LOSING, on
// every Stats call (StatsWithin: only when the last read is older than
// its maxAge, so two periodic samplers share one read), before a
// resize's handover and on Close, and accumulated into RxKernelDrops.
// Stats makes no other system call: the MTU Send checks frames against
// is the one set or given by RefreshMTU (the adapter's link events), and
// Status's driver information is read once at Open. SetSocketBuffers
// applies userspace-sock-buf-size to the open sockets at once with
// SO_RCVBUFFORCE/SO_SNDBUFFORCE (SO_RCVBUF/SO_SNDBUF without privilege),
// clamped by netdev.ClampSocketBuffer; it reports the sizes read back
// (Linux doubles them). 0 leaves the sockets as they are. In the ring
// modes it sizes the ring too (above).
//
// # Link flaps
//
// When the link goes down the kernel leaves ENETDOWN pending on each
// socket, and poll(2) reports POLLERR until a system call consumes it.
// Send retries once on ENETDOWN (the first may be that stale error); in
// the ring modes Recv reads SO_ERROR every 64 empty calls so a PMD sleeping
// in poll does not spin after a flap.
//
// # Goroutines
//
// As in package netdev: Recv(q) from the one goroutine polling queue q;
// Send(q) serialised per q by the caller (Recv and Send of one queue may
// run concurrently: they share only the socket's descriptor, which a
// resize points at a new socket with one dup3); everything else from any
// goroutine; Close only after polling and sending stopped (it waits for a
// resize being prepared). A resize starts one goroutine that prepares the
// new socket and one that unmaps the old ring. A SparePool runs one
// goroutine (refilling) from NewSparePool to Close; its methods may be
// called from any goroutine. Recv and Send do not
// allocate (alloc_test.go) except at a resize's handover. Sockets are non-blocking; PollFD(q)
// becomes readable when Recv(q) has something to return.
package afpacket

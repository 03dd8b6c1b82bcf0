// Package afpacket is the "system" port type: an existing kernel network
// device (a veth end, a NIC) served through AF_PACKET sockets, one per
// queue, with PACKET_VNET_HDR so that 64 KiB GSO frames and partial
// checksums pass through untouched (without it, frames from a device with
// offloads on carry partial checksums and TCP fails outright).
//
// # Receive
//
// Two modes (Config.RxMode):
//
//   - RxRing ("tpacket_v3", the default): a TPACKET_V3 mmap ring of 256 KiB
//     blocks (a block must hold a 64 KiB GSO frame). Recv walks the blocks
//     the kernel has handed over and copies each frame into a buffer from
//     the caller's pool (the one copy in user space), decoding the
//     virtio_net_hdr that sits 10 bytes before the frame. The kernel hands
//     a block over only when it is full or when its retire timeout (1 ms,
//     the smallest it takes) fires, and a partially filled block cannot be
//     read safely (frames in it carry no ready flag), so a lone packet
//     waits up to 1 ms per hop.
//   - RxRecvmmsg ("recvmmsg"): recvmmsg(2) straight into the caller's
//     buffers, the virtio_net_hdr first, the stripped VLAN tag in
//     PACKET_AUXDATA: no added latency and one copy fewer, at one system
//     call per Recv. It needs a receive buffer of a few MiB
//     (Config.SocketBuffer): with the kernel's 208 KiB, 64 KiB GSO frames
//     overflow it and TCP retransmits heavily.
//
// Measured on 2 shared cores under other load (bench_test.go, medians,
// interleaved): TCP through a bare forwarder 6.5-9 Gbit/s in either mode
// where a direct veth pair gave 14-17; ping round trip 0.8-1.8 ms with
// RxRing, 0.2-0.4 ms with RxRecvmmsg, 0.08 ms over the direct pair.
//
// In both, a VLAN tag the kernel stripped (veth and most NICs take the
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
// read when a ring block arrives marked TP_STATUS_LOSING, on every Stats
// call and on Close, and accumulated into RxKernelDrops. SetSocketBuffers
// applies userspace-sock-buf-size to the open sockets at once with
// SO_RCVBUFFORCE/SO_SNDBUFFORCE (SO_RCVBUF/SO_SNDBUF without privilege),
// clamped by netdev.ClampSocketBuffer; it reports the sizes read back
// (Linux doubles them). 0 leaves the sockets as they are.
//
// # Link flaps
//
// When the link goes down the kernel leaves ENETDOWN pending on each
// socket, and poll(2) reports POLLERR until a system call consumes it.
// Send retries once on ENETDOWN (the first may be that stale error); in
// RxRing mode Recv reads SO_ERROR every 64 empty calls so a PMD sleeping
// in poll does not spin after a flap.
//
// # Goroutines
//
// As in package netdev: Recv(q) from the one goroutine polling queue q;
// Send(q) serialised per q by the caller (Recv and Send of one queue may
// run concurrently: they share only the socket); everything else from any
// goroutine; Close only after polling and sending stopped. Recv and Send
// do not allocate (alloc_test.go). Sockets are non-blocking; PollFD(q)
// becomes readable when Recv(q) has something to return.
package afpacket

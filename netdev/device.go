package netdev

import (
	"errors"
	"net"
	"time"

	"gvs/packet"
)

// Device is one port's network device.
type Device interface {
	// Name is the kernel interface name (or the configured name).
	Name() string
	// Type is the Interface type that created it: "system", "afxdp",
	// "internal" or "tap".
	Type() string
	// NumRxQueues and NumTxQueues are fixed once the device is open.
	NumRxQueues() int
	NumTxQueues() int
	// Recv appends up to the batch's free room of received packets from
	// queue q, taking buffers from pool, and returns how many it added. It
	// never blocks: 0 means nothing was ready.
	Recv(q int, batch *packet.Batch, pool *packet.Pool) (int, error)
	// Send transmits the batch on queue q and takes ownership of it (see
	// the package contract).
	Send(q int, batch *packet.Batch) error
	// PollFD returns a file descriptor that is readable while queue q
	// has packets (level, as poll(2) and epoll see it), so an idle PMD
	// can sleep in epoll_wait(2) instead of spinning and then poll only
	// the queues that are ready; -1 when the device has none. It is the
	// same descriptor for as long as the device is open (the PMDs keep
	// it in their epoll sets); several queues may share one.
	PollFD(q int) int
	// Capabilities says what the device carries beside the frame.
	Capabilities() Capabilities
	MAC() net.HardwareAddr
	MTU() int
	SetMTU(mtu int) error
	// Link reports the carrier and administrative state, read fresh.
	Link() LinkState
	// Stats returns the counters since the device was opened.
	Stats() Stats
	// SetSocketBuffers applies userspace-sock-buf-size (0 restores the
	// kernel's defaults for sockets opened afterwards and leaves open ones
	// alone) and reports the sizes in effect.
	SetSocketBuffers(bytes int) (SocketBuffers, error)
	// Status is what goes into Interface.status (driver, ring type, ...).
	Status() map[string]string
	Close() error
}

// MTUFollower is a device that keeps the MTU for its transmit size check
// in memory (afpacket, tap). Whoever follows the kernel's link events for
// the device (bridge/dpadapter) gives it every MTU they report, so that a
// change made outside the switch (ip link set mtu) reaches the size check
// without the device asking the kernel on a timer (Stats does not). Safe
// from any goroutine.
type MTUFollower interface {
	RefreshMTU(mtu int)
}

// SharedStats is a device whose Stats makes a system call for kernel
// counters (afpacket: PACKET_STATISTICS). StatsWithin returns the
// software counters as they are now and the kernel's as last read,
// reading them again only when that read is older than maxAge. A periodic
// sampler that runs beside the statistics timer (coverage/show's) passes
// a little more than its period, so the two share one read per port per
// period instead of making one each. Safe from any goroutine.
type SharedStats interface {
	StatsWithin(maxAge time.Duration) Stats
}

// StatsWithin is d.StatsWithin(maxAge) when d shares its kernel reads
// (SharedStats), d.Stats() otherwise.
func StatsWithin(d Device, maxAge time.Duration) Stats {
	if s, ok := d.(SharedStats); ok {
		return s.StatsWithin(maxAge)
	}
	return d.Stats()
}

// Capabilities of a device.
type Capabilities struct {
	// VnetHdr: received buffers carry a virtio_net_hdr in their metadata
	// (GSO and partial checksums pass through), and Send honours one.
	VnetHdr bool
	// MaxFrame is the largest frame Send accepts (64 KiB with GSO).
	MaxFrame int
	// RecvSyscall: Recv makes a system call even when nothing is waiting
	// (tap's read(2), recvmmsg), where a ring device only reads memory.
	// A busy PMD polls such a queue less often while it stays empty.
	RecvSyscall bool
	// RecvFlushesTx: Recv also pushes out frames an earlier Send left
	// queued for the kernel (AF_XDP, when the kernel drained less per
	// kick than was queued), so the queue is polled on every pass and
	// every wake-up of its PMD even when its PollFD says nothing arrived:
	// otherwise those frames would wait for the next Send, which for a
	// quiet flow may never come.
	RecvFlushesTx bool
}

// LinkState is a device's link as the kernel reports it.
type LinkState struct {
	AdminUp   bool
	CarrierUp bool
	SpeedMbps int // 0 when unknown
	IfIndex   int
}

// Stats are a device's counters. Drops are split by where they happened,
// so an operator can tell kernel losses from datapath losses.
type Stats struct {
	RxPackets, RxBytes uint64
	TxPackets, TxBytes uint64
	// RxKernelDrops: packets the kernel dropped before we saw them
	// (PACKET_STATISTICS tp_drops, AF_XDP rx ring full / fill ring empty).
	RxKernelDrops uint64
	// RxErrors: malformed or oversized frames received and dropped.
	RxErrors uint64
	// TxDrops: frames the transmit path could not queue (ring or socket
	// buffer full, frame too large).
	TxDrops  uint64
	TxErrors uint64
}

// SocketBuffers reports requested and effective socket buffer sizes.
type SocketBuffers struct {
	Requested int // 0: not requested, kernel defaults
	Receive   int // effective SO_RCVBUF as read back
	Send      int // effective SO_SNDBUF as read back
}

// Socket buffer bounds for userspace-sock-buf-size, as Open vSwitch clamps.
const (
	MinSocketBuffer = 212992
	MaxSocketBuffer = 1073741823
)

// ClampSocketBuffer clamps a requested size to the accepted range.
func ClampSocketBuffer(n int) int {
	return min(max(n, MinSocketBuffer), MaxSocketBuffer)
}

// ErrNoDevice is returned when the named kernel device does not exist.
var ErrNoDevice = errors.New("no such device")

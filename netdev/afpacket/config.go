package afpacket

import (
	"log/slog"
	"time"
)

// Ring defaults. A block must hold a whole 64 KiB GSO frame behind its
// tpacket3_hdr, so blocks are 256 KiB (room for three such frames or ~170
// MTU-sized ones); 32 blocks give each queue an 8 MiB ring. The kernel
// hands a block over when it is full or when it has been open for the
// retire timeout: 1 ms, its smallest, bounds the latency a lone packet
// sees (see the package documentation).
const (
	DefaultBlockSize     = 256 << 10
	DefaultBlocks        = 32
	DefaultRetireTimeout = time.Millisecond
	// frameSize is only the nominal tp_frame_size the kernel validates;
	// TPACKET_V3 packs variable-size frames into blocks.
	frameSize = 2048
	// minBlockSize fits a 64 KiB GSO frame, its headers and the
	// tpacket3_hdr.
	minBlockSize = 128 << 10
)

// Receive modes.
const (
	// RxRing reads a TPACKET_V3 mmap ring: no system call per batch
	// while traffic flows, but a lone packet waits for its block to be
	// retired (up to RetireTimeout).
	RxRing = "tpacket_v3"
	// RxRecvmmsg reads with recvmmsg(2) straight into the caller's
	// buffers: one system call per batch, no added latency, one copy
	// fewer; it needs a socket receive buffer of a few MiB
	// (SocketBuffer) to absorb bursts.
	RxRecvmmsg = "recvmmsg"
)

// Config opens one AF_PACKET device.
type Config struct {
	Name string // kernel interface name; it must exist
	// RxQueues is how many sockets (queues) to open; more than one
	// joins them in a PACKET_FANOUT hash group. 0 means 1.
	RxQueues int
	// SocketBuffer is userspace-sock-buf-size: 0 leaves the kernel
	// defaults, anything else is clamped by netdev.ClampSocketBuffer.
	SocketBuffer int
	// RxMode is RxRing (the default, "") or RxRecvmmsg.
	RxMode string
	// BlockSize, Blocks and RetireTimeout shape the TPACKET_V3 receive
	// ring; zero fields take the defaults above.
	BlockSize     int
	Blocks        int
	RetireTimeout time.Duration
	Logger        *slog.Logger // nil: slog.Default()
}

func (c Config) withDefaults() Config {
	if c.RxQueues <= 0 {
		c.RxQueues = 1
	}
	if c.BlockSize <= 0 {
		c.BlockSize = DefaultBlockSize
	}
	c.BlockSize = max(c.BlockSize, minBlockSize)
	if c.Blocks <= 0 {
		c.Blocks = DefaultBlocks
	}
	if c.RetireTimeout <= 0 {
		c.RetireTimeout = DefaultRetireTimeout
	}
	if c.RxMode == "" {
		c.RxMode = RxRing
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

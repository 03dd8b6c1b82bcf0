package afpacket

import (
	"fmt"
	"log/slog"
	"math/bits"
	"strconv"
	"time"

	"gvs/netdev"
)

// TPACKET_V3 ring geometry. A block must hold a whole 64 KiB GSO frame
// behind its tpacket3_hdr, so blocks are 256 KiB (room for three such
// frames or ~170 MTU-sized ones); a ring has at least two (see
// Config.shapeFor). The kernel hands a block over when it is full or when
// it has been open for the retire timeout: 1 ms, its smallest, bounds the
// latency a lone packet sees (see the package documentation).
const (
	DefaultBlockSize     = 256 << 10
	DefaultRetireTimeout = time.Millisecond
	// frameSize is only the nominal tp_frame_size the kernel validates;
	// TPACKET_V3 packs variable-size frames into blocks.
	frameSize = 2048
	// minBlockSize fits a 64 KiB GSO frame, its headers and the
	// tpacket3_hdr.
	minBlockSize = 128 << 10
	minV3Blocks  = 2
)

// Receive ring sizes (both ring modes). A ring starts at MinRingSize and
// grows on measured pressure, doubling, up to MaxRingSize, within the
// machine-wide netdev.MemoryBudget; it shrinks back after IdleShrink
// without pressure (adapt.go).
const (
	// DefaultMinRingSize is an idle ring: three GSO-sized slots, or 128
	// MTU-sized ones with userspace-sock-buf-size.
	DefaultMinRingSize = 256 << 10
	// DefaultMaxRingSize caps one ring, so that no resize (the kernel
	// allocates and we map the whole ring while the queue's PMD waits)
	// takes long, and no one port takes the budget.
	DefaultMaxRingSize = 64 << 20
	// DefaultIdleShrink is how long a grown ring stays grown without
	// pressure or full batches.
	DefaultIdleShrink = 30 * time.Second
	// maxRingSize is the kernel-side bound we never ask beyond.
	maxRingSize = 1 << 30
)

// TPACKET_V2 ring geometry. The kernel puts a frame v2MacOffset bytes
// into its slot, behind the tpacket2_hdr, sockaddr_ll and virtio_net_hdr.
// A frame too large for its slot is not lost: with PACKET_COPY_THRESH the
// kernel queues a full copy on the socket and marks the slot
// TP_STATUS_COPY, and Recv reads it with one read(2) (see recvRingV2) —
// but the kernel makes that copy only while the socket's receive buffer
// has room. So the slot size follows userspace-sock-buf-size and the
// ring's size (Config.v2FrameSize):
//   - a ring grown beyond the minimum without the option, for a queue
//     that receives GSO frames (the kernel's ~200 KiB receive buffer,
//     too small for more than two or three queued 64 KiB GSO frames):
//     every slot holds a whole GSO frame, V2GSOFrameSize; 16 MiB hold 240.
//   - otherwise (the option set: the receive buffer takes the GSO frames;
//     the minimum ring, an idle port; a ring grown under small frames):
//     slots sized for the MTU (v2FrameSizeFor; 2 KiB for 1500 bytes), so
//     256 KiB hold 128 frames and 16 MiB 8192.
//
// Blocks are 1 MiB in rings of 1 MiB and more, else the ring is one block
// of a power of two (the kernel allocates each block as a power-of-two
// run of pages: 15 GSO slots in 1 MiB waste 4 KiB, 3 in 256 KiB 52 KiB).
const (
	V2GSOFrameSize = 68 << 10
	V2BlockSize    = 1 << 20
	// v2MacOffset is where the kernel puts a frame in a V2 slot with a
	// virtio_net_hdr: TPACKET_ALIGN(TPACKET2_HDRLEN + 16) + 10 - 14.
	v2MacOffset = 76
	// minV2FrameSize is the smallest slot: 2 KiB fits a 1500-byte MTU
	// frame with a VLAN tag and keeps two slots per page.
	minV2FrameSize = 2 << 10
)

// v2FrameSize is the V2 slot size of a ring of bytes with
// userspace-sock-buf-size sockBuf (0: unset) for a queue that receives
// GSO frames (bulk: frames larger than an MTU-sized slot came, or the
// ring has GSO-sized slots already). GSO-sized only in a ring grown
// beyond the minimum for such a queue without sockBuf (the kernel's
// receive buffer is too small for their copies); MTU-sized otherwise: an
// idle port's minimum ring holds 128 small frames, not three, and a ring
// that grows under bursts of small frames keeps holding as many as it
// can. The GSO frames an idle port sees come whole through the receive
// buffer (PACKET_COPY_THRESH); when they overflow it, the truncated
// frames count as pressure and the ring grows into GSO-sized slots.
func (c Config) v2FrameSize(sockBuf, bytes int, bulk bool) int {
	switch {
	case c.V2FrameSize > 0:
		return c.V2FrameSize
	case sockBuf == 0 && bulk && bytes > c.ringBytes(c.MinRingSize, true):
		return V2GSOFrameSize
	}
	return v2FrameSizeFor(c.mtu)
}

// maxV2FrameSize is the largest slot a V2 ring of c may have.
func (c Config) maxV2FrameSize() int {
	if c.V2FrameSize > 0 {
		return c.V2FrameSize
	}
	return max(V2GSOFrameSize, v2FrameSizeFor(c.mtu))
}

// v2FrameSizeFor is the slot size for frames of a device with the given
// MTU: room for the headers, an Ethernet header and two VLAN tags,
// rounded up to 64 bytes (TPACKET_ALIGNMENT is 16; 64 keeps slots on
// cache lines).
func v2FrameSizeFor(mtu int) int {
	need := v2MacOffset + mtu + 14 + 8
	return max(minV2FrameSize, (need+63)&^63)
}

// Receive modes (Config.RxMode; also Status()["rx_ring"]).
const (
	// RxRing reads a TPACKET_V3 mmap ring: no system call per batch
	// while traffic flows, but a lone packet waits for its block to be
	// retired (up to RetireTimeout).
	RxRing = "tpacket_v3"
	// RxRingV2 reads a TPACKET_V2 mmap ring: one MTU-sized slot per
	// frame, each handed over as soon as the kernel has written it (no
	// block timer), so latency is as low as with recvmmsg, and no system
	// call per batch while traffic flows, except one read(2) per frame
	// larger than a slot (GSO frames).
	RxRingV2 = "tpacket_v2"
	// RxRecvmmsg reads with recvmmsg(2) straight into the caller's
	// buffers: one system call per batch, no added latency, one copy
	// fewer; it needs a socket receive buffer of a few MiB
	// (SocketBuffer) to absorb bursts.
	RxRecvmmsg = "recvmmsg"

	// DefaultRxMode is the mode "" selects; see the package
	// documentation for the measurements behind the choice.
	DefaultRxMode = RxRingV2
)

// RxModeOption is the Interface options key that selects the receive mode
// (see ParseRxMode).
const RxModeOption = "rx-mode"

// ParseRxMode maps an options:rx-mode value ("ring-v3", "ring-v2",
// "mmsg"; the Status names "tpacket_v3", "tpacket_v2", "recvmmsg" are
// accepted too; "" means the default) to a Config.RxMode.
func ParseRxMode(v string) (string, error) {
	switch v {
	case "":
		return DefaultRxMode, nil
	case "ring-v3", RxRing:
		return RxRing, nil
	case "ring-v2", RxRingV2:
		return RxRingV2, nil
	case "mmsg", RxRecvmmsg:
		return RxRecvmmsg, nil
	}
	return "", fmt.Errorf("invalid options:%s %q (want ring-v3, ring-v2 or mmsg)", RxModeOption, v)
}

// ConfigFromOptions builds a Config for interface name from its options
// column: n_rxq (queues, default 1) and rx-mode (see ParseRxMode). The
// caller adds SocketBuffer (other_config:userspace-sock-buf-size).
func ConfigFromOptions(name string, options map[string]string, logger *slog.Logger) (Config, error) {
	cfg := Config{Name: name, RxQueues: 1, Logger: logger}
	if v, ok := options["n_rxq"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return Config{}, fmt.Errorf("invalid options:n_rxq %q", v)
		}
		cfg.RxQueues = n
	}
	mode, err := ParseRxMode(options[RxModeOption])
	if err != nil {
		return Config{}, err
	}
	cfg.RxMode = mode
	return cfg, nil
}

// Config opens one AF_PACKET device.
type Config struct {
	Name string // kernel interface name; it must exist
	// RxQueues is how many sockets (queues) to open; more than one
	// joins them in a PACKET_FANOUT hash group. 0 means 1.
	RxQueues int
	// SocketBuffer is userspace-sock-buf-size: 0 leaves the kernel
	// defaults, anything else is clamped by netdev.ClampSocketBuffer.
	// It sets SO_RCVBUF/SO_SNDBUF and, in the ring modes, the receive
	// ring holds at least that many bytes (see Config.ringShape).
	SocketBuffer int
	// RxMode is RxRing, RxRingV2 or RxRecvmmsg; "" is DefaultRxMode.
	RxMode string
	// BlockSize and RetireTimeout shape the TPACKET_V3 receive ring;
	// zero fields take the defaults above.
	BlockSize     int
	RetireTimeout time.Duration
	// MinRingSize is the size a receive ring starts at and shrinks back
	// to (bytes, rounded up to a valid ring); 0 means
	// DefaultMinRingSize. MaxRingSize caps its growth (0:
	// DefaultMaxRingSize; below MinRingSize: MinRingSize, a fixed ring).
	// userspace-sock-buf-size asks for a size between the two.
	MinRingSize, MaxRingSize int
	// IdleShrink is how long a grown ring waits without pressure before
	// it shrinks back to MinRingSize; 0 means DefaultIdleShrink.
	IdleShrink time.Duration
	// Budget is the machine-wide budget the rings reserve from (nil:
	// unlimited). A ring's MinRingSize is always reserved.
	Budget *netdev.MemoryBudget
	// V2FrameSize is the TPACKET_V2 slot size; 0 chooses by
	// SocketBuffer (see V2GSOFrameSize).
	V2FrameSize int
	// Spares, if not nil, holds ready sockets: a queue of their shape
	// takes one instead of setting up a ring of its own (see
	// SparePool). It should reserve from the same Budget.
	Spares *SparePool
	// mtu is the device's MTU when it was opened (set by Open).
	mtu int
	// copyRx makes the V2 ring copy every frame into a pool buffer
	// instead of lending the slot (for measurements).
	copyRx bool
	Logger *slog.Logger // nil: slog.Default()
}

func (c Config) withDefaults() Config {
	if c.RxQueues <= 0 {
		c.RxQueues = 1
	}
	if c.BlockSize <= 0 {
		c.BlockSize = DefaultBlockSize
	}
	c.BlockSize = max(c.BlockSize, minBlockSize)
	if c.RetireTimeout <= 0 {
		c.RetireTimeout = DefaultRetireTimeout
	}
	if c.MinRingSize <= 0 {
		c.MinRingSize = DefaultMinRingSize
	}
	if c.MaxRingSize <= 0 {
		c.MaxRingSize = DefaultMaxRingSize
	}
	c.MinRingSize = min(c.MinRingSize, maxRingSize)
	c.MaxRingSize = min(max(c.MaxRingSize, c.MinRingSize), maxRingSize)
	if c.IdleShrink <= 0 {
		c.IdleShrink = DefaultIdleShrink
	}
	if c.RxMode == "" {
		c.RxMode = DefaultRxMode
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// ringShape is the geometry of one receive ring.
type ringShape struct {
	blockSize, blocks int
	frameSize         int // TPACKET_V2 slot size (V3: the nominal frameSize)
}

func (s ringShape) bytes() int { return s.blockSize * s.blocks }

// ringBytes rounds n to a ring size the mode's geometry makes (up or
// down) within [MinRingSize, MaxRingSize].
func (c Config) ringBytes(n int, up bool) int {
	frame := c.maxV2FrameSize()
	lo := c.roundRing(c.MinRingSize, frame, true)
	hi := max(c.roundRing(c.MaxRingSize, frame, false), lo)
	return min(max(c.roundRing(n, frame, up), lo), hi)
}

// roundRing rounds n to a ring size: V3 whole blocks, at least
// minV3Blocks; V2 whole V2BlockSize blocks from V2BlockSize on, below it
// one block of a power of two that holds at least one slot.
func (c Config) roundRing(n, frame int, up bool) int {
	n = max(n, 1)
	switch c.RxMode {
	case RxRing:
		b := n / c.BlockSize
		if up {
			b = (n + c.BlockSize - 1) / c.BlockSize
		}
		return max(b, minV3Blocks) * c.BlockSize
	case RxRingV2:
		if n >= V2BlockSize {
			b := n / V2BlockSize
			if up {
				b = (n + V2BlockSize - 1) / V2BlockSize
			}
			return b * V2BlockSize
		}
		p := 1 << bits.Len(uint(n-1)) // the power of two at or above n
		if !up && p > n {
			p /= 2
		}
		return max(p, 1<<bits.Len(uint(frame-1)), 4096)
	}
	return 0
}

// shapeFor returns the geometry of a ring of bytes (a size ringBytes
// made) for userspace-sock-buf-size sockBuf (0: unset) and a queue that
// does or does not receive GSO frames (bulk), which pick the V2 slot size
// (v2FrameSize).
func (c Config) shapeFor(bytes, sockBuf int, bulk bool) ringShape {
	switch c.RxMode {
	case RxRing:
		return ringShape{blockSize: c.BlockSize, blocks: bytes / c.BlockSize, frameSize: frameSize}
	case RxRingV2:
		bs := min(bytes, V2BlockSize)
		return ringShape{blockSize: bs, blocks: bytes / bs, frameSize: c.v2FrameSize(sockBuf, bytes, bulk)}
	}
	return ringShape{}
}

// initialShape is the ring a queue opens with: MinRingSize, or with
// userspace-sock-buf-size set as much of it as the budget grants at once
// (adapt.go reserves; here only the minimum).
func (c Config) initialShape(sockBuf int) ringShape {
	return c.shapeFor(c.ringBytes(c.MinRingSize, true), sockBuf, false)
}

package netdevtest

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"gvs/netdev"
	"gvs/packet"
)

// Compile-time check that the fake is a netdev.Device.
var _ netdev.Device = (*Device)(nil)

// Config describes a fake device; zero fields take the defaults.
type Config struct {
	Name     string // default "fake0"
	Type     string // default "system"
	RxQueues int    // default 1
	TxQueues int    // default 1
	MAC      net.HardwareAddr
	MTU      int // default 1500
	Caps     netdev.Capabilities
	// RxQueueLen bounds each receive queue; Inject beyond it drops the
	// frame and counts RxKernelDrops, like a full socket. Default 4096.
	RxQueueLen int
	// Discard: Send counts frames but keeps no copies (no allocation).
	Discard bool
}

// Frame is a captured transmitted frame.
type Frame struct {
	Queue int
	Data  []byte
	Meta  packet.Meta
}

// Device is the fake. Create it with New.
type Device struct {
	cfg    Config
	rx     []rxQueue
	tx     []txQueue
	mu     sync.Mutex // sent, mtu
	sent   []Frame
	mtu    int
	closed atomic.Bool
	stats  struct {
		rxPackets, rxBytes, txPackets, txBytes, rxDrops, rxErrors, txErrors atomic.Uint64
	}
	violations atomic.Uint64
	recvCalls  atomic.Uint64
	housekeeps atomic.Uint64
}

type rxEntry struct {
	data []byte
	tag  packet.VLANTag
}

type rxQueue struct {
	mu        sync.Mutex
	frames    []rxEntry
	head      int
	loop      []rxEntry
	loopNext  int
	efd       int
	drain     [8]byte
	signalled bool // efd may be readable; under mu
	busy      atomic.Bool
	// renew: the next Recv puts a new eventfd under efd's number, as an
	// afpacket ring resize puts a new socket under its PollFD; gen counts
	// those renewals (netdev.PollFDRenewer).
	renew atomic.Bool
	gen   atomic.Uint64
}

type txQueue struct {
	busy atomic.Bool
}

// New creates a fake device.
func New(cfg Config) (*Device, error) {
	if cfg.Name == "" {
		cfg.Name = "fake0"
	}
	if cfg.Type == "" {
		cfg.Type = "system"
	}
	cfg.RxQueues = max(cfg.RxQueues, 1)
	cfg.TxQueues = max(cfg.TxQueues, 1)
	if cfg.MTU == 0 {
		cfg.MTU = 1500
	}
	if cfg.RxQueueLen <= 0 {
		cfg.RxQueueLen = 4096
	}
	if cfg.MAC == nil {
		cfg.MAC = net.HardwareAddr{0x02, 0, 0, 0, 0, byte(len(cfg.Name))}
	}
	if cfg.Caps.MaxFrame == 0 {
		cfg.Caps.MaxFrame = cfg.MTU + packet.EthHeaderLen + 2*packet.VLANHeaderLen
	}
	d := &Device{cfg: cfg, rx: make([]rxQueue, cfg.RxQueues), tx: make([]txQueue, cfg.TxQueues), mtu: cfg.MTU}
	for i := range d.rx {
		fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
		if err != nil {
			d.Close()
			return nil, fmt.Errorf("netdevtest: eventfd: %w", err)
		}
		d.rx[i].efd = fd
	}
	return d, nil
}

// MustNew is New for tests that cannot go on without the device.
func MustNew(cfg Config) *Device {
	d, err := New(cfg)
	if err != nil {
		panic(err)
	}
	return d
}

var errClosed = errors.New("netdevtest: device closed")

// Inject queues a copy of frame on receive queue q.
func (d *Device) Inject(q int, frame []byte) error {
	return d.inject(q, rxEntry{data: append([]byte(nil), frame...)})
}

// InjectStripped queues frame as if the kernel had stripped tag from it
// (AF_PACKET's tp_vlan_tci): Recv reports it in Meta.StrippedVLAN.
func (d *Device) InjectStripped(q int, frame []byte, tag packet.VLANTag) error {
	return d.inject(q, rxEntry{data: append([]byte(nil), frame...), tag: tag})
}

func (d *Device) inject(q int, e rxEntry) error {
	if d.closed.Load() {
		return errClosed
	}
	r := &d.rx[q]
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.frames)-r.head >= d.cfg.RxQueueLen {
		d.stats.rxDrops.Add(1)
		return nil
	}
	if r.head > 0 && r.head >= len(r.frames)/2 {
		n := copy(r.frames, r.frames[r.head:])
		clear(r.frames[n:])
		r.frames, r.head = r.frames[:n], 0
	}
	r.frames = append(r.frames, e)
	if !r.signalled { // else the eventfd is readable already
		one := [8]byte{1}
		unix.Write(r.efd, one[:])
		r.signalled = true
	}
	return nil
}

// Loop makes receive queue q yield frames round and round for ever (after
// anything injected), without allocating: a traffic source for benchmarks.
// Loop(q, nil) stops it.
func (d *Device) Loop(q int, frames [][]byte) {
	r := &d.rx[q]
	r.mu.Lock()
	defer r.mu.Unlock()
	r.loop = r.loop[:0]
	for _, f := range frames {
		r.loop = append(r.loop, rxEntry{data: append([]byte(nil), f...)})
	}
	r.loopNext = 0
	if len(frames) > 0 {
		one := [8]byte{1}
		unix.Write(r.efd, one[:])
		r.signalled = true
	}
}

// Pending returns how many injected frames wait on receive queue q.
func (d *Device) Pending(q int) int {
	r := &d.rx[q]
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.frames) - r.head
}

// Violations counts Recv or Send calls that overlapped another call on the
// same queue or came after Close: a broken caller.
func (d *Device) Violations() uint64 { return d.violations.Load() }

// RecvCalls counts Recv calls on every queue (how often the device was
// polled).
func (d *Device) RecvCalls() uint64 { return d.recvCalls.Load() }

// Sent returns copies of the captured frames.
func (d *Device) Sent() []Frame {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]Frame(nil), d.sent...)
}

// TakeSent returns the captured frames and forgets them.
func (d *Device) TakeSent() []Frame {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.sent
	d.sent = nil
	return s
}

// WaitSent waits until at least n frames were captured (counting from the
// last TakeSent) or timeout passes, and returns what was captured.
func (d *Device) WaitSent(n int, timeout time.Duration) []Frame {
	deadline := time.Now().Add(timeout)
	for {
		d.mu.Lock()
		got := len(d.sent)
		d.mu.Unlock()
		if got >= n || time.Now().After(deadline) {
			return d.Sent()
		}
		time.Sleep(200 * time.Microsecond)
	}
}

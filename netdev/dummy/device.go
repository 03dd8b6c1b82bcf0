package dummy

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"gvs/netdev"
	"gvs/packet"
)

var _ netdev.Device = (*Device)(nil)

const (
	// MaxQueueLen is how many frames one receive queue holds
	// (netdev-dummy's NETDEV_DUMMY_MAX_QUEUE).
	MaxQueueLen = 100
	// MaxQueues bounds n_rxq (netdev-dummy's DUMMY_MAX_QUEUES_PER_PORT).
	MaxQueues = 1024
	// DefaultMTU is a new dummy device's MTU.
	DefaultMTU = 1500
)

// Config describes one dummy device.
type Config struct {
	Name string
	// Type is the Interface type it was created for: "dummy", or with
	// --enable-dummy=override the type it stands in for ("system",
	// "internal", "tap").
	Type string
	// MAC nil: the registry's next aa:55:aa:55:xx:xx.
	MAC      net.HardwareAddr
	MTU      int // 0: DefaultMTU
	RxQueues int // 0: 1
	// Pcap, RxqPcap, TxPcap, PStream and Stream are the options of the
	// same names.
	Pcap, RxqPcap, TxPcap string
	PStream, Stream       string
	// RunDir resolves relative unix: and punix: paths.
	RunDir string
	Logger *slog.Logger
}

// ConfigFromOptions reads a dummy Interface's options as netdev-dummy does;
// options it does not know are ignored (netdev-dummy ignores them too).
func ConfigFromOptions(name, typ string, options map[string]string) (Config, error) {
	cfg := Config{Name: name, Type: typ, Pcap: options["pcap"], RxqPcap: options["rxq_pcap"], TxPcap: options["tx_pcap"],
		PStream: options["pstream"], Stream: options["stream"]}
	if s, ok := options["n_rxq"]; ok {
		n, err := strconv.Atoi(s)
		if err != nil {
			n = 1 // smap_get_int's default for a value it cannot read
		}
		if n > MaxQueues {
			return cfg, fmt.Errorf("%s: requested %d rxqs is over the maximum of %d", name, n, MaxQueues)
		}
		cfg.RxQueues = max(n, 1)
	}
	return cfg, nil
}

// Device is one dummy port. Open it with Registry.Open.
type Device struct {
	cfg     Config
	reg     *Registry
	mac     net.HardwareAddr
	rx      []rxQueue
	ntx     int
	rxPcap  *pcapWriter
	txPcap  *pcapWriter
	streams *streams // nil without pstream/stream
	log     *slog.Logger
	mtu     atomic.Int32
	adminUp atomic.Bool
	// ip4 are the addresses of netdev-dummy/ip4addr, answered for in
	// ARP (replaced whole, read by Send without a lock).
	ip4      atomic.Pointer[[][4]byte]
	inAddrs  atomic.Pointer[inAddrs] // netdev-dummy/ip4addr and ip6addr, with masks
	closed   atomic.Bool
	closeErr error
	stats    struct {
		rxPackets, rxBytes, txPackets, txBytes, rxDrops, rxErrors, txErrors atomic.Uint64
	}
}

type rxQueue struct {
	mu        sync.Mutex
	frames    [][]byte // frames[head:] wait
	head      int
	efd       int
	drain     [8]byte
	signalled bool // the eventfd may be readable; under mu
}

func open(reg *Registry, cfg Config, mac net.HardwareAddr) (*Device, error) {
	if cfg.Type == "" {
		cfg.Type = "dummy"
	}
	if cfg.MTU == 0 {
		cfg.MTU = DefaultMTU
	}
	cfg.RxQueues = min(max(cfg.RxQueues, 1), MaxQueues)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	d := &Device{cfg: cfg, reg: reg, mac: slices.Clone(mac), rx: make([]rxQueue, cfg.RxQueues), ntx: cfg.RxQueues, log: cfg.Logger}
	d.mtu.Store(int32(cfg.MTU))
	d.adminUp.Store(true)
	for i := range d.rx {
		d.rx[i].efd = -1
	}
	fail := func(err error) (*Device, error) {
		d.release()
		return nil, err
	}
	for i := range d.rx {
		fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
		if err != nil {
			return fail(fmt.Errorf("%s: eventfd: %w", cfg.Name, err))
		}
		d.rx[i].efd = fd
	}
	var err error
	switch {
	case cfg.Pcap != "":
		if d.rxPcap, err = openPcap(cfg.Pcap); err != nil {
			return fail(err)
		}
		d.txPcap = d.rxPcap
		d.txPcap.refs++
	default:
		if cfg.RxqPcap != "" {
			if d.rxPcap, err = openPcap(cfg.RxqPcap); err != nil {
				return fail(err)
			}
		}
		if cfg.TxPcap != "" {
			if d.txPcap, err = openPcap(cfg.TxPcap); err != nil {
				return fail(err)
			}
		}
	}
	if cfg.PStream != "" || cfg.Stream != "" {
		if d.streams, err = newStreams(d, cfg.PStream, cfg.Stream, cfg.RunDir); err != nil {
			return fail(err)
		}
	}
	return d, nil
}

// ErrClosed is returned by calls on a closed device.
var ErrClosed = errors.New("dummy: device closed")

// ErrNoQueue is returned for a receive queue the device does not have.
var ErrNoQueue = errors.New("bad rx queue id.")

// Receive queues a copy of frame on receive queue q, as netdev-dummy/receive
// does: it goes to rxq_pcap first, then waits for Recv; a full queue drops
// it (RxKernelDrops).
func (d *Device) Receive(q int, frame []byte) error {
	return d.receive(q, slices.Clone(frame))
}

// receive queues frame itself (the caller gives it up).
func (d *Device) receive(q int, frame []byte) error {
	if q < 0 || q >= len(d.rx) {
		return ErrNoQueue
	}
	if d.closed.Load() {
		return ErrClosed
	}
	if d.rxPcap != nil {
		if err := d.rxPcap.Write(frame); err != nil {
			d.log.Warn(fmt.Sprintf("%s: writing %s: %v", d.cfg.Name, d.rxPcap.path, err))
		}
	}
	r := &d.rx[q]
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.frames)-r.head >= MaxQueueLen {
		d.stats.rxDrops.Add(1)
		return nil
	}
	if r.head > 0 && r.head >= len(r.frames)/2 {
		n := copy(r.frames, r.frames[r.head:])
		clear(r.frames[n:])
		r.frames, r.head = r.frames[:n], 0
	}
	r.frames = append(r.frames, frame)
	if !r.signalled && r.efd >= 0 {
		one := [8]byte{1}
		unix.Write(r.efd, one[:])
		r.signalled = true
	}
	return nil
}

// Pending returns how many frames wait on receive queue q.
func (d *Device) Pending(q int) int {
	r := &d.rx[q]
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.frames) - r.head
}

// Recv implements netdev.Device.
func (d *Device) Recv(q int, batch *packet.Batch, pool *packet.Pool) (int, error) {
	if q < 0 || q >= len(d.rx) {
		return 0, ErrNoQueue
	}
	if d.closed.Load() {
		return 0, ErrClosed
	}
	r := &d.rx[q]
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for !batch.Full() {
		if r.head >= len(r.frames) {
			if r.signalled {
				unix.Read(r.efd, r.drain[:])
				r.signalled = false
			}
			break
		}
		b := pool.Get()
		if b == nil {
			break // the pool counted it; the frame waits
		}
		frame := r.frames[r.head]
		r.frames[r.head] = nil
		r.head++
		if len(frame) > len(b.Room()) {
			pool.Put(b)
			d.stats.rxErrors.Add(1)
			continue
		}
		b.SetLen(copy(b.Room(), frame))
		batch.Append(b)
		d.stats.rxPackets.Add(1)
		d.stats.rxBytes.Add(uint64(len(frame)))
		n++
	}
	return n, nil
}

// Send implements netdev.Device: each frame is counted and written to
// tx_pcap; frames larger than the MTU allows are dropped as netdev-dummy
// drops them (TxErrors).
func (d *Device) Send(q int, batch *packet.Batch) error {
	var err error
	if d.closed.Load() {
		err = ErrClosed
	}
	mtu := int(d.mtu.Load())
	for _, b := range batch.Buffers() {
		size := b.Len()
		switch {
		case err != nil:
			d.stats.txErrors.Add(1)
		case size > maxFrameSize(mtu, b.Data()):
			d.stats.txErrors.Add(1)
		default:
			d.stats.txPackets.Add(1)
			d.stats.txBytes.Add(uint64(size))
			if d.streams != nil {
				d.streams.send(b.Data())
			}
			if addrs := d.ip4.Load(); addrs != nil {
				d.answerARP(b.Data(), *addrs)
			}
			if d.txPcap != nil {
				if werr := d.txPcap.Write(b.Data()); werr != nil {
					d.stats.txErrors.Add(1)
				}
			}
		}
		b.Free()
	}
	batch.Reset()
	return err
}

// addIPv4 adds an address ARP requests sent through the device are
// answered for.
func (d *Device) addIPv4(a [4]byte) {
	for {
		old := d.ip4.Load()
		var next [][4]byte
		if old != nil {
			next = slices.Clone(*old)
		}
		if slices.Contains(next, a) {
			return
		}
		next = append(next, a)
		if d.ip4.CompareAndSwap(old, &next) {
			return
		}
	}
}

// answerARP queues an ARP reply from the device's MAC when frame is an
// ARP request (untagged, Ethernet/IPv4) for one of addrs, as netdev-dummy
// answers for the addresses of netdev-dummy/ip4addr.
func (d *Device) answerARP(frame []byte, addrs [][4]byte) {
	if len(frame) < 42 || frame[12] != 0x08 || frame[13] != 0x06 || frame[20] != 0 || frame[21] != 1 {
		return
	}
	tpa := [4]byte(frame[38:42])
	if !slices.Contains(addrs, tpa) {
		return
	}
	// To the requester's Ethernet source, as compose_arp addresses it.
	requester := frame[6:12]
	reply := make([]byte, 42)
	copy(reply[0:6], requester)
	copy(reply[6:12], d.mac)
	reply[12], reply[13] = 0x08, 0x06
	copy(reply[14:20], []byte{0, 1, 8, 0, 6, 4})
	reply[21] = 2
	copy(reply[22:28], d.mac)
	copy(reply[28:32], tpa[:])
	copy(reply[32:38], requester)
	copy(reply[38:42], frame[28:32])
	d.receive(0, reply)
}

// maxFrameSize is the largest frame Send takes at this MTU: the Ethernet
// header on top, and a VLAN header more for a tagged frame.
func maxFrameSize(mtu int, frame []byte) int {
	n := mtu + packet.EthHeaderLen
	if len(frame) >= 14 && frame[12] == 0x81 && frame[13] == 0x00 {
		n += packet.VLANHeaderLen
	}
	return n
}

// ShowConfig is the configuration dpif/show prints for the device, as
// netdev-dummy's get_config reports it: pstream and stream (the pcap
// files are not reported, as Open vSwitch forgets their names).
func (d *Device) ShowConfig() map[string]string {
	c := map[string]string{}
	if d.cfg.PStream != "" {
		c["pstream"] = d.cfg.PStream
	}
	if d.cfg.Stream != "" {
		c["stream"] = d.cfg.Stream
	}
	if len(c) == 0 {
		return nil
	}
	return c
}

// ConnState is netdev-dummy/conn-state's word for the device: "connected"
// or "disconnected" for options:stream, "unknown" otherwise.
func (d *Device) ConnState() string { return d.streams.state() }

// SetAdminState sets the administrative state (netdev-dummy/set-admin-state).
func (d *Device) SetAdminState(up bool) {
	if d.adminUp.Swap(up) != up && d.reg != nil {
		d.reg.linkChanged(d.cfg.Name)
	}
}

// PollFD implements netdev.Device.
func (d *Device) PollFD(q int) int {
	if q < 0 || q >= len(d.rx) {
		return -1
	}
	return d.rx[q].efd
}

func (d *Device) Name() string          { return d.cfg.Name }
func (d *Device) Type() string          { return d.cfg.Type }
func (d *Device) NumRxQueues() int      { return len(d.rx) }
func (d *Device) NumTxQueues() int      { return d.ntx }
func (d *Device) MAC() net.HardwareAddr { return slices.Clone(d.mac) }
func (d *Device) MTU() int              { return int(d.mtu.Load()) }

func (d *Device) Capabilities() netdev.Capabilities {
	return netdev.Capabilities{MaxFrame: d.MTU() + packet.EthHeaderLen + packet.VLANHeaderLen}
}

// SetMTU accepts any MTU netdev-dummy accepts (it has no upper bound of
// its own; 65535 is the largest frame the datapath's buffers describe).
func (d *Device) SetMTU(mtu int) error {
	if mtu < 68 || mtu > 65535 {
		return fmt.Errorf("%s: invalid MTU %d", d.cfg.Name, mtu)
	}
	d.mtu.Store(int32(mtu))
	return nil
}

// Link: a dummy device has carrier whenever it is administratively up (no
// stream option: nothing to be disconnected from).
func (d *Device) Link() netdev.LinkState {
	up := d.adminUp.Load() && !d.closed.Load()
	return netdev.LinkState{AdminUp: up, CarrierUp: up}
}

func (d *Device) Stats() netdev.Stats {
	s := &d.stats
	return netdev.Stats{
		RxPackets: s.rxPackets.Load(), RxBytes: s.rxBytes.Load(),
		TxPackets: s.txPackets.Load(), TxBytes: s.txBytes.Load(),
		RxKernelDrops: s.rxDrops.Load(), RxErrors: s.rxErrors.Load(), TxErrors: s.txErrors.Load(),
	}
}

// SetSocketBuffers: a dummy device has no sockets; it reports the
// defaults so that userspace-sock-buf-size changes nothing.
func (d *Device) SetSocketBuffers(bytes int) (netdev.SocketBuffers, error) {
	return netdev.SocketBuffers{Requested: bytes}, nil
}

// Status is what Open vSwitch shows for a dummy interface: nothing but
// the driver (netdev-dummy has no get_status).
func (d *Device) Status() map[string]string {
	return map[string]string{}
}

// Options reports the options in effect (for tests and netdev-dummy/*
// diagnostics): n_rxq and the pcap files.
func (d *Device) Options() map[string]string {
	o := map[string]string{"n_rxq": strconv.Itoa(len(d.rx))}
	for k, v := range map[string]string{"pcap": d.cfg.Pcap, "rxq_pcap": d.cfg.RxqPcap, "tx_pcap": d.cfg.TxPcap} {
		if v != "" {
			o[k] = v
		}
	}
	return maps.Clone(o)
}

// Close releases the eventfds and pcap files and forgets the device in its
// registry; frames still queued are dropped.
func (d *Device) Close() error {
	if d.closed.Swap(true) {
		return d.closeErr
	}
	if d.reg != nil {
		d.reg.forget(d)
	}
	d.closeErr = d.release()
	return d.closeErr
}

func (d *Device) release() error {
	serr := d.streams.close()
	for i := range d.rx {
		r := &d.rx[i]
		r.mu.Lock()
		if r.efd >= 0 {
			unix.Close(r.efd)
			r.efd = -1
		}
		r.frames, r.head = nil, 0
		r.mu.Unlock()
	}
	return errors.Join(serr, d.rxPcap.release(), d.txPcap.release())
}

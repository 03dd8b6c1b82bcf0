package afxdp

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"gvs/netdev"
	"gvs/netdev/internal/link"
)

// Device is an "afxdp" port: one AF_XDP socket per queue on a kernel
// interface, fed by an XDP program that redirects every frame to the
// socket of its receive queue. See the package documentation for the
// contract.
type Device struct {
	name      string
	ifindex   int
	cfg       Config
	logger    *slog.Logger
	chunkSize int
	txBatch   uint32
	// maxFrame is the largest frame Send accepts (see setMaxFrame).
	maxFrame atomic.Int64
	// mtu is the device MTU as last read or set: Recv cuts TCP frames to it.
	mtu    atomic.Int64
	driver map[string]string

	// multiBuffer: the sockets were bound with XDP_USE_SG.
	multiBuffer bool

	red   *redirector
	socks []*xsk
	// group is the UMEM the sockets share: Config.UMEM, or a private
	// one (privateReason says why) that Close closes.
	group         *UMEMGroup
	privateReason string

	mu     sync.Mutex // guards closed and final
	closed bool
	final  kernelStats // the sockets' kernel counters when they closed
}

var _ netdev.Device = (*Device)(nil)

// Open attaches the XDP program to cfg.Name and opens cfg.Queues sockets.
// It needs CAP_NET_ADMIN, CAP_BPF (or root) and, beyond the memlock limit,
// CAP_IPC_LOCK. It fails with netdev.ErrNoDevice if the interface is
// missing, and without changing the interface on any other failure.
func Open(cfg Config) (_ *Device, err error) {
	cfg, err = cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	l, err := link.ByName(cfg.Name)
	if err != nil {
		return nil, err
	}
	attrs := l.Attrs()
	deviceQueues := max(attrs.NumRxQueues, 1)
	if cfg.Queues > deviceQueues {
		return nil, fmt.Errorf("%s: n_rxq %d but the device has %d receive queues", cfg.Name, cfg.Queues, deviceQueues)
	}
	d := &Device{
		name:      cfg.Name,
		ifindex:   attrs.Index,
		cfg:       cfg,
		logger:    cfg.Logger,
		chunkSize: chunkSizeFor(attrs.MTU),
		txBatch:   uint32(cfg.TxBatchSize),
		driver:    link.Driver(cfg.Name),
	}
	d.red, err = newRedirector(cfg.Name, deviceQueues, attrs.MTU > fragsMTU)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			d.closeAll()
		}
	}()
	if err = d.red.attach(cfg.Name, d.ifindex, cfg.XDPMode, preferGeneric(cfg.XDPMode, d.driver), d.logger); err != nil {
		return nil, err
	}
	spec := socketSpec{
		ifindex:   d.ifindex,
		ringSize:  cfg.RingSize,
		bindFlags: unix.XDP_COPY | unix.XDP_USE_NEED_WAKEUP | unix.XDP_USE_SG,
	}
	if cfg.XDPMode == ModeNativeZeroCopy {
		spec.bindFlags = unix.XDP_ZEROCOPY | unix.XDP_USE_NEED_WAKEUP | unix.XDP_USE_SG
	}
	if err = d.openSockets(spec); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Name, err)
	}
	for q, s := range d.socks {
		if err = d.red.insert(q, s.fd); err != nil {
			return nil, fmt.Errorf("%s: %w", cfg.Name, err)
		}
	}
	d.setMaxFrame(attrs.MTU)
	if spec.bindFlags&unix.XDP_ZEROCOPY != 0 {
		d.red.mode = string(ModeNativeZeroCopy)
	}
	d.logger.Info("afxdp device open", "device", d.name, "xdp-mode", d.red.mode,
		"queues", cfg.Queues, "chunk", d.chunkSize, "ring", cfg.RingSize, "tx-batch-size", cfg.TxBatchSize,
		"shared-umem", !d.group.private)
	return d, nil
}

// openSockets opens a socket per queue in the shared group when there is
// one and the device fits it, else (or if sharing fails) in a private
// group sized for the device, with the reason logged. The sockets are
// not in the XSKMAP yet, so a failed attempt is closed without a fence.
func (d *Device) openSockets(spec socketSpec) error {
	g, reason := d.cfg.UMEM, ""
	switch {
	case g == nil:
		reason = "no shared UMEM group configured"
	case d.cfg.PrivateUMEM:
		reason = "options:xdp-shared-umem=false"
	case spec.bindFlags&unix.XDP_ZEROCOPY != 0:
		reason = "zero-copy binding uses a private UMEM"
	case uint64(d.chunkSize) > g.chunkSize:
		reason = fmt.Sprintf("MTU needs %d-byte chunks, the shared UMEM has %d", d.chunkSize, g.chunkSize)
	}
	if reason == "" {
		err := d.openSocketsIn(spec, g)
		if err == nil {
			d.group = g
			d.chunkSize = int(g.chunkSize) // perhaps larger than the MTU needs
			return nil
		}
		reason = err.Error()
		d.closeSockets()
		d.socks = nil
	}
	d.privateReason = reason
	pg := newGroup(d.cfg.Queues*2*spec.ringSize, d.chunkSize, d.logger)
	pg.private = true
	d.group = pg
	switch {
	case d.cfg.UMEM != nil && d.cfg.PrivateUMEM:
		d.logger.Info("afxdp: private UMEM as configured", "device", d.name)
	case d.cfg.UMEM != nil:
		d.logger.Warn("afxdp: private UMEM instead of the shared one", "device", d.name, "reason", reason)
	}
	return d.openSocketsIn(spec, pg)
}

// openSocketsIn opens cfg.Queues sockets in g, retrying the group's
// registering socket without XDP_USE_SG where the kernel or driver lacks
// multi-buffer AF_XDP (frames beyond one chunk are then dropped, and
// counted, by the kernel).
func (d *Device) openSocketsIn(spec socketSpec, g *UMEMGroup) error {
	for q := range d.cfg.Queues {
		s, err := openXSK(spec, q, g)
		if err != nil && spec.bindFlags&unix.XDP_USE_SG != 0 && !errors.Is(err, errGroupFull) && !errors.Is(err, errGroupClosed) {
			sgErr := err
			spec.bindFlags &^= unix.XDP_USE_SG
			if s, err = openXSK(spec, q, g); err == nil {
				d.logger.Info("AF_XDP multi-buffer unavailable", "device", d.name, "error", sgErr)
			}
		}
		if err != nil {
			return err
		}
		d.socks = append(d.socks, s)
		d.multiBuffer = s.sg
	}
	return nil
}

// closeSockets closes the sockets (giving their chunks back to the
// group). The slice stays: Stats still sums their counters after Close.
func (d *Device) closeSockets() {
	for _, s := range d.socks {
		s.close()
	}
}

// setMaxFrame records the MTU and the largest frame Send takes: MTU plus
// Ethernet header and one VLAN tag, within one chunk unless the sockets
// do multi-buffer frames.
func (d *Device) setMaxFrame(mtu int) {
	d.mtu.Store(int64(mtu))
	limit := d.chunkSize - rxHeadroom
	if d.multiBuffer {
		limit = maxTxDescs * d.chunkSize
	}
	d.maxFrame.Store(int64(min(limit, mtu+ethVLANOverhead)))
}

func (d *Device) Name() string           { return d.name }
func (d *Device) Type() string           { return "afxdp" }
func (d *Device) NumRxQueues() int       { return len(d.socks) }
func (d *Device) NumTxQueues() int       { return len(d.socks) }
func (d *Device) PollFD(q int) int       { return d.socks[q].fd }
func (d *Device) MAC() net.HardwareAddr  { return link.MAC(d.ifindex) }
func (d *Device) MTU() int               { return link.MTU(d.ifindex) }
func (d *Device) Link() netdev.LinkState { return link.State(d.ifindex) }

// Capabilities: no virtio_net_hdr (AF_XDP carries no metadata), frames up
// to the MTU plus Ethernet header and one VLAN tag.
func (d *Device) Capabilities() netdev.Capabilities {
	return netdev.Capabilities{MaxFrame: int(d.maxFrame.Load()), RecvFlushesTx: true}
}

// SetMTU changes the interface's MTU. With multi-buffer sockets frames
// may span chunks, so any MTU the kernel accepts will do; without, a
// frame of the new MTU must fit one chunk (or the device be reopened).
func (d *Device) SetMTU(mtu int) error {
	if !d.multiBuffer && mtu+ethVLANOverhead > d.chunkSize-rxHeadroom {
		return fmt.Errorf("%s: MTU %d does not fit %d-byte AF_XDP chunks; reopen the port", d.name, mtu, d.chunkSize)
	}
	if err := link.SetMTU(d.ifindex, mtu); err != nil {
		return fmt.Errorf("%s: %w", d.name, err)
	}
	d.setMaxFrame(mtu)
	return nil
}

// SetSocketBuffers reports 0/0: AF_XDP moves frames through its rings and
// UMEM, not socket buffers, so userspace-sock-buf-size does not apply.
func (d *Device) SetSocketBuffers(bytes int) (netdev.SocketBuffers, error) {
	return netdev.SocketBuffers{Requested: bytes}, nil
}

// Status reports the XDP mode in effect and requested, the transmit
// batch and the driver.
func (d *Device) Status() map[string]string {
	st := map[string]string{
		"xdp-mode":           d.red.mode,
		"xdp-mode-requested": string(d.cfg.XDPMode),
		"tx-batch-size":      strconv.Itoa(d.cfg.TxBatchSize),
		"n_rxq":              strconv.Itoa(len(d.socks)),
		"multi-buffer":       strconv.FormatBool(d.multiBuffer),
		"shared-umem":        strconv.FormatBool(!d.group.private),
	}
	if d.privateReason != "" && d.cfg.UMEM != nil {
		st["shared-umem-fallback"] = d.privateReason
	}
	for k, v := range d.driver {
		st[k] = v
	}
	return st
}

// Close detaches the XDP program and closes the sockets. It must not race
// with Recv or Send on the device.
func (d *Device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.final = d.kernelStats()
	d.closed = true
	return d.closeAll()
}

// closeAll detaches the program first, so the kernel stops redirecting
// to the sockets, waits for redirects in flight (rcuFence), then closes
// the sockets, giving their chunks back to the group; a private group is
// closed too (its memory stays mapped until the last loan comes back).
func (d *Device) closeAll() error {
	var errs []error
	if d.red != nil {
		if err := d.red.close(); err != nil {
			errs = append(errs, fmt.Errorf("%s: detach XDP program: %w", d.name, err))
		}
	}
	if len(d.socks) > 0 {
		rcuFence()
	}
	d.closeSockets()
	if d.group != nil && d.group.private {
		d.group.Close()
	}
	return errors.Join(errs...)
}

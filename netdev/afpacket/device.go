package afpacket

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"gvs/netdev"
	"gvs/netdev/internal/link"
	"gvs/netdev/internal/rawsock"
)

// Device is a "system" port: an existing kernel interface served by one
// AF_PACKET socket per queue.
type Device struct {
	name       string
	ifindex    int
	log        *slog.Logger
	queues     []*queue
	link.Attrs // MAC, MTU, SetMTU, Link; the MTU cached for Send
	rxMode     string
	// driver is the device's ethtool driver information for Status,
	// read once at Open: it does not change while the device exists.
	driver map[string]string
	cfg    Config // with defaults; for ring (re)sizing
	// sockBufAsk is userspace-sock-buf-size as the rings follow it
	// (clamped; 0: unset), set by SetSocketBuffers, read by adapt.
	sockBufAsk atomic.Int64
	epoch      time.Time // adapt's clock
	// fanout: the queues' sockets are in fanout group fanoutID (more
	// than one queue); a resized queue's new socket joins it too.
	fanout   bool
	fanoutID uint16
	prepWG   sync.WaitGroup // resize preparations in flight
	// fanoutBusy: one queue is between its old socket's release and
	// its new socket's joining the group.
	fanoutBusy atomic.Bool

	mu     sync.Mutex // guards bufReq, closed and dropsReadAt
	bufReq int
	closed bool
	// dropsReadAt is when Stats last read PACKET_STATISTICS (StatsWithin).
	dropsReadAt time.Time
}

// queue is one socket: its receive ring, transmit state and counters.
type queue struct {
	fd    int
	mode  string
	mem   []byte    // the mmap'd receive ring, if any
	ring  rxRing    // RxRing mode
	ring2 rxRingV2  // RxRingV2 mode
	shape ringShape // the ring's geometry (polling goroutine)
	mm    *mmsgRx   // RxRecvmmsg mode
	tx    txQueue
	ctr   counters
	// kdrops are the kernel's drops (and frames a ring resize dropped).
	kdrops kernelDrops
	idle   int // empty ring reads in a row (Recv's goroutine only)
	ad     adaptState
	// prep is the new socket a resize prepares (resize.go), set by the
	// preparing goroutine; preparing is true from its start to the
	// handover (polling goroutine).
	prep      atomic.Pointer[preparedRing]
	preparing bool
	// joinPending: a fanout queue's new socket waits for the old one's
	// release (oldReleased, set by the unmapping goroutine) to bind and
	// join the group (resize.go).
	joinPending bool
	oldReleased atomic.Bool

	inEffect  atomic.Int64 // shape of the ring in effect (ringShape.pack), for Status
	wantShape atomic.Int64 // shape adapt asked for (ringShape.pack; 0: none)
	resizes   atomic.Uint64
}

var (
	_ netdev.Device        = (*Device)(nil)
	_ netdev.RxRingMemory  = (*Device)(nil)
	_ netdev.PollFDRenewer = (*Device)(nil)
	_ netdev.Housekeeper   = (*Device)(nil)
	_ netdev.MTUFollower   = (*Device)(nil)
	_ netdev.SharedStats   = (*Device)(nil)
)

// PollFDGeneration counts the sockets queue q's descriptor has referred
// to beyond the first: a handover (resize.go) puts a new one behind the
// same number.
func (d *Device) PollFDGeneration(q int) uint64 { return d.queues[q].resizes.Load() }

// Open binds AF_PACKET sockets to the existing interface cfg.Name. A
// missing interface yields an error wrapping netdev.ErrNoDevice.
func Open(cfg Config) (*Device, error) {
	cfg = cfg.withDefaults()
	l, err := link.ByName(cfg.Name)
	if err != nil {
		return nil, err
	}
	if cfg.RxMode != RxRing && cfg.RxMode != RxRingV2 && cfg.RxMode != RxRecvmmsg {
		return nil, fmt.Errorf("%s: unknown receive mode %q", cfg.Name, cfg.RxMode)
	}
	cfg.mtu = l.Attrs().MTU
	d := &Device{name: cfg.Name, ifindex: l.Attrs().Index, log: cfg.Logger, rxMode: cfg.RxMode, cfg: cfg, epoch: time.Now()}
	sockBuf := 0
	if cfg.SocketBuffer != 0 {
		sockBuf = netdev.ClampSocketBuffer(cfg.SocketBuffer)
	}
	// Every ring opens at the minimum; a sock-buf size grows it on the
	// first Recv, as far as the budget allows.
	shape := cfg.initialShape(sockBuf)
	d.Init(d.name, d.ifindex, l.Attrs().MTU)
	d.driver = link.Driver(d.name)
	fanoutID := uint16(os.Getpid()) ^ uint16(d.ifindex)<<8 ^ uint16(d.ifindex)
	for i := range cfg.RxQueues {
		fd, mem, spare, err := openQueueSocket(d.ifindex, cfg, shape)
		if err == nil && cfg.RxQueues > 1 {
			if i == 0 {
				fanoutID, err = newFanout(fd, fanoutID)
			} else {
				err = joinFanout(fd, fanoutID)
			}
			if err != nil {
				closeSocket(fd, mem)
			}
		}
		if err != nil {
			d.Close()
			return nil, fmt.Errorf("%s: queue %d: %w", cfg.Name, i, err)
		}
		qu := &queue{fd: fd, mode: cfg.RxMode, tx: newTxQueue()}
		if cfg.RxMode == RxRecvmmsg {
			qu.mm = newMmsgRx()
		} else {
			qu.setRing(mem, shape, cfg)
			if spare {
				cfg.Budget.Adopt()
			} else {
				cfg.Budget.Join(int64(shape.bytes()))
			}
			qu.ad.reserved = shape.bytes()
			// ad.ask stays 0: a sock-buf size grows the ring on the
			// first Recv, as when it is set at run time.
			qu.ad.lastActive = int64(time.Since(d.epoch))
		}
		d.queues = append(d.queues, qu)
	}
	d.fanout, d.fanoutID = cfg.RxQueues > 1, fanoutID
	if cfg.SocketBuffer != 0 {
		if _, err := d.SetSocketBuffers(cfg.SocketBuffer); err != nil {
			d.Close()
			return nil, err
		}
	}
	return d, nil
}

// RxRingBytes is the memory of the receive rings in effect (0 with
// recvmmsg), for memory/show and metrics (netdev.RxRingMemory).
func (d *Device) RxRingBytes() int64 {
	var n int64
	for _, q := range d.queues {
		if q.mode != RxRecvmmsg {
			n += int64(unpackShape(q.inEffect.Load()).bytes())
		}
	}
	return n
}

func (d *Device) Name() string     { return d.name }
func (d *Device) Type() string     { return "system" }
func (d *Device) NumRxQueues() int { return len(d.queues) }
func (d *Device) NumTxQueues() int { return len(d.queues) }

// PollFD is queue q's socket: readable once a ring block is handed over
// (or, with RxRecvmmsg, once a frame is queued).
func (d *Device) PollFD(q int) int { return d.queues[q].fd }

func (d *Device) Capabilities() netdev.Capabilities {
	return netdev.Capabilities{VnetHdr: true, MaxFrame: maxGSOFrame, RecvSyscall: d.rxMode == RxRecvmmsg}
}

// SetSocketBuffers applies userspace-sock-buf-size to every open socket at
// once (0 leaves them as they are) and reports what took effect: the send
// buffer bounds how much sendmmsg can queue, the receive buffer what
// recvmmsg can absorb. A ring does not use the receive buffer, so in the
// ring modes the size also sizes the ring (adapt.go): it grows straight
// to that size (at most MaxRingSize, within the budget) on the queue's
// next Recv, and its slots follow (see V2GSOFrameSize); the new ring
// takes over once the old one is drained (resize.go). Status shows the
// size in effect and any pending one.
func (d *Device) SetSocketBuffers(bytes int) (netdev.SocketBuffers, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return netdev.SocketBuffers{}, fmt.Errorf("%s: %w", d.name, net.ErrClosed)
	}
	if bytes != 0 {
		bytes = netdev.ClampSocketBuffer(bytes)
	}
	d.bufReq = bytes
	d.sockBufAsk.Store(int64(bytes))
	var eff rawsock.Buffers
	for _, q := range d.queues {
		var err error
		if bytes == 0 {
			eff, err = rawsock.GetBuffers(q.fd)
		} else {
			eff, err = rawsock.SetBuffers(q.fd, bytes, d.log, d.name)
		}
		if err != nil {
			return netdev.SocketBuffers{}, fmt.Errorf("%s: socket buffers: %w", d.name, err)
		}
	}
	return netdev.SocketBuffers{Requested: bytes, Receive: eff.Receive, Send: eff.Send}, nil
}

// Status is what Open vSwitch shows in Interface.status for such a port,
// plus how this one moves packets.
func (d *Device) Status() map[string]string {
	st := maps.Clone(d.driver)
	st["rx_ring"] = d.rxMode
	st["tx"] = "sendmmsg"
	st["rx_queues"] = strconv.Itoa(len(d.queues))
	d.ringStatus(st)
	d.mu.Lock()
	if d.bufReq != 0 {
		st["socket_buf_requested"] = strconv.Itoa(d.bufReq)
	}
	d.mu.Unlock()
	if b, err := rawsock.GetBuffers(d.queues[0].fd); err == nil {
		st["socket_rcvbuf"] = strconv.Itoa(b.Receive)
		st["socket_sndbuf"] = strconv.Itoa(b.Send)
	}
	return st
}

// Close closes every socket and unmaps its ring. The datapath must have
// stopped polling and sending on the device.
func (d *Device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	d.prepWG.Wait()
	var errs []error
	for _, q := range d.queues {
		q.dropPrepared()
		q.kdrops.collect(q.fd)
		if q.mode != RxRecvmmsg {
			d.cfg.Budget.Leave(int64(q.ad.reserved))
			q.ad.reserved = 0
		}
		if q.ring2.loans != nil {
			// Unmapped and closed now, or by the last Return.
			q.ring2.loans.release(q.fd)
			q.mem, q.ring2.mem = nil, nil
			continue
		}
		if q.mem != nil {
			if err := unix.Munmap(q.mem); err != nil {
				errs = append(errs, err)
			}
		}
		q.mem, q.ring.mem, q.ring2.mem = nil, nil, nil
		if err := unix.Close(q.fd); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

package netdevtest

import (
	"fmt"
	"net"

	"golang.org/x/sys/unix"

	"gvs/netdev"
	"gvs/packet"
)

// Recv implements netdev.Device: it moves up to the batch's free room of
// queued frames into buffers from pool.
func (d *Device) Recv(q int, batch *packet.Batch, pool *packet.Pool) (int, error) {
	d.recvCalls.Add(1)
	if q < 0 || q >= len(d.rx) {
		return 0, fmt.Errorf("netdevtest: %s: no receive queue %d", d.cfg.Name, q)
	}
	if d.closed.Load() {
		d.violations.Add(1)
		return 0, errClosed
	}
	r := &d.rx[q]
	if r.busy.Swap(true) {
		d.violations.Add(1)
	}
	defer r.busy.Store(false)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.renew.Swap(false) {
		if err := r.renewFD(); err != nil {
			return 0, err
		}
	}
	n := 0
	for !batch.Full() {
		var e rxEntry
		switch {
		case r.head < len(r.frames):
			e = r.frames[r.head]
		case len(r.loop) > 0:
			e = r.loop[r.loopNext]
		default:
			if r.signalled {
				unix.Read(r.efd, r.drain[:])
				r.signalled = false
			}
			return n, nil
		}
		b := pool.Get()
		if b == nil {
			break // the pool counted it; the frame waits
		}
		if r.head < len(r.frames) {
			r.frames[r.head] = rxEntry{}
			r.head++
		} else {
			r.loopNext = (r.loopNext + 1) % len(r.loop)
		}
		if len(e.data) > len(b.Room()) {
			pool.Put(b)
			d.stats.rxErrors.Add(1)
			continue
		}
		b.SetLen(copy(b.Room(), e.data))
		b.StrippedVLAN = e.tag
		batch.Append(b)
		d.stats.rxPackets.Add(1)
		d.stats.rxBytes.Add(uint64(len(e.data)))
		n++
	}
	return n, nil
}

// Send implements netdev.Device: it captures the frames (unless Discard)
// and returns every buffer to its pool.
func (d *Device) Send(q int, batch *packet.Batch) error {
	var err error
	if q < 0 || q >= len(d.tx) {
		err = fmt.Errorf("netdevtest: %s: no transmit queue %d", d.cfg.Name, q)
		q = 0
	}
	t := &d.tx[q]
	if t.busy.Swap(true) {
		d.violations.Add(1)
	}
	defer t.busy.Store(false)
	if d.closed.Load() {
		d.violations.Add(1)
		if err == nil {
			err = errClosed
		}
	}
	for _, b := range batch.Buffers() {
		if err == nil {
			d.stats.txPackets.Add(1)
			d.stats.txBytes.Add(uint64(b.Len()))
			if !d.cfg.Discard {
				f := Frame{Queue: q, Data: append([]byte(nil), b.Data()...), Meta: b.Meta}
				d.mu.Lock()
				d.sent = append(d.sent, f)
				d.mu.Unlock()
			}
		} else {
			d.stats.txErrors.Add(1)
		}
		b.Free()
	}
	batch.Reset()
	return err
}

// RenewPollFDOnNextRecv makes the next Recv on queue q replace the file
// behind PollFD(q) with a new one under the same number and count it in
// PollFDGeneration, as an afpacket ring resize does.
func (d *Device) RenewPollFDOnNextRecv(q int) { d.rx[q].renew.Store(true) }

// PollFDGeneration implements netdev.PollFDRenewer.
func (d *Device) PollFDGeneration(q int) uint64 { return d.rx[q].gen.Load() }

// renewFD puts a new eventfd, readable if frames wait, under r.efd's
// number (the old one closes: its epoll registrations go with it).
func (r *rxQueue) renewFD() error {
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return fmt.Errorf("netdevtest: eventfd: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.Dup3(fd, r.efd, unix.O_CLOEXEC); err != nil {
		return fmt.Errorf("netdevtest: dup3: %w", err)
	}
	r.signalled = false
	if r.head < len(r.frames) || len(r.loop) > 0 {
		one := [8]byte{1}
		unix.Write(r.efd, one[:])
		r.signalled = true
	}
	r.gen.Add(1)
	return nil
}

// Housekeep implements netdev.Housekeeper: it only counts the calls.
func (d *Device) Housekeep(q int) { d.housekeeps.Add(1) }

// HousekeepCalls returns how many times Housekeep was called.
func (d *Device) HousekeepCalls() uint64 { return d.housekeeps.Load() }

// PollFD implements netdev.Device: an eventfd readable while queue q has
// frames.
func (d *Device) PollFD(q int) int {
	if q < 0 || q >= len(d.rx) {
		return -1
	}
	return d.rx[q].efd
}

func (d *Device) Name() string                      { return d.cfg.Name }
func (d *Device) Type() string                      { return d.cfg.Type }
func (d *Device) NumRxQueues() int                  { return len(d.rx) }
func (d *Device) NumTxQueues() int                  { return len(d.tx) }
func (d *Device) Capabilities() netdev.Capabilities { return d.cfg.Caps }
func (d *Device) MAC() net.HardwareAddr             { return d.cfg.MAC }

func (d *Device) MTU() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.mtu
}

func (d *Device) SetMTU(mtu int) error {
	if mtu < 68 || mtu > 65535 {
		return fmt.Errorf("netdevtest: invalid MTU %d", mtu)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.mtu = mtu
	return nil
}

func (d *Device) Link() netdev.LinkState {
	up := !d.closed.Load()
	return netdev.LinkState{AdminUp: up, CarrierUp: up, SpeedMbps: 10000}
}

func (d *Device) Stats() netdev.Stats {
	s := &d.stats
	return netdev.Stats{
		RxPackets: s.rxPackets.Load(), RxBytes: s.rxBytes.Load(),
		TxPackets: s.txPackets.Load(), TxBytes: s.txBytes.Load(),
		RxKernelDrops: s.rxDrops.Load(), RxErrors: s.rxErrors.Load(), TxErrors: s.txErrors.Load(),
	}
}

func (d *Device) SetSocketBuffers(bytes int) (netdev.SocketBuffers, error) {
	if bytes == 0 {
		return netdev.SocketBuffers{Receive: netdev.MinSocketBuffer, Send: netdev.MinSocketBuffer}, nil
	}
	n := netdev.ClampSocketBuffer(bytes)
	return netdev.SocketBuffers{Requested: bytes, Receive: 2 * n, Send: 2 * n}, nil
}

func (d *Device) Status() map[string]string {
	return map[string]string{"driver_name": "netdevtest"}
}

// Closed reports whether Close was called.
func (d *Device) Closed() bool { return d.closed.Load() }

// Close releases the eventfds; later Recv and Send fail (Send still frees
// the buffers).
func (d *Device) Close() error {
	if d.closed.Swap(true) {
		return nil
	}
	for i := range d.rx {
		r := &d.rx[i]
		r.mu.Lock()
		if r.efd > 0 {
			unix.Close(r.efd)
			r.efd = -1
		}
		r.mu.Unlock()
	}
	return nil
}

package tap

import (
	"fmt"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"gvs/packet"
)

// maxGSOFrame is the largest frame Send writes with a GSO virtio_net_hdr.
const maxGSOFrame = 65535 + packet.EthHeaderLen + 2*packet.VLANHeaderLen

type counters struct {
	rxPackets, rxBytes, rxErrors atomic.Uint64
	txPackets, txBytes           atomic.Uint64
	txDrops, txErrors            atomic.Uint64
}

// Recv reads frames, one read(2) each, straight into buffers from pool
// (the kernel's copy is the only one) until the batch is full or nothing
// is left. It never blocks.
func (d *Device) Recv(q int, batch *packet.Batch, pool *packet.Pool) (int, error) {
	added, bytes, bad := 0, 0, 0
	var err error
	for !batch.Full() {
		buf := pool.Get()
		if buf == nil {
			break
		}
		n, e := unix.Read(d.fd, buf.Room())
		if e == unix.EINTR {
			pool.Put(buf)
			continue
		}
		if e == nil && n < packet.VnetHdrLen+packet.EthHeaderLen {
			pool.Put(buf) // a runt: drop it, read on
			bad++
			continue
		}
		if e != nil {
			pool.Put(buf)
			if e == unix.EAGAIN {
				break
			}
			bad++
			if e == unix.EBADF || e == unix.EBADFD {
				err = fmt.Errorf("%s: read: %w", d.name, e)
			}
			break
		}
		buf.SetLen(n)
		buf.PullVnetHdr()
		batch.Append(buf)
		added++
		bytes += buf.Len()
	}
	if added > 0 {
		d.ctr.rxPackets.Add(uint64(added))
		d.ctr.rxBytes.Add(uint64(bytes))
	}
	if bad > 0 {
		d.ctr.rxErrors.Add(uint64(bad))
	}
	return added, err
}

// Send writes each frame behind its virtio_net_hdr (built in the
// buffer's headroom) with one write(2), then frees every buffer. Frames
// too large for the MTU without GSO are dropped and counted in TxDrops;
// frames the kernel refuses count in TxErrors. Only a dead descriptor
// returns an error.
func (d *Device) Send(q int, batch *packet.Batch) error {
	limit := d.CachedMTU() + packet.EthHeaderLen + packet.VLANHeaderLen
	sent, bytes, drops, errs := 0, 0, 0, 0
	var err error
	for _, b := range batch.Buffers() {
		max := limit
		if b.HasVnet && b.Vnet.IsGSO() {
			max = maxGSOFrame
		}
		n := b.Len()
		if n > max || n < packet.EthHeaderLen || err != nil {
			drops++
			continue
		}
		if !b.HasVnet {
			b.Vnet = packet.VnetHdr{}
		}
		if !b.PushVnetHdr() {
			drops++
			continue
		}
		switch _, e := unix.Write(d.fd, b.Data()); e {
		case nil:
			sent++
			bytes += n
		case unix.EAGAIN, unix.ENOBUFS:
			drops++
		case unix.EBADF, unix.EBADFD:
			err = fmt.Errorf("%s: write: %w", d.name, e)
			drops++
		default: // EIO (device down), EINVAL (bad virtio_net_hdr)...
			errs++
		}
	}
	packet.FreeBatch(batch)
	d.ctr.txPackets.Add(uint64(sent))
	d.ctr.txBytes.Add(uint64(bytes))
	if drops > 0 {
		d.ctr.txDrops.Add(uint64(drops))
	}
	if errs > 0 {
		d.ctr.txErrors.Add(uint64(errs))
	}
	return err
}

package afpacket

import (
	"fmt"

	"golang.org/x/sys/unix"

	"gvs/netdev/internal/rawsock"
	"gvs/packet"
)

// maxGSOFrame is the largest frame Send accepts with a GSO virtio_net_hdr:
// a 64 KiB IP packet behind an Ethernet header and two VLAN tags.
const maxGSOFrame = 65535 + packet.EthHeaderLen + 2*packet.VLANHeaderLen

// txQueue is one queue's reusable sendmmsg state; the caller serialises
// Send per queue, so nothing here locks.
type txQueue struct {
	msgs *rawsock.MsgBatch
	hdrs [packet.BatchSize][packet.VnetHdrLen]byte
}

func newTxQueue() txQueue { return txQueue{msgs: rawsock.NewMsgBatch(packet.BatchSize)} }

// Send transmits the batch on queue q with one sendmmsg call per batch
// (more only after a failing frame), without blocking, and frees every
// buffer. A frame too large for the MTU without GSO, or one the socket
// cannot take now (buffer full), is dropped and counted in TxDrops; other
// per-frame failures count in TxErrors. Only a dead socket returns an
// error.
func (d *Device) Send(q int, batch *packet.Batch) error {
	qu := d.queues[q]
	tx := &qu.tx
	limit := d.CachedMTU() + packet.EthHeaderLen + packet.VLANHeaderLen
	drops := 0
	for _, b := range batch.Buffers() {
		max := limit
		if b.HasVnet && b.Vnet.IsGSO() {
			max = maxGSOFrame
		}
		if b.Len() > max || b.Len() < packet.EthHeaderLen {
			drops++
			continue
		}
		h := tx.hdrs[tx.msgs.Len()][:]
		if b.HasVnet {
			b.Vnet.Encode(h)
		} else {
			clear(h)
		}
		tx.msgs.Add(h, b.Data())
	}
	sent, bytes, errs, err := d.flush(qu)
	drops += tx.msgs.Len() - sent - errs
	tx.msgs.Reset()
	for _, b := range batch.Buffers() {
		b.Free()
	}
	batch.Reset()
	qu.ctr.txPackets.Add(uint64(sent))
	qu.ctr.txBytes.Add(uint64(bytes))
	if drops > 0 {
		qu.ctr.txDrops.Add(uint64(drops))
	}
	if errs > 0 {
		qu.ctr.txErrors.Add(uint64(errs))
	}
	return err
}

// flush sends the queued messages. It skips a frame the kernel refuses
// and carries on with the rest; it stops at a full socket buffer (the rest
// are dropped: the datapath never waits for a port).
func (d *Device) flush(qu *queue) (sent, bytes, errs int, err error) {
	msgs := qu.tx.msgs
	downSeen := false
	for i := 0; i < msgs.Len(); {
		n, e := msgs.Send(qu.fd, i, unix.MSG_DONTWAIT)
		switch e {
		case 0:
			for j := i; j < i+n; j++ {
				bytes += msgs.Bytes(j) - packet.VnetHdrLen
			}
			sent += n
			i += n
		case unix.EINTR:
		case unix.EAGAIN, unix.ENOBUFS:
			return sent, bytes, errs, nil
		case unix.ENETDOWN:
			// Either the link is down (no frame of this batch can
			// go) or it went down and up since the last call and
			// this is the socket's pending error, now cleared.
			if downSeen {
				return sent, bytes, errs + msgs.Len() - i, nil
			}
			downSeen = true
		case unix.EBADF, unix.ENOTSOCK, unix.ENXIO, unix.ENODEV:
			return sent, bytes, errs, fmt.Errorf("%s: sendmmsg: %w", d.name, e)
		default: // EMSGSIZE, EINVAL...: this frame only
			errs++
			i++
		}
	}
	return sent, bytes, errs, nil
}

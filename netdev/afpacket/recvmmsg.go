package afpacket

import (
	"golang.org/x/sys/unix"

	"gvs/netdev/internal/rawsock"
	"gvs/packet"
)

// mmsgRx is one queue's reusable recvmmsg state (RxRecvmmsg mode).
type mmsgRx struct {
	msgs *rawsock.RecvBatch
	bufs [packet.BatchSize]*packet.Buffer
}

func newMmsgRx() *mmsgRx { return &mmsgRx{msgs: rawsock.NewRecvBatch(packet.BatchSize)} }

// recvMmsg receives up to the batch's free room with one recvmmsg call,
// straight into buffers from pool: the virtio_net_hdr comes first in
// each, the VLAN tag the kernel stripped in PACKET_AUXDATA.
func (d *Device) recvMmsg(qu *queue, batch *packet.Batch, pool *packet.Pool) (int, error) {
	m := qu.mm
	want := packet.BatchSize - batch.Len()
	for i := range want {
		b := pool.Get()
		if b == nil {
			want = i
			break
		}
		m.bufs[i] = b
		m.msgs.Set(i, b.Room())
	}
	if want == 0 {
		return 0, nil
	}
	n, e := m.msgs.Recv(qu.fd, want, unix.MSG_DONTWAIT)
	added, bytes, bad := 0, 0, 0
	for i := range want {
		b := m.bufs[i]
		m.bufs[i] = nil
		if i >= n {
			pool.Put(b)
			continue
		}
		b.SetLen(m.msgs.Len(i))
		if m.msgs.Truncated(i) || !b.PullVnetHdr() || !restoreAux(b, m.msgs.Control(i)) {
			bad++
			pool.Put(b)
			continue
		}
		batch.Append(b)
		added++
		bytes += b.Len()
	}
	m.msgs.Clear(want)
	if added > 0 {
		qu.ctr.rxPackets.Add(uint64(added))
		qu.ctr.rxBytes.Add(uint64(bytes))
	}
	if bad > 0 {
		qu.ctr.rxErrors.Add(uint64(bad))
	}
	if e == unix.EBADF || e == unix.ENOTSOCK {
		return added, e
	}
	return added, nil
}

// restoreAux puts back the VLAN tag PACKET_AUXDATA reports stripped.
func restoreAux(b *packet.Buffer, ctrl []byte) bool {
	status, tci, tpid, ok := rawsock.Aux(ctrl)
	if !ok || status&unix.TP_STATUS_VLAN_VALID == 0 {
		return true
	}
	if status&unix.TP_STATUS_VLAN_TPID_VALID == 0 {
		tpid = packet.EtherTypeVLAN
	}
	b.StrippedVLAN = packet.VLANTag{TPID: tpid, TCI: tci}
	return b.RestoreVLAN()
}

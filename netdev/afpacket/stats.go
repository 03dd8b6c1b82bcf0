package afpacket

import (
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"gvs/netdev"
)

// counters are one queue's statistics. The polling and sending goroutines
// add to them once per batch; Stats reads them from anywhere.
type counters struct {
	rxPackets, rxBytes, rxErrors atomic.Uint64
	txPackets, txBytes           atomic.Uint64
	txDrops, txErrors            atomic.Uint64
	_                            [64]byte // keep queues' counters off each other's cache lines
}

// kernelDrops accumulates PACKET_STATISTICS, which the kernel resets on
// every read: drops since the device opened are the sum of all reads.
// Atomic, so that the polling goroutine can watch it for pressure
// (adapt.go) without a lock.
type kernelDrops struct {
	drops atomic.Uint64
}

// collect reads and accumulates the socket's drop counter. It is called
// when a block arrives marked TP_STATUS_LOSING, from Stats and on Close.
func (k *kernelDrops) collect(fd int) {
	// getsockopt on a stack value: unix.GetsockoptTpacketStatsV3
	// returns a pointer, an allocation on the receive path.
	var st unix.TpacketStatsV3
	n := uint32(unsafe.Sizeof(st))
	_, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(fd), unix.SOL_PACKET, unix.PACKET_STATISTICS,
		uintptr(unsafe.Pointer(&st)), uintptr(unsafe.Pointer(&n)), 0)
	if e == 0 && st.Drops > 0 {
		k.drops.Add(uint64(st.Drops))
	}
}

func (k *kernelDrops) total() uint64 { return k.drops.Load() }

// Stats sums the queues' counters and the kernel's drop counts, reading
// (and so resetting) PACKET_STATISTICS: one getsockopt per queue, no
// netlink query (Send's MTU follows the link events: netdev.MTUFollower).
func (d *Device) Stats() netdev.Stats { return d.stats(0) }

// StatsWithin is Stats with the kernel's drop counters as last read when
// that read is younger than maxAge (netdev.SharedStats): the software
// counters are always current.
func (d *Device) StatsWithin(maxAge time.Duration) netdev.Stats { return d.stats(maxAge) }

func (d *Device) stats(maxAge time.Duration) netdev.Stats {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := time.Now()
	read := !d.closed && (maxAge <= 0 || now.Sub(d.dropsReadAt) >= maxAge)
	if read {
		d.dropsReadAt = now
	}
	var s netdev.Stats
	for _, q := range d.queues {
		if read {
			q.kdrops.collect(q.fd)
		}
		s.RxPackets += q.ctr.rxPackets.Load()
		s.RxBytes += q.ctr.rxBytes.Load()
		s.RxErrors += q.ctr.rxErrors.Load()
		s.TxPackets += q.ctr.txPackets.Load()
		s.TxBytes += q.ctr.txBytes.Load()
		s.TxDrops += q.ctr.txDrops.Load()
		s.TxErrors += q.ctr.txErrors.Load()
		s.RxKernelDrops += q.kdrops.total()
	}
	return s
}

package afxdp

import (
	"strconv"

	"gvs/netdev"
)

// kernelStats sums XDP_STATISTICS over a device's sockets.
type kernelStats struct {
	// rxDropped: frames the kernel could not place (no fill ring chunk,
	// frame larger than a chunk); fill-ring-empty events are a subset of
	// these in copy mode, so they are not added again.
	rxDropped uint64
	// rxRingFull: frames dropped because the rx ring was full (Recv too
	// slow).
	rxRingFull uint64
	// rxFillEmpty: how often the kernel found the fill ring empty.
	rxFillEmpty uint64
	// rxInvalid, txInvalid: descriptors the kernel rejected.
	rxInvalid, txInvalid uint64
	// txRingEmpty counts the kernel finding the tx ring empty, which is
	// how every transmit call ends: not a drop, so reported nowhere.
	txRingEmpty uint64
}

// kernelStats reads the kernel counters of open sockets, or returns the
// snapshot taken by Close. Call with d.mu held or from Close.
func (d *Device) kernelStats() kernelStats {
	if d.closed {
		return d.final
	}
	var k kernelStats
	for _, s := range d.socks {
		if s.fd < 0 {
			continue
		}
		st, err := s.statistics()
		if err != nil {
			continue
		}
		k.rxDropped += st.Rx_dropped
		k.rxRingFull += st.Rx_ring_full
		k.rxFillEmpty += st.Rx_fill_ring_empty_descs
		k.rxInvalid += st.Rx_invalid_descs
		k.txInvalid += st.Tx_invalid_descs
		k.txRingEmpty += st.Tx_ring_empty_descs
	}
	return k
}

// Stats returns the device's counters: software counters kept by Recv
// and Send plus the kernel's per-socket drop counters.
func (d *Device) Stats() netdev.Stats {
	d.mu.Lock()
	k := d.kernelStats()
	d.mu.Unlock()
	var st netdev.Stats
	for _, s := range d.socks {
		c := &s.counters
		st.RxPackets += c.rxPackets.Load()
		st.RxBytes += c.rxBytes.Load()
		st.RxErrors += c.rxErrors.Load()
		st.TxPackets += c.txPackets.Load()
		st.TxBytes += c.txBytes.Load()
		st.TxDrops += c.txDrops.Load()
		st.TxErrors += c.txKickErrors.Load()
	}
	st.RxKernelDrops = k.rxDropped + k.rxRingFull
	if d.red.mode == string(ModeNativeZeroCopy) {
		// A zero-copy driver with an empty fill ring drops in hardware,
		// which rx_dropped does not see.
		st.RxKernelDrops += k.rxFillEmpty
	}
	st.RxErrors += k.rxInvalid
	st.TxErrors += k.txInvalid
	return st
}

// ChecksumsFixed returns how many received frames had a partial TCP or
// UDP checksum that Recv completed.
func (d *Device) ChecksumsFixed() uint64 {
	var n uint64
	for _, s := range d.socks {
		n += s.counters.csumFixed.Load()
	}
	return n
}

// CustomStats returns counters beyond netdev.Stats: the kernel's
// XDP_STATISTICS summed over the queues (xsk_rx_dropped, ...), the
// per-queue ones under Open vSwitch's names for its afxdp custom
// statistics (xsk_queue_N_rx_dropped, _rx_invalid_descs,
// _tx_invalid_descs; while the device is open), and what Recv and Send
// did besides moving frames: rx_lent (frames delivered in their chunk),
// tx_zero_copy (frames sent from the chunk a member received them in)
// and tx_copied, and the UMEM's state (umem_shared, umem_chunks,
// umem_chunks_free, umem_members: sockets in it, umem_chunks_lost). Safe
// from any goroutine; it allocates.
func (d *Device) CustomStats() map[string]uint64 {
	d.mu.Lock()
	k := d.kernelStats()
	d.mu.Unlock()
	out := map[string]uint64{
		"xsk_rx_dropped":               k.rxDropped,
		"xsk_rx_invalid_descs":         k.rxInvalid,
		"xsk_tx_invalid_descs":         k.txInvalid,
		"xsk_rx_ring_full":             k.rxRingFull,
		"xsk_rx_fill_ring_empty_descs": k.rxFillEmpty,
		"xsk_tx_ring_empty_descs":      k.txRingEmpty,
	}
	d.mu.Lock()
	if !d.closed {
		// Open vSwitch's own names for its afxdp custom statistics:
		// per queue, the three XDP_STATISTICS drop counters.
		for _, s := range d.socks {
			if st, err := s.statistics(); err == nil && s.fd >= 0 {
				q := "xsk_queue_" + strconv.Itoa(s.queue) + "_"
				out[q+"rx_dropped"] = st.Rx_dropped
				out[q+"rx_invalid_descs"] = st.Rx_invalid_descs
				out[q+"tx_invalid_descs"] = st.Tx_invalid_descs
			}
		}
	}
	d.mu.Unlock()
	for _, s := range d.socks {
		c := &s.counters
		out["rx_csum_completed"] += c.csumFixed.Load()
		out["rx_tso_frames_cut"] += c.rxSegmented.Load()
		out["tx_kicks"] += c.txKicks.Load()
		out["rx_lent"] += c.rxLent.Load()
		out["tx_zero_copy"] += c.txZeroCopy.Load()
		out["tx_copied"] += c.txCopied.Load()
	}
	// The UMEM, shared or private: umem_shared is 1 when the sockets
	// share the group's UMEM with whatever else joined it.
	gs := d.group.Stats()
	out["umem_shared"] = 0
	if !d.group.private {
		out["umem_shared"] = 1
	}
	out["umem_chunks"] = uint64(gs.Chunks)
	out["umem_chunks_free"] = uint64(gs.Free)
	out["umem_members"] = uint64(gs.Members)
	out["umem_chunks_lost"] = gs.Lost
	return out
}

package dpif

import (
	"fmt"
	"sync/atomic"
)

// PortStats are the datapath's own counters for one port: what happened
// to its packets inside the datapath, as opposed to the device's counters
// (netdev.Stats: kernel, ring and socket drops). Together they tell an
// operator where a packet was lost.
//
// Counters named Rx... are charged to the port a packet arrived on,
// Tx... to the port it was output to; TxNoPort is charged to the input
// port, since the output port no longer exists.
type PortStats struct {
	// RxNoBuffer: receive calls on this port found the PMD's buffer pool
	// empty (pool exhaustion; the device dropped or kept the packet).
	RxNoBuffer uint64
	// RxDrops: received packets dropped before classification (a VLAN
	// tag the device stripped could not be put back).
	RxDrops uint64
	// LostUpcalls: packets from this port that missed every flow and
	// found no upcall handler, or a full slow-path queue.
	LostUpcalls uint64
	// TxNoPort: outputs of packets from this port to a port that does
	// not exist (any more). With TxNoBuffer and TxOffloadDrops, summed
	// over ports, it makes up PMDStats.TxDrops.
	TxNoPort uint64
	// TxNoBuffer: copies (one packet to several ports) and GSO segments
	// for this port that found the pool empty.
	TxNoBuffer uint64
	// TxOffloadDrops: frames for this port, which takes no
	// virtio_net_hdr, dropped because their GSO request or partial
	// checksum could not be resolved in software (malformed or an
	// unsupported GSO type).
	TxOffloadDrops uint64
	// TxSegmented: GSO frames cut into segments in software for this
	// port; TxSegments: the segments made from them.
	TxSegmented, TxSegments uint64
	// TxCsumCompleted: partial checksums (virtio NEEDS_CSUM) completed in
	// software for this port.
	TxCsumCompleted uint64
}

// Drops returns every datapath drop charged to the port.
func (s PortStats) Drops() uint64 {
	return s.RxNoBuffer + s.RxDrops + s.LostUpcalls + s.TxNoPort + s.TxNoBuffer + s.TxOffloadDrops
}

// portCounters is one writer's slot of a port's counters: PMD i writes
// slot i, the non-PMD context (under its mutex) the last one. Writers
// add atomically (drops are rare; the offload counters move once per
// GSO frame or per checksum completed, next to work costing far more),
// readers load: no lock anywhere.
type portCounters struct {
	rxNoBuffer, rxDrops, lostUpcalls, txNoPort atomic.Uint64
	txNoBuffer, txOffloadDrops                 atomic.Uint64
	txSegmented, txSegments, txCsumCompleted   atomic.Uint64
	_                                          [128 - 9*8]byte // no false sharing between writers
}

func (c *portCounters) addTo(s *PortStats) {
	s.RxNoBuffer += c.rxNoBuffer.Load()
	s.RxDrops += c.rxDrops.Load()
	s.LostUpcalls += c.lostUpcalls.Load()
	s.TxNoPort += c.txNoPort.Load()
	s.TxNoBuffer += c.txNoBuffer.Load()
	s.TxOffloadDrops += c.txOffloadDrops.Load()
	s.TxSegmented += c.txSegmented.Load()
	s.TxSegments += c.txSegments.Load()
	s.TxCsumCompleted += c.txCsumCompleted.Load()
}

// add adds s to the slot; the slot's writers may be running.
func (c *portCounters) add(s *PortStats) {
	c.rxNoBuffer.Add(s.RxNoBuffer)
	c.rxDrops.Add(s.RxDrops)
	c.lostUpcalls.Add(s.LostUpcalls)
	c.txNoPort.Add(s.TxNoPort)
	c.txNoBuffer.Add(s.TxNoBuffer)
	c.txOffloadDrops.Add(s.TxOffloadDrops)
	c.txSegmented.Add(s.TxSegmented)
	c.txSegments.Add(s.TxSegments)
	c.txCsumCompleted.Add(s.TxCsumCompleted)
}

// sumStats adds up every writer's slot.
func (p *port) sumStats() PortStats {
	var s PortStats
	for i := range p.stats {
		p.stats[i].addTo(&s)
	}
	return s
}

// PortStats returns the datapath counters of port portNo, summed over
// every PMD; safe from any goroutine, takes no lock.
func (dp *Datapath) PortStats(portNo uint32) (PortStats, error) {
	t := dp.ports.Load()
	i, ok := t.idx[portNo]
	if !ok {
		return PortStats{}, fmt.Errorf("%w: %d", ErrNoPort, portNo)
	}
	return t.list[i].sumStats(), nil
}

// counters returns the counter slot of port portNo for the writer with
// the given slot, or nil if the port is not in the table.
func (t *portTable) counters(portNo uint32, slot int) *portCounters {
	i, ok := t.idx[portNo]
	if !ok {
		return nil
	}
	return &t.list[i].stats[slot]
}

package dpif

import (
	"sync/atomic"
	"time"

	"gvs/packet"
)

// PMDStats are one PMD's counters since the datapath started.
type PMDStats struct {
	PMD int
	CPU int // -1: not pinned
	// RxQueues is how many receive queues the PMD polls.
	RxQueues int
	// Packets and Batches received; Iterations of the poll loop.
	Packets, Batches, Iterations uint64
	// BusyNs: time in iterations that received packets; IdleNs: the
	// rest, including SleepNs spent sleeping in epoll_wait(2).
	BusyNs, IdleNs, SleepNs uint64
	// EMCHits + MegaflowHits + Misses = packets classified.
	EMCHits, MegaflowHits, Misses uint64
	// SubtableLookups: classifier subtables probed for the megaflow
	// hits (a hit in the n-th subtable counts n);
	// SubtableLookups/MegaflowHits is Open vSwitch's "avg. subtable
	// lookups per megaflow hit".
	SubtableLookups uint64
	// Upcalls: calls to the upcall handler (fast and slow). LostUpcalls:
	// misses dropped because no handler was set or the slow queue was
	// full.
	Upcalls, LostUpcalls uint64
	// TxPackets and TxBatches handed to devices; TxDrops: outputs
	// dropped (missing port, no buffer for a copy or a segment, a GSO
	// request or partial checksum that could not be resolved). PortStats
	// splits them by port and cause.
	TxPackets, TxBatches, TxDrops uint64
	// RxDrops: received packets dropped before classification.
	RxDrops uint64
	// Recircs: packets recirculated; RecircDrops: those dropped for
	// recirculating too deep (maxRecircDepth); MeterDrops: packets a
	// meter dropped.
	Recircs, RecircDrops, MeterDrops uint64
	// Parse counts received packets per parse status.
	Parse [packet.NumStatus]uint64
	// PoolFree and PoolSize: the PMD's buffer pool, as of its last
	// published iteration.
	PoolFree, PoolSize int
}

// pmdCounters are a PMD's private counters.
type pmdCounters struct {
	rxPackets, rxBatches, iterations uint64
	busyNs, idleNs, sleepNs          uint64
	emcHits, megaflowHits, misses    uint64
	subtableLookups                  uint64
	upcalls, lostUpcalls             uint64
	rxDrops                          uint64
	parse                            [packet.NumStatus]uint64
}

// pmdStatsPub is the published copy, written only by the PMD with
// stores, read by anyone.
type pmdStatsPub struct {
	rxPackets, rxBatches, iterations atomic.Uint64
	busyNs, idleNs, sleepNs          atomic.Uint64
	emcHits, megaflowHits, misses    atomic.Uint64
	subtableLookups                  atomic.Uint64
	upcalls, lostUpcalls             atomic.Uint64
	txPackets, txBatches, txDrops    atomic.Uint64
	rxDrops                          atomic.Uint64
	recircs, recircDrops, meterDrops atomic.Uint64
	parse                            [packet.NumStatus]atomic.Uint64
	poolFree, poolSize               atomic.Int64
}

// publish copies the local counters out. The pool count goes first and
// the packet count last, so a reader that sees a packet count also sees
// the pool as it was after those packets were processed.
func (p *pmd) publish() {
	c, s := &p.cnt, &p.pub
	s.poolFree.Store(int64(p.pool.Stats().Free))
	s.iterations.Store(c.iterations)
	s.busyNs.Store(c.busyNs)
	s.idleNs.Store(c.idleNs)
	s.sleepNs.Store(c.sleepNs)
	s.emcHits.Store(c.emcHits)
	s.subtableLookups.Store(c.subtableLookups)
	s.megaflowHits.Store(c.megaflowHits)
	s.misses.Store(c.misses)
	s.upcalls.Store(c.upcalls)
	s.lostUpcalls.Store(c.lostUpcalls)
	s.txPackets.Store(p.ctx.txPkts)
	s.txBatches.Store(p.ctx.txBatchs)
	s.txDrops.Store(p.ctx.txDrops)
	s.rxDrops.Store(c.rxDrops)
	s.recircs.Store(p.ctx.recircs)
	s.recircDrops.Store(p.ctx.recircDrops)
	s.meterDrops.Store(p.ctx.meterDrops)
	for i := range c.parse {
		s.parse[i].Store(c.parse[i])
	}
	s.rxBatches.Store(c.rxBatches)
	s.rxPackets.Store(c.rxPackets)
}

// PMDStats returns every current PMD's published counters.
func (dp *Datapath) PMDStats() []PMDStats { return dp.pmds.Load().stats() }

func (set *pmdSet) stats() []PMDStats {
	out := make([]PMDStats, len(set.list))
	for i, p := range set.list {
		out[i] = p.statsSnapshot()
	}
	return out
}

// statsSnapshot reads the PMD's published counters; any goroutine.
func (p *pmd) statsSnapshot() PMDStats {
	s := &p.pub
	st := PMDStats{PMD: p.id, CPU: p.cpu}
	st.Packets = s.rxPackets.Load()
	st.Batches = s.rxBatches.Load()
	st.PoolFree = int(s.poolFree.Load())
	st.PoolSize = int(s.poolSize.Load())
	st.Iterations = s.iterations.Load()
	st.BusyNs, st.IdleNs, st.SleepNs = s.busyNs.Load(), s.idleNs.Load(), s.sleepNs.Load()
	st.EMCHits, st.MegaflowHits, st.Misses = s.emcHits.Load(), s.megaflowHits.Load(), s.misses.Load()
	st.SubtableLookups = s.subtableLookups.Load()
	st.Upcalls = s.upcalls.Load()
	st.LostUpcalls = s.lostUpcalls.Load()
	st.TxPackets, st.TxBatches, st.TxDrops = s.txPackets.Load(), s.txBatches.Load(), s.txDrops.Load()
	st.RxDrops = s.rxDrops.Load()
	st.Recircs, st.RecircDrops, st.MeterDrops = s.recircs.Load(), s.recircDrops.Load(), s.meterDrops.Load()
	for j := range st.Parse {
		st.Parse[j] = s.parse[j].Load()
	}
	if pl := p.plan.Load(); pl != nil {
		st.RxQueues = len(pl.rxqs)
	}
	return st
}

// addPMDStats adds the counters of s to tot (not the identity, pool or
// queue figures).
func addPMDStats(tot, s *PMDStats) {
	tot.Packets += s.Packets
	tot.Batches += s.Batches
	tot.Iterations += s.Iterations
	tot.BusyNs += s.BusyNs
	tot.IdleNs += s.IdleNs
	tot.SleepNs += s.SleepNs
	tot.EMCHits += s.EMCHits
	tot.MegaflowHits += s.MegaflowHits
	tot.Misses += s.Misses
	tot.SubtableLookups += s.SubtableLookups
	tot.Upcalls += s.Upcalls
	tot.LostUpcalls += s.LostUpcalls
	tot.TxPackets += s.TxPackets
	tot.TxBatches += s.TxBatches
	tot.TxDrops += s.TxDrops
	tot.RxDrops += s.RxDrops
	tot.Recircs += s.Recircs
	tot.RecircDrops += s.RecircDrops
	tot.MeterDrops += s.MeterDrops
	for i := range tot.Parse {
		tot.Parse[i] += s.Parse[i]
	}
}

// RetiredPMDStats sums the counters of the PMDs SetPMDConfig removed
// (PMD and CPU are -1), including the slow upcalls dropped with them.
func (dp *Datapath) RetiredPMDStats() PMDStats { return dp.pmds.Load().retired }

// Stats is the datapath summary, like ovs-dpctl show's "lookups" line;
// it includes PMDs that SetPMDConfig retired.
type Stats struct {
	Flows     int
	Subtables int
	// Hit: packets that matched a flow (EMC or megaflow); Missed: packets
	// that did not; Lost: misses the upcall path could not take.
	Hit, Missed, Lost uint64
	Uptime            time.Duration
}

// Stats returns the datapath totals.
func (dp *Datapath) Stats() Stats {
	s := Stats{Flows: int(dp.nflows.Load()), Subtables: dp.cls.numSubtables(), Uptime: time.Since(dp.epoch)}
	set := dp.pmds.Load()
	for _, p := range append(set.stats(), set.retired) {
		s.Hit += p.EMCHits + p.MegaflowHits
		s.Missed += p.Misses
		s.Lost += p.LostUpcalls
	}
	return s
}

package dpif

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Receive queue load, for pmd-rxq-show and pmd-rxq-rebalance. A PMD adds
// each non-empty batch's packets and busy time to the queue's counters
// (two atomic adds per batch). The revalidator samples the busy time
// every Config.RxqInterval into a ring of RxqIntervals deltas per queue,
// so a queue's load is its busy time over the last minute or so, as in
// Open vSwitch (12 intervals of 5 s).

// RxqIntervals is how many sampling intervals make a queue's measured
// load.
const RxqIntervals = 12

// rxqCounters are one receive queue's totals, added to by whichever PMD
// polls it (one at a time).
type rxqCounters struct {
	packets, busyNs atomic.Uint64
	_               [128 - 16]byte // no false sharing between PMDs
}

// rxqHistory is one queue's sampled busy time, under Datapath.load.mu.
type rxqHistory struct {
	last uint64 // busyNs when last sampled
	ring [RxqIntervals]uint64
}

// rxqLoad is the datapath's sampling state.
type rxqLoad struct {
	mu      sync.Mutex // after portMu
	pos     int        // next ring slot
	samples int        // filled slots, at most RxqIntervals
	lens    [RxqIntervals]int64
	last    int64 // datapath clock of the last sample
}

// sampleRxqLoad closes a measurement interval if one is due at now
// (datapath clock). The revalidator calls it.
func (dp *Datapath) sampleRxqLoad(now int64) {
	l := &dp.load
	l.mu.Lock()
	defer l.mu.Unlock()
	if now-l.last < int64(dp.cfg.RxqInterval) {
		return
	}
	for _, p := range dp.ports.Load().list {
		for q := range p.hist {
			h := &p.hist[q]
			cur := p.rxqs[q].busyNs.Load()
			h.ring[l.pos] = cur - h.last
			h.last = cur
		}
	}
	l.lens[l.pos] = now - max(l.last, 0)
	l.pos = (l.pos + 1) % RxqIntervals
	l.samples = min(l.samples+1, RxqIntervals)
	l.last = now
}

// queueLoad returns a queue's busy time over the last n intervals (at
// most the measurement window) and their length; before the first
// interval closes, everything since the port was added. Caller holds
// dp.load.mu.
func (dp *Datapath) queueLoad(p *port, q, n int) (busy, window int64) {
	l := &dp.load
	if l.samples == 0 {
		return int64(p.rxqs[q].busyNs.Load()), dp.now() - p.added
	}
	for k := range min(n, l.samples) {
		i := (l.pos - 1 - k + RxqIntervals) % RxqIntervals // newest first
		busy += int64(p.hist[q].ring[i])
		window += l.lens[i]
	}
	return busy, window
}

// RxQueueStat describes one receive queue for pmd-rxq-show.
type RxQueueStat struct {
	Port  uint32
	Name  string
	Queue int
	// PMD polling the queue and its CPU (-1: not pinned).
	PMD, CPU int
	// Packets and BusyNs since the port was added.
	Packets, BusyNs uint64
	// Usage: percent of the measurement window (the last RxqIntervals
	// intervals, or what RxQueueStatsOver asked for) its PMD spent on
	// this queue.
	Usage float64
}

// RxQueueStats lists every receive queue in port and queue order, with
// usage over the whole measurement window.
func (dp *Datapath) RxQueueStats() []RxQueueStat { return dp.RxQueueStatsOver(0) }

// RxQueueStatsOver is RxQueueStats with usage over the most recent
// sampling intervals covering d (pmd-rxq-show -secs); d <= 0 or beyond
// the window means the whole window.
func (dp *Datapath) RxQueueStatsOver(d time.Duration) []RxQueueStat {
	n := RxqIntervals
	if d > 0 {
		n = min(n, max(1, int((d+dp.cfg.RxqInterval-1)/dp.cfg.RxqInterval)))
	}
	dp.portMu.Lock()
	defer dp.portMu.Unlock()
	dp.load.mu.Lock()
	defer dp.load.mu.Unlock()
	pmds := dp.pmdList()
	var out []RxQueueStat
	for _, p := range dp.ports.Load().list {
		for q := range p.rxqs {
			s := RxQueueStat{Port: p.no, Name: p.dev.Name(), Queue: q, PMD: dp.assign[rxqID{p.no, q}], CPU: -1,
				Packets: p.rxqs[q].packets.Load(), BusyNs: p.rxqs[q].busyNs.Load()}
			if s.PMD >= 0 && s.PMD < len(pmds) {
				s.CPU = pmds[s.PMD].cpu
			}
			if busy, window := dp.queueLoad(p, q, n); window > 0 {
				s.Usage = min(100, 100*float64(busy)/float64(window))
			}
			out = append(out, s)
		}
	}
	return out
}

// Receive queue assignment algorithms (other_config:pmd-rxq-assign).
const (
	RxqAssignRoundRobin = "roundrobin"
	RxqAssignCycles     = "cycles"
	RxqAssignGroup      = "group"
)

// SetRxqAssign selects the algorithm RebalanceRxQueues uses:
// "roundrobin", "cycles" (the default) or "group". It moves nothing.
func (dp *Datapath) SetRxqAssign(alg string) error {
	alg, err := checkRxqAssign(alg)
	if err != nil {
		return err
	}
	dp.portMu.Lock()
	defer dp.portMu.Unlock()
	dp.cfg.RxqAssign = alg
	return nil
}

// checkRxqAssign validates a pmd-rxq-assign value; "" is the default.
func checkRxqAssign(alg string) (string, error) {
	switch alg {
	case "":
		return RxqAssignCycles, nil
	case RxqAssignRoundRobin, RxqAssignCycles, RxqAssignGroup:
		return alg, nil
	}
	return "", fmt.Errorf("dpif: invalid pmd-rxq-assign value %q", alg)
}

// RxqAssign returns the algorithm in use.
func (dp *Datapath) RxqAssign() string {
	dp.portMu.Lock()
	defer dp.portMu.Unlock()
	return dp.cfg.RxqAssign
}

// RxqMove is one queue moved by RebalanceRxQueues.
type RxqMove struct {
	Port     uint32
	Name     string
	Queue    int
	From, To int    // PMD indices
	LoadNs   uint64 // busy time over the measurement window
	Usage    float64
	Strategy string
}

func (m RxqMove) String() string {
	return fmt.Sprintf("port %s queue %d: pmd %d -> pmd %d (usage %.0f %%)", m.Name, m.Queue, m.From, m.To, m.Usage)
}

// RebalanceRxQueues (pmd-rxq-rebalance) reassigns every receive queue to
// the PMDs with the algorithm of SetRxqAssign, by the load each queue
// had over the measurement window, and returns the queues that moved
// (none if the assignment stands). A moving queue is first taken from
// its PMD, and given to the new one only once the old one has stopped
// polling it, so no queue is ever polled by two PMDs.
func (dp *Datapath) RebalanceRxQueues() ([]RxqMove, error) {
	dp.portMu.Lock()
	defer dp.portMu.Unlock()
	if dp.closed {
		return nil, ErrClosed
	}
	return dp.rebalanceLocked(), nil
}

// measuredRxq is a receive queue with its busy time over its measuring
// window.
type measuredRxq struct {
	p            *port
	q            int
	busy, window int64
}

// planAssignment measures every receive queue over the last RxqIntervals
// and assigns them to the PMDs with the RxqAssign algorithm: to[i] is
// the PMD of qs[i]. Caller holds portMu.
func (dp *Datapath) planAssignment() (qs []measuredRxq, to []int) {
	dp.load.mu.Lock()
	for _, p := range dp.ports.Load().list {
		for q := range p.rxqs {
			busy, window := dp.queueLoad(p, q, RxqIntervals)
			qs = append(qs, measuredRxq{p, q, busy, window})
		}
	}
	dp.load.mu.Unlock()
	loads := make([]int64, len(qs))
	for i, q := range qs {
		loads[i] = q.busy
	}
	return qs, assignQueues(dp.cfg.RxqAssign, loads, dp.NumPMDs())
}

// rebalanceLocked is RebalanceRxQueues; caller holds portMu.
func (dp *Datapath) rebalanceLocked() []RxqMove {
	qs, to := dp.planAssignment()
	var moves []RxqMove
	for i, q := range qs {
		id := rxqID{q.p.no, q.q}
		if from := dp.assign[id]; from != to[i] {
			m := RxqMove{Port: q.p.no, Name: q.p.dev.Name(), Queue: q.q, From: from, To: to[i],
				LoadNs: uint64(q.busy), Strategy: dp.cfg.RxqAssign}
			if q.window > 0 {
				m.Usage = 100 * float64(q.busy) / float64(q.window)
			}
			moves = append(moves, m)
			dp.assign[id] = -1
		}
	}
	if len(moves) == 0 {
		return nil
	}
	dp.waitPlans(dp.publishPlans()) // nobody polls the moving queues now
	for _, m := range moves {
		dp.assign[rxqID{m.Port, m.Queue}] = m.To
	}
	dp.waitPlans(dp.publishPlans())
	for _, m := range moves {
		dp.log.Info("moved rx queue", "port", m.Name, "queue", m.Queue, "from_pmd", m.From, "to_pmd", m.To,
			"usage_pct", m.Usage, "strategy", m.Strategy)
	}
	return moves
}

// assignQueues gives each queue (listed in port and queue order with its
// load) a PMD out of n:
//   - roundrobin: in list order, PMD 0, 1, ..., n-1, 0, ...
//   - cycles: heaviest queue first, PMDs in the order 0..n-1, n-1..0, ...
//     (Open vSwitch's up-down round robin)
//   - group: heaviest queue first, each to the PMD with the least load
//     assigned so far (then the fewest queues, then the lowest index).
func assignQueues(alg string, loads []int64, n int) []int {
	to := make([]int, len(loads))
	if n <= 1 {
		return to
	}
	order := make([]int, len(loads))
	for i := range order {
		order[i] = i
	}
	if alg != RxqAssignRoundRobin {
		slices.SortStableFunc(order, func(a, b int) int {
			switch {
			case loads[a] > loads[b]:
				return -1
			case loads[a] < loads[b]:
				return 1
			}
			return 0
		})
	}
	pmdLoad := make([]int64, n)
	pmdQueues := make([]int, n)
	for k, i := range order {
		var pmd int
		switch alg {
		case RxqAssignGroup:
			for j := 1; j < n; j++ {
				if pmdLoad[j] < pmdLoad[pmd] || pmdLoad[j] == pmdLoad[pmd] && pmdQueues[j] < pmdQueues[pmd] {
					pmd = j
				}
			}
		case RxqAssignCycles:
			pmd = k % (2 * n)
			if pmd >= n {
				pmd = 2*n - 1 - pmd
			}
		default:
			pmd = k % n
		}
		to[i] = pmd
		pmdLoad[pmd] += loads[i]
		pmdQueues[pmd]++
	}
	return to
}

// rxqIntervalDefault is Open vSwitch's PMD interval length.
const rxqIntervalDefault = 5 * time.Second

package dpif

import (
	"slices"
	"time"
)

// PMDConfig is the part of Config that SetPMDConfig changes at run time,
// with ports and flows in place: Open vSwitch's other_config:
// pmd-cpu-mask, pmd-maxsleep and pmd-rxq-assign. Zero fields take the
// defaults of Config.
type PMDConfig struct {
	CPUMask   string        // as Config.PMDCPUMask
	PMDs      int           // as Config.PMDs: unpinned PMDs when CPUMask is empty
	MaxSleep  time.Duration // as Config.MaxSleep
	RxqAssign string        // as Config.RxqAssign
}

// PMDConfig returns the PMD settings in use, defaults filled in.
func (dp *Datapath) PMDConfig() PMDConfig {
	dp.portMu.Lock()
	defer dp.portMu.Unlock()
	return PMDConfig{CPUMask: dp.cfg.PMDCPUMask, PMDs: dp.cfg.PMDs, MaxSleep: dp.cfg.MaxSleep, RxqAssign: dp.cfg.RxqAssign}
}

// SetPMDConfig applies c while the datapath runs; ports, devices and
// flows stay. Nothing changes if c is invalid (a mask that is not hex,
// an unknown rxq-assign): the error says why and the PMDs run on as
// before.
//
//   - MaxSleep takes effect at each PMD's next sleep.
//   - A new RxqAssign alone reassigns every receive queue with it, as
//     RebalanceRxQueues does: no queue is polled by two PMDs at once.
//   - A new set of PMDs (CPUMask, or PMDs when unpinned) is a short
//     switch-over: every PMD goroutine stops (a device keeps what
//     arrives meanwhile in its queue); PMDs that keep their index and
//     CPU are kept (pool, counters, eventfd), the others are retired
//     and new ones made for the new CPUs; every receive queue is
//     assigned anew with RxqAssign by its measured load; then the
//     PMDs start again. Packets that waited in a retired PMD's
//     slow-upcall queue are dropped, counted as lost upcalls of their
//     input port and in Stats.Lost. Counters of retired PMDs stay in
//     Stats; PMDStats lists the current PMDs only.
//
// It returns once every PMD runs with the new settings. Like Close, it
// waits for the slow-upcall goroutines, so a SlowUpcall handler must not
// call it.
func (dp *Datapath) SetPMDConfig(c PMDConfig) error {
	cpus, err := parseCPUMask(c.CPUMask)
	if err != nil {
		return err
	}
	// Only the PMD fields of next are used.
	next := Config{PMDCPUMask: c.CPUMask, PMDs: c.PMDs, MaxSleep: c.MaxSleep, RxqAssign: c.RxqAssign}
	if err := next.setDefaults(); err != nil {
		return err
	}
	dp.portMu.Lock()
	defer dp.portMu.Unlock()
	if dp.closed {
		return ErrClosed
	}
	if next.MaxSleep != dp.cfg.MaxSleep {
		dp.cfg.MaxSleep = next.MaxSleep
		dp.maxSleep.Store(int64(next.MaxSleep))
		for _, p := range dp.pmdList() {
			p.wake() // a sleeping PMD picks it up now, not after the old timeout
		}
		dp.log.Info("PMD max sleep changed", "max_sleep", next.MaxSleep)
	}
	oldCPUs, _ := parseCPUMask(dp.cfg.PMDCPUMask)
	newSet := !slices.Equal(cpus, oldCPUs) || len(cpus) == 0 && next.PMDs != dp.cfg.PMDs
	newAssign := next.RxqAssign != dp.cfg.RxqAssign
	dp.cfg.RxqAssign = next.RxqAssign
	switch {
	case newSet:
		n := next.PMDs
		if len(cpus) > 0 {
			n = len(cpus)
		}
		if err := dp.replacePMDs(cpus, n); err != nil {
			return err
		}
	case newAssign:
		dp.log.Info("PMD rx queue assignment changed", "strategy", next.RxqAssign)
		dp.rebalanceLocked()
	}
	// The same CPUs may be spelt differently ("0x6", "6"); PMDs is
	// unused while pinned.
	dp.cfg.PMDCPUMask, dp.cfg.PMDs = next.PMDCPUMask, next.PMDs
	return nil
}

// replacePMDs switches to n PMDs on cpus (none: unpinned). Caller holds
// portMu. Every PMD that will run is made before any stops, so a failure
// (no memory for a pool, no eventfd) leaves the old PMDs running.
func (dp *Datapath) replacePMDs(cpus []int, n int) error {
	old := dp.pmdList()
	cpuOf := func(i int) int {
		if len(cpus) > 0 {
			return cpus[i]
		}
		return -1
	}
	next := make([]*pmd, n)
	kept := map[*pmd]bool{}
	for i := range n {
		if i < len(old) && old[i].cpu == cpuOf(i) {
			next[i] = old[i]
			kept[old[i]] = true
			continue
		}
		p, err := newPMD(dp, i, cpuOf(i))
		if err != nil {
			for _, p := range next[:i] {
				if !kept[p] {
					p.closeFDs()
				}
			}
			return err
		}
		next[i] = p
	}

	// Switch-over: no PMD runs from here until startGeneration.
	paused := time.Now()
	close(dp.pmdStop)
	for _, p := range old {
		p.wake()
	}
	dp.pmdWG.Wait()
	var retired []*pmd
	for _, p := range old {
		if !kept[p] {
			retired = append(retired, p)
		}
	}
	dp.resizeSlots(n)
	tot, dropped := dp.retirePMDs(retired, n)
	dp.pmds.Store(&pmdSet{list: next, retired: tot})
	dp.assignAll()
	dp.startGeneration()
	dp.log.Info("PMDs reconfigured", "pmds", n, "cpus", cpus, "kept", len(kept), "retired", len(retired),
		"slow_upcalls_dropped", dropped, "strategy", dp.cfg.RxqAssign, "pause", time.Since(paused))
	return nil
}

// resizeSlots gives every port and flow the counter slots of n PMDs plus
// the non-PMD context, which takes slot n, and decides again which
// ports' transmit queues PMDs must share. Caller holds portMu and no PMD
// runs; the non-PMD mutex and flowMu are taken here, in lock order.
func (dp *Datapath) resizeSlots(n int) {
	dp.nonPMD.mu.Lock()
	defer dp.nonPMD.mu.Unlock()
	dp.nonPMD.ctx.slot = n
	dp.flowMu.Lock()
	dp.nslots = n + 1
	dp.cls.forEach(func(f *flow) { f.growSlots(n + 1) })
	dp.flowMu.Unlock()

	// Ports are immutable once published (PortStats reads them without a
	// lock), so each gets a successor with n+1 counter slots; what the
	// old slots counted moves to the non-PMD slot, where the totals stay.
	list := dp.ports.Load().list
	next := make([]*port, len(list))
	for i, p := range list {
		np := &port{no: p.no, dev: p.dev, caps: p.caps, txLocks: p.txLocks, rxqs: p.rxqs, hist: p.hist, added: p.added}
		np.sharedTx = p.dev.NumTxQueues() < n+1
		np.stats = make([]portCounters, n+1)
		var sum PortStats
		for j := range p.stats {
			p.stats[j].addTo(&sum)
		}
		np.stats[n].add(&sum)
		next[i] = np
	}
	dp.ports.Store(newPortTable(next))
	dp.nonPMD.ctx.setPorts(dp.ports.Load())
}

// retirePMDs sums the counters of stopped PMDs that are going away with
// those retired before, drops what waits in their slow-upcall queues
// (counted as lost upcalls) and closes their eventfds. It returns the
// new retired totals and how many packets it dropped, charged to the
// input port's slot (the non-PMD one; the counters are atomic). Caller
// holds portMu and has called resizeSlots.
func (dp *Datapath) retirePMDs(ps []*pmd, slot int) (PMDStats, int) {
	tot := dp.pmds.Load().retired
	dropped := 0
	ports := dp.ports.Load()
	for _, p := range ps {
	drain:
		for {
			select {
			case s := <-p.slow:
				dropped++
				if pc := ports.counters(s.meta.InPort, slot); pc != nil {
					pc.lostUpcalls.Add(1)
				}
			default:
				break drain
			}
		}
		st := p.statsSnapshot()
		addPMDStats(&tot, &st)
		p.closeFDs()
	}
	tot.LostUpcalls += uint64(dropped)
	return tot, dropped
}

// assignAll assigns every receive queue to the PMDs with the RxqAssign
// algorithm by its measured load. Caller holds portMu and no PMD runs.
func (dp *Datapath) assignAll() {
	qs, to := dp.planAssignment()
	for i, q := range qs {
		dp.assign[rxqID{q.p.no, q.q}] = to[i]
	}
}

// startGeneration publishes the plans and starts the goroutines of the
// current PMDs under a new stop channel, then waits until each runs
// its plan. Caller holds portMu and no PMD runs.
func (dp *Datapath) startGeneration() {
	dp.pmdStop = make(chan struct{})
	pmds := dp.pmdList()
	for _, p := range pmds {
		p.stop = dp.pmdStop
	}
	ep := dp.publishPlans()
	if dp.cfg.manual {
		return
	}
	for _, p := range pmds {
		dp.pmdWG.Add(2)
		go p.run()
		go p.runSlow()
	}
	dp.waitPlans(ep)
}

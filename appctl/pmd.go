package appctl

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"weak"

	"gvs/dpif"
)

// pmdArgs are the arguments of the dpif-netdev/pmd-* commands.
type pmdArgs struct {
	filter bool
	core   int
	secs   int
}

// parsePMDArgs parses "[-pmd core] [-secs secs] [dp]" as Open vSwitch does
// and returns the datapath, or the error Open vSwitch gives.
func (c *Commands) parsePMDArgs(args []string, allowSecs bool) (*dpif.Datapath, pmdArgs, error) {
	var a pmdArgs
	named := ""
	for len(args) > 0 {
		switch {
		case args[0] == "-pmd" && len(args) > 1:
			if n, err := strconv.ParseUint(args[1], 10, 31); err == nil {
				a.filter, a.core = true, int(n)
			}
			args = args[2:]
		case allowSecs && args[0] == "-secs" && len(args) > 1:
			n, err := strconv.ParseUint(args[1], 10, 31)
			if err != nil {
				n = maxUsageSecs
			}
			a.secs = int(n)
			args = args[2:]
		default:
			named = args[0]
			args = args[1:]
		}
	}
	dp := c.sw.Datapath()
	if dp == nil || (named != "" && !isDatapathName(named)) {
		return nil, a, errorf("please specify an existing datapath")
	}
	return dp, a, nil
}

// pmdID is how a PMD is named to users: pinned PMDs by their CPU (Open
// vSwitch's core_id), unpinned ones by their index. -pmd N selects by it.
func pmdID(p dpif.PMDStats) int {
	if p.CPU >= 0 {
		return p.CPU
	}
	return p.PMD
}

// pmdHeader is format_pmd_thread's line. An unpinned PMD has no core, so
// it is named by its index instead of a core_id it does not have.
func pmdHeader(p dpif.PMDStats) string {
	if p.CPU < 0 {
		return fmt.Sprintf("pmd thread pmd_id %d (not pinned):\n", p.PMD)
	}
	return fmt.Sprintf("pmd thread numa_id %d core_id %d:\n", numaNode(p.CPU), p.CPU)
}

// numaNode returns the NUMA node of a CPU from sysfs, 0 when unknown.
func numaNode(cpu int) int {
	m, _ := filepath.Glob(fmt.Sprintf("/sys/devices/system/cpu/cpu%d/node*", cpu))
	for _, p := range m {
		if n, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(p), "node")); err == nil {
			return n
		}
	}
	return 0
}

// sub returns a - b per counter, for stats since pmd-stats-clear.
func sub(a, b dpif.PMDStats) dpif.PMDStats {
	d := a
	minus := func(x, y uint64) uint64 {
		if x < y {
			return x // the counters restarted: count from zero
		}
		return x - y
	}
	d.Packets, d.Batches, d.Iterations = minus(a.Packets, b.Packets), minus(a.Batches, b.Batches), minus(a.Iterations, b.Iterations)
	d.BusyNs, d.IdleNs, d.SleepNs = minus(a.BusyNs, b.BusyNs), minus(a.IdleNs, b.IdleNs), minus(a.SleepNs, b.SleepNs)
	d.EMCHits, d.MegaflowHits, d.Misses = minus(a.EMCHits, b.EMCHits), minus(a.MegaflowHits, b.MegaflowHits), minus(a.Misses, b.Misses)
	d.SubtableLookups = minus(a.SubtableLookups, b.SubtableLookups)
	d.Upcalls, d.LostUpcalls = minus(a.Upcalls, b.Upcalls), minus(a.LostUpcalls, b.LostUpcalls)
	d.TxPackets, d.TxBatches, d.TxDrops = minus(a.TxPackets, b.TxPackets), minus(a.TxBatches, b.TxBatches), minus(a.TxDrops, b.TxDrops)
	d.RxDrops = minus(a.RxDrops, b.RxDrops)
	for i := range d.Parse {
		d.Parse[i] = minus(a.Parse[i], b.Parse[i])
	}
	return d
}

// pmdSlot names a PMD for pmd-stats-clear baselines: its index and CPU.
// A live pmd-cpu-mask change keeps a PMD (and its counters) only when both
// stay; a PMD with an old index on another CPU starts from zero and must
// not inherit its predecessor's baseline.
type pmdSlot struct{ pmd, cpu int }

func slotOf(p dpif.PMDStats) pmdSlot { return pmdSlot{p.PMD, p.CPU} }

// pmdStats returns dp's PMD counters since the last pmd-stats-clear.
// The datapath's own counters are never reset (metrics stay monotonic):
// clearing records a baseline, as the PMD counters of Open vSwitch keep a
// "zero" snapshot.
func (c *Commands) pmdStats(dp *dpif.Datapath) []dpif.PMDStats {
	all := dp.PMDStats()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.baseDP.Value() != dp {
		return all
	}
	for i, p := range all {
		if b, ok := c.baseline[slotOf(p)]; ok {
			all[i] = sub(p, b)
		}
	}
	return all
}

func (c *Commands) pmdStatsShow(args []string) (string, error) {
	dp, a, err := c.parsePMDArgs(args, false)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, p := range c.pmdStats(dp) {
		if a.filter && pmdID(p) != a.core {
			continue
		}
		writePMDStats(&b, p)
	}
	return b.String(), nil
}

// writePMDStats is pmd_info_show_stats. Fields for features gvs does not
// have (recirculation, hardware offload, miniflow extract, the simple
// match and signature match caches) are truly zero. Time is measured in
// nanoseconds, not TSC cycles, and labelled so.
func writePMDStats(b *strings.Builder, p dpif.PMDStats) {
	b.WriteString(pmdHeader(p))
	passes := 0.0
	if p.Packets > 0 {
		passes = 1
	}
	lookupsPerHit := 0.0
	if p.MegaflowHits > 0 {
		lookupsPerHit = float64(p.SubtableLookups) / float64(p.MegaflowHits)
	}
	perBatch := 0.0
	if p.TxBatches > 0 {
		perBatch = float64(p.TxPackets) / float64(p.TxBatches)
	}
	success := uint64(0)
	if p.Misses > p.LostUpcalls {
		success = p.Misses - p.LostUpcalls
	}
	fmt.Fprintf(b, "  packets received: %d\n", p.Packets)
	fmt.Fprintf(b, "  packet recirculations: 0\n")
	fmt.Fprintf(b, "  avg. datapath passes per packet: %.02f\n", passes)
	fmt.Fprintf(b, "  phwol hits: 0\n  mfex opt hits: 0\n  simple match hits: 0\n")
	fmt.Fprintf(b, "  emc hits: %d\n", p.EMCHits)
	fmt.Fprintf(b, "  smc hits: 0\n")
	fmt.Fprintf(b, "  megaflow hits: %d\n", p.MegaflowHits)
	fmt.Fprintf(b, "  avg. subtable lookups per megaflow hit: %.02f\n", lookupsPerHit)
	fmt.Fprintf(b, "  miss with success upcall: %d\n", success)
	fmt.Fprintf(b, "  miss with failed upcall: %d\n", p.LostUpcalls)
	fmt.Fprintf(b, "  avg. packets per output batch: %.02f\n", perBatch)
	total := p.IdleNs + p.BusyNs
	if total == 0 {
		return
	}
	fmt.Fprintf(b, "  idle ns: %d (%.02f%%)\n", p.IdleNs, float64(p.IdleNs)/float64(total)*100)
	fmt.Fprintf(b, "  processing ns: %d (%.02f%%)\n", p.BusyNs, float64(p.BusyNs)/float64(total)*100)
	if p.Packets == 0 {
		return
	}
	fmt.Fprintf(b, "  avg ns per packet: %.02f (%d/%d)\n", float64(total)/float64(p.Packets), total, p.Packets)
	fmt.Fprintf(b, "  avg processing ns per packet: %.02f (%d/%d)\n", float64(p.BusyNs)/float64(p.Packets), p.BusyNs, p.Packets)
}

func (c *Commands) pmdStatsClear(args []string) (string, error) {
	dp, a, err := c.parsePMDArgs(args, false)
	if err != nil {
		return "", err
	}
	all := dp.PMDStats()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.baseDP.Value() != dp {
		c.baseDP = weak.Make(dp)
		c.baseline = map[pmdSlot]dpif.PMDStats{}
	}
	for _, p := range all {
		if !a.filter || pmdID(p) == a.core {
			c.baseline[slotOf(p)] = p
		}
	}
	return "", nil
}

// pmdRxqShow is pmd_info_show_rxq: per PMD, its queues and each one's
// share of the PMD's time over the window (-secs), measured by the
// datapath per queue (dpif.RxQueueStatsOver).
func (c *Commands) pmdRxqShow(args []string) (string, error) {
	dp, a, err := c.parsePMDArgs(args, true)
	if err != nil {
		return "", err
	}
	secs := a.secs
	if secs <= 0 || secs > maxUsageSecs {
		secs = maxUsageSecs
	} else {
		step := int(c.interval.Seconds())
		if step < 1 {
			step = 1
		}
		secs = (secs + step - 1) / step * step
	}
	queues := map[int][]dpif.RxQueueStat{}
	for _, q := range dp.RxQueueStatsOver(time.Duration(secs) * time.Second) {
		queues[q.PMD] = append(queues[q.PMD], q)
	}
	busy := c.pmdBusyPercent(dp, secs)
	var b strings.Builder
	fmt.Fprintf(&b, "Displaying last %d seconds pmd usage %%\n", secs)
	for _, p := range dp.PMDStats() {
		if a.filter && pmdID(p) != a.core {
			continue
		}
		b.WriteString(pmdHeader(p))
		b.WriteString("  isolated : false\n")
		qs := queues[p.PMD]
		sort.Slice(qs, func(i, j int) bool {
			if qs[i].Name != qs[j].Name {
				return qs[i].Name < qs[j].Name
			}
			return qs[i].Queue < qs[j].Queue
		})
		for _, q := range qs {
			fmt.Fprintf(&b, "  port: %-16s  queue-id: %2d (enabled)   pmd usage: %2d %%\n", q.Name, q.Queue, int(q.Usage))
		}
		// The queues' window (the datapath's sampling intervals) and the
		// PMD's (this package's sampler) differ, so their difference is
		// no honest overhead figure.
		if len(qs) > 0 {
			b.WriteString("  overhead: NOT AVAIL\n")
		}
		if pct, ok := busy[p.PMD]; ok {
			fmt.Fprintf(&b, "  busy (all queues): %2d %%\n", pct)
		} else {
			b.WriteString("  busy (all queues): NOT AVAIL\n")
		}
	}
	return b.String(), nil
}

// pmdRxqRebalance reassigns the receive queues by measured load
// (dpif.RebalanceRxQueues, with the pmd-rxq-assign algorithm) and replies
// as Open vSwitch does, followed (gvs only) by the queues that moved.
func (c *Commands) pmdRxqRebalance(args []string) (string, error) {
	dp := c.sw.Datapath()
	if dp == nil || (len(args) == 1 && !isDatapathName(args[0])) {
		return "", errorf("please specify an existing datapath")
	}
	moves, err := dp.RebalanceRxQueues()
	if err != nil {
		return "", errorf("pmd rxq rebalance failed: %v", err)
	}
	var b strings.Builder
	b.WriteString("pmd rxq rebalance requested.\n")
	for _, m := range moves {
		fmt.Fprintf(&b, "  port: %-16s  queue-id: %2d  pmd %d -> pmd %d  (usage %2d %%, %s)\n",
			m.Name, m.Queue, m.From, m.To, int(m.Usage), m.Strategy)
	}
	return b.String(), nil
}

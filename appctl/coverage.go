package appctl

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"runtime/metrics"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"weak"

	"gvs/dpif"
	"gvs/metrics/source"
	"gvs/netdev"
)

// maxUsageSecs is how far back pmd-rxq-show looks at most, as Open
// vSwitch's PMD_INTERVAL_MAX intervals of 5 s.
const maxUsageSecs = 60

// coverage keeps Open vSwitch-style event counters: monotonic totals
// built from the switch's published counters (per port and per PMD, so a
// port going away or the datapath restarting never makes a total go
// back), plus a history of totals at each sampling tick for the rates.
type coverage struct {
	interval time.Duration
	keep     int // ticks of history: one hour

	mu     sync.Mutex
	totals map[string]uint64
	prev   map[sourceKey]uint64
	ticks  []tick // oldest first
}

// sourceKey identifies one published counter of one component.
type sourceKey struct {
	event string
	dp    *dpif.Datapath
	pmd   int
	port  uint32
	dev   netdev.Device
}

// tick is the state at one sampling instant.
type tick struct {
	totals map[string]uint64
	dp     weak.Pointer[dpif.Datapath]
	pmd    map[int][2]uint64 // busy, idle ns
}

func newCoverage(interval time.Duration) *coverage {
	keep := int(time.Hour/interval) + 1
	return &coverage{interval: interval, keep: keep, totals: map[string]uint64{}, prev: map[sourceKey]uint64{}}
}

// add counts n events that gvs counts itself (not read from counters).
func (cv *coverage) add(event string, n uint64) {
	cv.mu.Lock()
	cv.totals[event] += n
	cv.mu.Unlock()
}

// sample folds the switch's current counters into the totals and, when
// record is set, appends a tick.
func (c *Commands) sample(record bool) { c.sampleDevices(record, 0) }

// sampleDevices is sample with the devices' kernel counters (read with
// a system call per port) taken from a read younger than dropAge
// (netdev.StatsWithin): the periodic sampler passes a little more than
// its interval, so it shares the statistics timer's reads.
func (c *Commands) sampleDevices(record bool, dropAge time.Duration) {
	dp := c.sw.Datapath()
	type reading struct {
		key sourceKey
		v   uint64
	}
	var rs []reading
	pmd := map[int][2]uint64{}
	if dp != nil {
		for _, p := range dp.PMDStats() {
			k := func(ev string, v uint64) {
				rs = append(rs, reading{sourceKey{event: ev, dp: dp, pmd: p.PMD, port: ^uint32(0)}, v})
			}
			k("dpif_netdev_emc_hit", p.EMCHits)
			k("dpif_netdev_megaflow_hit", p.MegaflowHits)
			k("dpif_netdev_miss", p.Misses)
			k("dpif_netdev_upcall", p.Upcalls)
			k("dpif_netdev_lost_upcall", p.LostUpcalls)
			k("datapath_drop_rx", p.RxDrops)
			k("datapath_drop_tx", p.TxDrops)
			k("dpif_netdev_rx_batch", p.Batches)
			pmd[p.PMD] = [2]uint64{p.BusyNs, p.IdleNs}
		}
		for _, p := range dp.Ports() {
			s := netdev.StatsWithin(p.Device, dropAge)
			k := func(ev string, v uint64) {
				rs = append(rs, reading{sourceKey{event: ev, dp: dp, pmd: -1, port: p.No, dev: p.Device}, v})
			}
			k("netdev_received", s.RxPackets)
			k("netdev_sent", s.TxPackets)
			k("netdev_rx_kernel_drop", s.RxKernelDrops)
			k("netdev_tx_drop", s.TxDrops)
			k("netdev_rx_error", s.RxErrors)
			k("netdev_tx_error", s.TxErrors)
		}
	}
	for _, br := range c.sw.Bridges() {
		if br.OpenFlow == nil {
			continue
		}
		m := br.OpenFlow.MACStats()
		// MAC tables are per bridge: the key carries the bridge's name
		// after a NUL, which the totals drop.
		for _, e := range []struct {
			ev string
			v  uint64
		}{{"mac_learning_learned", m.Learned}, {"mac_learning_expired", m.Expired}, {"mac_learning_evicted", m.Evicted}, {"mac_learning_moved", m.Moved}} {
			rs = append(rs, reading{sourceKey{event: e.ev + "\x00" + br.Name, pmd: -1, port: ^uint32(0)}, e.v})
		}
	}

	cv := c.cov
	cv.mu.Lock()
	defer cv.mu.Unlock()
	next := make(map[sourceKey]uint64, len(rs))
	for _, r := range rs {
		prev, seen := cv.prev[r.key]
		delta := r.v
		if seen && r.v >= prev {
			delta = r.v - prev
		}
		event, _, _ := strings.Cut(r.key.event, "\x00")
		cv.totals[event] += delta
		next[r.key] = r.v
	}
	cv.prev = next
	if !record {
		return
	}
	t := tick{totals: make(map[string]uint64, len(cv.totals)), pmd: pmd}
	if dp != nil {
		t.dp = weak.Make(dp)
	}
	for k, v := range cv.totals {
		t.totals[k] = v
	}
	cv.ticks = append(cv.ticks, t)
	if len(cv.ticks) > cv.keep {
		cv.ticks = append(cv.ticks[:0], cv.ticks[len(cv.ticks)-cv.keep:]...)
	}
}

// rate is the per-second rate of event over the last n ticks.
func (cv *coverage) rate(event string, n int) float64 {
	last := len(cv.ticks) - 1
	if last < 1 {
		return 0
	}
	first := max(last-n, 0)
	d := cv.ticks[last].totals[event] - cv.ticks[first].totals[event]
	return float64(d) / (float64(n) * cv.interval.Seconds())
}

// coverageShow is coverage/show in Open vSwitch's format: per event with
// a non-zero total, its rate over the last interval, minute and hour.
func (c *Commands) coverageShow([]string) (string, error) {
	c.sample(false)
	cv := c.cov
	cv.mu.Lock()
	defer cv.mu.Unlock()
	names := allEvents(cv.totals)
	perMin := int(time.Minute / cv.interval)
	perHour := int(time.Hour / cv.interval)
	var b strings.Builder
	fmt.Fprintf(&b, "Event coverage, avg rate over last: %d seconds, last minute, last hour,  hash=%08x:\n",
		int(cv.interval.Seconds()), coverageHash(cv.totals, names))
	never := 0
	for _, name := range names {
		total := cv.totals[name]
		if total == 0 {
			never++
			continue
		}
		fmt.Fprintf(&b, "%-24s %5.1f/sec %9.3f/sec %13.4f/sec   total: %d\n",
			name, cv.rate(name, 1), cv.rate(name, perMin), cv.rate(name, perHour), total)
	}
	fmt.Fprintf(&b, "%d events never hit\n", never)
	return b.String(), nil
}

// knownEvents are listed even before they happen, so "events never hit"
// counts them as Open vSwitch counts its defined counters.
var knownEvents = []string{
	"datapath_drop_rx", "datapath_drop_tx", "dpif_flow_del", "dpif_flow_flush",
	"dpif_netdev_emc_hit", "dpif_netdev_lost_upcall", "dpif_netdev_megaflow_hit",
	"dpif_netdev_miss", "dpif_netdev_rx_batch", "dpif_netdev_upcall", "fdb_flush",
	"mac_learning_evicted", "mac_learning_expired", "mac_learning_learned",
	"mac_learning_moved", "netdev_received", "netdev_rx_error", "netdev_rx_kernel_drop",
	"netdev_sent", "netdev_tx_drop", "netdev_tx_error",
}

func allEvents(totals map[string]uint64) []string {
	set := map[string]bool{}
	for _, e := range knownEvents {
		set[e] = true
	}
	for e := range totals {
		set[e] = true
	}
	names := make([]string, 0, len(set))
	for e := range set {
		names = append(names, e)
	}
	sort.Strings(names)
	return names
}

// coverageHash fingerprints which events have which relative totals, like
// coverage_hash: it changes when the set of hit events or their ranking
// changes, not when counts merely grow.
func coverageHash(totals map[string]uint64, names []string) uint32 {
	hit := []string{}
	for _, n := range names {
		if totals[n] > 0 {
			hit = append(hit, n)
		}
	}
	sort.SliceStable(hit, func(i, j int) bool { return totals[hit[i]] > totals[hit[j]] })
	h := fnv.New32a()
	for i, n := range hit {
		if i > 0 && totals[n] != totals[hit[i-1]] {
			h.Write([]byte{0})
		}
		h.Write([]byte(n))
	}
	return h.Sum32()
}

// pmdBusyPercent returns each PMD's busy share over the last secs
// seconds from the sampled history, for the current datapath only.
func (c *Commands) pmdBusyPercent(dp *dpif.Datapath, secs int) map[int]int {
	c.sample(true) // include the time up to now
	cv := c.cov
	cv.mu.Lock()
	defer cv.mu.Unlock()
	out := map[int]int{}
	last := len(cv.ticks) - 1
	if last < 1 || cv.ticks[last].dp.Value() != dp {
		return out
	}
	first := last
	for first > 0 && cv.ticks[first-1].dp.Value() == dp &&
		time.Duration(last-first+1)*cv.interval <= time.Duration(secs)*time.Second {
		first--
	}
	if first == last {
		return out
	}
	for pmd, now := range cv.ticks[last].pmd {
		then, ok := cv.ticks[first].pmd[pmd]
		if !ok || now[0] < then[0] || now[1] < then[1] {
			continue
		}
		busy, idle := now[0]-then[0], now[1]-then[1]
		if busy+idle > 0 {
			out[pmd] = int(busy * 100 / (busy + idle))
		}
	}
	return out
}

// maxRingsShown is how many ports' receive rings memory/show lists by
// name (the largest).
const maxRingsShown = 8

type portRing struct {
	name  string
	bytes int64
}

// memoryShow is memory/show: "name:count" pairs, sorted, as Open vSwitch
// reports its objects; plus the Go heap in kB and the receive rings:
// rx-ring-kB (all of them, in effect), rx-rings (how many), the budget
// they reserve from (rx-ring-budget-kB, rx-ring-reserved-kB) and the
// largest by port, rx-ring-kB(NAME).
func (c *Commands) memoryShow([]string) (string, error) {
	usage := map[string]uint64{}
	for _, br := range c.sw.Bridges() {
		usage["bridges"]++
		usage["ports"] += uint64(len(br.Ports))
		if br.OpenFlow != nil {
			usage["mac-entries"] += uint64(br.OpenFlow.MACStats().Entries)
		}
	}
	if dp := c.sw.Datapath(); dp != nil {
		usage["flows"] = uint64(dp.NumFlows())
		usage["pmds"] = uint64(dp.NumPMDs())
		var rings []portRing
		for _, p := range dp.Ports() {
			usage["rxqs"] += uint64(len(p.RxQueuePMDs))
			if b, ok := source.RxRingBytesOf(p.Device); ok {
				usage["rx-ring-kB"] += uint64(b) / 1024
				usage["rx-rings"] += uint64(p.Device.NumRxQueues())
				rings = append(rings, portRing{p.Name, b})
			}
		}
		// The largest rings by port: the ones that grew (an idle
		// port's is the minimum), a bounded list however many ports.
		slices.SortFunc(rings, func(a, b portRing) int { return cmp.Or(cmp.Compare(b.bytes, a.bytes), cmp.Compare(a.name, b.name)) })
		for _, r := range rings[:min(len(rings), maxRingsShown)] {
			usage["rx-ring-kB("+r.name+")"] = uint64(r.bytes) / 1024
		}
	}
	if b, ok := source.RxRingBudgetOf(c.sw); ok {
		usage["rx-ring-budget-kB"] = uint64(b.Limit) / 1024
		usage["rx-ring-reserved-kB"] = uint64(max(b.Reserved, 0)) / 1024
	}
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/sched/goroutines:goroutines"}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 {
		usage["go-heap-kB"] = s[0].Value.Uint64() / 1024
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		usage["goroutines"] = s[1].Value.Uint64()
	}
	names := make([]string, 0, len(usage))
	for n := range usage {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s:%d", n, usage[n])
	}
	return strings.Join(parts, " ") + "\n", nil
}

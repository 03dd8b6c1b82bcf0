package ofproto

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"gvs/dpif"
)

// BridgeConfig is a bridge's NORMAL configuration (Bridge other_config).
type BridgeConfig struct {
	// MACTableSize (mac-table-size), default 8192.
	MACTableSize int
	// MACAgingTime (mac-aging-time), default 300 s.
	MACAgingTime time.Duration
	// ForwardBPDU (forward-bpdu): forward frames to reserved multicast
	// addresses 01:80:c2:00:00:0x instead of dropping them.
	ForwardBPDU bool
	// Now is the clock (tests); default time.Now.
	Now func() time.Time
	// AgingInterval: how often the aging goroutine runs; default 1 s.
	AgingInterval time.Duration
}

func (c *BridgeConfig) setDefaults() {
	if c.MACTableSize <= 0 {
		c.MACTableSize = DefaultMACTableSize
	}
	c.MACTableSize = min(max(c.MACTableSize, minMACTableSize), macTableSizeMaximum)
	if c.MACAgingTime <= 0 {
		c.MACAgingTime = DefaultMACAgingTime
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.AgingInterval <= 0 {
		c.AgingInterval = time.Second
	}
}

// Bridge is one NORMAL switch over a set of datapath ports, with its own
// MAC table. All methods are safe from any goroutine.
type Bridge struct {
	sw   *Switch
	dp   *dpif.Datapath
	name string
	id   uint64

	mu    sync.Mutex // everything below; held before the datapath's flow lock
	cfg   BridgeConfig
	ports map[uint32]*bport
	order []*bport // by port number: the flooding order
	macs  *macTable

	stop chan struct{}
	done chan struct{}
}

func newBridge(sw *Switch, name string, id uint64, cfg BridgeConfig) *Bridge {
	cfg.setDefaults()
	br := &Bridge{
		sw: sw, dp: sw.dp, name: name, id: id, cfg: cfg,
		ports: map[uint32]*bport{},
		macs:  newMACTable(cfg.MACTableSize, cfg.MACAgingTime),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	go br.runAging(cfg.AgingInterval)
	return br
}

// Name returns the bridge's name.
func (br *Bridge) Name() string { return br.name }

// SetConfig changes mac-table-size, mac-aging-time and forward-bpdu. A
// smaller table evicts fairly (see macTable) now. Flows are revalidated.
func (br *Bridge) SetConfig(cfg BridgeConfig) {
	br.mu.Lock()
	defer br.mu.Unlock()
	if cfg.Now == nil {
		cfg.Now = br.cfg.Now
	}
	cfg.setDefaults()
	br.cfg = cfg
	br.macs.max, br.macs.aging = cfg.MACTableSize, cfg.MACAgingTime
	br.macs.shrink()
	br.flushFlowsLocked()
}

// AddPort adds datapath port no to the bridge (or reconfigures it, like
// SetPort).
func (br *Bridge) AddPort(no uint32, cfg PortConfig) error {
	p, err := compilePort(no, cfg)
	if err != nil {
		return err
	}
	if err := br.sw.claimPort(br, no); err != nil {
		return err
	}
	br.mu.Lock()
	defer br.mu.Unlock()
	br.setPortLocked(p)
	return nil
}

// SetPort changes a port's VLAN configuration: MAC entries learned on it
// are forgotten and the bridge's flows revalidated.
func (br *Bridge) SetPort(no uint32, cfg PortConfig) error {
	p, err := compilePort(no, cfg)
	if err != nil {
		return err
	}
	br.mu.Lock()
	defer br.mu.Unlock()
	if br.ports[no] == nil {
		return fmt.Errorf("%w: %d", ErrNoPort, no)
	}
	br.setPortLocked(p)
	return nil
}

func (br *Bridge) setPortLocked(p *bport) {
	br.ports[p.no] = p
	br.reorderLocked()
	br.flushPortMACsLocked(p.no)
	br.flushFlowsLocked()
}

// DelPort removes a port from the bridge.
func (br *Bridge) DelPort(no uint32) error {
	br.mu.Lock()
	if br.ports[no] == nil {
		br.mu.Unlock()
		return fmt.Errorf("%w: %d", ErrNoPort, no)
	}
	delete(br.ports, no)
	br.reorderLocked()
	br.flushPortMACsLocked(no)
	br.flushFlowsLocked()
	br.mu.Unlock()
	br.sw.releasePort(br, no)
	return nil
}

// Ports returns the bridge's port numbers in order.
func (br *Bridge) Ports() []uint32 {
	br.mu.Lock()
	defer br.mu.Unlock()
	out := make([]uint32, len(br.order))
	for i, p := range br.order {
		out[i] = p.no
	}
	return out
}

// MACs lists the MAC table, oldest first (fdb/show).
func (br *Bridge) MACs() []MACEntry {
	br.mu.Lock()
	defer br.mu.Unlock()
	return br.macs.list(br.cfg.Now())
}

// MACStats returns the MAC table counters (fdb/stats-show).
func (br *Bridge) MACStats() MACStats {
	br.mu.Lock()
	defer br.mu.Unlock()
	return br.macs.snapshot()
}

// FlushMACs empties the MAC table (fdb/flush) and revalidates flows. The
// learned/expired/evicted/moved totals carry on, as in Open vSwitch
// (flushed entries are not counted as expired): they are counters that
// must never go back.
func (br *Bridge) FlushMACs() {
	br.mu.Lock()
	defer br.mu.Unlock()
	totals := br.macs.stats
	br.macs = newMACTable(br.cfg.MACTableSize, br.cfg.MACAgingTime)
	br.macs.stats = totals
	br.flushFlowsLocked()
}

func (br *Bridge) reorderLocked() {
	br.order = br.order[:0]
	for _, p := range br.ports {
		br.order = append(br.order, p)
	}
	slices.SortFunc(br.order, func(a, b *bport) int { return int(int64(a.no) - int64(b.no)) })
}

func (br *Bridge) flushPortMACsLocked(no uint32) {
	br.macs.removePort(no)
}

// flushFlowsLocked deletes every datapath flow this bridge installed.
func (br *Bridge) flushFlowsLocked() { br.dp.DelTagged(br.bridgeTag()) }

// RunAging expires MAC entries idle for longer than the aging time, as of
// now. An entry whose source still sends through an installed flow (so
// no upcall refreshes it) is kept alive from the flow's last use, as Open
// vSwitch's revalidators push flow statistics into the MAC table. The
// aging goroutine calls it; tests may call it with a chosen time.
func (br *Bridge) RunAging(now time.Time) (expired int) {
	br.mu.Lock()
	defer br.mu.Unlock()
	limit := now.Add(-br.cfg.MACAgingTime)
	// Decide for every old entry before deleting any flow: deleting one
	// entry's flows would hide the use of another's (A->B is both A's
	// source flow and B's destination flow).
	var keep []*macEntry
	var keepAt []time.Time
	var doomed []*macEntry
	for e := br.macs.oldest(); e != nil && e.updated.Before(limit); e = e.newer() {
		if used, ok := br.dp.TagUsed(br.srcTag(e.vlan, e.mac)); ok && !used.Before(limit) {
			keep, keepAt = append(keep, e), append(keepAt, used)
		} else {
			doomed = append(doomed, e)
		}
	}
	for i, e := range keep {
		br.macs.touch(e, keepAt[i])
	}
	for _, e := range doomed {
		br.macs.remove(e)
		br.macs.stats.Expired++
		br.forgetLocked(e.vlan, e.mac)
	}
	return len(doomed)
}

// runAging ticks at the interval given at creation (passed in: reading
// br.cfg here would race with SetConfig).
func (br *Bridge) runAging(interval time.Duration) {
	defer close(br.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-br.stop:
			return
		case <-t.C:
			br.mu.Lock()
			now := br.cfg.Now()
			br.mu.Unlock()
			br.RunAging(now)
		}
	}
}

func (br *Bridge) close() {
	select {
	case <-br.stop:
		return
	default:
	}
	close(br.stop)
	<-br.done
	br.mu.Lock()
	defer br.mu.Unlock()
	br.flushFlowsLocked()
}

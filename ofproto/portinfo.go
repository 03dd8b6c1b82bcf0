package ofproto

import (
	"time"

	"gvs/ofproto/ofp"
	"gvs/ofproto/xlate"
)

// speedFeatures returns OpenFlow 1.1's current-features bits for a link
// speed (full duplex, copper, as Open vSwitch reports a veth or tap) and
// the speed in kbit/s.
func speedFeatures(mbps int) (uint32, uint32) {
	const copper = 1 << 11
	var f uint32
	switch {
	case mbps <= 0:
		return 0, 0
	case mbps >= 1000000:
		f = 1 << 9
	case mbps >= 100000:
		f = 1 << 8
	case mbps >= 40000:
		f = 1 << 7
	case mbps >= 10000:
		f = 1 << 6
	case mbps >= 1000:
		f = 1 << 5
	case mbps >= 100:
		f = 1 << 3
	case mbps >= 10:
		f = 1 << 1
	default:
		f = 1 << 10
	}
	return f | copper, uint32(mbps) * 1000
}

// setFragHandling sets the switch config's fragment handling.
func (b *Bridge) setFragHandling(h xlate.FragHandling) {
	b.mu.Lock()
	b.fragMode = h
	b.mu.Unlock()
	c := *b.xcfg.Load()
	if c.FragHandling != h {
		c.FragHandling = h
		b.xcfg.Store(&c)
		b.notifyChanged()
	}
}

// PortCounters are a port's device counters (port statistics).
type PortCounters struct {
	RxPackets, TxPackets, RxBytes, TxBytes   uint64
	RxDropped, TxDropped, RxErrors, TxErrors uint64
}

// SetPortCounters installs how the bridge reads a datapath port's
// counters (the switch reads its devices').
func (b *Bridge) SetPortCounters(fn func(dpPort uint32) (PortCounters, bool)) { b.counters.Store(&fn) }

// portStats is one port's OpenFlow port statistics.
func (b *Bridge) portStats(p *xlate.Port) ofp.PortStats {
	st := ofp.PortStats{PortNo: p.OFPort}
	if p.Patch != nil {
		c := p.Patch.Counters.Snapshot()
		st.RxPackets, st.TxPackets, st.RxBytes, st.TxBytes = c.RxPackets, c.TxPackets, c.RxBytes, c.TxBytes
	} else if fn := b.counters.Load(); fn != nil {
		if c, ok := (*fn)(p.DPPort); ok {
			st.RxPackets, st.TxPackets, st.RxBytes, st.TxBytes = c.RxPackets, c.TxPackets, c.RxBytes, c.TxBytes
			st.RxDropped, st.TxDropped, st.RxErrors, st.TxErrors = c.RxDropped, c.TxDropped, c.RxErrors, c.TxErrors
		}
	}
	b.mu.Lock()
	created, dummy := time.Time{}, false
	if ps := b.byName[p.Name]; ps != nil {
		created, dummy = ps.created, ps.dummyQueue
	}
	b.mu.Unlock()
	if dummy || p.Patch != nil {
		// A patch port, like Open vSwitch's netdev_vport, counts only
		// packets and bytes too.
		// Open vSwitch's dummy netdev counts packets and bytes only; the
		// rest is unknown (all ones, "?" in ovs-ofctl).
		const unknown = ^uint64(0)
		st.RxDropped, st.TxDropped, st.RxErrors, st.TxErrors = unknown, unknown, unknown, unknown
		st.RxFrameErr, st.RxOverErr, st.RxCRCErr, st.Collisions = unknown, unknown, unknown, unknown
	}
	if !created.IsZero() {
		d := b.now().Sub(created)
		st.DurationSec, st.DurationNsec = uint32(d/time.Second), uint32(d%time.Second)
	}
	return st
}

// hasDummyQueue reports whether the named port's device has netdev-dummy's
// queue 0.
func (b *Bridge) hasDummyQueue(name string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.byName[name]
	return p != nil && p.dummyQueue
}

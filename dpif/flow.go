package dpif

import (
	"sync/atomic"
	"time"

	"gvs/packet"
)

// FlowSpec describes a megaflow to install: packets whose key, masked with
// Mask, equals Key masked with Mask get Actions.
type FlowSpec struct {
	Key     packet.Key
	Mask    packet.Mask
	Actions Actions
}

// FlowStats are a flow's counters, summed over PMDs.
type FlowStats struct {
	Packets, Bytes uint64
	// Used is when a packet last hit the flow; the install time if none
	// has.
	Used time.Time
	// TCPFlags is the OR of the TCP flags of every packet that hit it.
	TCPFlags uint16
}

// FlowEntry is one flow as Dump and Get report it.
type FlowEntry struct {
	// Handle names the flow for FlowModify, FlowDelete and FlowGet.
	Handle FlowHandle
	Key    packet.Key // already masked
	Mask   packet.Mask
	// Unmasked is the key of the packet whose upcall installed the flow
	// (or the FlowSpec's key), before masking: what Open vSwitch's
	// netdev datapath reports (dump-flows prints its values with the
	// mask), and what re-translation starts from, as OVS's revalidator
	// re-translates a flow's full key.
	Unmasked packet.Key
	Actions  Actions
	Stats    FlowStats
}

// flow is an installed megaflow. Everything but actions, dead and the
// statistics is immutable after install, so PMDs read it without locks.
type flow struct {
	key     packet.Key // masked
	orig    packet.Key // unmasked: FlowEntry.Unmasked
	hash    uint64     // of key, with the classifier's seed
	sub     *subtable
	actions atomic.Pointer[Actions]
	dead    atomic.Bool // set by the writer before unlinking
	created int64       // datapath clock, ns
	// slots has one slot per PMD plus one for non-PMD execution; each
	// slot has one writer, so it updates with loads and stores, not
	// read-modify-write instructions. SetPMDConfig replaces the slice
	// (with every PMD stopped) when more PMDs need more slots.
	slots atomic.Pointer[[]flowSlot]
}

// slot returns PMD (or non-PMD context) i's statistics slot.
func (f *flow) slot(i int) *flowSlot { return &(*f.slots.Load())[i] }

// flowSlot is one writer's share of a flow's statistics, padded to a cache
// line so PMDs never write the same line.
type flowSlot struct {
	packets  atomic.Uint64
	bytes    atomic.Uint64
	used     atomic.Int64
	tcpFlags atomic.Uint32
	_        [36]byte
}

// hit records n packets of size bytes. Only the slot's writer calls it.
func (s *flowSlot) hit(n, bytes uint64, now int64, tcpFlags uint16) {
	s.packets.Store(s.packets.Load() + n)
	s.bytes.Store(s.bytes.Load() + bytes)
	s.used.Store(now)
	if f := uint32(tcpFlags); f&^s.tcpFlags.Load() != 0 {
		s.tcpFlags.Store(s.tcpFlags.Load() | f)
	}
}

// usedNs returns the latest use of f on the datapath clock.
func (f *flow) usedNs() int64 {
	u := f.created
	slots := *f.slots.Load()
	for i := range slots {
		u = max(u, slots[i].used.Load())
	}
	return u
}

func (f *flow) entry(dp *Datapath) FlowEntry {
	e := FlowEntry{Handle: FlowHandle{f}, Key: f.key, Mask: f.sub.mask, Unmasked: f.orig, Actions: *f.actions.Load()}
	slots := *f.slots.Load()
	for i := range slots {
		s := &slots[i]
		e.Stats.Packets += s.packets.Load()
		e.Stats.Bytes += s.bytes.Load()
		e.Stats.TCPFlags |= uint16(s.tcpFlags.Load())
	}
	e.Stats.Used = dp.clockTime(f.usedNs())
	return e
}

// growSlots gives f n statistics slots, keeping its totals: the slots
// it had are copied. Caller holds flowMu and has stopped every PMD, so
// no slot has a writer; lock-free readers see the old slice or the new
// one, both complete.
func (f *flow) growSlots(n int) {
	old := *f.slots.Load()
	if len(old) >= n {
		return
	}
	slots := make([]flowSlot, n)
	for i := range old {
		slots[i].packets.Store(old[i].packets.Load())
		slots[i].bytes.Store(old[i].bytes.Load())
		slots[i].used.Store(old[i].used.Load())
		slots[i].tcpFlags.Store(old[i].tcpFlags.Load())
	}
	f.slots.Store(&slots)
}

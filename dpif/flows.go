package dpif

import (
	"errors"
	"slices"
	"time"

	"gvs/packet"
)

// ErrNoFlow is returned by Del for a flow that does not exist (ENOENT).
var ErrNoFlow = errors.New("dpif: no such flow (ENOENT)")

// insertLocked creates and links a flow; orig is the unmasked key it
// was made for. Caller holds flowMu and has checked that no live flow
// has this mask and masked key.
func (dp *Datapath) insertLocked(mk *packet.Key, m *packet.Mask, orig *packet.Key, actions Actions) *flow {
	f := &flow{key: *mk, orig: *orig, created: dp.now()}
	slots := make([]flowSlot, dp.nslots)
	f.slots.Store(&slots)
	f.actions.Store(&actions)
	dp.cls.insert(f, m)
	dp.nflows.Add(1)
	return f
}

// removeLocked unlinks f. Caller holds flowMu.
func (dp *Datapath) removeLocked(f *flow) {
	if f.dead.Load() {
		return
	}
	dp.cls.remove(f)
	dp.nflows.Add(-1)
}

// Put installs a flow, or replaces the actions of the flow with the same
// mask and masked key (keeping its statistics).
func (dp *Datapath) Put(spec FlowSpec) error {
	exactMetadata(&spec.Mask)
	var mk packet.Key
	spec.Key.ApplyMask(&spec.Mask, &mk)
	actions := slices.Clone(spec.Actions)
	dp.flowMu.Lock()
	defer dp.flowMu.Unlock()
	if f := dp.cls.get(&mk, &spec.Mask); f != nil {
		f.actions.Store(&actions)
		return nil
	}
	dp.insertLocked(&mk, &spec.Mask, &spec.Key, actions)
	return nil
}

// Del deletes the flow with this mask and (masked) key and returns its
// final statistics.
func (dp *Datapath) Del(key packet.Key, mask packet.Mask) (FlowStats, error) {
	exactMetadata(&mask)
	var mk packet.Key
	key.ApplyMask(&mask, &mk)
	dp.flowMu.Lock()
	defer dp.flowMu.Unlock()
	f := dp.cls.get(&mk, &mask)
	if f == nil {
		return FlowStats{}, ErrNoFlow
	}
	dp.removeLocked(f)
	return f.entry(dp).Stats, nil
}

// Get returns the flow with this mask and (masked) key.
func (dp *Datapath) Get(key packet.Key, mask packet.Mask) (FlowEntry, bool) {
	exactMetadata(&mask)
	var mk packet.Key
	key.ApplyMask(&mask, &mk)
	dp.flowMu.Lock()
	defer dp.flowMu.Unlock()
	f := dp.cls.get(&mk, &mask)
	if f == nil {
		return FlowEntry{}, false
	}
	return f.entry(dp), true
}

// Lookup returns the flow a packet with key k would hit, as the PMDs'
// megaflow classifier finds it (ofproto/trace, tests).
func (dp *Datapath) Lookup(k *packet.Key) (FlowEntry, bool) {
	f, _ := dp.cls.lookup(k)
	if f == nil {
		return FlowEntry{}, false
	}
	return f.entry(dp), true
}

// Dump returns every flow, each with its Handle: a snapshot, so the
// caller may take its time over it (re-translate each flow) while PMDs
// keep installing; flows installed meanwhile appear in the next dump.
func (dp *Datapath) Dump() []FlowEntry {
	dp.flowMu.Lock()
	defer dp.flowMu.Unlock()
	out := make([]FlowEntry, 0, dp.nflows.Load())
	dp.cls.forEach(func(f *flow) { out = append(out, f.entry(dp)) })
	return out
}

// FlowHandle names one installed flow for as long as it lives, for the
// revalidator: Dump reports it with each flow (FlowEntry.Handle), and
// FlowModify, FlowDelete and FlowGet take it. The zero FlowHandle names
// no flow. Handles are comparable and may be kept as map keys.
type FlowHandle struct{ f *flow }

// FlowModify replaces the actions of the flow h names, keeping its
// statistics. PMDs see the old or the new list, never a mix: the list is
// swapped with one atomic store. It returns ErrNoFlow for a deleted
// flow.
func (dp *Datapath) FlowModify(h FlowHandle, actions Actions) error {
	a := slices.Clone(actions)
	dp.flowMu.Lock()
	defer dp.flowMu.Unlock()
	if h.f == nil || h.f.dead.Load() {
		return ErrNoFlow
	}
	h.f.actions.Store(&a)
	return nil
}

// FlowDelete deletes the flow h names and returns its final statistics,
// or ErrNoFlow if it is already gone.
func (dp *Datapath) FlowDelete(h FlowHandle) (FlowStats, error) {
	dp.flowMu.Lock()
	defer dp.flowMu.Unlock()
	if h.f == nil || h.f.dead.Load() {
		return FlowStats{}, ErrNoFlow
	}
	dp.removeLocked(h.f)
	return h.f.entry(dp).Stats, nil
}

// Handles returns a handle for every installed flow: a revalidator
// walks them with FlowGet one at a time, without holding a snapshot of
// every entry (a FlowEntry is about a kilobyte; a handle is a pointer).
// Flows deleted meanwhile are simply gone from FlowGet.
func (dp *Datapath) Handles() []FlowHandle {
	dp.flowMu.Lock()
	defer dp.flowMu.Unlock()
	out := make([]FlowHandle, 0, dp.nflows.Load())
	dp.cls.forEach(func(f *flow) { out = append(out, FlowHandle{f}) })
	return out
}

// FlowGet returns the flow h names, if it still exists.
func (dp *Datapath) FlowGet(h FlowHandle) (FlowEntry, bool) {
	if h.f == nil || h.f.dead.Load() {
		return FlowEntry{}, false
	}
	return h.f.entry(dp), true
}

// NumFlows returns the number of installed flows.
func (dp *Datapath) NumFlows() int { return int(dp.nflows.Load()) }

// Flush deletes every flow.
func (dp *Datapath) Flush() {
	dp.delFlowsMatching(func(*flow) bool { return true })
}

// delFlowsMatching deletes the flows for which match is true; returns how
// many.
func (dp *Datapath) delFlowsMatching(match func(*flow) bool) int {
	dp.flowMu.Lock()
	defer dp.flowMu.Unlock()
	var doomed []*flow
	dp.cls.forEach(func(f *flow) {
		if match(f) {
			doomed = append(doomed, f)
		}
	})
	for _, f := range doomed {
		dp.removeLocked(f)
	}
	return len(doomed)
}

// ExpireIdle deletes flows not hit since now minus MaxIdle and returns
// how many; the revalidator calls it periodically.
func (dp *Datapath) ExpireIdle(now time.Time) int {
	limit := int64(now.Sub(dp.epoch) - dp.cfg.MaxIdle)
	return dp.delFlowsMatching(func(f *flow) bool { return f.usedNs() < limit })
}

// revalidate is the revalidator goroutine: it expires idle flows and
// samples receive queue load.
func (dp *Datapath) revalidate() {
	defer dp.wg.Done()
	t := time.NewTicker(dp.cfg.RevalidateInterval)
	defer t.Stop()
	for {
		select {
		case <-dp.stop:
			return
		case now := <-t.C:
			if n := dp.ExpireIdle(now); n > 0 {
				dp.log.Debug("expired idle flows", "count", n)
			}
			dp.sampleRxqLoad(dp.now())
		}
	}
}

// Execute runs actions on a copy of frame as if it arrived on inPort
// (packet-out), with zero metadata. It runs in the non-PMD context,
// serialised with other Execute calls and slow upcalls.
func (dp *Datapath) Execute(frame []byte, inPort uint32, actions Actions) error {
	return dp.ExecuteKey(frame, &packet.Key{InPort: inPort}, actions)
}

// ExecuteKey is Execute with the packet's metadata (in_port, recirc_id,
// pkt_mark, conntrack and tunnel fields: everything before EtherType)
// taken from meta; its packet fields are ignored (the frame is parsed).
func (dp *Datapath) ExecuteKey(frame []byte, meta *packet.Key, actions Actions) error {
	if len(frame) < packet.EthHeaderLen {
		return errors.New("dpif: frame shorter than an Ethernet header")
	}
	return dp.executeNonPMD(frame, packet.Meta{InPort: meta.InPort}, meta, actions)
}

func (dp *Datapath) executeNonPMD(frame []byte, meta packet.Meta, key *packet.Key, actions Actions) error {
	np := &dp.nonPMD
	np.mu.Lock()
	b := np.ctx.pool.Get()
	if b == nil {
		np.mu.Unlock()
		return errors.New("dpif: no buffer for Execute")
	}
	if len(frame) > len(b.Room()) {
		np.ctx.pool.Put(b)
		np.mu.Unlock()
		return errors.New("dpif: frame too large")
	}
	b.SetLen(copy(b.Room(), frame))
	b.Meta = meta
	b.Key = *key
	b.Parse()
	np.ctx.setPorts(dp.ports.Load())
	np.ctx.execute(b, actions)
	np.ctx.flush()
	pending := np.ctx.pendingUser
	np.ctx.pendingUser = nil
	np.mu.Unlock()
	for _, s := range pending {
		dp.deliverUserspace(-1, s)
	}
	return nil
}

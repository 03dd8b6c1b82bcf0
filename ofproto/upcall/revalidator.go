package upcall

import (
	"time"

	"gvs/dpif"
	"gvs/ofproto/mac"
	"gvs/ofproto/xlate"
	"gvs/packet"
)

// ukey is what the revalidator remembers of an installed flow (Open
// vSwitch's udpif_key): the statistics already credited and the xlate
// cache of its last translation, to credit the next delta to.
type ukey struct {
	credited dpif.FlowStats
	cache    xlate.Cache
	bridge   Bridge
	seen     uint64 // round that last saw the flow
	// revalidated is the change count the cache was computed at.
	revalidated uint64
	macSeq      uint64
	translated  bool
}

// revalidator is the state of revalidation; the goroutine holding
// Handler.revMu owns it.
type revalidator struct {
	h      *Handler
	ukeys  map[dpif.FlowHandle]*ukey
	live   map[uint32]bool // recirc ids installed flows refer to (this round)
	round  uint64
	xl     *xlate.Translator
	result RoundStats
}

// RoundStats says what one revalidation round did.
type RoundStats struct {
	Flows, Revalidated, Modified, Deleted int
}

func (r *revalidator) init(h *Handler) {
	r.h = h
	r.ukeys = make(map[dpif.FlowHandle]*ukey)
	r.live = make(map[uint32]bool)
	r.xl = xlate.NewTranslator()
}

// run is the revalidator goroutine.
func (h *Handler) run() {
	defer close(h.done)
	t := time.NewTicker(h.interval)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
		case <-h.wake:
		}
		h.Revalidate()
		// A burst of changes (a flood of new MAC addresses, a stream of
		// flow mods) is handled in rounds at most minRoundGap apart,
		// not a round per change.
		select {
		case <-h.stop:
			return
		case <-time.After(minRoundGap):
		}
	}
}

// minRoundGap is the least time between two revalidation rounds.
const minRoundGap = 10 * time.Millisecond

// Revalidate runs one revalidation round now and reports what it did:
// every datapath flow whose translation may have changed (a change was
// signalled, or its bridge's MAC table changed, since it was last
// translated) is translated again; its actions are updated, or it is
// deleted if the new translation needs bits its mask lacks, fails or
// must be slow-pathed; every flow's statistics delta is credited to the
// rules, groups and MAC entries its translation hit.
func (h *Handler) Revalidate() RoundStats {
	h.revMu.Lock()
	defer h.revMu.Unlock()
	return h.rev.round1()
}

func (r *revalidator) round1() RoundStats {
	h := r.h
	r.round++
	r.result = RoundStats{}
	clear(r.live)
	changes := h.changes.Load()
	ports := *h.ports.Load()
	// One flow at a time (FlowGet), not a snapshot of every entry: the
	// handles are small, the entries are not.
	for _, fh := range h.dp.Handles() {
		fe, ok := h.dp.FlowGet(fh)
		if !ok {
			continue // deleted meanwhile
		}
		r.result.Flows++
		uk := r.ukeys[fh]
		b, ok := ports[fe.Key.InPort]
		if !ok || b.Bridge == nil || b.Port == nil {
			r.delete(fh, uk)
			continue
		}
		if uk == nil || uk.bridge != b.Bridge {
			uk = &ukey{bridge: b.Bridge}
			r.ukeys[fh] = uk
		}
		uk.seen = r.round
		// Patch ports: NORMAL in a peer bridge counts as well.
		macSeq := macSeqOf(b.Bridge) + uk.cache.PeerMACSeq()
		if !uk.translated || uk.revalidated != changes || uk.cache.UsesMACs && uk.macSeq != macSeq {
			if !r.revalidate(&b, uk, fh, &fe) {
				r.delete(fh, uk)
				continue
			}
			uk.revalidated, uk.macSeq, uk.translated = changes, macSeq, true
		}
		r.credit(uk, fe.Stats)
		r.noteRecircIDs(&fe)
	}
	for fh, uk := range r.ukeys {
		if uk.seen != r.round {
			delete(r.ukeys, fh)
		}
	}
	r.sweepRecirc()
	r.ageMACs(ports)
	st := &h.stats
	st.rounds.Add(1)
	st.revalidated.Add(uint64(r.result.Revalidated))
	st.modified.Add(uint64(r.result.Modified))
	st.deleted.Add(uint64(r.result.Deleted))
	return r.result
}

// revalidate translates an installed flow again; false means delete it.
func (r *revalidator) revalidate(b *Binding, uk *ukey, fh dpif.FlowHandle, fe *dpif.FlowEntry) bool {
	r.result.Revalidated++
	in, ok := r.h.input(b, &fe.Key)
	if !ok {
		return false
	}
	in.SideEffects = false
	res := r.xl.Translate(&in)
	if res.Error != nil || res.AvoidCaching {
		return false
	}
	mask := res.Wildcards.DatapathMask()
	mask.InPort = ^uint32(0)
	if needsMoreBits(&mask, &fe.Mask) {
		return false
	}
	want := res.Actions
	if res.Slow != 0 {
		want = slowPath(res)
	}
	if !want.Equal(fe.Actions) {
		if err := r.h.dp.FlowModify(fh, want); err != nil {
			return false
		}
		r.result.Modified++
	}
	uk.cache = cloneCache(&res.Cache)
	return true
}

// needsMoreBits reports whether the new mask has a bit the installed one
// lacks: the installed flow then matches packets the new translation
// would tell apart (Open vSwitch: "flow_wildcards_has_extra").
func needsMoreBits(newMask, installed *packet.Mask) bool {
	var n, o packet.Key
	n, o = packet.Key(*newMask), packet.Key(*installed)
	nw, ow := keyWords(&n), keyWords(&o)
	for i := range nw {
		if nw[i]&^ow[i] != 0 {
			return true
		}
	}
	return false
}

// delete removes a flow, crediting its last statistics.
func (r *revalidator) delete(fh dpif.FlowHandle, uk *ukey) {
	st, err := r.h.dp.FlowDelete(fh)
	if err == nil && uk != nil {
		r.credit(uk, st)
	}
	delete(r.ukeys, fh)
	r.result.Deleted++
}

// credit hands the statistics gathered since the last credit to what the
// flow's translation hit (Open vSwitch's xlate_push_stats).
func (r *revalidator) credit(uk *ukey, now dpif.FlowStats) {
	d := xlate.Stats{
		Packets:  now.Packets - min(now.Packets, uk.credited.Packets),
		Bytes:    now.Bytes - min(now.Bytes, uk.credited.Bytes),
		TCPFlags: now.TCPFlags,
	}
	uk.credited = now
	if d.Packets == 0 {
		return
	}
	d.Used = bridgeTime(uk.bridge, now.Used)
	// A datapath flow does not count the packet of its upcall: every
	// packet credited here came after it and may teach NORMAL.
	xlate.PushStatsLearning(uk.bridge, &uk.cache, d, true)
	for i := range uk.cache.Learned {
		_ = uk.bridge.Learn(&uk.cache.Learned[i])
	}
}

// cloneCache copies a translator's cache (valid only until its next
// translation).
func cloneCache(c *xlate.Cache) xlate.Cache {
	return xlate.Cache{
		Rules:       append([]xlate.Rule{}, c.Rules...),
		Groups:      append([]xlate.GroupHit(nil), c.Groups...),
		Normal:      append([]xlate.MACLearning(nil), c.Normal...),
		Learned:     append([]xlate.LearnedFlow(nil), c.Learned...),
		UsesMACs:    c.UsesMACs,
		FinTimeouts: append([]xlate.FinTimeout(nil), c.FinTimeouts...),
		Patches:     append([]xlate.PatchCrossing(nil), c.Patches...),
		PeerMACs:    append([]*mac.Table(nil), c.PeerMACs...),
	}
}

// ageMACs expires each bridge's idle MAC entries, after this round
// credited the traffic of installed flows to them (Open vSwitch runs
// mac_learning_run from the same loop that pushes the statistics).
func (r *revalidator) ageMACs(ports Ports) {
	done := map[Bridge]bool{}
	for _, b := range ports {
		if b.Bridge == nil || done[b.Bridge] {
			continue
		}
		done[b.Bridge] = true
		macs := b.Bridge.MACs()
		if macs == nil {
			continue
		}
		now := time.Now
		if cfg := b.Bridge.Config(); cfg != nil && cfg.Now != nil {
			now = cfg.Now
		}
		if macs.Expire(now()) > 0 {
			r.h.kick()
		}
	}
}

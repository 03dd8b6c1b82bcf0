package dpadapter

import (
	"maps"
	"slices"

	"gvs/bridge"
	"gvs/dpif/conntrack"
)

var _ bridge.ConntrackDatapath = (*Datapath)(nil)

// ctApplied is what the adapter last gave the current datapath's
// tracker: the policies by CT_Timeout_Policy UUID with the ids they got
// (Open vSwitch's tracker, like ours, names policies by number; 0 is the
// default) and each zone's policy id.
type ctApplied struct {
	tracker  conntrack.Conntrack
	ids      map[string]uint32
	policies map[uint32]map[string]uint32
	zones    map[uint16]uint32
	nextID   uint32
	// zonePolicies is what the bridges were given for their ct actions:
	// zones with a policy of their own, shared read-only.
	zonePolicies map[uint16]uint32
}

// SetConntrackConfig implements bridge.ConntrackDatapath: it keeps cfg
// and applies to the datapath's tracker what differs from what it has
// (all of it to a tracker it has not configured yet, as when the
// datapath starts after the configuration arrived).
func (d *Datapath) SetConntrackConfig(cfg bridge.ConntrackConfig) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	want := bridge.ConntrackConfig{Policies: map[string]map[string]uint32{}, Zones: maps.Clone(cfg.Zones)}
	for id, p := range cfg.Policies {
		want.Policies[id] = maps.Clone(p)
	}
	d.ctWant = &want
	d.applyConntrackLocked()
	return nil
}

// applyConntrackLocked brings the tracker to d.ctWant. Caller holds d.mu.
func (d *Datapath) applyConntrackLocked() {
	if d.ctWant == nil || d.dp == nil {
		return
	}
	ct := d.dp.Conntrack()
	if ct == nil {
		return
	}
	a := &d.ct
	if a.tracker != ct {
		*a = ctApplied{tracker: ct, ids: map[string]uint32{}, policies: map[uint32]map[string]uint32{},
			zones: map[uint16]uint32{}, nextID: 1}
	}
	want := d.ctWant
	// Policies first (new or changed), so a zone never names a policy
	// the tracker lacks.
	for _, uuid := range slices.Sorted(maps.Keys(want.Policies)) {
		p := want.Policies[uuid]
		id, ok := a.ids[uuid]
		if !ok {
			id = a.nextID
			a.nextID++
			a.ids[uuid] = id
		}
		if old, ok := a.policies[id]; ok && maps.Equal(old, p) {
			continue
		}
		ct.SetTimeoutPolicy(id, conntrack.TimeoutPolicy(maps.Clone(p)))
		a.policies[id] = maps.Clone(p)
	}
	for _, zone := range slices.Sorted(maps.Keys(want.Zones)) {
		id := a.ids[want.Zones[zone]] // "" (no policy): 0, the default
		if old, ok := a.zones[zone]; ok && old == id {
			continue
		}
		ct.SetZonePolicy(zone, id)
		a.zones[zone] = id
	}
	for _, zone := range slices.Sorted(maps.Keys(a.zones)) {
		if _, ok := want.Zones[zone]; !ok {
			ct.SetZonePolicy(zone, 0)
			delete(a.zones, zone)
		}
	}
	for _, uuid := range slices.Sorted(maps.Keys(a.ids)) {
		if _, ok := want.Policies[uuid]; !ok {
			id := a.ids[uuid]
			ct.DelTimeoutPolicy(id)
			delete(a.ids, uuid)
			delete(a.policies, id)
		}
	}
	// The translation names a zone's policy in the ct actions that commit
	// there (timeout=ID), as Open vSwitch's datapath actions do.
	zp := map[uint16]uint32{}
	for zone, id := range a.zones {
		if id != 0 {
			zp[zone] = id
		}
	}
	if len(zp) == 0 {
		zp = nil
	}
	if !maps.Equal(zp, a.zonePolicies) {
		a.zonePolicies = zp
		for _, br := range d.bridges {
			br.SetCTZoneTimeoutPolicies(zp)
		}
	}
}

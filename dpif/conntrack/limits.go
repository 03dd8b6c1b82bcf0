package conntrack

import "sort"

// SetMaxConns sets the global connection limit (dpctl/ct-set-maxconns).
// Connections over it stay; new ones are refused until below.
func (t *Tracker) SetMaxConns(n uint32) { t.maxConns.Store(n) }

// MaxConns returns the global connection limit.
func (t *Tracker) MaxConns() uint32 { return t.maxConns.Load() }

// zoneLimitOf is the limit of zone (its own, else the default; 0:
// none).
func (t *Tracker) zoneLimitOf(zone uint16) uint32 {
	limits := *t.zoneLimit.Load()
	if len(limits) == 0 {
		return 0
	}
	if l, ok := limits[int32(zone)]; ok {
		return l
	}
	return limits[DefaultZoneLimit]
}

// editLimits replaces the limits with a copy edited by fn; t.mu held.
func (t *Tracker) editLimits(fn func(map[int32]uint32)) {
	n := map[int32]uint32{}
	for z, l := range *t.zoneLimit.Load() {
		n[z] = l
	}
	fn(n)
	t.zoneLimit.Store(&n)
}

// SetZoneLimits sets per-zone limits (Zone DefaultZoneLimit: the
// default of zones without their own). A limit of 0 means unlimited, as
// the kernel's and later Open vSwitch's. Zones out of range are ignored.
func (t *Tracker) SetZoneLimits(limits []ZoneLimit) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.editLimits(func(m map[int32]uint32) {
		for _, l := range limits {
			if l.Zone >= DefaultZoneLimit && l.Zone <= 0xffff {
				m[l.Zone] = l.Limit
			}
		}
	})
}

// ZoneLimits reports the default limit first (Zone DefaultZoneLimit),
// then each zone asked for with the limit that applies to it, or, when
// none is asked for, every zone with a limit of its own; with the zone's
// connection count (0 under no limit, as dpctl/ct-get-limits prints).
// A default limit applies to each zone on its own, as in Open vSwitch
// from 3.2 (3.1 counted all the zones under it together).
func (t *Tracker) ZoneLimits(zones []uint16) []ZoneLimit {
	t.mu.Lock()
	defer t.mu.Unlock()
	limits := *t.zoneLimit.Load()
	out := []ZoneLimit{{Zone: DefaultZoneLimit, Limit: limits[DefaultZoneLimit]}}
	if len(zones) == 0 {
		for z, l := range limits {
			if z != DefaultZoneLimit {
				out = append(out, ZoneLimit{Zone: z, Limit: l, Count: t.zoneCount[uint16(z)].Load()})
			}
		}
		sort.Slice(out[1:], func(i, j int) bool { return out[1+i].Zone < out[1+j].Zone })
		return out
	}
	for _, z := range zones {
		// A zone no limit applies to reports no count, as Open vSwitch
		// counts connections only against a limit.
		l := ZoneLimit{Zone: int32(z), Limit: t.zoneLimitOf(z)}
		if l.Limit != 0 {
			l.Count = t.zoneCount[z].Load()
		}
		out = append(out, l)
	}
	return out
}

// DelZoneLimits drops zones' own limits (they fall back to the default).
func (t *Tracker) DelZoneLimits(zones []uint16) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.editLimits(func(m map[int32]uint32) {
		for _, z := range zones {
			delete(m, int32(z))
		}
	})
}

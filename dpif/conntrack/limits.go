package conntrack

import "sort"

// SetMaxConns sets the global connection limit (dpctl/ct-set-maxconns).
// Connections over it stay; new ones are refused until below.
func (t *Tracker) SetMaxConns(n uint32) { t.maxConns.Store(n) }

// MaxConns returns the global connection limit.
func (t *Tracker) MaxConns() uint32 { return t.maxConns.Load() }

// zoneLimitOf is the limit of zone (its own, else the default; 0:
// none); t.mu held.
func (t *Tracker) zoneLimitOf(zone uint16) uint32 {
	if len(t.zoneLimit) == 0 {
		return 0
	}
	if l, ok := t.zoneLimit[int32(zone)]; ok {
		return l
	}
	return t.zoneLimit[DefaultZoneLimit]
}

// SetZoneLimits sets per-zone limits (Zone DefaultZoneLimit: the
// default of zones without their own). A limit of 0 means unlimited, as
// the kernel's and later Open vSwitch's. Zones out of range are ignored.
func (t *Tracker) SetZoneLimits(limits []ZoneLimit) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, l := range limits {
		if l.Zone < DefaultZoneLimit || l.Zone > 0xffff {
			continue
		}
		t.zoneLimit[l.Zone] = l.Limit
	}
}

// ZoneLimits reports the default limit first (Zone DefaultZoneLimit),
// then each zone asked for with the limit that applies to it, or, when
// none is asked for, every zone with a limit of its own; with the zone's
// connection count.
func (t *Tracker) ZoneLimits(zones []uint16) []ZoneLimit {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := []ZoneLimit{{Zone: DefaultZoneLimit, Limit: t.zoneLimit[DefaultZoneLimit]}}
	if len(zones) == 0 {
		for z, l := range t.zoneLimit {
			if z != DefaultZoneLimit {
				out = append(out, ZoneLimit{Zone: z, Limit: l, Count: t.zoneCount[uint16(z)]})
			}
		}
		sort.Slice(out[1:], func(i, j int) bool { return out[1+i].Zone < out[1+j].Zone })
		return out
	}
	for _, z := range zones {
		out = append(out, ZoneLimit{Zone: int32(z), Limit: t.zoneLimitOf(z), Count: t.zoneCount[z]})
	}
	return out
}

// DelZoneLimits drops zones' own limits (they fall back to the default).
func (t *Tracker) DelZoneLimits(zones []uint16) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, z := range zones {
		delete(t.zoneLimit, int32(z))
	}
}

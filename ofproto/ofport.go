package ofproto

import (
	"slices"
	"time"

	"gvs/ofproto/mf"
)

// OpenFlow port numbering, as Open vSwitch's ofproto allocates it.
const (
	// ofportAutoMax: automatic numbers come from the lower half of the
	// range (the upper half is for controllers), as alloc_ofp_port does.
	ofportAutoMax = 32767
	// ofportReuseAge: a number given up is not handed to another port for
	// an hour, so flows that still name it cannot catch the wrong port.
	ofportReuseAge = time.Hour
)

// PortNumbers hands out one bridge's automatic port numbers as Open
// vSwitch's ofproto does: round robin from the last number given, skipping
// numbers in use and numbers freed less than ofportReuseAge ago (when
// every number is taken or recent, the one freed longest ago). It lives as
// long as the bridge; after a restart numbering starts again from 1, the
// ports keeping theirs from the database.
type PortNumbers struct {
	last    uint32               // the number handed out last (alloc_port_no)
	freedAt map[uint32]time.Time // numbers given up, and when
}

// NewPortNumbers returns the numbering of a new bridge.
func NewPortNumbers() *PortNumbers {
	return &PortNumbers{freedAt: map[uint32]time.Time{}}
}

// pick returns a number for a new port, or 0 when there is none.
func (a *PortNumbers) pick(used func(uint32) bool, now time.Time) uint32 {
	var lru uint32
	var lruAt time.Time
	for range ofportAutoMax {
		if a.last++; a.last > ofportAutoMax {
			a.last = 1
		}
		n := a.last
		if used(n) {
			continue
		}
		at, freed := a.freedAt[n]
		if !freed || now.Sub(at) >= ofportReuseAge {
			return n
		}
		if lru == 0 || at.Before(lruAt) {
			lru, lruAt = n, at
		}
	}
	return lru
}

// Freed records that a port gave number n up at now.
func (a *PortNumbers) Freed(n uint32, now time.Time) {
	if n == mf.PortLocal || n == 0 {
		return
	}
	if _, ok := a.freedAt[n]; !ok {
		a.freedAt[n] = now
	}
}

// taken forgets that n was freed (a port has it again).
func (a *PortNumbers) taken(n uint32) { delete(a.freedAt, n) }

// PortRequest is one port to number (Open vSwitch's iface_pick_ofport
// inputs): its name, its Interface.ofport_request (0 if unset) and the
// number it had before (in the database after a restart; 0 if none).
type PortRequest struct {
	Name     string
	Request  int
	Previous int
}

// Assign numbers new ports as Open vSwitch's iface_pick_ofport and
// alloc_ofp_port do: ofport_request wins when that number is free; then a
// port keeps the number it had; the rest get new numbers, in name order.
// used reports the numbers other ports have. A port missing from the
// result got none (every number is in use).
func (a *PortNumbers) Assign(reqs []PortRequest, used func(uint32) bool, now time.Time) map[string]uint32 {
	out := make(map[string]uint32, len(reqs))
	mine := map[uint32]bool{}
	inUse := func(n uint32) bool { return mine[n] || used(n) }
	take := func(name string, n int) bool {
		if n < 1 || n > int(mf.PortMax)-1 || inUse(uint32(n)) {
			return false
		}
		mine[uint32(n)] = true
		out[name] = uint32(n)
		a.taken(uint32(n))
		return true
	}
	var later, rest []PortRequest
	for _, r := range reqs {
		if !take(r.Name, r.Request) {
			later = append(later, r)
		}
	}
	for _, r := range later {
		if !take(r.Name, r.Previous) {
			rest = append(rest, r)
		}
	}
	slices.SortFunc(rest, func(x, y PortRequest) int {
		switch {
		case x.Name < y.Name:
			return -1
		case x.Name > y.Name:
			return 1
		}
		return 0
	})
	for _, r := range rest {
		if n := a.pick(inUse, now); n != 0 {
			take(r.Name, int(n))
		}
	}
	return out
}

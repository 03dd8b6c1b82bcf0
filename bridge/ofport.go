package bridge

import (
	"slices"
	"time"
)

// Open vSwitch's OpenFlow port numbers: the bridge's own (LOCAL) port,
// and the highest number a normal port may have.
const (
	ofportLocal = 65534
	ofportMax   = 65279
	ofportNone  = -1 // an interface that failed, as Open vSwitch writes it

	// Like Open vSwitch's alloc_ofp_port: automatic numbers come from the
	// lower half of the range (the upper half is for controllers), and a
	// number given up is not handed to another port for an hour, so
	// flows that still name it cannot catch the wrong port.
	ofportAutoMax  = 32767
	ofportReuseAge = time.Hour
)

// ofportAllocator hands out one bridge's automatic port numbers as Open
// vSwitch's ofproto does: round robin from the last number given, skipping
// numbers in use and numbers freed less than ofportReuseAge ago (when
// every number is taken or recent, the one freed longest ago). It lives as
// long as the reconciler; after a restart numbering starts again from 1,
// the ports keeping theirs from the database.
type ofportAllocator struct {
	last    int               // the number handed out last (alloc_port_no)
	freedAt map[int]time.Time // numbers given up, and when
}

func newOfportAllocator() *ofportAllocator {
	return &ofportAllocator{freedAt: map[int]time.Time{}}
}

// pick returns a number for a new port, or 0 when there is none.
func (a *ofportAllocator) pick(used map[int]bool, now time.Time) int {
	lru, lruAt := 0, time.Time{}
	for range ofportAutoMax {
		if a.last++; a.last > ofportAutoMax {
			a.last = 1
		}
		n := a.last
		if used[n] {
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

// settle records which numbers the bridge gave up (values in before, not
// in after; the keys do not matter) and forgets the ones in use again.
func (a *ofportAllocator) settle(before, after map[string]int, now time.Time) {
	inUse := map[int]bool{}
	for _, n := range after {
		inUse[n] = true
		delete(a.freedAt, n)
	}
	for _, n := range before {
		if n != ofportLocal && !inUse[n] {
			if _, ok := a.freedAt[n]; !ok {
				a.freedAt[n] = now
			}
		}
	}
}

// assignOfports numbers the working interfaces of one bridge, as Open
// vSwitch's iface_pick_ofport and alloc_ofp_port do: ofport_request wins
// when that number is free; then numbers stay what they were (what we
// assigned before, else what the database holds, so they survive a
// restart); the rest get new numbers from alloc, in name order. The
// bridge's own port is LOCAL. prev holds the numbers assigned before, by
// Interface UUID; the result replaces it for this bridge. The caller then
// settles alloc with the bridge's numbers before and after.
func assignOfports(b *desiredBridge, working func(*desiredIface) bool, prev map[string]int, alloc *ofportAllocator, now time.Time) map[string]int {
	out := map[string]int{}
	used := map[int]bool{}
	var rest []*desiredIface
	for _, di := range b.ifaces {
		if !working(di) {
			continue
		}
		if di.row.Name == b.row.Name {
			out[di.row.UUID] = ofportLocal
			continue
		}
		rest = append(rest, di)
	}
	take := func(di *desiredIface, n int) bool {
		if n < 1 || n > ofportMax || used[n] {
			return false
		}
		used[n] = true
		out[di.row.UUID] = n
		return true
	}
	var later []*desiredIface
	for _, di := range rest {
		if req := derefInt(di.row.OfportRequest); req > 0 && take(di, req) {
			continue
		}
		later = append(later, di)
	}
	var unnumbered []*desiredIface
	for _, di := range later {
		n, ok := prev[di.row.UUID]
		if !ok {
			n = derefInt(di.row.Ofport)
		}
		if !take(di, n) {
			unnumbered = append(unnumbered, di)
		}
	}
	slices.SortFunc(unnumbered, func(a, b *desiredIface) int { return cmpString(a.row.Name, b.row.Name) })
	for _, di := range unnumbered {
		take(di, alloc.pick(used, now))
	}
	return out
}

package bridge

import "slices"

// Open vSwitch's OpenFlow port numbers: the bridge's own (LOCAL) port,
// and the highest number a normal port may have.
const (
	ofportLocal = 65534
	ofportMax   = 65279
	ofportNone  = -1 // an interface that failed, as Open vSwitch writes it
)

// assignOfports numbers the working interfaces of one bridge. Numbers stay
// what they were (what we assigned before, else what the database holds,
// so they survive a restart); ofport_request wins when that number is
// free; the rest take the lowest free number from 1. The bridge's own
// port is LOCAL. prev holds the numbers assigned before, by Interface
// UUID; the result replaces it for this bridge.
func assignOfports(b *desiredBridge, working func(*desiredIface) bool, prev map[string]int) map[string]int {
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
	next := 1
	for _, di := range unnumbered {
		for used[next] {
			next++
		}
		take(di, next)
	}
	return out
}

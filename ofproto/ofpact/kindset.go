package ofpact

import "strings"

// KindSet is a set of action kinds (OVS's uint64_t ofpacts bitmap), e.g.
// the actions a switch supports, which features replies and table
// features report per OpenFlow version.
type KindSet uint64

// AllKinds is every action kind gvs decodes.
const AllKinds = KindSet(1)<<numKinds - 2 // all but KindInvalid

// Has reports whether s contains k.
func (s KindSet) Has(k Kind) bool { return s&(1<<k) != 0 }

// ofpatMap maps kinds to the standard OFPAT numbers of a version (OVS's
// get_ofpact_map).
var (
	ofpatMap10 = []struct {
		k     Kind
		ofpat uint8
	}{
		{KindOutput, 0}, {KindSetVLANVID, 1}, {KindSetVLANPCP, 2}, {KindStripVLAN, 3},
		{KindSetEthSrc, 4}, {KindSetEthDst, 5}, {KindSetIPv4Src, 6}, {KindSetIPv4Dst, 7},
		{KindSetIPDSCP, 8}, {KindSetL4SrcPort, 9}, {KindSetL4DstPort, 10}, {KindEnqueue, 11},
	}
	ofpatMap11 = []struct {
		k     Kind
		ofpat uint8
	}{
		{KindOutput, 0}, {KindSetVLANVID, 1}, {KindSetVLANPCP, 2}, {KindSetEthSrc, 3},
		{KindSetEthDst, 4}, {KindSetIPv4Src, 5}, {KindSetIPv4Dst, 6}, {KindSetIPDSCP, 7},
		{KindSetIPECN, 8}, {KindSetL4SrcPort, 9}, {KindSetL4DstPort, 10},
		{KindSetMPLSLabel, 13}, {KindSetMPLSTC, 14}, {KindSetMPLSTTL, 15}, {KindDecMPLSTTL, 16},
		{KindPushVLAN, 17}, {KindStripVLAN, 18}, {KindPushMPLS, 19}, {KindPopMPLS, 20},
		{KindSetQueue, 21}, {KindGroup, 22}, {KindSetIPTTL, 23}, {KindDecTTL, 24},
	}
	ofpatMap12 = []struct {
		k     Kind
		ofpat uint8
	}{
		{KindOutput, 0}, {KindSetMPLSTTL, 15}, {KindDecMPLSTTL, 16}, {KindPushVLAN, 17},
		{KindStripVLAN, 18}, {KindPushMPLS, 19}, {KindPopMPLS, 20}, {KindSetQueue, 21},
		{KindGroup, 22}, {KindSetIPTTL, 23}, {KindDecTTL, 24}, {KindSetField, 25},
	}
)

func ofpatMap(version uint8) []struct {
	k     Kind
	ofpat uint8
} {
	switch version {
	case of10:
		return ofpatMap10
	case of11:
		return ofpatMap11
	}
	return ofpatMap12
}

// ToOpenFlow returns the OFPAT bitmap of version for s (OVS's
// ofpact_bitmap_to_openflow): the standard actions among s.
func (s KindSet) ToOpenFlow(version uint8) uint32 {
	var b uint32
	for _, m := range ofpatMap(version) {
		if s.Has(m.k) {
			b |= 1 << m.ofpat
		}
	}
	return b
}

// KindSetFromOpenFlow is the inverse of ToOpenFlow (OVS's
// ofpact_bitmap_from_openflow).
func KindSetFromOpenFlow(bitmap uint32, version uint8) KindSet {
	var s KindSet
	for _, m := range ofpatMap(version) {
		if bitmap&(1<<m.ofpat) != 0 {
			s |= 1 << m.k
		}
	}
	return s
}

// String lists the kinds' names separated by spaces, "<none>" if empty
// (OVS's ofpact_bitmap_format).
func (s KindSet) String() string {
	if s == 0 {
		return "<none>"
	}
	var names []string
	for k := Kind(1); k < numKinds; k++ {
		if s.Has(k) {
			names = append(names, k.String())
		}
	}
	return strings.Join(names, " ")
}

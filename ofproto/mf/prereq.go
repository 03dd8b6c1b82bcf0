package mf

import "gvs/packet"

// Connection tracking state bits (ct_state), as Open vSwitch's CS_*.
const (
	CTStateNew         uint32 = 1 << 0
	CTStateEstablished uint32 = 1 << 1
	CTStateRelated     uint32 = 1 << 2
	CTStateReply       uint32 = 1 << 3
	CTStateInvalid     uint32 = 1 << 4
	CTStateTracked     uint32 = 1 << 5
	CTStateSNAT        uint32 = 1 << 6
	CTStateDNAT        uint32 = 1 << 7
)

// ICMPv6 neighbour discovery types.
const (
	icmp6NeighborSolicit = 135
	icmp6NeighborAdvert  = 136
)

// PrereqsOK reports whether f satisfies the field's prerequisites
// (mf_are_prereqs_ok): whether reading or writing the field means
// anything for this packet. It consults only f; use AddPrereqWildcards
// to record in a megaflow mask what the answer depended on.
func (fd *Field) PrereqsOK(f *Flow) bool { return prereqsOK(fd.Prereq, f, nil) }

// PrereqsOKWildcards is PrereqsOK that also unwildcards in wc every
// field the answer depended on (translation testing a prerequisite).
func (fd *Field) PrereqsOKWildcards(f *Flow, wc *Wildcards) bool {
	return prereqsOK(fd.Prereq, f, wc)
}

// AddPrereqWildcards unwildcards in w the fields (dl_type, nw_proto,
// ICMP type and code, the VLAN present bit) that the field's
// prerequisites are made of.
func (fd *Field) AddPrereqWildcards(w *Wildcards) {
	m := &w.Masks
	switch fd.Prereq {
	case PrereqNone, PrereqEthernet:
	case PrereqVLANVID:
		m.VLANs[0].TPID |= tpidPresent
	case PrereqARP, PrereqIPv4, PrereqIPv6, PrereqIPAny:
		m.EtherType = 0xffff
	case PrereqTCP, PrereqUDP, PrereqSCTP, PrereqICMPv4, PrereqICMPv6:
		m.EtherType = 0xffff
		m.IPProto = 0xff
	case PrereqCTValid:
		m.CTState |= CTStateNew | CTStateEstablished | CTStateReply
	case PrereqND, PrereqNDSolicit, PrereqNDAdvert:
		m.EtherType = 0xffff
		m.IPProto = 0xff
		m.ICMPType = 0xff
		m.ICMPCode = 0xff
	}
}

func isIPAny(f *Flow) bool {
	return f.EtherType == packet.EtherTypeIPv4 || f.EtherType == packet.EtherTypeIPv6
}

// prereqsOK tests p on f; with wc non-nil it unwildcards what it read,
// as Open vSwitch's is_* helpers in packets.h/flow.h do.
func prereqsOK(p Prereq, f *Flow, wc *Wildcards) bool {
	proto := func(want uint8) bool {
		if !isIPAny(f) {
			return false
		}
		if wc != nil {
			wc.Masks.IPProto = 0xff
		}
		return f.IPProto == want
	}
	l4 := func(want uint8) bool {
		// As Open vSwitch: a later fragment has no L4 header (the mask
		// of nw_frag is not recorded).
		return proto(want) && f.IPFrag&packet.FragLater == 0
	}
	nd := func() bool {
		if f.EtherType != packet.EtherTypeIPv6 || !proto(packet.ProtoICMPv6) {
			return false
		}
		if wc != nil {
			wc.Masks.ICMPType = 0xff
			wc.Masks.ICMPCode = 0xff
		}
		return (f.ICMPType == icmp6NeighborSolicit || f.ICMPType == icmp6NeighborAdvert) && f.ICMPCode == 0
	}
	if wc != nil && p != PrereqNone && p != PrereqEthernet && p != PrereqVLANVID && p != PrereqCTValid {
		wc.Masks.EtherType = 0xffff
	}
	switch p {
	case PrereqNone, PrereqEthernet:
		return true
	case PrereqARP:
		return f.EtherType == packet.EtherTypeARP || f.EtherType == packet.EtherTypeRARP
	case PrereqVLANVID:
		if wc != nil {
			wc.Masks.VLANs[0].TPID |= tpidPresent
		}
		return f.VLANs[0].TPID != 0
	case PrereqIPv4:
		return f.EtherType == packet.EtherTypeIPv4
	case PrereqIPv6:
		return f.EtherType == packet.EtherTypeIPv6
	case PrereqIPAny:
		return isIPAny(f)
	case PrereqTCP:
		return l4(packet.ProtoTCP)
	case PrereqUDP:
		return l4(packet.ProtoUDP)
	case PrereqSCTP:
		return l4(packet.ProtoSCTP)
	case PrereqICMPv4:
		return f.EtherType == packet.EtherTypeIPv4 && proto(packet.ProtoICMP)
	case PrereqICMPv6:
		return f.EtherType == packet.EtherTypeIPv6 && proto(packet.ProtoICMPv6)
	case PrereqCTValid:
		// A fully extracted flow with a valid connection always has
		// new, established or reply set (is_ct_valid).
		const valid = CTStateNew | CTStateEstablished | CTStateReply
		if wc != nil {
			wc.Masks.CTState |= valid
		}
		return f.CTState&valid != 0
	case PrereqND:
		return nd()
	case PrereqNDSolicit:
		return nd() && f.ICMPType == icmp6NeighborSolicit
	case PrereqNDAdvert:
		return nd() && f.ICMPType == icmp6NeighborAdvert
	}
	return false
}

// PrereqsMatched reports whether match m (normalised) satisfies the
// field's prerequisites: the check every match field and set_field
// destination must pass, else OFPBMC_BAD_PREREQ / OFPBAC_MATCH_INCONSISTENT
// (mf_are_match_prereqs_ok). As in Open vSwitch it tests the match's
// values, which are zero where wildcarded.
func (fd *Field) PrereqsMatched(m *Match) bool {
	if fd.Prereq == PrereqCTValid {
		// A match is valid for conntrack fields if it requires some
		// state bit that implies a valid entry, or tracked and
		// explicitly not invalid.
		st, mask := m.Flow.CTState, m.Wildcards.Masks.CTState
		const implies = CTStateNew | CTStateEstablished | CTStateRelated | CTStateReply | CTStateSNAT | CTStateDNAT
		return st&implies != 0 ||
			(st&CTStateTracked != 0 && mask&CTStateInvalid != 0 && st&CTStateInvalid == 0)
	}
	return prereqsOK(fd.Prereq, &m.Flow, nil)
}

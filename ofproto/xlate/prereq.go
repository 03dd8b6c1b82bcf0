package xlate

import (
	"gvs/ofproto/mf"
	"gvs/packet"
)

// prereqsOK reports whether the flow has fd (Open vSwitch's
// mf_are_prereqs_ok), unwildcarding the fields it examined: the decision
// depends on them.
func prereqsOK(fd *mf.Field, f *mf.Flow, wc *mf.Wildcards) bool {
	m := &wc.Masks
	ethType := func(t uint16) bool { m.EtherType = 0xffff; return f.EtherType == t }
	ipAny := func() bool { m.EtherType = 0xffff; return isIP(f) }
	proto := func(p uint8) bool {
		if !ipAny() {
			return false
		}
		m.IPProto = 0xff
		return f.IPProto == p
	}
	switch fd.Prereq {
	case mf.PrereqNone, mf.PrereqEthernet:
		return true
	case mf.PrereqARP:
		return ethType(packet.EtherTypeARP) || f.EtherType == etherTypeRARP
	case mf.PrereqVLANVID:
		m.VLANs[0].TPID = 0xffff
		return f.VLANs[0].Present()
	case mf.PrereqIPv4:
		return ethType(packet.EtherTypeIPv4)
	case mf.PrereqIPv6:
		return ethType(packet.EtherTypeIPv6)
	case mf.PrereqIPAny:
		return ipAny()
	case mf.PrereqTCP:
		return proto(ipProtoTCP) && !laterFrag(f, m)
	case mf.PrereqUDP:
		return proto(ipProtoUDP) && !laterFrag(f, m)
	case mf.PrereqSCTP:
		return proto(ipProtoSCTP) && !laterFrag(f, m)
	case mf.PrereqICMPv4:
		return f.EtherType == packet.EtherTypeIPv4 && proto(ipProtoICMP)
	case mf.PrereqICMPv6:
		return f.EtherType == packet.EtherTypeIPv6 && proto(ipProtoICMPv6)
	case mf.PrereqND, mf.PrereqNDSolicit, mf.PrereqNDAdvert:
		if !(f.EtherType == packet.EtherTypeIPv6 && proto(ipProtoICMPv6)) {
			return false
		}
		m.ICMPType, m.ICMPCode = 0xff, 0xff
		if f.ICMPCode != 0 {
			return false
		}
		switch fd.Prereq {
		case mf.PrereqNDSolicit:
			return f.ICMPType == icmp6NS
		case mf.PrereqNDAdvert:
			return f.ICMPType == icmp6NA
		}
		return f.ICMPType == icmp6NS || f.ICMPType == icmp6NA
	case mf.PrereqCTValid:
		m.CTState |= ctStateTracked | ctStateInvalid
		return f.CTState&ctStateTracked != 0 && f.CTState&ctStateInvalid == 0
	}
	return false
}

func laterFrag(f *mf.Flow, m *mf.Flow) bool {
	m.IPFrag |= packet.FragLater
	return f.IsLaterFragment()
}

// Conntrack state bits (Open vSwitch's CS_TRACKED, CS_INVALID).
const (
	ctStateTracked uint32 = 0x20
	ctStateInvalid uint32 = 0x10
)

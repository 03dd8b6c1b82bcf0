package mf

import "gvs/packet"

// Tunnel flag bits of packet.Key.TunFlags (Open vSwitch's FLOW_TNL_F_*).
const (
	TunFlagOAM          uint16 = 1 << 0
	TunFlagDontFragment uint16 = 1 << 1
	TunFlagCsum         uint16 = 1 << 2
	TunFlagKey          uint16 = 1 << 3
)

// WildcardsForPacket returns the wildcards that cover every field a
// packet like f has (flow_wildcards_init_for_packet): the metadata the
// datapath sets, L2, and the L3/L4 fields its dl_type and nw_proto say
// exist. Registers, metadata, conj_id and actset_output stay wildcarded.
func WildcardsForPacket(f *Flow) Wildcards {
	var w Wildcards
	m := &w.Masks
	if f.TunDst != [4]byte{} || f.TunIPv6Dst != [16]byte{} {
		if f.TunFlags&TunFlagKey != 0 {
			m.TunID = ^uint64(0)
		}
		m.TunSrc, m.TunDst = [4]byte{0xff, 0xff, 0xff, 0xff}, [4]byte{0xff, 0xff, 0xff, 0xff}
		m.TunIPv6Src, m.TunIPv6Dst = onesArray16(), onesArray16()
		m.TunFlags, m.TunTOS, m.TunTTL = 0xffff, 0xff, 0xff
		m.TunTpSrc, m.TunTpDst = 0xffff, 0xffff
		m.TunGBPID, m.TunGBPFlags = 0xffff, 0xff
		if f.TunMetaLen != 0 {
			m.TunMetaLen = 0xff
			for i := range m.TunMetadata {
				m.TunMetadata[i] = 0xff
			}
		}
	} else if f.TunID != 0 {
		m.TunID = ^uint64(0)
	}
	m.SkbPriority, m.PktMark = ^uint32(0), ^uint32(0)
	m.CTState, m.CTZone, m.CTMark, m.CTLabel = ^uint32(0), 0xffff, ^uint32(0), onesArray16()
	m.RecircID, m.DPHash, m.InPort = ^uint32(0), ^uint32(0), ^uint32(0)

	all6 := [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	all4 := [4]byte{0xff, 0xff, 0xff, 0xff}
	m.DstMAC, m.SrcMAC, m.EtherType = all6, all6, 0xffff
	for i := range f.VLANs {
		// Show the first absent tag too ("vlan_tci=0x0000").
		m.VLANs[i] = packet.VLANTag{TPID: 0xffff, TCI: 0xffff}
		if !f.VLANs[i].Present() {
			break
		}
	}

	switch f.EtherType {
	case packet.EtherTypeIPv4:
		m.SrcIPv4, m.DstIPv4 = all4, all4
		m.CTNwSrc, m.CTNwDst = all4, all4
	case packet.EtherTypeIPv6:
		m.SrcIPv6, m.DstIPv6 = onesArray16(), onesArray16()
		m.FlowLabel = ^uint32(0)
		if prereqsOK(PrereqND, f, nil) {
			m.ICMPType, m.ICMPCode = 0xff, 0xff // is_nd consults them
			m.ARPSHA, m.ARPTHA = all6, all6
			m.NDTarget = onesArray16()
		} else {
			m.CTIPv6Src, m.CTIPv6Dst = onesArray16(), onesArray16()
		}
	case packet.EtherTypeARP, packet.EtherTypeRARP:
		m.SrcIPv4, m.DstIPv4 = all4, all4
		m.ARPOp = 0xffff
		m.ARPSHA, m.ARPTHA = all6, all6
		return w
	default:
		return w
	}
	m.IPFrag = packet.FragAny | packet.FragLater
	m.IPTOS, m.IPTTL, m.IPProto = 0xff, 0xff, 0xff
	m.CTNwProto, m.CTTpSrc, m.CTTpDst = 0xff, 0xffff, 0xffff
	if f.IPFrag&packet.FragLater == 0 {
		switch f.IPProto {
		case packet.ProtoICMP, packet.ProtoICMPv6:
			m.ICMPType, m.ICMPCode = 0xff, 0xff
		case packet.ProtoTCP:
			m.SrcPort, m.DstPort = 0xffff, 0xffff
			m.TCPFlags = 0xffff
		case packet.ProtoUDP, packet.ProtoSCTP:
			m.SrcPort, m.DstPort = 0xffff, 0xffff
		}
	}
	return w
}

// Format writes a packet's flow as Open vSwitch's flow_format (the
// "Flow:" line of ofproto/trace, packet-ins): the fields the packet has,
// leaving out packet context that is zero.
func (f *Flow) Format() string {
	m := Match{Flow: *f, Wildcards: WildcardsForPacket(f)}
	w := &m.Wildcards.Masks
	if f.InPort == 0 {
		w.InPort = 0
	}
	if f.SkbPriority == 0 {
		w.SkbPriority = 0
	}
	if f.PktMark == 0 {
		w.PktMark = 0
	}
	if f.RecircID == 0 {
		w.RecircID = 0
	}
	if f.DPHash == 0 {
		w.DPHash = 0
	}
	if f.CTState == 0 {
		w.CTState = 0
	}
	if f.CTZone == 0 {
		w.CTZone = 0
	}
	if f.CTMark == 0 {
		w.CTMark = 0
	}
	if f.CTLabel == [16]byte{} {
		w.CTLabel = [16]byte{}
	}
	if !fieldTable[CTNwProto].PrereqsMatched(&m) || f.CTNwProto == 0 {
		w.CTNwProto, w.CTTpSrc, w.CTTpDst = 0, 0, 0
		w.CTNwSrc, w.CTNwDst = [4]byte{}, [4]byte{}
		w.CTIPv6Src, w.CTIPv6Dst = [16]byte{}, [16]byte{}
	}
	return m.Format(DefaultPriority)
}

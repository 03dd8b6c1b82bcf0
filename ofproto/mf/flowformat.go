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
// "Flow:" and "Final flow:" lines of ofproto/trace, packet-ins): the
// fields the packet has plus the registers and metadata (match_wc_init),
// leaving out packet context that is zero. Like Open vSwitch's, a
// single-tagged flow shows the absent second tag as "vlan_tci1=0x0000",
// a name its own flow parser does not take back.
func (f *Flow) Format() string {
	m := Match{Flow: *f, Wildcards: WildcardsForPacket(f)}
	w := &m.Wildcards.Masks
	for i, r := range f.Regs {
		if r != 0 {
			w.Regs[i] = ^uint32(0)
		}
	}
	if f.Metadata != 0 {
		w.Metadata = ^uint64(0)
	}
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

// FlowMetadata returns the pipeline metadata of f as a match, as Open
// vSwitch's flow_get_metadata builds it for packet-ins and continuations:
// each non-zero tunnel field, metadata, register and pkt_mark exactly,
// in_port always, and the conntrack state (with dl_type, and the
// original tuple when the connection is valid) when f has one. The
// tunnel metadata options are left out.
func FlowMetadata(f *Flow) Match {
	var m Match
	set := func(id FieldID, nonZero bool) {
		if nonZero {
			fd := &fieldTable[id]
			fd.SetMatch(&m, fd.Get(f))
		}
	}
	set(TunID, f.TunID != 0)
	if fl := f.TunFlags & TunFlagOAM; fl != 0 {
		fieldTable[TunFlags].SetMatch(&m, ValueFromUint(uint64(fl), 2))
	}
	set(TunSrc, f.TunSrc != [4]byte{})
	set(TunDst, f.TunDst != [4]byte{})
	set(TunIPv6Src, f.TunIPv6Src != [16]byte{})
	set(TunIPv6Dst, f.TunIPv6Dst != [16]byte{})
	set(TunGBPID, f.TunGBPID != 0)
	set(TunGBPFlags, f.TunGBPFlags != 0)
	set(Metadata, f.Metadata != 0)
	for i, r := range f.Regs {
		set(Reg0+FieldID(i), r != 0)
	}
	set(PktMark, f.PktMark != 0)
	set(InPort, true)
	if f.CTState != 0 {
		set(CTState, true)
		set(EthType, true)
		valid := f.CTState&(CTStateNew|CTStateEstablished|CTStateReply) != 0
		if valid && f.CTNwProto != 0 {
			switch f.EtherType {
			case packet.EtherTypeIPv4:
				set(CTNwSrc, true)
				set(CTNwDst, true)
			case packet.EtherTypeIPv6:
				set(CTIPv6Src, true)
				set(CTIPv6Dst, true)
			}
			if f.EtherType == packet.EtherTypeIPv4 || f.EtherType == packet.EtherTypeIPv6 {
				set(CTNwProto, true)
				set(CTTpSrc, true)
				set(CTTpDst, true)
			}
		}
	}
	set(CTZone, f.CTZone != 0)
	set(CTMark, f.CTMark != 0)
	set(CTLabel, f.CTLabel != [16]byte{})
	return m
}

// ApplyTo copies the fields m matches into f (m normalised): how a
// resumed or packet-out pipeline takes its metadata from a decoded match.
func (m *Match) ApplyTo(f *Flow) {
	fw, mw, vw := f.Words(), m.Wildcards.Masks.Words(), m.Flow.Words()
	for i := range fw {
		fw[i] = fw[i]&^mw[i] | vw[i]&mw[i]
	}
}

package mf

import (
	"encoding/binary"
	"math/bits"

	"gvs/ofproto/ofperr"
	"gvs/packet"
)

// OpenFlow 1.0's ofp10_match and OpenFlow 1.1's standard ofp11_match:
// fixed structures with wildcard bits, converted as Open vSwitch's
// ofp-match.c does, including its normalisation (fields the match's
// dl_type/nw_proto cannot have are dropped), which in gvs also routes
// nw_proto to arp_op for ARP and tp_src/tp_dst to the ICMP type/code.

// Sizes of the fixed matches.
const (
	OFP10MatchLen = 40
	OFP11MatchLen = 88
)

// OpenFlow 1.0 wildcard bits (OFPFW10_*).
const (
	ofpfw10InPort     = 1 << 0
	ofpfw10DLVLAN     = 1 << 1
	ofpfw10DLSrc      = 1 << 2
	ofpfw10DLDst      = 1 << 3
	ofpfw10DLType     = 1 << 4
	ofpfw10NWProto    = 1 << 5
	ofpfw10TPSrc      = 1 << 6
	ofpfw10TPDst      = 1 << 7
	ofpfw10NWSrcShift = 8
	ofpfw10NWDstShift = 14
	ofpfw10DLVLANPCP  = 1 << 20
	ofpfw10NWTOS      = 1 << 21
	ofpfw10All        = 1<<22 - 1
)

// OpenFlow 1.1 wildcard bits (OFPFW11_*).
const (
	ofpfw11InPort    = 1 << 0
	ofpfw11DLVLAN    = 1 << 1
	ofpfw11DLVLANPCP = 1 << 2
	ofpfw11DLType    = 1 << 3
	ofpfw11NWTOS     = 1 << 4
	ofpfw11NWProto   = 1 << 5
	ofpfw11TPSrc     = 1 << 6
	ofpfw11TPDst     = 1 << 7
	ofpfw11MPLSLabel = 1 << 8
	ofpfw11MPLSTC    = 1 << 9
)

// VLAN ids with a meaning in the fixed matches.
const (
	ofp10VLANNone = 0xffff // OFP10_VLAN_NONE
	ofp11VIDAny   = 0xfffe // OFPVID11_ANY
	ofp11VIDNone  = 0xffff // OFPVID11_NONE
)

// wcbitsToNetmask converts an OpenFlow 1.0 wildcard bit count to a mask.
func wcbitsToNetmask(n uint32) uint32 {
	n &= 0x3f
	if n >= 32 {
		return 0
	}
	return ^uint32(0) << n
}

// netmaskToWCBits is the reverse (for CIDR masks).
func netmaskToWCBits(m uint32) uint32 {
	if m == 0 {
		return 32
	}
	return uint32(bits.TrailingZeros32(m))
}

// pendingL34 holds the network and transport part of a fixed match
// before normalisation routes it to gvs's fields.
type pendingL34 struct {
	hasTOS           bool
	tos              uint8
	hasProto         bool
	proto            uint8
	nwSrc, nwDst     uint32
	nwSrcM, nwDstM   uint32
	hasTPSrc, hasTPD bool
	tpSrc, tpDst     uint16
}

// apply sets the fields of p that m's dl_type (and nw_proto) allow
// (ofputil_normalize_match).
func (p *pendingL34) apply(m *Match) {
	f, w := &m.Flow, &m.Wildcards.Masks
	if w.EtherType == 0 {
		return
	}
	setAddrs := func() {
		binary.BigEndian.PutUint32(w.SrcIPv4[:], p.nwSrcM)
		binary.BigEndian.PutUint32(w.DstIPv4[:], p.nwDstM)
		binary.BigEndian.PutUint32(f.SrcIPv4[:], p.nwSrc&p.nwSrcM)
		binary.BigEndian.PutUint32(f.DstIPv4[:], p.nwDst&p.nwDstM)
	}
	switch f.EtherType {
	case packet.EtherTypeIPv4, packet.EtherTypeIPv6:
		if p.hasTOS {
			w.IPTOS |= 0xfc
			f.IPTOS = f.IPTOS&0x03 | p.tos&0xfc
		}
		if p.hasProto {
			w.IPProto = 0xff
			f.IPProto = p.proto
		}
		if f.EtherType == packet.EtherTypeIPv4 {
			setAddrs()
		}
		l4 := false
		icmp := false
		switch f.IPProto {
		case packet.ProtoTCP, packet.ProtoUDP, packet.ProtoSCTP:
			l4 = true
		case packet.ProtoICMP:
			icmp = f.EtherType == packet.EtherTypeIPv4
		case packet.ProtoICMPv6:
			icmp = f.EtherType == packet.EtherTypeIPv6
		}
		if l4 {
			if p.hasTPSrc {
				w.SrcPort, f.SrcPort = 0xffff, p.tpSrc
			}
			if p.hasTPD {
				w.DstPort, f.DstPort = 0xffff, p.tpDst
			}
		}
		if icmp {
			if p.hasTPSrc {
				w.ICMPType, f.ICMPType = 0xff, uint8(p.tpSrc)
			}
			if p.hasTPD {
				w.ICMPCode, f.ICMPCode = 0xff, uint8(p.tpDst)
			}
		}
	case packet.EtherTypeARP, packet.EtherTypeRARP:
		if p.hasProto {
			w.ARPOp, f.ARPOp = 0xffff, uint16(p.proto)
		}
		setAddrs()
	}
}

// pullOFP10Match decodes an ofp10_match (ofputil_match_from_ofp10_match
// followed by ofputil_normalize_match).
func pullOFP10Match(b []byte) (Match, []byte, error) {
	if len(b) < OFP10MatchLen {
		return Match{}, b, ofperr.OFPBMC_BAD_LEN
	}
	var m Match
	wc := binary.BigEndian.Uint32(b) & ofpfw10All
	f, w := &m.Flow, &m.Wildcards.Masks
	if wc&ofpfw10InPort == 0 {
		w.InPort, f.InPort = 0xffffffff, uint32(binary.BigEndian.Uint16(b[4:]))
	}
	if wc&ofpfw10DLSrc == 0 {
		w.SrcMAC = [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
		copy(f.SrcMAC[:], b[6:12])
	}
	if wc&ofpfw10DLDst == 0 {
		w.DstMAC = [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
		copy(f.DstMAC[:], b[12:18])
	}
	dlVLAN, pcp := binary.BigEndian.Uint16(b[18:]), b[20]
	if wc&ofpfw10DLType == 0 {
		w.EtherType, f.EtherType = 0xffff, binary.BigEndian.Uint16(b[22:])
	}
	// VLAN: OFP10_VLAN_NONE matched means "no tag".
	tciField := &fieldTable[VLANTCI]
	if wc&ofpfw10DLVLAN == 0 && dlVLAN == ofp10VLANNone {
		tciField.SetMatchMasked(&m, Value{}, ValueFromUint(0xffff, 2))
	} else {
		var mask uint16
		if wc&ofpfw10DLVLANPCP == 0 {
			mask |= vlanPCPMask | vlanCFI
		}
		if wc&ofpfw10DLVLAN == 0 {
			mask |= vlanVIDMask | vlanCFI
		}
		if mask != 0 {
			tci := dlVLAN&vlanVIDMask | uint16(pcp)<<13&vlanPCPMask | vlanCFI
			tciField.SetMatchMasked(&m, ValueFromUint(uint64(tci&mask), 2), ValueFromUint(uint64(mask), 2))
		}
	}
	p := pendingL34{
		hasTOS: wc&ofpfw10NWTOS == 0, tos: b[24],
		hasProto: wc&ofpfw10NWProto == 0, proto: b[25],
		nwSrc: binary.BigEndian.Uint32(b[28:]), nwDst: binary.BigEndian.Uint32(b[32:]),
		nwSrcM:   wcbitsToNetmask(wc >> ofpfw10NWSrcShift),
		nwDstM:   wcbitsToNetmask(wc >> ofpfw10NWDstShift),
		hasTPSrc: wc&ofpfw10TPSrc == 0, tpSrc: binary.BigEndian.Uint16(b[36:]),
		hasTPD: wc&ofpfw10TPDst == 0, tpDst: binary.BigEndian.Uint16(b[38:]),
	}
	if err := p.checkICMP(&m); err != nil {
		return Match{}, b, err
	}
	p.apply(&m)
	m.Normalize()
	return m, b[OFP10MatchLen:], nil
}

// checkICMP refuses an ICMP type or code above 255: Open vSwitch keeps
// OpenFlow 1.0's 16-bit tp_src/tp_dst and so accepts such a match (which
// then matches no packet), but gvs's key has 8-bit ICMP fields, where
// the value would match other packets. (OpenFlow 1.1 matches get
// OFPBMC_BAD_FIELD for this in Open vSwitch too.)
func (p *pendingL34) checkICMP(m *Match) error {
	f := &m.Flow
	if m.Wildcards.Masks.EtherType == 0 || !p.hasProto {
		return nil
	}
	icmp := (f.EtherType == packet.EtherTypeIPv4 && p.proto == packet.ProtoICMP) ||
		(f.EtherType == packet.EtherTypeIPv6 && p.proto == packet.ProtoICMPv6)
	if icmp && ((p.hasTPSrc && p.tpSrc > 0xff) || (p.hasTPD && p.tpDst > 0xff)) {
		return ofperr.OFPBMC_BAD_VALUE
	}
	return nil
}

// l34Wire is the network/transport part of m as the fixed matches carry
// it: nw_proto is arp_op's low byte for ARP, tp_src/tp_dst the ICMP type
// and code for ICMP.
func l34Wire(m *Match) (p pendingL34) {
	f, w := &m.Flow, &m.Wildcards.Masks
	switch f.EtherType {
	case packet.EtherTypeARP, packet.EtherTypeRARP:
		p.hasProto, p.proto = w.ARPOp != 0, uint8(f.ARPOp)
	default:
		p.hasProto, p.proto = w.IPProto != 0, f.IPProto
	}
	p.hasTOS, p.tos = w.IPTOS&0xfc != 0, f.IPTOS&0xfc
	p.nwSrc, p.nwSrcM = binary.BigEndian.Uint32(f.SrcIPv4[:]), binary.BigEndian.Uint32(w.SrcIPv4[:])
	p.nwDst, p.nwDstM = binary.BigEndian.Uint32(f.DstIPv4[:]), binary.BigEndian.Uint32(w.DstIPv4[:])
	if (f.IPProto == packet.ProtoICMP || f.IPProto == packet.ProtoICMPv6) && isIPAny(f) {
		p.hasTPSrc, p.tpSrc = w.ICMPType != 0, uint16(f.ICMPType)
		p.hasTPD, p.tpDst = w.ICMPCode != 0, uint16(f.ICMPCode)
	} else {
		p.hasTPSrc, p.tpSrc = w.SrcPort != 0, f.SrcPort
		p.hasTPD, p.tpDst = w.DstPort != 0, f.DstPort
	}
	return p
}

// vlanWire returns vlan_tci's value and mask of m.
func vlanWire(m *Match) (tci, mask uint16) {
	return tci16(&m.Flow, false), tci16(&m.Wildcards.Masks, true)
}

func tci16(f *Flow, mask bool) uint16 { return tci(f, mask) }

// appendOFP10Match encodes m as an ofp10_match
// (ofputil_match_to_ofp10_match).
func appendOFP10Match(b []byte, m *Match) []byte {
	f, w := &m.Flow, &m.Wildcards.Masks
	var o [OFP10MatchLen]byte
	var wc uint32
	if w.InPort == 0 {
		wc |= ofpfw10InPort
	}
	if w.EtherType == 0 {
		wc |= ofpfw10DLType
	}
	p := l34Wire(m)
	if !p.hasProto {
		wc |= ofpfw10NWProto
	}
	wc |= netmaskToWCBits(p.nwSrcM) << ofpfw10NWSrcShift
	wc |= netmaskToWCBits(p.nwDstM) << ofpfw10NWDstShift
	if !p.hasTOS {
		wc |= ofpfw10NWTOS
	}
	if !p.hasTPSrc {
		wc |= ofpfw10TPSrc
	}
	if !p.hasTPD {
		wc |= ofpfw10TPDst
	}
	if w.SrcMAC == [6]byte{} {
		wc |= ofpfw10DLSrc
	}
	if w.DstMAC == [6]byte{} {
		wc |= ofpfw10DLDst
	}
	tci, tciMask := vlanWire(m)
	var dlVLAN uint16
	var pcp uint8
	switch {
	case tciMask == 0:
		wc |= ofpfw10DLVLAN | ofpfw10DLVLANPCP
	case tciMask&vlanCFI != 0 && tci&vlanCFI == 0:
		dlVLAN = ofp10VLANNone
	default:
		if tciMask&vlanVIDMask == 0 {
			wc |= ofpfw10DLVLAN
		} else {
			dlVLAN = tci & vlanVIDMask
		}
		if tciMask&vlanPCPMask == 0 {
			wc |= ofpfw10DLVLANPCP
		} else {
			pcp = uint8(tci >> 13)
		}
	}
	binary.BigEndian.PutUint32(o[0:], wc)
	binary.BigEndian.PutUint16(o[4:], uint16(f.InPort))
	copy(o[6:12], f.SrcMAC[:])
	copy(o[12:18], f.DstMAC[:])
	binary.BigEndian.PutUint16(o[18:], dlVLAN)
	o[20] = pcp
	binary.BigEndian.PutUint16(o[22:], f.EtherType)
	o[24] = p.tos
	o[25] = p.proto
	binary.BigEndian.PutUint32(o[28:], p.nwSrc)
	binary.BigEndian.PutUint32(o[32:], p.nwDst)
	binary.BigEndian.PutUint16(o[36:], p.tpSrc)
	binary.BigEndian.PutUint16(o[38:], p.tpDst)
	return append(b, o[:]...)
}

// pullOFP11Match decodes an ofp_match of type STANDARD or OXM
// (ofputil_pull_ofp11_match).
func pullOFP11Match(b []byte) (Match, []byte, error) {
	if len(b) < 4 {
		return Match{}, b, ofperr.OFPBMC_BAD_LEN
	}
	typ, length := binary.BigEndian.Uint16(b), int(binary.BigEndian.Uint16(b[2:]))
	switch typ {
	case ofp11MatchTypeStandard:
		if length != OFP11MatchLen || len(b) < OFP11MatchLen {
			return Match{}, b, ofperr.OFPBMC_BAD_LEN
		}
		m, err := decodeOFP11Standard(b[:OFP11MatchLen])
		return m, b[OFP11MatchLen:], err
	case ofp11MatchTypeOXM:
		return PullOXMMatch(b)
	}
	return Match{}, b, ofperr.OFPBMC_BAD_TYPE
}

// decodeOFP11Standard is ofputil_match_from_ofp11_match (normalised).
func decodeOFP11Standard(b []byte) (Match, error) {
	var m Match
	f, w := &m.Flow, &m.Wildcards.Masks
	wc := binary.BigEndian.Uint32(b[8:])
	if wc&ofpfw11InPort == 0 {
		port, ok := PortFromOFP11(binary.BigEndian.Uint32(b[4:]))
		if !ok {
			return Match{}, ofperr.OFPBMC_BAD_VALUE
		}
		w.InPort, f.InPort = 0xffffffff, port
	}
	for i := 0; i < 6; i++ {
		w.SrcMAC[i] = ^b[18+i]
		f.SrcMAC[i] = b[12+i] & w.SrcMAC[i]
		w.DstMAC[i] = ^b[30+i]
		f.DstMAC[i] = b[24+i] & w.DstMAC[i]
	}
	dlVLAN, pcp := binary.BigEndian.Uint16(b[36:]), b[38]
	tciField := &fieldTable[VLANTCI]
	if wc&ofpfw11DLVLAN == 0 {
		var tci, mask uint16
		switch {
		case dlVLAN == ofp11VIDNone:
			tci, mask = 0, 0xffff
		case dlVLAN == ofp11VIDAny:
			tci, mask = vlanCFI, vlanCFI
		case dlVLAN < 4096:
			tci, mask = vlanCFI|dlVLAN, vlanCFI|vlanVIDMask
		default:
			return Match{}, ofperr.OFPBMC_BAD_VALUE
		}
		if dlVLAN != ofp11VIDNone && wc&ofpfw11DLVLANPCP == 0 {
			if pcp > 7 {
				return Match{}, ofperr.OFPBMC_BAD_VALUE
			}
			tci |= uint16(pcp) << 13
			mask |= vlanPCPMask
		}
		tciField.SetMatchMasked(&m, ValueFromUint(uint64(tci), 2), ValueFromUint(uint64(mask), 2))
	}
	if wc&ofpfw11DLType == 0 {
		w.EtherType, f.EtherType = 0xffff, binary.BigEndian.Uint16(b[40:])
	}
	ipv4 := f.EtherType == packet.EtherTypeIPv4
	arp := f.EtherType == packet.EtherTypeARP || f.EtherType == packet.EtherTypeRARP
	p := pendingL34{
		hasProto: (ipv4 || arp) && wc&ofpfw11NWProto == 0, proto: b[43],
		nwSrc: binary.BigEndian.Uint32(b[44:]), nwSrcM: ^binary.BigEndian.Uint32(b[48:]),
		nwDst: binary.BigEndian.Uint32(b[52:]), nwDstM: ^binary.BigEndian.Uint32(b[56:]),
	}
	if ipv4 && wc&ofpfw11NWTOS == 0 {
		if b[42]&^0xfc != 0 {
			return Match{}, ofperr.OFPBMC_BAD_VALUE
		}
		p.hasTOS, p.tos = true, b[42]
	}
	if !ipv4 && !arp {
		p.nwSrcM, p.nwDstM = 0, 0
	}
	tpSrc, tpDst := binary.BigEndian.Uint16(b[60:]), binary.BigEndian.Uint16(b[62:])
	if ipv4 {
		switch {
		case p.hasProto && p.proto == packet.ProtoICMP:
			if wc&ofpfw11TPSrc == 0 {
				if tpSrc >= 0x100 {
					return Match{}, ofperr.OFPBMC_BAD_FIELD
				}
				p.hasTPSrc, p.tpSrc = true, tpSrc
			}
			if wc&ofpfw11TPDst == 0 {
				if tpDst >= 0x100 {
					return Match{}, ofperr.OFPBMC_BAD_FIELD
				}
				p.hasTPD, p.tpDst = true, tpDst
			}
		case p.hasProto && (p.proto == packet.ProtoTCP || p.proto == packet.ProtoUDP || p.proto == packet.ProtoSCTP):
			p.hasTPSrc, p.tpSrc = wc&ofpfw11TPSrc == 0, tpSrc
			p.hasTPD, p.tpDst = wc&ofpfw11TPDst == 0, tpDst
		}
	}
	p.apply(&m)
	w.Metadata = ^binary.BigEndian.Uint64(b[80:])
	f.Metadata = binary.BigEndian.Uint64(b[72:])
	m.Normalize()
	return m, nil
}

// appendOFP11Standard encodes m as a standard ofp11_match
// (ofputil_match_to_ofp11_match).
func appendOFP11Standard(b []byte, m *Match) []byte {
	f, w := &m.Flow, &m.Wildcards.Masks
	var o [OFP11MatchLen]byte
	var wc uint32
	binary.BigEndian.PutUint16(o[0:], ofp11MatchTypeStandard)
	binary.BigEndian.PutUint16(o[2:], OFP11MatchLen)
	if w.InPort == 0 {
		wc |= ofpfw11InPort
	} else {
		binary.BigEndian.PutUint32(o[4:], PortToOFP11(f.InPort))
	}
	for i := 0; i < 6; i++ {
		o[12+i], o[18+i] = f.SrcMAC[i], ^w.SrcMAC[i]
		o[24+i], o[30+i] = f.DstMAC[i], ^w.DstMAC[i]
	}
	tci, tciMask := vlanWire(m)
	switch {
	case tciMask == 0:
		wc |= ofpfw11DLVLAN | ofpfw11DLVLANPCP
	case tciMask&vlanCFI != 0 && tci&vlanCFI == 0:
		binary.BigEndian.PutUint16(o[36:], ofp11VIDNone)
		wc |= ofpfw11DLVLANPCP
	default:
		if tciMask&vlanVIDMask == 0 {
			binary.BigEndian.PutUint16(o[36:], ofp11VIDAny)
		} else {
			binary.BigEndian.PutUint16(o[36:], tci&vlanVIDMask)
		}
		if tciMask&vlanPCPMask == 0 {
			wc |= ofpfw11DLVLANPCP
		} else {
			o[38] = uint8(tci >> 13)
		}
	}
	if w.EtherType == 0 {
		wc |= ofpfw11DLType
	} else {
		binary.BigEndian.PutUint16(o[40:], f.EtherType)
	}
	p := l34Wire(m)
	if !p.hasTOS {
		wc |= ofpfw11NWTOS
	} else {
		o[42] = p.tos
	}
	if !p.hasProto {
		wc |= ofpfw11NWProto
	} else {
		o[43] = p.proto
	}
	binary.BigEndian.PutUint32(o[44:], p.nwSrc)
	binary.BigEndian.PutUint32(o[48:], ^p.nwSrcM)
	binary.BigEndian.PutUint32(o[52:], p.nwDst)
	binary.BigEndian.PutUint32(o[56:], ^p.nwDstM)
	if !p.hasTPSrc {
		wc |= ofpfw11TPSrc
	} else {
		binary.BigEndian.PutUint16(o[60:], p.tpSrc)
	}
	if !p.hasTPD {
		wc |= ofpfw11TPDst
	} else {
		binary.BigEndian.PutUint16(o[62:], p.tpDst)
	}
	wc |= ofpfw11MPLSLabel | ofpfw11MPLSTC
	binary.BigEndian.PutUint64(o[72:], f.Metadata)
	binary.BigEndian.PutUint64(o[80:], ^w.Metadata)
	binary.BigEndian.PutUint32(o[8:], wc)
	return append(b, o[:]...)
}

// PullMatch decodes the match of an OpenFlow message of the given
// version at the start of b and returns the rest of b after it (and its
// padding): an ofp10_match for OpenFlow 1.0, otherwise an ofp_match of
// type STANDARD (OpenFlow 1.1) or OXM, as Open vSwitch accepts both in
// every version from 1.1. Errors are OFPBMC_* as Open vSwitch sends.
func PullMatch(b []byte, version uint8) (Match, []byte, error) {
	if version == 0x01 {
		return pullOFP10Match(b)
	}
	return pullOFP11Match(b)
}

// AppendMatch appends m in the form version uses: ofp10_match (1.0),
// standard ofp11_match (1.1), OXM ofp_match padded to 8 bytes (1.2+).
// Fields a form cannot carry are left out.
func AppendMatch(b []byte, version uint8, m *Match) []byte {
	switch version {
	case 0x01:
		return appendOFP10Match(b, m)
	case 0x02:
		return appendOFP11Standard(b, m)
	}
	return AppendOXMMatch(b, m, version)
}

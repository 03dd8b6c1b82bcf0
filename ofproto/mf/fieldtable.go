package mf

import (
	"fmt"
	"unsafe"

	"gvs/packet"
)

// Offsets into Flow.
var flowOf Flow

func off(p unsafe.Pointer) uintptr { return uintptr(p) - uintptr(unsafe.Pointer(&flowOf)) }

// Storage helpers for the table.
func intAt(p unsafe.Pointer, elem uint8) accessor {
	return accessor{off: off(p), elem: elem, count: 1}
}
func intsAt(p unsafe.Pointer, elem, count uint8) accessor {
	return accessor{off: off(p), elem: elem, count: count}
}
func bitsAt(p unsafe.Pointer, elem uint8, bits uint64, shift uint8) accessor {
	return accessor{off: off(p), elem: elem, count: 1, bits: bits, shift: shift}
}
func bytesAt(p unsafe.Pointer) accessor { return accessor{off: off(p)} }

func nxm(name string, class uint16, field uint8) *Header {
	return &Header{Name: name, Class: class, Field: field}
}
func oxm(name string, field uint8, version uint8) []Header {
	return []Header{{Name: name, Class: ClassOpenFlow, Field: field, Version: version}}
}

// OpenFlow versions, as wire values.
const (
	ofp12 uint8 = 0x03
	ofp13 uint8 = 0x04
	ofp15 uint8 = 0x06

	neverSent uint8 = 0xff // a header decoded but never chosen to encode
)

// fieldTable is indexed by FieldID.
var fieldTable = buildFieldTable()

func buildFieldTable() [NumFields]Field {
	var t [NumFields]Field
	f := &flowOf
	add := func(fd Field) {
		if fd.Bits == 0 {
			fd.Bits = fd.Bytes * 8
		}
		t[fd.ID] = fd
	}
	u8 := func(p *uint8) accessor { return intAt(unsafe.Pointer(p), 1) }
	u16 := func(p *uint16) accessor { return intAt(unsafe.Pointer(p), 2) }
	u32 := func(p *uint32) accessor { return intAt(unsafe.Pointer(p), 4) }
	u64 := func(p *uint64) accessor { return intAt(unsafe.Pointer(p), 8) }

	add(Field{ID: DPHash, Name: "dp_hash", Bytes: 4, Maskable: true, Format: FormatHex,
		NXM: nxm("NXM_NX_DP_HASH", ClassNXM1, 35),
		// Open vSwitch accepts the Nicira OXM header but always sends the NXM one.
		OXM: []Header{{Name: "NXOXM_ET_DP_HASH", Class: ClassExperimenter, Field: 0, Experimenter: ExperimenterNicira, Version: neverSent}},
		acc: u32(&f.DPHash)})
	add(Field{ID: RecircID, Name: "recirc_id", Bytes: 4, Format: FormatDecimal,
		NXM: nxm("NXM_NX_RECIRC_ID", ClassNXM1, 36), acc: u32(&f.RecircID)})
	add(Field{ID: ConjID, Name: "conj_id", Bytes: 4, Format: FormatDecimal,
		NXM: nxm("NXM_NX_CONJ_ID", ClassNXM1, 37), acc: u32(&f.ConjID)})
	add(Field{ID: TunID, Name: "tun_id", ExtraName: "tunnel_id", Bytes: 8, Maskable: true, Writable: true, Format: FormatHex,
		NXM: nxm("NXM_NX_TUN_ID", ClassNXM1, 16), OXM: oxm("OXM_OF_TUNNEL_ID", 38, ofp13), acc: u64(&f.TunID)})
	add(Field{ID: TunSrc, Name: "tun_src", Bytes: 4, Maskable: true, Writable: true, Format: FormatIPv4,
		NXM: nxm("NXM_NX_TUN_IPV4_SRC", ClassNXM1, 31), acc: bytesAt(unsafe.Pointer(&f.TunSrc))})
	add(Field{ID: TunDst, Name: "tun_dst", Bytes: 4, Maskable: true, Writable: true, Format: FormatIPv4,
		NXM: nxm("NXM_NX_TUN_IPV4_DST", ClassNXM1, 32), acc: bytesAt(unsafe.Pointer(&f.TunDst))})
	add(Field{ID: TunIPv6Src, Name: "tun_ipv6_src", Bytes: 16, Maskable: true, Writable: true, Format: FormatIPv6,
		NXM: nxm("NXM_NX_TUN_IPV6_SRC", ClassNXM1, 109), acc: bytesAt(unsafe.Pointer(&f.TunIPv6Src))})
	add(Field{ID: TunIPv6Dst, Name: "tun_ipv6_dst", Bytes: 16, Maskable: true, Writable: true, Format: FormatIPv6,
		NXM: nxm("NXM_NX_TUN_IPV6_DST", ClassNXM1, 110), acc: bytesAt(unsafe.Pointer(&f.TunIPv6Dst))})
	add(Field{ID: TunFlags, Name: "tun_flags", Bytes: 2, Bits: 1, Maskable: true, Writable: true, Format: FormatTunFlags,
		NXM: nxm("NXM_NX_TUN_FLAGS", ClassNXM1, 104), acc: bitsAt(unsafe.Pointer(&f.TunFlags), 2, 1, 0)})
	add(Field{ID: TunTTL, Name: "tun_ttl", Bytes: 1, Format: FormatDecimal, acc: u8(&f.TunTTL)})
	add(Field{ID: TunTOS, Name: "tun_tos", Bytes: 1, Format: FormatDecimal, acc: u8(&f.TunTOS)})
	add(Field{ID: TunGBPID, Name: "tun_gbp_id", Bytes: 2, Maskable: true, Writable: true, Format: FormatDecimal,
		NXM: nxm("NXM_NX_TUN_GBP_ID", ClassNXM1, 38), acc: u16(&f.TunGBPID)})
	add(Field{ID: TunGBPFlags, Name: "tun_gbp_flags", Bytes: 1, Maskable: true, Writable: true, Format: FormatHex,
		NXM: nxm("NXM_NX_TUN_GBP_FLAGS", ClassNXM1, 39), acc: u8(&f.TunGBPFlags)})
	for i := 0; i < NumTunMetadata; i++ {
		// Open vSwitch's tun_metadataN is up to 124 bytes, placed by the
		// TLV table. Here all of them share packet.Key.TunMetadata: an
		// option mapped with length L occupies its last L bytes, so
		// tun_metadataN reads the whole array right-aligned, which is
		// the mapped option's value (see TunMetadataBytes).
		id := TunMetadata0 + FieldID(i)
		add(Field{ID: id, Name: fmt.Sprintf("tun_metadata%d", i), Bytes: TunMetadataBytes, Maskable: true, Writable: true,
			Format: FormatHex, NXM: nxm(fmt.Sprintf("NXM_NX_TUN_METADATA%d", i), ClassNXM1, uint8(40+i)),
			acc: bytesAt(unsafe.Pointer(&f.TunMetadata))})
	}
	add(Field{ID: Metadata, Name: "metadata", Bytes: 8, Maskable: true, Writable: true, Format: FormatHex,
		OXM: oxm("OXM_OF_METADATA", 2, ofp12), acc: u64(&f.Metadata)})
	add(Field{ID: InPort, Name: "in_port", Bytes: 2, Writable: true, Format: FormatOFP10Port,
		NXM: nxm("NXM_OF_IN_PORT", ClassNXM0, 0), acc: accessor{get: getInPort16, set: setInPort16}})
	add(Field{ID: InPortOXM, Name: "in_port_oxm", Bytes: 4, Writable: true, Format: FormatOFP11Port,
		OXM: oxm("OXM_OF_IN_PORT", 0, ofp12), acc: accessor{get: getInPort32, set: setInPort32}})
	add(Field{ID: ActsetOutput, Name: "actset_output", Bytes: 4, Format: FormatOFP11Port,
		OXM: []Header{
			{Name: "ONFOXM_ET_ACTSET_OUTPUT", Class: ClassExperimenter, Field: 43, Experimenter: ExperimenterONF, Version: ofp13},
			{Name: "OXM_OF_ACTSET_OUTPUT", Class: ClassOpenFlow, Field: 43, Version: ofp15},
		}, acc: accessor{get: getActset32, set: setActset32}})
	add(Field{ID: SkbPriority, Name: "skb_priority", Bytes: 4, Format: FormatHex, acc: u32(&f.SkbPriority)})
	add(Field{ID: PktMark, Name: "pkt_mark", Bytes: 4, Maskable: true, Writable: true, Format: FormatHex,
		NXM: nxm("NXM_NX_PKT_MARK", ClassNXM1, 33), acc: u32(&f.PktMark)})
	add(Field{ID: CTState, Name: "ct_state", Bytes: 4, Maskable: true, Format: FormatCTState,
		NXM: nxm("NXM_NX_CT_STATE", ClassNXM1, 105), acc: bitsAt(unsafe.Pointer(&f.CTState), 4, 0xff, 0)})
	add(Field{ID: CTZone, Name: "ct_zone", Bytes: 2, Format: FormatHex,
		NXM: nxm("NXM_NX_CT_ZONE", ClassNXM1, 106), acc: u16(&f.CTZone)})
	add(Field{ID: CTMark, Name: "ct_mark", Bytes: 4, Maskable: true, Writable: true, Format: FormatHex,
		NXM: nxm("NXM_NX_CT_MARK", ClassNXM1, 107), acc: u32(&f.CTMark)})
	add(Field{ID: CTLabel, Name: "ct_label", Bytes: 16, Maskable: true, Writable: true, Format: FormatHex,
		NXM: nxm("NXM_NX_CT_LABEL", ClassNXM1, 108), acc: bytesAt(unsafe.Pointer(&f.CTLabel))})
	add(Field{ID: CTNwProto, Name: "ct_nw_proto", Bytes: 1, Prereq: PrereqCTValid, Format: FormatDecimal,
		NXM: nxm("NXM_NX_CT_NW_PROTO", ClassNXM1, 119), acc: u8(&f.CTNwProto)})
	add(Field{ID: CTNwSrc, Name: "ct_nw_src", Bytes: 4, Maskable: true, Prereq: PrereqCTValid, Format: FormatIPv4,
		NXM: nxm("NXM_NX_CT_NW_SRC", ClassNXM1, 120), acc: bytesAt(unsafe.Pointer(&f.CTNwSrc))})
	add(Field{ID: CTNwDst, Name: "ct_nw_dst", Bytes: 4, Maskable: true, Prereq: PrereqCTValid, Format: FormatIPv4,
		NXM: nxm("NXM_NX_CT_NW_DST", ClassNXM1, 121), acc: bytesAt(unsafe.Pointer(&f.CTNwDst))})
	add(Field{ID: CTIPv6Src, Name: "ct_ipv6_src", Bytes: 16, Maskable: true, Prereq: PrereqCTValid, Format: FormatIPv6,
		NXM: nxm("NXM_NX_CT_IPV6_SRC", ClassNXM1, 122), acc: bytesAt(unsafe.Pointer(&f.CTIPv6Src))})
	add(Field{ID: CTIPv6Dst, Name: "ct_ipv6_dst", Bytes: 16, Maskable: true, Prereq: PrereqCTValid, Format: FormatIPv6,
		NXM: nxm("NXM_NX_CT_IPV6_DST", ClassNXM1, 123), acc: bytesAt(unsafe.Pointer(&f.CTIPv6Dst))})
	add(Field{ID: CTTpSrc, Name: "ct_tp_src", Bytes: 2, Maskable: true, Prereq: PrereqCTValid, Format: FormatDecimal,
		NXM: nxm("NXM_NX_CT_TP_SRC", ClassNXM1, 124), acc: u16(&f.CTTpSrc)})
	add(Field{ID: CTTpDst, Name: "ct_tp_dst", Bytes: 2, Maskable: true, Prereq: PrereqCTValid, Format: FormatDecimal,
		NXM: nxm("NXM_NX_CT_TP_DST", ClassNXM1, 125), acc: u16(&f.CTTpDst)})
	for i := 0; i < NumRegs; i++ {
		add(Field{ID: Reg0 + FieldID(i), Name: fmt.Sprintf("reg%d", i), Bytes: 4, Maskable: true, Writable: true, Format: FormatHex,
			NXM: nxm(fmt.Sprintf("NXM_NX_REG%d", i), ClassNXM1, uint8(i)), acc: u32(&f.Regs[i])})
	}
	for i := 0; i < NumXRegs; i++ {
		add(Field{ID: XReg0 + FieldID(i), Name: fmt.Sprintf("xreg%d", i), Bytes: 8, Maskable: true, Writable: true, Format: FormatHex,
			OXM: []Header{{Name: fmt.Sprintf("OXM_OF_PKT_REG%d", i), Class: ClassPacketRegs, Field: uint8(i), Version: ofp13}},
			acc: intsAt(unsafe.Pointer(&f.Regs[2*i]), 4, 2)})
	}
	for i := 0; i < NumXXRegs; i++ {
		add(Field{ID: XXReg0 + FieldID(i), Name: fmt.Sprintf("xxreg%d", i), Bytes: 16, Maskable: true, Writable: true, Format: FormatHex,
			NXM: nxm(fmt.Sprintf("NXM_NX_XXREG%d", i), ClassNXM1, uint8(111+i)), acc: intsAt(unsafe.Pointer(&f.Regs[4*i]), 4, 4)})
	}

	add(Field{ID: EthSrc, Name: "eth_src", ExtraName: "dl_src", Bytes: 6, Maskable: true, Writable: true, Prereq: PrereqEthernet, Format: FormatEthernet,
		NXM: nxm("NXM_OF_ETH_SRC", ClassNXM0, 2), OXM: oxm("OXM_OF_ETH_SRC", 4, ofp12), acc: bytesAt(unsafe.Pointer(&f.SrcMAC))})
	add(Field{ID: EthDst, Name: "eth_dst", ExtraName: "dl_dst", Bytes: 6, Maskable: true, Writable: true, Prereq: PrereqEthernet, Format: FormatEthernet,
		NXM: nxm("NXM_OF_ETH_DST", ClassNXM0, 1), OXM: oxm("OXM_OF_ETH_DST", 3, ofp12), acc: bytesAt(unsafe.Pointer(&f.DstMAC))})
	add(Field{ID: EthType, Name: "eth_type", ExtraName: "dl_type", Bytes: 2, Prereq: PrereqEthernet, Format: FormatHex,
		NXM: nxm("NXM_OF_ETH_TYPE", ClassNXM0, 3), OXM: oxm("OXM_OF_ETH_TYPE", 5, ofp12), acc: u16(&f.EtherType)})
	add(Field{ID: VLANTCI, Name: "vlan_tci", Bytes: 2, Maskable: true, Writable: true, Prereq: PrereqEthernet, Format: FormatHex,
		NXM: nxm("NXM_OF_VLAN_TCI", ClassNXM0, 4), acc: accessor{get: getVLANTCI, set: setVLANTCI}})
	add(Field{ID: DLVLAN, Name: "dl_vlan", Bytes: 2, Bits: 12, Writable: true, Prereq: PrereqEthernet, Format: FormatDecimal,
		acc: accessor{get: getDLVLAN, set: setDLVLAN}})
	add(Field{ID: VLANVID, Name: "vlan_vid", Bytes: 2, Bits: 12, Maskable: true, Writable: true, Prereq: PrereqEthernet, Format: FormatDecimal,
		OXM: oxm("OXM_OF_VLAN_VID", 6, ofp12), acc: accessor{get: getVLANVID, set: setVLANVID}})
	add(Field{ID: DLVLANPCP, Name: "dl_vlan_pcp", Bytes: 1, Bits: 3, Writable: true, Prereq: PrereqEthernet, Format: FormatDecimal,
		acc: accessor{get: getVLANPCP, set: setVLANPCP}})
	add(Field{ID: VLANPCP, Name: "vlan_pcp", Bytes: 1, Bits: 3, Writable: true, Prereq: PrereqVLANVID, Format: FormatDecimal,
		OXM: oxm("OXM_OF_VLAN_PCP", 7, ofp12), acc: accessor{get: getVLANPCP, set: setVLANPCP}})
	add(Field{ID: IPv4Src, Name: "ip_src", ExtraName: "nw_src", Bytes: 4, Maskable: true, Writable: true, Prereq: PrereqIPv4, Format: FormatIPv4,
		NXM: nxm("NXM_OF_IP_SRC", ClassNXM0, 7), OXM: oxm("OXM_OF_IPV4_SRC", 11, ofp12), acc: bytesAt(unsafe.Pointer(&f.SrcIPv4))})
	add(Field{ID: IPv4Dst, Name: "ip_dst", ExtraName: "nw_dst", Bytes: 4, Maskable: true, Writable: true, Prereq: PrereqIPv4, Format: FormatIPv4,
		NXM: nxm("NXM_OF_IP_DST", ClassNXM0, 8), OXM: oxm("OXM_OF_IPV4_DST", 12, ofp12), acc: bytesAt(unsafe.Pointer(&f.DstIPv4))})
	add(Field{ID: IPv6Src, Name: "ipv6_src", Bytes: 16, Maskable: true, Writable: true, Prereq: PrereqIPv6, Format: FormatIPv6,
		NXM: nxm("NXM_NX_IPV6_SRC", ClassNXM1, 19), OXM: oxm("OXM_OF_IPV6_SRC", 26, ofp12), acc: bytesAt(unsafe.Pointer(&f.SrcIPv6))})
	add(Field{ID: IPv6Dst, Name: "ipv6_dst", Bytes: 16, Maskable: true, Writable: true, Prereq: PrereqIPv6, Format: FormatIPv6,
		NXM: nxm("NXM_NX_IPV6_DST", ClassNXM1, 20), OXM: oxm("OXM_OF_IPV6_DST", 27, ofp12), acc: bytesAt(unsafe.Pointer(&f.DstIPv6))})
	add(Field{ID: IPv6Label, Name: "ipv6_label", Bytes: 4, Bits: 20, Maskable: true, Writable: true, Prereq: PrereqIPv6, Format: FormatHex,
		NXM: nxm("NXM_NX_IPV6_LABEL", ClassNXM1, 27), OXM: oxm("OXM_OF_IPV6_FLABEL", 28, ofp12), acc: u32(&f.FlowLabel)})
	add(Field{ID: IPProto, Name: "nw_proto", ExtraName: "ip_proto", Bytes: 1, Prereq: PrereqIPAny, Format: FormatDecimal,
		NXM: nxm("NXM_OF_IP_PROTO", ClassNXM0, 6), OXM: oxm("OXM_OF_IP_PROTO", 10, ofp12), acc: u8(&f.IPProto)})
	add(Field{ID: IPDSCP, Name: "nw_tos", Bytes: 1, Writable: true, Prereq: PrereqIPAny, Format: FormatDecimal,
		NXM: nxm("NXM_OF_IP_TOS", ClassNXM0, 5), acc: bitsAt(unsafe.Pointer(&f.IPTOS), 1, 0xfc, 0)})
	add(Field{ID: IPDSCPShifted, Name: "ip_dscp", Bytes: 1, Bits: 6, Writable: true, Prereq: PrereqIPAny, Format: FormatDecimal,
		OXM: oxm("OXM_OF_IP_DSCP", 8, ofp12), acc: bitsAt(unsafe.Pointer(&f.IPTOS), 1, 0xfc, 2)})
	add(Field{ID: IPECN, Name: "nw_ecn", ExtraName: "ip_ecn", Bytes: 1, Bits: 2, Writable: true, Prereq: PrereqIPAny, Format: FormatDecimal,
		NXM: nxm("NXM_NX_IP_ECN", ClassNXM1, 28), OXM: oxm("OXM_OF_IP_ECN", 9, ofp12), acc: bitsAt(unsafe.Pointer(&f.IPTOS), 1, 0x03, 0)})
	add(Field{ID: IPTTL, Name: "nw_ttl", Bytes: 1, Writable: true, Prereq: PrereqIPAny, Format: FormatDecimal,
		NXM: nxm("NXM_NX_IP_TTL", ClassNXM1, 29), acc: u8(&f.IPTTL)})
	add(Field{ID: IPFrag, Name: "ip_frag", ExtraName: "nw_frag", Bytes: 1, Bits: 2, Maskable: true, Prereq: PrereqIPAny, Format: FormatFrag,
		NXM: nxm("NXM_NX_IP_FRAG", ClassNXM1, 26), acc: bitsAt(unsafe.Pointer(&f.IPFrag), 1, 0x03, 0)})
	add(Field{ID: ARPOp, Name: "arp_op", Bytes: 2, Writable: true, Prereq: PrereqARP, Format: FormatDecimal,
		NXM: nxm("NXM_OF_ARP_OP", ClassNXM0, 15), OXM: oxm("OXM_OF_ARP_OP", 21, ofp12), acc: u16(&f.ARPOp)})
	add(Field{ID: ARPSPA, Name: "arp_spa", Bytes: 4, Maskable: true, Writable: true, Prereq: PrereqARP, Format: FormatIPv4,
		NXM: nxm("NXM_OF_ARP_SPA", ClassNXM0, 16), OXM: oxm("OXM_OF_ARP_SPA", 22, ofp12), acc: bytesAt(unsafe.Pointer(&f.SrcIPv4))})
	add(Field{ID: ARPTPA, Name: "arp_tpa", Bytes: 4, Maskable: true, Writable: true, Prereq: PrereqARP, Format: FormatIPv4,
		NXM: nxm("NXM_OF_ARP_TPA", ClassNXM0, 17), OXM: oxm("OXM_OF_ARP_TPA", 23, ofp12), acc: bytesAt(unsafe.Pointer(&f.DstIPv4))})
	add(Field{ID: ARPSHA, Name: "arp_sha", Bytes: 6, Maskable: true, Writable: true, Prereq: PrereqARP, Format: FormatEthernet,
		NXM: nxm("NXM_NX_ARP_SHA", ClassNXM1, 17), OXM: oxm("OXM_OF_ARP_SHA", 24, ofp12), acc: bytesAt(unsafe.Pointer(&f.ARPSHA))})
	add(Field{ID: ARPTHA, Name: "arp_tha", Bytes: 6, Maskable: true, Writable: true, Prereq: PrereqARP, Format: FormatEthernet,
		NXM: nxm("NXM_NX_ARP_THA", ClassNXM1, 18), OXM: oxm("OXM_OF_ARP_THA", 25, ofp12), acc: bytesAt(unsafe.Pointer(&f.ARPTHA))})
	add(Field{ID: TCPSrc, Name: "tcp_src", ExtraName: "tp_src", Bytes: 2, Maskable: true, Writable: true, Prereq: PrereqTCP, Format: FormatDecimal,
		NXM: nxm("NXM_OF_TCP_SRC", ClassNXM0, 9), OXM: oxm("OXM_OF_TCP_SRC", 13, ofp12), acc: u16(&f.SrcPort)})
	add(Field{ID: TCPDst, Name: "tcp_dst", ExtraName: "tp_dst", Bytes: 2, Maskable: true, Writable: true, Prereq: PrereqTCP, Format: FormatDecimal,
		NXM: nxm("NXM_OF_TCP_DST", ClassNXM0, 10), OXM: oxm("OXM_OF_TCP_DST", 14, ofp12), acc: u16(&f.DstPort)})
	add(Field{ID: TCPFlags, Name: "tcp_flags", Bytes: 2, Bits: 12, Maskable: true, Prereq: PrereqTCP, Format: FormatTCPFlags,
		NXM: nxm("NXM_NX_TCP_FLAGS", ClassNXM1, 34),
		OXM: []Header{
			{Name: "ONFOXM_ET_TCP_FLAGS", Class: ClassExperimenter, Field: 42, Experimenter: ExperimenterONF, Version: ofp13},
			{Name: "OXM_OF_TCP_FLAGS", Class: ClassOpenFlow, Field: 42, Version: ofp15},
		}, acc: u16(&f.TCPFlags)})
	add(Field{ID: UDPSrc, Name: "udp_src", Bytes: 2, Maskable: true, Writable: true, Prereq: PrereqUDP, Format: FormatDecimal,
		NXM: nxm("NXM_OF_UDP_SRC", ClassNXM0, 11), OXM: oxm("OXM_OF_UDP_SRC", 15, ofp12), acc: u16(&f.SrcPort)})
	add(Field{ID: UDPDst, Name: "udp_dst", Bytes: 2, Maskable: true, Writable: true, Prereq: PrereqUDP, Format: FormatDecimal,
		NXM: nxm("NXM_OF_UDP_DST", ClassNXM0, 12), OXM: oxm("OXM_OF_UDP_DST", 16, ofp12), acc: u16(&f.DstPort)})
	add(Field{ID: SCTPSrc, Name: "sctp_src", Bytes: 2, Maskable: true, Writable: true, Prereq: PrereqSCTP, Format: FormatDecimal,
		OXM: oxm("OXM_OF_SCTP_SRC", 17, ofp12), acc: u16(&f.SrcPort)})
	add(Field{ID: SCTPDst, Name: "sctp_dst", Bytes: 2, Maskable: true, Writable: true, Prereq: PrereqSCTP, Format: FormatDecimal,
		OXM: oxm("OXM_OF_SCTP_DST", 18, ofp12), acc: u16(&f.DstPort)})
	add(Field{ID: ICMPv4Type, Name: "icmp_type", Bytes: 1, Writable: true, Prereq: PrereqICMPv4, Format: FormatDecimal,
		NXM: nxm("NXM_OF_ICMP_TYPE", ClassNXM0, 13), OXM: oxm("OXM_OF_ICMPV4_TYPE", 19, ofp12), acc: u8(&f.ICMPType)})
	add(Field{ID: ICMPv4Code, Name: "icmp_code", Bytes: 1, Writable: true, Prereq: PrereqICMPv4, Format: FormatDecimal,
		NXM: nxm("NXM_OF_ICMP_CODE", ClassNXM0, 14), OXM: oxm("OXM_OF_ICMPV4_CODE", 20, ofp12), acc: u8(&f.ICMPCode)})
	add(Field{ID: ICMPv6Type, Name: "icmpv6_type", Bytes: 1, Writable: true, Prereq: PrereqICMPv6, Format: FormatDecimal,
		NXM: nxm("NXM_NX_ICMPV6_TYPE", ClassNXM1, 21), OXM: oxm("OXM_OF_ICMPV6_TYPE", 29, ofp12), acc: u8(&f.ICMPType)})
	add(Field{ID: ICMPv6Code, Name: "icmpv6_code", Bytes: 1, Writable: true, Prereq: PrereqICMPv6, Format: FormatDecimal,
		NXM: nxm("NXM_NX_ICMPV6_CODE", ClassNXM1, 22), OXM: oxm("OXM_OF_ICMPV6_CODE", 30, ofp12), acc: u8(&f.ICMPCode)})
	add(Field{ID: NDTarget, Name: "nd_target", Bytes: 16, Maskable: true, Writable: true, Prereq: PrereqND, Format: FormatIPv6,
		NXM: nxm("NXM_NX_ND_TARGET", ClassNXM1, 23), OXM: oxm("OXM_OF_IPV6_ND_TARGET", 31, ofp12), acc: bytesAt(unsafe.Pointer(&f.NDTarget))})
	add(Field{ID: NDSLL, Name: "nd_sll", Bytes: 6, Maskable: true, Writable: true, Prereq: PrereqNDSolicit, Format: FormatEthernet,
		NXM: nxm("NXM_NX_ND_SLL", ClassNXM1, 24), OXM: oxm("OXM_OF_IPV6_ND_SLL", 32, ofp12), acc: bytesAt(unsafe.Pointer(&f.ARPSHA))})
	add(Field{ID: NDTLL, Name: "nd_tll", Bytes: 6, Maskable: true, Writable: true, Prereq: PrereqNDAdvert, Format: FormatEthernet,
		NXM: nxm("NXM_NX_ND_TLL", ClassNXM1, 25), OXM: oxm("OXM_OF_IPV6_ND_TLL", 33, ofp12), acc: bytesAt(unsafe.Pointer(&f.ARPTHA))})
	add(Field{ID: NDReserved, Name: "nd_reserved", Bytes: 4, Writable: true, Prereq: PrereqND, Format: FormatDecimal,
		OXM: []Header{{Name: "ERICOXM_OF_ICMPV6_ND_RESERVED", Class: ClassEricsson, Field: 1}}, acc: u32(&f.NDReserved)})
	add(Field{ID: NDOptionsType, Name: "nd_options_type", Bytes: 1, Writable: true, Prereq: PrereqND, Format: FormatDecimal,
		OXM: []Header{{Name: "ERICOXM_OF_ICMPV6_ND_OPTIONS_TYPE", Class: ClassEricsson, Field: 2}}, acc: u8(&f.NDOptionsType)})
	add(Field{ID: PacketType, Name: "packet_type", Bytes: 4, Format: FormatHex,
		OXM: oxm("OXM_OF_PACKET_TYPE", 44, ofp15), acc: accessor{get: getNothing, set: setNothing}})
	return t
}

func getNothing(f *Flow, mask bool) Value    { return Value{} }
func setNothing(f *Flow, v Value, mask bool) {}

// TunMetadataBytes is the widest tun_metadataN value gvs carries: the
// size of packet.Key.TunMetadata.
const TunMetadataBytes = len(packet.Key{}.TunMetadata)

// Port conversions between Open vSwitch's 16-bit ofp_port_t space and
// OpenFlow 1.1+'s 32-bit numbers (ofputil_port_to_ofp11/from_ofp11).
const ofp11Offset = 0xffff0000

// PortToOFP11 converts a 16-bit-space port number to OpenFlow 1.1+'s.
func PortToOFP11(p uint32) uint32 {
	if p < PortMax {
		return p
	}
	return p + ofp11Offset
}

// PortFromOFP11 converts an OpenFlow 1.1+ port number to the 16-bit
// space; ok is false for numbers that have no 16-bit equivalent (Open
// vSwitch answers those with OFPBAC_BAD_OUT_PORT or OFPBMC_BAD_VALUE).
func PortFromOFP11(p uint32) (port uint32, ok bool) {
	if p < PortMax {
		return p, true
	}
	if p >= PortMax+ofp11Offset {
		return p - ofp11Offset, true
	}
	return 0, false
}

func getInPort16(f *Flow, mask bool) Value { return ValueFromUint(uint64(uint16(f.InPort)), 2) }
func setInPort16(f *Flow, v Value, mask bool) {
	f.InPort = uint32(v.Uint(2))
	if mask && f.InPort == 0xffff {
		f.InPort = 0xffffffff
	}
}

func getInPort32(f *Flow, mask bool) Value {
	if mask {
		if f.InPort != 0 {
			return ValueFromUint(0xffffffff, 4)
		}
		return Value{}
	}
	return ValueFromUint(uint64(PortToOFP11(f.InPort)), 4)
}
func setInPort32(f *Flow, v Value, mask bool) {
	n := uint32(v.Uint(4))
	if mask {
		f.InPort = n
		return
	}
	p, ok := PortFromOFP11(n)
	if !ok {
		p = PortNone
	}
	f.InPort = p
}

func getActset32(f *Flow, mask bool) Value {
	if mask {
		if f.ActsetOutput != 0 {
			return ValueFromUint(0xffffffff, 4)
		}
		return Value{}
	}
	return ValueFromUint(uint64(PortToOFP11(f.ActsetOutput)), 4)
}
func setActset32(f *Flow, v Value, mask bool) {
	n := uint32(v.Uint(4))
	if mask {
		f.ActsetOutput = n
		return
	}
	p, ok := PortFromOFP11(n)
	if !ok {
		p = PortNone
	}
	f.ActsetOutput = p
}

// VLAN fields. Open vSwitch's vlan_tci keeps the 802.1Q TCI with the CFI
// bit (0x1000) meaning "a tag is present". gvs keeps the real TCI and
// the TPID (non-zero when present) in VLANs[0]: the CFI bit maps to the
// TPID's top bit, which both 0x8100 and 0x88a8 have set, so a mask on it
// matches "some tag" in the datapath too. The frame's real DEI bit is
// not visible through these fields (as in Open vSwitch).
const (
	vlanCFI     = 0x1000
	vlanVIDMask = 0x0fff
	vlanPCPMask = 0xe000
	tpidPresent = 0x8000
)

func tci(f *Flow, mask bool) uint16 { return tciAt(f, 0, mask) }

// tciAt is vlan_tci of tag i (0 outermost), CFI meaning "present".
func tciAt(f *Flow, i int, mask bool) uint16 {
	t := f.VLANs[i]
	v := t.TCI &^ vlanCFI
	if (mask && t.TPID&tpidPresent != 0) || (!mask && t.TPID != 0) {
		v |= vlanCFI
	}
	return v
}

// setTCI changes the bits of vlan_tci set in which to v's.
func setTCI(f *Flow, v, which uint16, mask bool) {
	t := &f.VLANs[0]
	t.TCI = t.TCI&^(which&^vlanCFI) | v&which&^vlanCFI
	if which&vlanCFI == 0 {
		return
	}
	switch {
	case mask && v&vlanCFI != 0:
		t.TPID |= tpidPresent
	case mask:
		t.TPID &^= tpidPresent
	case v&vlanCFI != 0:
		if t.TPID == 0 {
			t.TPID = packet.EtherTypeVLAN
		}
	default:
		// Open vSwitch keeps the other TCI bits even without CFI (a
		// match on them then never matches a packet, as here).
		t.TPID = 0
	}
}

func getVLANTCI(f *Flow, mask bool) Value { return ValueFromUint(uint64(tci(f, mask)), 2) }
func setVLANTCI(f *Flow, v Value, mask bool) {
	setTCI(f, uint16(v.Uint(2)), 0xffff, mask)
}

func getDLVLAN(f *Flow, mask bool) Value {
	return ValueFromUint(uint64(tci(f, mask)&vlanVIDMask), 2)
}

// setDLVLAN: dl_vlan sets the VID and makes the tag present; its mask
// covers the VID and the present bit (flow_set_dl_vlan,
// match_set_dl_vlan).
func setDLVLAN(f *Flow, v Value, mask bool) {
	n := uint16(v.Uint(2))
	if mask {
		m := uint16(0)
		if n&vlanVIDMask != 0 {
			m = vlanVIDMask | vlanCFI
		}
		setTCI(f, m|tci(f, true)&vlanPCPMask, 0xffff, true)
		return
	}
	if n == 0xffff {
		setTCI(f, 0, 0xffff, false)
		return
	}
	setTCI(f, n&vlanVIDMask|vlanCFI, vlanVIDMask|vlanCFI, false)
}

func getVLANVID(f *Flow, mask bool) Value {
	return ValueFromUint(uint64(tci(f, mask)&(vlanVIDMask|vlanCFI)), 2)
}
func setVLANVID(f *Flow, v Value, mask bool) {
	setTCI(f, uint16(v.Uint(2)), vlanVIDMask|vlanCFI, mask)
}

func getVLANPCP(f *Flow, mask bool) Value { return ValueFromUint(uint64(tci(f, mask)>>13), 1) }

// setVLANPCP: the PCP fields also make the tag present
// (flow_set_vlan_pcp); their mask covers the PCP and the present bit.
func setVLANPCP(f *Flow, v Value, mask bool) {
	n := uint16(v.Uint(1)&7) << 13
	if mask {
		m := uint16(0)
		if n != 0 {
			m = vlanPCPMask | vlanCFI
		}
		setTCI(f, m|tci(f, true)&vlanVIDMask, 0xffff, true)
		return
	}
	setTCI(f, n|vlanCFI, vlanPCPMask|vlanCFI, false)
}

package mf

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"net/netip"
	"strconv"
	"strings"
	"unsafe"

	"gvs/packet"
)

// DefaultPriority is OpenFlow's default flow priority (OFP_DEFAULT_PRIORITY),
// which Format leaves out.
const DefaultPriority = 0x8000

// PortName returns Open vSwitch's name for a reserved port number (in
// the 16-bit space), or the number in decimal (ofputil_format_port).
func PortName(p uint32) string {
	switch p {
	case PortInPort:
		return "IN_PORT"
	case PortTable:
		return "TABLE"
	case PortNormal:
		return "NORMAL"
	case PortFlood:
		return "FLOOD"
	case PortAll:
		return "ALL"
	case PortController:
		return "CONTROLLER"
	case PortLocal:
		return "LOCAL"
	case PortNone:
		return "ANY"
	case PortUnset:
		return "UNSET"
	}
	return strconv.FormatUint(uint64(p), 10)
}

// ctStateNames are the ct_state flag names by bit (CS_STATES).
var ctStateNames = [8]string{"new", "est", "rel", "rpl", "inv", "trk", "snat", "dnat"}

func ctStateName(bit uint32) string {
	i := bits.TrailingZeros32(bit)
	if i < len(ctStateNames) {
		return ctStateNames[i]
	}
	return ""
}

// tcpFlagName is packet_tcp_flag_to_string.
func tcpFlagName(bit uint32) string {
	switch bit {
	case 0x001:
		return "fin"
	case 0x002:
		return "syn"
	case 0x004:
		return "rst"
	case 0x008:
		return "psh"
	case 0x010:
		return "ack"
	case 0x020:
		return "urg"
	case 0x040:
		return "ece"
	case 0x080:
		return "cwr"
	case 0x100:
		return "ns"
	case 0x200:
		return "[200]"
	case 0x400:
		return "[400]"
	case 0x800:
		return "[800]"
	}
	return ""
}

// tunFlagName is flow_tun_flag_to_string.
func tunFlagName(bit uint32) string {
	switch bit {
	case 1 << 0:
		return "oam"
	case 1 << 1:
		return "df"
	case 1 << 2:
		return "csum"
	case 1 << 3:
		return "key"
	}
	return ""
}

// formatFlags is Open vSwitch's format_flags.
func formatFlags(s *strings.Builder, name func(uint32) string, flags uint32, del byte) {
	if flags == 0 {
		s.WriteByte('0')
		return
	}
	var bad uint32
	first := true
	for flags != 0 {
		bit := flags & -flags
		if n := name(bit); n != "" {
			if !first {
				s.WriteByte(del)
			}
			s.WriteString(n)
			first = false
		} else {
			bad |= bit
		}
		flags &^= bit
	}
	if bad != 0 {
		if !first {
			s.WriteByte(del)
		}
		fmt.Fprintf(s, "0x%x", bad)
	}
}

// formatFlagsMasked is format_flags_masked.
func formatFlagsMasked(s *strings.Builder, key string, name func(uint32) string, flags, mask, maxMask uint32) {
	if key != "" {
		s.WriteString(key)
		s.WriteByte('=')
	}
	if mask == maxMask {
		formatFlags(s, name, flags, '|')
		return
	}
	if mask == 0 {
		s.WriteString("0/0")
		return
	}
	for mask != 0 {
		bit := mask & -mask
		if flags&bit != 0 {
			s.WriteByte('+')
		} else {
			s.WriteByte('-')
		}
		if n := name(bit); n != "" {
			s.WriteString(n)
		} else {
			s.WriteString("[Unknown]")
		}
		mask &^= bit
	}
}

// matchFormatter accumulates "key=value," items.
type matchFormatter struct{ s strings.Builder }

func (mf *matchFormatter) item(key, value string) {
	mf.s.WriteString(key)
	mf.s.WriteByte('=')
	mf.s.WriteString(value)
	mf.s.WriteByte(',')
}

// uint32Masked is format_uint32_masked ("%#x", "/%#x").
func (mf *matchFormatter) uint32Masked(key string, v, m uint32) {
	if m == 0 {
		return
	}
	s := hexAlt(uint64(v))
	if m != ^uint32(0) {
		s += "/" + hexAlt(uint64(m))
	}
	mf.item(key, s)
}

// hexAlt is C's "%#x": "0" for zero, else "0x...".
func hexAlt(v uint64) string {
	if v == 0 {
		return "0"
	}
	return "0x" + strconv.FormatUint(v, 16)
}

func (mf *matchFormatter) be64Masked(key string, v, m uint64) {
	if m == 0 {
		return
	}
	s := hexAlt(v)
	if m != ^uint64(0) {
		s += "/" + hexAlt(m)
	}
	mf.item(key, s)
}

// be16Masked is format_be16_masked: decimal when exact.
func (mf *matchFormatter) be16Masked(key string, v, m uint16) {
	if m == 0 {
		return
	}
	if m == 0xffff {
		mf.item(key, strconv.Itoa(int(v)))
	} else {
		mf.item(key, fmt.Sprintf("0x%x/0x%x", v, m))
	}
}

// be32Masked is format_be32_masked: decimal when exact, else %08x.
func (mf *matchFormatter) be32Masked(key string, v, m uint32) {
	if m == 0 {
		return
	}
	if m == ^uint32(0) {
		mf.item(key, strconv.FormatUint(uint64(v), 10))
	} else {
		mf.item(key, fmt.Sprintf("0x%08x/0x%08x", v, m))
	}
}

func formatEth(a [6]byte) string {
	return fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", a[0], a[1], a[2], a[3], a[4], a[5])
}

func (mf *matchFormatter) ethMasked(key string, v, m [6]byte) {
	if m == [6]byte{} {
		return
	}
	s := formatEth(v)
	if m != [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff} {
		s += "/" + formatEth(m)
	}
	mf.item(key, s)
}

// ipMasked is format_ip_netmask: "/N" for CIDR masks.
func (mf *matchFormatter) ipMasked(key string, v, m [4]byte) {
	if m == [4]byte{} {
		return
	}
	mf.item(key, formatIPv4Masked(v, m))
}

func formatIPv4Masked(v, m [4]byte) string {
	s := netip.AddrFrom4(v).String()
	mask := binary.BigEndian.Uint32(m[:])
	if mask != ^uint32(0) {
		if isCIDR32(mask) {
			s += "/" + strconv.Itoa(32-bits.TrailingZeros32(mask))
		} else {
			s += "/" + netip.AddrFrom4(m).String()
		}
	}
	return s
}

func isCIDR32(m uint32) bool {
	x := ^m
	return x&(x+1) == 0
}

func (mf *matchFormatter) ipv6Masked(key string, v, m [16]byte) {
	if m == [16]byte{} {
		return
	}
	mf.item(key, formatIPv6Masked(v, m))
}

// formatIPv6Addr formats as inet_ntop does (netip's form, which also
// prints IPv4-mapped addresses as ::ffff:a.b.c.d).
func formatIPv6Addr(a [16]byte) string { return netip.AddrFrom16(a).String() }

func formatIPv6Masked(v, m [16]byte) string {
	s := formatIPv6Addr(v)
	if m == onesArray16() {
		return s
	}
	if isCIDR128(m) {
		return s + "/" + strconv.Itoa(cidrBits128(m))
	}
	return s + "/" + formatIPv6Addr(m)
}

func onesArray16() [16]byte {
	var a [16]byte
	for i := range a {
		a[i] = 0xff
	}
	return a
}

func isCIDR128(m [16]byte) bool {
	for i := 0; i < 16; i++ {
		if m[i] != 0xff {
			x := ^m[i]
			if x&(x+1) != 0 {
				return false
			}
			for i++; i < 16; i++ {
				if m[i] != 0 {
					return false
				}
			}
		}
	}
	return true
}

func cidrBits128(m [16]byte) int {
	n := 0
	for _, b := range m {
		if b == 0xff {
			n += 8
			continue
		}
		n += bits.LeadingZeros8(^b)
		break
	}
	return n
}

// putHex is ds_put_hex: "0x" and the bytes without leading zero bytes,
// "0" if all zero.
func putHex(b []byte) string {
	var s strings.Builder
	printed := false
	for _, v := range b {
		if v != 0 || printed {
			if !printed {
				fmt.Fprintf(&s, "0x%x", v)
			} else {
				fmt.Fprintf(&s, "%02x", v)
			}
			printed = true
		}
	}
	if !printed {
		return "0"
	}
	return s.String()
}

// Format writes m as Open vSwitch's match_format does for ovs-ofctl
// (field order, protocol shorthands "tcp", "arp", "ipv6"..., OVS's mask
// notation), with "priority=N," first unless priority is DefaultPriority.
// m must be normalised.
func (m *Match) Format(priority int) string {
	var mf matchFormatter
	f, w := &m.Flow, &m.Wildcards.Masks
	if priority != DefaultPriority {
		mf.s.WriteString("priority=" + strconv.Itoa(priority) + ",")
	}
	mf.uint32Masked("pkt_mark", f.PktMark, w.PktMark)
	mf.uint32Masked("recirc_id", f.RecircID, w.RecircID)
	mf.uint32Masked("dp_hash", f.DPHash, w.DPHash)
	if w.ConjID != 0 {
		mf.item("conj_id", strconv.FormatUint(uint64(f.ConjID), 10))
	}
	if w.SkbPriority != 0 {
		mf.item("skb_priority", hexAlt(uint64(f.SkbPriority)))
	}
	if w.ActsetOutput != 0 {
		mf.item("actset_output", PortName(f.ActsetOutput))
	}
	if cm := w.CTState & 0xff; cm != 0 {
		var s strings.Builder
		if cm == 0xff {
			formatFlags(&s, ctStateName, f.CTState&0xff, '|')
		} else {
			formatFlagsMasked(&s, "", ctStateName, f.CTState, cm, 0xff)
		}
		mf.item("ct_state", s.String())
	}
	if w.CTZone != 0 {
		if w.CTZone == 0xffff {
			mf.item("ct_zone", strconv.Itoa(int(f.CTZone)))
		} else {
			mf.item("ct_zone", fmt.Sprintf("0x%x/0x%x", f.CTZone, w.CTZone))
		}
	}
	mf.uint32Masked("ct_mark", f.CTMark, w.CTMark)
	if w.CTLabel != [16]byte{} {
		s := putHex(f.CTLabel[:])
		if w.CTLabel != onesArray16() {
			s += "/" + putHex(w.CTLabel[:])
		}
		mf.item("ct_label", s)
	}
	mf.ipMasked("ct_nw_src", f.CTNwSrc, w.CTNwSrc)
	mf.ipv6Masked("ct_ipv6_src", f.CTIPv6Src, w.CTIPv6Src)
	mf.ipMasked("ct_nw_dst", f.CTNwDst, w.CTNwDst)
	mf.ipv6Masked("ct_ipv6_dst", f.CTIPv6Dst, w.CTIPv6Dst)
	if w.CTNwProto != 0 {
		mf.item("ct_nw_proto", strconv.Itoa(int(f.CTNwProto)))
		mf.be16Masked("ct_tp_src", f.CTTpSrc, w.CTTpSrc)
		mf.be16Masked("ct_tp_dst", f.CTTpDst, w.CTTpDst)
	}

	// Open vSwitch adds packet_type=eth to a match that names any field
	// with a prerequisite, and prints it only for a megaflow (recirc_id
	// matched).
	if w.RecircID != 0 && m.matchesPacketFields() {
		mf.s.WriteString("eth,")
	}

	dlType := f.EtherType
	skipType, skipProto := false, false
	if w.EtherType != 0 {
		skipType = true
		short := ""
		switch dlType {
		case packet.EtherTypeIPv4:
			short = "ip"
			if w.IPProto != 0 {
				skipProto = true
				switch f.IPProto {
				case packet.ProtoICMP:
					short = "icmp"
				case packet.ProtoTCP:
					short = "tcp"
				case packet.ProtoUDP:
					short = "udp"
				case packet.ProtoSCTP:
					short = "sctp"
				default:
					skipProto = false
				}
			}
		case packet.EtherTypeIPv6:
			short = "ipv6"
			if w.IPProto != 0 {
				skipProto = true
				switch f.IPProto {
				case packet.ProtoICMPv6:
					short = "icmp6"
				case packet.ProtoTCP:
					short = "tcp6"
				case packet.ProtoUDP:
					short = "udp6"
				case packet.ProtoSCTP:
					short = "sctp6"
				default:
					skipProto = false
				}
			}
		case packet.EtherTypeARP:
			short = "arp"
		case packet.EtherTypeRARP:
			short = "rarp"
		case 0x8847:
			short = "mpls"
		case 0x8848:
			short = "mplsm"
		default:
			skipType = false
		}
		if short != "" {
			mf.s.WriteString(short + ",")
		}
	}
	for i := 0; i < NumRegs; i++ {
		mf.uint32Masked("reg"+strconv.Itoa(i), f.Regs[i], w.Regs[i])
	}

	// Tunnel.
	mf.be64Masked("tun_id", f.TunID, w.TunID)
	mf.ipMasked("tun_src", f.TunSrc, w.TunSrc)
	mf.ipMasked("tun_dst", f.TunDst, w.TunDst)
	mf.ipv6Masked("tun_ipv6_src", f.TunIPv6Src, w.TunIPv6Src)
	mf.ipv6Masked("tun_ipv6_dst", f.TunIPv6Dst, w.TunIPv6Dst)
	if w.TunGBPID != 0 {
		mf.be16Masked("tun_gbp_id", f.TunGBPID, w.TunGBPID)
	}
	if w.TunGBPFlags != 0 {
		mf.item("tun_gbp_flags", hexAlt(uint64(f.TunGBPFlags)))
	}
	if w.TunTOS != 0 {
		mf.item("tun_tos", strconv.FormatUint(uint64(f.TunTOS), 16))
	}
	if w.TunTTL != 0 {
		mf.item("tun_ttl", strconv.Itoa(int(f.TunTTL)))
	}
	if tm := uint32(w.TunFlags) & 0xf; tm != 0 {
		var s strings.Builder
		formatFlagsMasked(&s, "", tunFlagName, uint32(f.TunFlags)&0xf, tm, 0xf)
		mf.item("tun_flags", s.String())
	}
	if w.TunMetadata != [TunMetadataBytes]byte{} {
		fd := &fieldTable[TunMetadata0]
		v, mask := fd.Get(f), fd.GetMask(&m.Wildcards)
		n := tunMetadataWireLen(v, &mask)
		off := TunMetadataBytes - n
		s := putHex(v[off:TunMetadataBytes])
		if mask != onesBytes(TunMetadataBytes) && !allOnes(mask[off:TunMetadataBytes]) {
			s += "/" + putHex(mask[off:TunMetadataBytes])
		}
		mf.item("tun_metadata0", s)
	}

	mf.be64Masked("metadata", f.Metadata, w.Metadata)
	if w.InPort != 0 {
		mf.item("in_port", PortName(f.InPort))
	}

	// VLAN tags, outermost first, as dl_vlan/vlan_tci, dl_vlan1/vlan_tci1.
	for i := range f.VLANs {
		tciMask := tciAt(w, i, true)
		if tciMask == 0 {
			break
		}
		suffix := ""
		if i > 0 {
			suffix = strconv.Itoa(i)
		}
		tciV := tciAt(f, i, false)
		vidMask, pcpMask, cfi := tciMask&vlanVIDMask, tciMask&vlanPCPMask, tciMask&vlanCFI
		switch {
		case cfi != 0 && tciV&vlanCFI != 0 && (vidMask == 0 || vidMask == vlanVIDMask) &&
			(pcpMask == 0 || pcpMask == vlanPCPMask) && (vidMask != 0 || pcpMask != 0):
			if vidMask != 0 {
				mf.item("dl_vlan"+suffix, strconv.Itoa(int(tciV&vlanVIDMask)))
			}
			if pcpMask != 0 {
				mf.item("dl_vlan_pcp"+suffix, strconv.Itoa(int(tciV>>13)))
			}
		case tciMask == 0xffff:
			mf.item("vlan_tci"+suffix, fmt.Sprintf("0x%04x", tciV))
		default:
			mf.item("vlan_tci"+suffix, fmt.Sprintf("0x%04x/0x%04x", tciV, tciMask))
		}
	}

	mf.ethMasked("dl_src", f.SrcMAC, w.SrcMAC)
	mf.ethMasked("dl_dst", f.DstMAC, w.DstMAC)
	if !skipType && w.EtherType != 0 {
		mf.item("dl_type", fmt.Sprintf("0x%04x", dlType))
	}
	isARP := dlType == packet.EtherTypeARP || dlType == packet.EtherTypeRARP
	switch {
	case dlType == packet.EtherTypeIPv6:
		mf.ipv6Masked("ipv6_src", f.SrcIPv6, w.SrcIPv6)
		mf.ipv6Masked("ipv6_dst", f.DstIPv6, w.DstIPv6)
		if w.FlowLabel != 0 {
			if w.FlowLabel == ^uint32(0) {
				mf.item("ipv6_label", fmt.Sprintf("0x%05x", f.FlowLabel))
			} else {
				mf.item("ipv6_label", fmt.Sprintf("0x%05x/0x%05x", f.FlowLabel, w.FlowLabel))
			}
		}
	case isARP:
		mf.ipMasked("arp_spa", f.SrcIPv4, w.SrcIPv4)
		mf.ipMasked("arp_tpa", f.DstIPv4, w.DstIPv4)
	default:
		mf.ipMasked("nw_src", f.SrcIPv4, w.SrcIPv4)
		mf.ipMasked("nw_dst", f.DstIPv4, w.DstIPv4)
	}
	if isARP {
		if w.ARPOp != 0 {
			mf.item("arp_op", strconv.Itoa(int(uint8(f.ARPOp))))
		}
	} else if !skipProto && w.IPProto != 0 {
		mf.item("nw_proto", strconv.Itoa(int(f.IPProto)))
	}
	if isARP {
		mf.ethMasked("arp_sha", f.ARPSHA, w.ARPSHA)
		mf.ethMasked("arp_tha", f.ARPTHA, w.ARPTHA)
	}
	if w.IPTOS&0xfc != 0 {
		mf.item("nw_tos", strconv.Itoa(int(f.IPTOS&0xfc)))
	}
	if w.IPTOS&0x03 != 0 {
		mf.item("nw_ecn", strconv.Itoa(int(f.IPTOS&0x03)))
	}
	if w.IPTTL != 0 {
		mf.item("nw_ttl", strconv.Itoa(int(f.IPTTL)))
	}
	switch w.IPFrag & 3 {
	case packet.FragAny | packet.FragLater:
		v := "no"
		switch f.IPFrag & 3 {
		case packet.FragAny | packet.FragLater:
			v = "later"
		case packet.FragAny:
			v = "first"
		case packet.FragLater:
			v = "<error>"
		}
		mf.item("nw_frag", v)
	case packet.FragAny:
		mf.item("nw_frag", map[bool]string{true: "yes", false: "no"}[f.IPFrag&packet.FragAny != 0])
	case packet.FragLater:
		mf.item("nw_frag", map[bool]string{true: "later", false: "not_later"}[f.IPFrag&packet.FragLater != 0])
	}
	icmpItems := func() {
		if w.ICMPType != 0 {
			mf.item("icmp_type", strconv.Itoa(int(f.ICMPType)))
		}
		if w.ICMPCode != 0 {
			mf.item("icmp_code", strconv.Itoa(int(f.ICMPCode)))
		}
	}
	switch {
	case dlType == packet.EtherTypeIPv4 && f.IPProto == packet.ProtoICMP:
		icmpItems()
	case dlType == packet.EtherTypeIPv6 && f.IPProto == packet.ProtoICMPv6:
		icmpItems()
		mf.ipv6Masked("nd_target", f.NDTarget, w.NDTarget)
		mf.ethMasked("nd_sll", f.ARPSHA, w.ARPSHA)
		mf.ethMasked("nd_tll", f.ARPTHA, w.ARPTHA)
		if w.NDReserved != 0 {
			mf.be32Masked("nd_reserved", f.NDReserved, w.NDReserved)
		}
		if w.NDOptionsType != 0 {
			mf.item("nd_options_type", strconv.Itoa(int(f.NDOptionsType)))
		}
	default:
		mf.be16Masked("tp_src", f.SrcPort, w.SrcPort)
		mf.be16Masked("tp_dst", f.DstPort, w.DstPort)
	}
	if isIPAny(f) && f.IPProto == packet.ProtoTCP && w.TCPFlags != 0 {
		formatFlagsMasked(&mf.s, "tcp_flags", tcpFlagName, uint32(f.TCPFlags), uint32(w.TCPFlags&0x0fff), 0x0fff)
		mf.s.WriteByte(',')
	}
	return strings.TrimSuffix(mf.s.String(), ",")
}

// matchesPacketFields reports whether m matches any field that has a
// prerequisite: the packet's own fields or the conntrack original tuple.
func (m *Match) matchesPacketFields() bool {
	w := &m.Wildcards.Masks
	if w.CTNwProto != 0 || w.CTNwSrc != [4]byte{} || w.CTNwDst != [4]byte{} ||
		w.CTIPv6Src != [16]byte{} || w.CTIPv6Dst != [16]byte{} || w.CTTpSrc != 0 || w.CTTpDst != 0 {
		return true
	}
	words := w.Words()
	for i := packetFieldsWord; i < keyWordsInFlow; i++ {
		if words[i] != 0 {
			return true
		}
	}
	return false
}

// The packet fields of Flow are the words from packet.Key.EtherType to
// the end of the key.
var (
	packetFieldsWord = int(unsafe.Offsetof(packet.Key{}.EtherType)) / 8
	keyWordsInFlow   = int(unsafe.Sizeof(packet.Key{})) / 8
)

func allOnes(b []byte) bool {
	for _, v := range b {
		if v != 0xff {
			return false
		}
	}
	return true
}

// String is Format(DefaultPriority).
func (m *Match) String() string { return m.Format(DefaultPriority) }

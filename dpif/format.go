package dpif

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"gvs/packet"
)

// The formats here are Open vSwitch's (lib/odp-util.c) for its userspace
// (netdev) datapath, as ovs-appctl dpctl/dump-flows prints them: tools
// and people compare the two.

// String formats an action the way ovs-appctl dpctl/dump-flows does.
func (a Action) String() string {
	var b strings.Builder
	a.format(&b)
	return b.String()
}

// String formats the list as "a,b,c", or "drop" when empty.
func (as Actions) String() string {
	if len(as) == 0 {
		return "drop"
	}
	var b strings.Builder
	as.format(&b)
	return b.String()
}

// format writes the actions comma-separated; an empty list writes nothing
// (as inside clone() or check_pkt_len's branches).
func (as Actions) format(b *strings.Builder) {
	for i := range as {
		if i > 0 {
			b.WriteByte(',')
		}
		as[i].format(b)
	}
}

func (a *Action) format(b *strings.Builder) {
	switch a.Kind {
	case ActOutput:
		b.WriteString(strconv.FormatUint(uint64(a.Port), 10))
	case ActPushVLAN:
		// Open vSwitch's TCI carries the CFI bit as "tag present", so
		// its push_vlan never prints cfi=0; ours holds the frame's DEI
		// bit and prints the same.
		// An 802.1ad tag names its TPID, as format_odp_action does.
		if tpid := a.pushTPID(); tpid != packet.EtherTypeVLAN {
			fmt.Fprintf(b, "push_vlan(tpid=0x%04x,vid=%d,pcp=%d)", tpid, a.TCI&0x0fff, a.TCI>>13)
		} else {
			fmt.Fprintf(b, "push_vlan(vid=%d,pcp=%d)", a.TCI&0x0fff, a.TCI>>13)
		}
	case ActPopVLAN:
		b.WriteString("pop_vlan")
	case ActSetEthSrc:
		fmt.Fprintf(b, "set(eth(src=%s))", net.HardwareAddr(a.MAC[:]))
	case ActSetEthDst:
		fmt.Fprintf(b, "set(eth(dst=%s))", net.HardwareAddr(a.MAC[:]))
	case ActSetVLANTCI:
		fmt.Fprintf(b, "set(vlan(vid=%d,pcp=%d))", a.TCI&0x0fff, a.TCI>>13)
	case ActSet:
		b.WriteString("set(")
		formatAttr(b, a.Set.Attr, &a.Set.Value, nil, true)
		b.WriteByte(')')
	case ActSetMasked:
		b.WriteString("set(")
		formatAttr(b, a.Set.Attr, &a.Set.Value, &a.Set.Mask, false)
		b.WriteByte(')')
	case ActRecirc:
		fmt.Fprintf(b, "recirc(%s)", hexC(uint64(a.Arg)))
	case ActHash:
		switch a.Hash {
		case HashL4:
			fmt.Fprintf(b, "hash(l4(%d))", a.Arg)
		case HashSymL4:
			fmt.Fprintf(b, "hash(sym_l4(%d))", a.Arg)
		default:
			fmt.Fprintf(b, "hash(Unknown hash algorithm(%d))", a.Hash)
		}
	case ActUserspace:
		a.Userspace.format(b)
	case ActClone:
		b.WriteString("clone(")
		a.Nested[0].format(b)
		b.WriteByte(')')
	case ActCheckPktLen:
		fmt.Fprintf(b, "check_pkt_len(size=%d,gt(", a.Arg)
		a.Nested[0].format(b)
		b.WriteString("),le(")
		a.Nested[1].format(b)
		b.WriteString("))")
	case ActMeter:
		fmt.Fprintf(b, "meter(%d)", a.Arg)
	case ActTrunc:
		fmt.Fprintf(b, "trunc(%d)", a.Arg)
	case ActCT:
		formatCT(b, a.CT)
	case ActCTClear:
		b.WriteString("ct_clear")
	default:
		fmt.Fprintf(b, "unknown(%d)", a.Kind)
	}
}

var slowPathNames = [...]string{"cfm", "bfd", "lacp", "stp", "lldp", "action", "match"}

// format writes the action as format_odp_userspace_action does; the pid
// is 0, as the netdev datapath's.
func (c *UserspaceCookie) format(b *strings.Builder) {
	b.WriteString("userspace(pid=0")
	switch c.Type {
	case CookieController:
		fmt.Fprintf(b, ",controller(reason=%d,dont_send=%d,continuation=%d,recirc_id=%d,rule_cookie=%s,controller_id=%d,max_len=%d)",
			c.Reason, b2i(c.DontSend), b2i(c.Continuation), c.RecircID, hexC(c.RuleCookie), c.ControllerID, c.MaxLen)
	case CookieSlowPath:
		b.WriteString(",slow_path(")
		formatFlags(b, c.SlowPathReasons, slowPathNames[:], ',')
		b.WriteByte(')')
	default:
		if c.Userdata != nil {
			// Open vSwitch puts at least 8 bytes of userdata in the
			// action (zero-padded, for old kernels) and prints them all.
			fmt.Fprintf(b, ",userdata(%x", c.Userdata)
			for range 8 - min(len(c.Userdata), 8) {
				b.WriteString("00")
			}
			b.WriteByte(')')
		}
	}
	b.WriteByte(')')
}

// formatFlags writes the names of the set bits joined by del ("0" for
// none, unknown bits as one hex number), as Open vSwitch's format_flags.
func formatFlags(b *strings.Builder, flags uint32, names []string, del byte) {
	if flags == 0 {
		b.WriteByte('0')
		return
	}
	var bad uint32
	first := true
	for bit := 0; bit < 32; bit++ {
		if flags&(1<<bit) == 0 {
			continue
		}
		if bit >= len(names) || names[bit] == "" {
			bad |= 1 << bit
			continue
		}
		if !first {
			b.WriteByte(del)
		}
		first = false
		b.WriteString(names[bit])
	}
	if bad != 0 {
		if !first {
			b.WriteByte(del)
		}
		fmt.Fprintf(b, "0x%x", bad)
	}
}

// formatFlagsMasked is Open vSwitch's format_flags_masked: the flags
// '|'-joined when the mask is full, else +name/-name per masked bit.
func formatFlagsMasked(b *strings.Builder, flags, mask, maxMask uint32, names []string) {
	if mask == maxMask {
		formatFlags(b, flags, names, '|')
		return
	}
	if mask == 0 {
		b.WriteString("0/0")
		return
	}
	for bit := 0; bit < 32; bit++ {
		if mask&(1<<bit) == 0 {
			continue
		}
		if flags&(1<<bit) != 0 {
			b.WriteByte('+')
		} else {
			b.WriteByte('-')
		}
		if bit < len(names) && names[bit] != "" {
			b.WriteString(names[bit])
		} else {
			b.WriteString("[Unknown]")
		}
	}
}

func b2i(v bool) int {
	if v {
		return 1
	}
	return 0
}

// hexC formats v as C's "%#x" does: "0" for zero, else "0x..." .
func hexC(v uint64) string {
	if v == 0 {
		return "0"
	}
	return "0x" + strconv.FormatUint(v, 16)
}

var (
	tcpFlagNames = []string{"fin", "syn", "rst", "psh", "ack", "urg", "ece", "cwr", "ns", "[200]", "[400]", "[800]"}
	ctStateNames = []string{"new", "est", "rel", "rpl", "inv", "trk", "snat", "dnat"}
)

// attrNames are the key attributes' names in Open vSwitch's formats.
var attrNames = [...]string{
	AttrEthernet: "eth",
	AttrIPv4:     "ipv4",
	AttrIPv6:     "ipv6",
	AttrTCP:      "tcp",
	AttrUDP:      "udp",
	AttrSCTP:     "sctp",
	AttrICMP:     "icmp",
	AttrICMPv6:   "icmpv6",
	AttrARP:      "arp",
	AttrND:       "nd",
	AttrSkbMark:  "skb_mark",
	AttrPriority: "skb_priority",
}

// String returns the attribute's name in Open vSwitch's formats.
func (a KeyAttr) String() string {
	if int(a) < len(attrNames) && attrNames[a] != "" {
		return attrNames[a]
	}
	return fmt.Sprintf("key%d", a)
}

// fieldFmt writes "name=value[/mask]," for one field when verbose or
// the mask is not empty (m nil means exact), as odp-util's format_*
// helpers; the trailing comma is chomped by the caller.
type fieldFmt struct {
	b       *strings.Builder
	verbose bool
	exact   bool // no mask: every field is exact
}

func (f *fieldFmt) field(name string, empty, full bool, value func() string, mask func() string) {
	if !f.verbose && !f.exact && empty {
		return
	}
	f.b.WriteString(name)
	f.b.WriteByte('=')
	f.b.WriteString(value())
	if !f.exact && !full {
		f.b.WriteByte('/')
		f.b.WriteString(mask())
	}
	f.b.WriteByte(',')
}

func (f *fieldFmt) eth(name string, v, m [6]byte) {
	f.field(name, m == [6]byte{}, m == [6]byte{255, 255, 255, 255, 255, 255},
		func() string { return net.HardwareAddr(v[:]).String() }, func() string { return net.HardwareAddr(m[:]).String() })
}

func (f *fieldFmt) ipv4(name string, v, m [4]byte) {
	f.field(name, m == [4]byte{}, m == [4]byte{255, 255, 255, 255},
		func() string { return netip.AddrFrom4(v).String() }, func() string { return netip.AddrFrom4(m).String() })
}

func (f *fieldFmt) ipv6(name string, v, m [16]byte) {
	var full [16]byte
	for i := range full {
		full[i] = 0xff
	}
	f.field(name, m == [16]byte{}, m == full,
		func() string { return netip.AddrFrom16(v).String() }, func() string { return netip.AddrFrom16(m).String() })
}

func (f *fieldFmt) u8u(name string, v, m uint8) {
	f.field(name, m == 0, m == 0xff, func() string { return strconv.Itoa(int(v)) }, func() string { return hexC(uint64(m)) })
}

func (f *fieldFmt) u8x(name string, v, m uint8) {
	f.field(name, m == 0, m == 0xff, func() string { return hexC(uint64(v)) }, func() string { return hexC(uint64(m)) })
}

func (f *fieldFmt) u16(name string, v, m uint16) {
	f.field(name, m == 0, m == 0xffff, func() string { return strconv.Itoa(int(v)) }, func() string { return hexC(uint64(m)) })
}

func (f *fieldFmt) label(name string, v, m uint32) {
	f.field(name, m == 0, m&0xfffff == 0xfffff, func() string { return hexC(uint64(v)) }, func() string { return hexC(uint64(m)) })
}

func (f *fieldFmt) frag(name string, v, m uint8) {
	if !f.exact && m == 0 {
		return
	}
	// The datapath's frag is an enumeration; any mask bit is the whole.
	s := "no"
	switch {
	case v&packet.FragLater != 0:
		s = "later"
	case v&packet.FragAny != 0:
		s = "first"
	}
	f.b.WriteString(name + "=" + s + ",")
}

// formatAttr writes "name(fields)" for one key attribute: every field
// when m is nil (an exact key, or a plain set action), else only the
// fields m covers (all of them when verbose), as format_odp_key_attr.
func formatAttr(b *strings.Builder, attr KeyAttr, k *packet.Key, m *packet.Mask, verbose bool) {
	b.WriteString(attr.String())
	b.WriteByte('(')
	f := fieldFmt{b: b, verbose: verbose, exact: m == nil}
	if m == nil {
		full := packet.FullMask()
		m = &full
	}
	start := b.Len()
	switch attr {
	case AttrEthernet:
		f.eth("src", k.SrcMAC, m.SrcMAC)
		f.eth("dst", k.DstMAC, m.DstMAC)
	case AttrIPv4:
		f.ipv4("src", k.SrcIPv4, m.SrcIPv4)
		f.ipv4("dst", k.DstIPv4, m.DstIPv4)
		f.u8u("proto", k.IPProto, m.IPProto)
		f.u8x("tos", k.IPTOS, m.IPTOS)
		f.u8u("ttl", k.IPTTL, m.IPTTL)
		f.frag("frag", k.IPFrag, m.IPFrag)
	case AttrIPv6:
		f.ipv6("src", k.SrcIPv6, m.SrcIPv6)
		f.ipv6("dst", k.DstIPv6, m.DstIPv6)
		f.label("label", k.FlowLabel, m.FlowLabel)
		f.u8u("proto", k.IPProto, m.IPProto)
		f.u8x("tclass", k.IPTOS, m.IPTOS)
		f.u8u("hlimit", k.IPTTL, m.IPTTL)
		f.frag("frag", k.IPFrag, m.IPFrag)
	case AttrTCP, AttrUDP, AttrSCTP:
		f.u16("src", k.SrcPort, m.SrcPort)
		f.u16("dst", k.DstPort, m.DstPort)
	case AttrICMP, AttrICMPv6:
		f.u8u("type", k.ICMPType, m.ICMPType)
		f.u8u("code", k.ICMPCode, m.ICMPCode)
	case AttrARP:
		f.ipv4("sip", k.SrcIPv4, m.SrcIPv4)
		f.ipv4("tip", k.DstIPv4, m.DstIPv4)
		f.u16("op", k.ARPOp, m.ARPOp)
		f.eth("sha", k.ARPSHA, m.ARPSHA)
		f.eth("tha", k.ARPTHA, m.ARPTHA)
	case AttrND:
		f.ipv6("target", k.NDTarget, m.NDTarget)
		f.eth("sll", k.ARPSHA, m.ARPSHA)
		f.eth("tll", k.ARPTHA, m.ARPTHA)
	case AttrSkbMark:
		formatU32(b, k.PktMark, m.PktMark, f.exact)
	case AttrPriority:
		formatU32(b, k.SkbPriority, m.SkbPriority, f.exact)
	}
	if s := b.String(); b.Len() > start && s[len(s)-1] == ',' {
		chomp(b)
	}
	b.WriteByte(')')
}

// formatU32 writes a 32-bit metadata value as "%#x[/%#x]".
func formatU32(b *strings.Builder, v, m uint32, exact bool) {
	b.WriteString(hexC(uint64(v)))
	if !exact && m != ^uint32(0) {
		b.WriteString("/" + hexC(uint64(m)))
	}
}

// chomp removes the last byte of b.
func chomp(b *strings.Builder) {
	s := b.String()
	s = s[:len(s)-1]
	b.Reset()
	b.WriteString(s)
}

// String formats a flow like ovs-appctl dpctl/dump-flows: the key
// attributes the mask covers (value/mask where partial), statistics,
// actions.
func (e FlowEntry) String() string {
	return e.Format(time.Now())
}

// Format is String with the "used" age computed against now.
func (e FlowEntry) Format(now time.Time) string {
	var b strings.Builder
	// Values as the packet had them, with the mask, as OVS prints
	// ("vlan(vid=11,pcp=7/0x0)"); the masked key for an entry built
	// without one.
	k := &e.Unmasked
	if *k == (packet.Key{}) {
		k = &e.Key
	}
	FormatKey(&b, k, &e.Mask)
	used := "never"
	if e.Stats.Packets > 0 {
		used = fmt.Sprintf("%.3fs", now.Sub(e.Stats.Used).Seconds())
	}
	fmt.Fprintf(&b, ", packets:%d, bytes:%d, used:%s", e.Stats.Packets, e.Stats.Bytes, used)
	if e.Stats.TCPFlags != 0 {
		b.WriteString(", flags:")
		formatTCPFlagsShort(&b, e.Stats.TCPFlags)
	}
	fmt.Fprintf(&b, ", actions:%s", e.Actions)
	return b.String()
}

// formatTCPFlagsShort writes flow statistics' TCP flags as Open
// vSwitch's packet_format_tcp_flags: one letter each, "." for ACK.
func formatTCPFlagsShort(b *strings.Builder, f uint16) {
	for _, l := range [...]struct {
		bit uint16
		s   string
	}{{packet.TCPFlagSYN, "S"}, {packet.TCPFlagFIN, "F"}, {packet.TCPFlagPSH, "P"}, {packet.TCPFlagRST, "R"},
		{packet.TCPFlagURG, "U"}, {packet.TCPFlagACK, "."}, {packet.TCPFlagECE, "E"}, {packet.TCPFlagCWR, "C"},
		{packet.TCPFlagNS, "N"}, {0x200, "[200]"}, {0x400, "[400]"}, {0x800, "[800]"}} {
		if f&l.bit != 0 {
			b.WriteString(l.s)
		}
	}
}

// FormatKey writes a megaflow's key and mask as Open vSwitch's
// odp_flow_format does for its netdev datapath (non-verbose): the
// metadata attributes the mask covers, recirc_id, in_port,
// packet_type(ns=0,id=0) (always Ethernet here), then eth, VLANs with
// encap(), eth_type and the L3/L4 attributes with only the fields the mask
// covers.
func FormatKey(b *strings.Builder, k *packet.Key, m *packet.Mask) {
	first := true
	sep := func() {
		if !first {
			b.WriteByte(',')
		}
		first = false
	}
	u32 := func(name string, v, mv uint32) {
		if mv != 0 {
			sep()
			b.WriteString(name + "(")
			formatU32(b, v, mv, false)
			b.WriteByte(')')
		}
	}
	u32("skb_priority", k.SkbPriority, m.SkbPriority)
	formatTunnel(b, k, m, sep)
	u32("skb_mark", k.PktMark, m.PktMark)
	if m.CTState != 0 {
		sep()
		b.WriteString("ct_state(")
		// The datapath's ct_state mask has only the 8 state bits, so it
		// is never the "exact" 32-bit mask: OVS always prints +/- form.
		formatFlagsMasked(b, k.CTState, m.CTState&0xff, ^uint32(0), ctStateNames)
		b.WriteByte(')')
	}
	if m.CTZone != 0 {
		sep()
		b.WriteString("ct_zone(" + hexC(uint64(k.CTZone)))
		if m.CTZone != 0xffff {
			b.WriteString("/" + hexC(uint64(m.CTZone)))
		}
		b.WriteByte(')')
	}
	if m.CTMark != 0 {
		sep()
		b.WriteString("ct_mark(")
		formatU32(b, k.CTMark, m.CTMark, false)
		b.WriteByte(')')
	}
	if m.CTLabel != ([16]byte{}) {
		sep()
		b.WriteString("ct_label(")
		putHex(b, k.CTLabel[:])
		if m.CTLabel != [16]byte{255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255} {
			b.WriteByte('/')
			putHex(b, m.CTLabel[:])
		}
		b.WriteByte(')')
	}
	formatCTTuple(b, k, m, sep)
	sep()
	b.WriteString("recirc_id(")
	formatU32(b, k.RecircID, m.RecircID|^uint32(0), false)
	b.WriteByte(')')
	u32("dp_hash", k.DPHash, m.DPHash)
	if m.InPort != 0 {
		sep()
		if m.InPort == ^uint32(0) {
			fmt.Fprintf(b, "in_port(%d)", k.InPort)
		} else {
			fmt.Fprintf(b, "in_port(%d/%s)", k.InPort, hexC(uint64(m.InPort)))
		}
	}
	sep()
	b.WriteString("packet_type(ns=0,id=0)")
	if m.SrcMAC != ([6]byte{}) || m.DstMAC != ([6]byte{}) {
		sep()
		formatAttr(b, AttrEthernet, k, m, false)
	}
	formatL2Rest(b, k, m, 0, sep)
}

// formatL2Rest writes the VLAN tags from index i (each as eth_type(tpid),
// vlan(...),encap(...)), then eth_type and the L3 and L4 attributes.
func formatL2Rest(b *strings.Builder, k *packet.Key, m *packet.Mask, i int, sep func()) {
	if i < packet.MaxVLANs && k.VLANs[i].Present() && m.VLANs[i] != (packet.VLANTag{}) {
		t, mt := k.VLANs[i], m.VLANs[i]
		sep()
		fmt.Fprintf(b, "eth_type(0x%04x)", t.TPID)
		const cfi = 0x1000
		tci, mtci := t.TCI|cfi, mt.TCI|cfi
		b.WriteString(",vlan(")
		start := b.Len()
		if tci&0xfff != 0 || mtci&0xfff != 0 {
			fmt.Fprintf(b, "vid=%d", tci&0xfff)
			if mtci&0xfff != 0xfff {
				fmt.Fprintf(b, "/0x%x", mtci&0xfff)
			}
			b.WriteByte(',')
		}
		if tci>>13 != 0 || mtci>>13 != 0 {
			fmt.Fprintf(b, "pcp=%d", tci>>13)
			if mtci>>13 != 7 {
				fmt.Fprintf(b, "/0x%x", mtci>>13)
			}
			b.WriteByte(',')
		}
		if b.Len() > start {
			chompComma(b)
		}
		b.WriteString("),encap(")
		inner := true
		formatL2Rest(b, k, m, i+1, func() {
			if !inner {
				b.WriteByte(',')
			}
			inner = false
		})
		b.WriteByte(')')
		return
	}
	if m.EtherType != 0 {
		sep()
		fmt.Fprintf(b, "eth_type(0x%04x", k.EtherType)
		if m.EtherType != 0xffff {
			fmt.Fprintf(b, "/0x%04x", m.EtherType)
		}
		b.WriteByte(')')
	}
	if m.EtherType != 0xffff {
		return // without an exact EtherType, nothing above L2 is matched
	}
	var l4 KeyAttr
	switch k.EtherType {
	case packet.EtherTypeIPv4:
		if m.SrcIPv4 != ([4]byte{}) || m.DstIPv4 != ([4]byte{}) || m.IPProto != 0 || m.IPTOS != 0 || m.IPTTL != 0 || m.IPFrag != 0 {
			sep()
			formatAttr(b, AttrIPv4, k, m, false)
		}
		l4 = l4Attr(k.IPProto, packet.ProtoICMP, AttrICMP)
	case packet.EtherTypeIPv6:
		if m.SrcIPv6 != ([16]byte{}) || m.DstIPv6 != ([16]byte{}) || m.FlowLabel != 0 || m.IPProto != 0 || m.IPTOS != 0 || m.IPTTL != 0 || m.IPFrag != 0 {
			sep()
			formatAttr(b, AttrIPv6, k, m, false)
		}
		l4 = l4Attr(k.IPProto, packet.ProtoICMPv6, AttrICMPv6)
	case packet.EtherTypeARP, packet.EtherTypeRARP:
		if m.SrcIPv4 != ([4]byte{}) || m.DstIPv4 != ([4]byte{}) || m.ARPOp != 0 || m.ARPSHA != ([6]byte{}) || m.ARPTHA != ([6]byte{}) {
			sep()
			formatAttr(b, AttrARP, k, m, false)
		}
		return
	default:
		return
	}
	if m.IPProto != 0xff || k.IsLaterFragment() {
		return
	}
	switch l4 {
	case AttrTCP, AttrUDP, AttrSCTP:
		if m.SrcPort != 0 || m.DstPort != 0 {
			sep()
			formatAttr(b, l4, k, m, false)
		}
		if l4 == AttrTCP && m.TCPFlags != 0 {
			sep()
			b.WriteString("tcp_flags(")
			formatFlagsMasked(b, uint32(k.TCPFlags), uint32(m.TCPFlags&0x0fff), 0x0fff, tcpFlagNames)
			b.WriteByte(')')
		}
	case AttrICMP, AttrICMPv6:
		if m.ICMPType != 0 || m.ICMPCode != 0 {
			sep()
			formatAttr(b, l4, k, m, false)
		}
		if l4 == AttrICMPv6 && (k.ICMPType == 135 || k.ICMPType == 136) && k.ICMPCode == 0 {
			if m.NDTarget != ([16]byte{}) || m.ARPSHA != ([6]byte{}) || m.ARPTHA != ([6]byte{}) {
				sep()
				formatAttr(b, AttrND, k, m, false)
			}
			// No nd_ext(): the netdev datapath does not export it
			// (dp_netdev_support lacks nd_ext), so OVS never prints
			// nd_reserved or nd_options_type in its flows.
		}
	}
}

// formatTunnel writes tunnel(...) when the mask covers any tunnel field:
// tun_id, src, dst, ipv6_src, ipv6_dst, tos, ttl, tp_src, tp_dst, as
// format_odp_tun_attr (Geneve options and GBP are not printed yet).
func formatTunnel(b *strings.Builder, k *packet.Key, m *packet.Mask, sep func()) {
	if m.TunID == 0 && m.TunSrc == ([4]byte{}) && m.TunDst == ([4]byte{}) && m.TunIPv6Src == ([16]byte{}) &&
		m.TunIPv6Dst == ([16]byte{}) && m.TunTOS == 0 && m.TunTTL == 0 && m.TunTpSrc == 0 && m.TunTpDst == 0 && m.TunFlags == 0 {
		return
	}
	sep()
	b.WriteString("tunnel(")
	f := fieldFmt{b: b}
	if m.TunID != 0 {
		b.WriteString("tun_id=" + hexC(k.TunID))
		if m.TunID != ^uint64(0) {
			b.WriteString("/" + hexC(m.TunID))
		}
		b.WriteByte(',')
	}
	f.ipv4("src", k.TunSrc, m.TunSrc)
	f.ipv4("dst", k.TunDst, m.TunDst)
	f.ipv6("ipv6_src", k.TunIPv6Src, m.TunIPv6Src)
	f.ipv6("ipv6_dst", k.TunIPv6Dst, m.TunIPv6Dst)
	f.u8x("tos", k.TunTOS, m.TunTOS)
	f.u8u("ttl", k.TunTTL, m.TunTTL)
	f.u16("tp_src", k.TunTpSrc, m.TunTpSrc)
	f.u16("tp_dst", k.TunTpDst, m.TunTpDst)
	chompComma(b)
	b.WriteByte(')')
}

// putHex writes a big-endian number as Open vSwitch's ds_put_hex: "0x"
// and its digits without leading zeros, or "0".
func putHex(b *strings.Builder, v []byte) {
	printed := false
	for _, c := range v {
		switch {
		case printed:
			fmt.Fprintf(b, "%02x", c)
		case c != 0:
			fmt.Fprintf(b, "0x%x", c)
			printed = true
		}
	}
	if !printed {
		b.WriteByte('0')
	}
}

// chompComma removes a trailing comma.
func chompComma(b *strings.Builder) {
	if s := b.String(); len(s) > 0 && s[len(s)-1] == ',' {
		chomp(b)
	}
}

// l4Attr is the key attribute of an L4 protocol over IPv4 or IPv6, whose
// ICMP is icmpProto (attribute icmpAttr); 0 for a protocol without one.
func l4Attr(proto, icmpProto uint8, icmpAttr KeyAttr) KeyAttr {
	switch proto {
	case icmpProto:
		return icmpAttr
	case packet.ProtoTCP:
		return AttrTCP
	case packet.ProtoUDP:
		return AttrUDP
	case packet.ProtoSCTP:
		return AttrSCTP
	}
	return 0
}

// formatCTTuple writes ct_tuple4(...) or ct_tuple6(...), the conntrack
// original-direction tuple, as odp_flow_key_from_flow and
// odp_flow_format do: the attribute exists only when the key has a
// ct_nw_proto (the packet went through ct) and is IPv4 or IPv6, and is
// printed when its mask is not all wildcards, each field then only when
// its own mask is not zero.
func formatCTTuple(b *strings.Builder, k *packet.Key, m *packet.Mask, sep func()) {
	if k.CTNwProto == 0 {
		return
	}
	ports := m.CTNwProto != 0 || m.CTTpSrc != 0 || m.CTTpDst != 0
	switch {
	case k.EtherType == packet.EtherTypeIPv4 && (ports || m.CTNwSrc != ([4]byte{}) || m.CTNwDst != ([4]byte{})):
		sep()
		b.WriteString("ct_tuple4(")
		f := fieldFmt{b: b}
		f.ipv4("src", k.CTNwSrc, m.CTNwSrc)
		f.ipv4("dst", k.CTNwDst, m.CTNwDst)
		f.u8u("proto", k.CTNwProto, m.CTNwProto)
		f.u16("tp_src", k.CTTpSrc, m.CTTpSrc)
		f.u16("tp_dst", k.CTTpDst, m.CTTpDst)
		chompComma(b)
		b.WriteByte(')')
	case k.EtherType == packet.EtherTypeIPv6 && (ports || m.CTIPv6Src != ([16]byte{}) || m.CTIPv6Dst != ([16]byte{})):
		sep()
		b.WriteString("ct_tuple6(")
		f := fieldFmt{b: b}
		f.ipv6("src", k.CTIPv6Src, m.CTIPv6Src)
		f.ipv6("dst", k.CTIPv6Dst, m.CTIPv6Dst)
		f.u8u("proto", k.CTNwProto, m.CTNwProto)
		f.u16("src_port", k.CTTpSrc, m.CTTpSrc)
		f.u16("dst_port", k.CTTpDst, m.CTTpDst)
		chompComma(b)
		b.WriteByte(')')
	}
}

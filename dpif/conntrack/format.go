package conntrack

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"gvs/packet"
)

// FormatEntry returns the line `ovs-appctl dpctl/dump-conntrack` prints
// for e (Open vSwitch's ct_dpif_format_entry without statistics);
// verbose is dump-conntrack -m.
func FormatEntry(e *Entry, verbose bool) string { return FormatEntryStats(e, verbose, false) }

// FormatEntryStats is FormatEntry with dump-conntrack -s (stats): the
// timeout left, in whole seconds (the userspace tracker keeps no packet
// counters or timestamps, so those print nothing, as in Open vSwitch).
func FormatEntryStats(e *Entry, verbose, stats bool) string {
	var b strings.Builder
	b.WriteString(ProtoName(e.Orig.Proto))
	b.WriteString(",orig=(")
	formatTuple(&b, &e.Orig)
	b.WriteString("),reply=(")
	formatTuple(&b, &e.Reply)
	b.WriteString(")")
	if verbose {
		fmt.Fprintf(&b, ",id=%d", e.ID)
	}
	if e.Zone != 0 {
		fmt.Fprintf(&b, ",zone=%d", e.Zone)
	}
	if verbose {
		b.WriteString(",status=")
		formatFlags(&b, uint32(e.Status), statusNames[:])
	}
	if stats {
		fmt.Fprintf(&b, ",timeout=%d", int64(e.Timeout/time.Second))
	}
	if e.Mark != 0 {
		fmt.Fprintf(&b, ",mark=%d", e.Mark)
	}
	if e.Label != ([16]byte{}) {
		b.WriteString(",labels=")
		b.WriteString(formatHex(e.Label[:]))
	}
	if e.Orig.Proto == packet.ProtoTCP {
		b.WriteString(",protoinfo=(")
		if verbose {
			fmt.Fprintf(&b, "state_orig=%s,state_reply=%s", e.TCP.StateOrig, e.TCP.StateReply)
			if e.TCP.WScaleOrig != 0 || e.TCP.WScaleReply != 0 {
				fmt.Fprintf(&b, ",wscale_orig=%d,wscale_reply=%d", e.TCP.WScaleOrig, e.TCP.WScaleReply)
			}
			b.WriteString(",flags_orig=")
			formatFlags(&b, uint32(e.TCP.FlagsOrig), tcpFlagNames[:])
			b.WriteString(",flags_reply=")
			formatFlags(&b, uint32(e.TCP.FlagsReply), tcpFlagNames[:])
		} else {
			b.WriteString("state=")
			b.WriteString(e.TCPState)
		}
		b.WriteString(")")
	}
	switch e.Helper {
	case HelperFTP:
		b.WriteString(",helper=ftp")
	case HelperTFTP:
		b.WriteString(",helper=tftp")
	}
	return b.String()
}

var statusNames = [...]string{"EXPECTED", "SEEN_REPLY", "ASSURED", "CONFIRMED", "SRC_NAT", "DST_NAT",
	"SEQ_ADJUST", "SRC_NAT_DONE", "DST_NAT_DONE", "DYING", "FIXED_TIMEOUT", "TEMPLATE", "UNTRACKED"}

var tcpFlagNames = [...]string{"WINDOW_SCALE", "SACK_PERM", "CLOSE_INIT", "BE_LIBERAL", "DATA_UNACKNOWLEDGED", "MAXACK_SET"}

// formatFlags is Open vSwitch's format_flags with '|': names low bit
// first, "0" for none, unknown bits in hex.
func formatFlags(b *strings.Builder, flags uint32, names []string) {
	if flags == 0 {
		b.WriteString("0")
		return
	}
	var parts []string
	var bad uint32
	for i := range 32 {
		bit := uint32(1) << i
		if flags&bit == 0 {
			continue
		}
		if i < len(names) {
			parts = append(parts, names[i])
		} else {
			bad |= bit
		}
	}
	if bad != 0 {
		parts = append(parts, fmt.Sprintf("0x%x", bad))
	}
	b.WriteString(strings.Join(parts, "|"))
}

// formatHex is ds_put_hex: 0x and the bytes without leading zeros.
func formatHex(v []byte) string {
	for i, c := range v {
		if c != 0 {
			return "0x" + strconv.FormatUint(uint64(c), 16) + hex.EncodeToString(v[i+1:])
		}
	}
	return "0"
}

// ProtoName is the protocol name dump-conntrack prints
// (ct_dpif_format_ipproto): a name for the ones it knows, else the number.
func ProtoName(p uint8) string {
	switch p {
	case packet.ProtoICMP:
		return "icmp"
	case packet.ProtoICMPv6:
		return "icmpv6"
	case packet.ProtoTCP:
		return "tcp"
	case packet.ProtoUDP:
		return "udp"
	case packet.ProtoSCTP:
		return "sctp"
	case packet.ProtoUDPLite:
		return "udplite"
	case 33:
		return "dccp"
	case 2:
		return "igmp"
	}
	return strconv.Itoa(int(p))
}

func formatTuple(b *strings.Builder, t *Tuple) {
	fmt.Fprintf(b, "src=%s,dst=%s", t.Src, t.Dst)
	if t.Proto == packet.ProtoICMP || t.Proto == packet.ProtoICMPv6 {
		fmt.Fprintf(b, ",id=%d,type=%d,code=%d", t.SrcPort, t.DstPort>>8, t.DstPort&0xff)
	} else {
		fmt.Fprintf(b, ",sport=%d,dport=%d", t.SrcPort, t.DstPort)
	}
}

// Match selects connections for dpctl/flush-conntrack: the zero fields
// match anything (Open vSwitch's ofp_ct_match).
type Match struct {
	L3    uint8 // 4, 6 or 0 (either)
	Proto uint8 // 0: any
	Orig  MatchTuple
	Reply MatchTuple
}

// MatchTuple is one direction of a Match; ICMPID/Type/Code for ICMP.
type MatchTuple struct {
	Src, Dst           netip.Addr
	SrcPort, DstPort   uint16
	ICMPID             uint16
	ICMPType, ICMPCode uint8
}

// ParseTuple parses one flush-conntrack tuple argument into m (the
// original direction, or the reply one) as Open vSwitch's
// ofp_ct_tuple_parse: comma-separated ct_nw_src, ct_nw_dst, ct_ipv6_src,
// ct_ipv6_dst, ct_nw_proto, ct_tp_src, ct_tp_dst, icmp_type, icmp_code,
// icmp_id. Errors read as Open vSwitch's.
func ParseTuple(s string, m *Match, reply bool) error {
	t := &m.Orig
	if reply {
		t = &m.Reply
	}
	for _, kv := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		key, value, _ := strings.Cut(kv, "=")
		if value == "" {
			return fmt.Errorf("field %s missing value", key)
		}
		bad := fmt.Errorf("failed to parse field %s", key)
		switch key {
		case "ct_nw_src", "ct_nw_dst", "ct_ipv6_src", "ct_ipv6_dst":
			v6 := strings.HasPrefix(key, "ct_ipv6")
			want := uint8(4)
			if v6 {
				want = 6
			}
			if m.L3 != 0 && m.L3 != want {
				return fmt.Errorf("the L3 protocol does not match %s", value)
			}
			addr := &t.Src
			if strings.HasSuffix(key, "dst") {
				addr = &t.Dst
			}
			if addr.IsValid() {
				return fmt.Errorf("%s is set multiple times", key)
			}
			a, err := netip.ParseAddr(value)
			if err != nil || a.Is4() == v6 {
				return bad
			}
			*addr, m.L3 = a, want
		case "ct_nw_proto":
			v, err := strconv.ParseUint(value, 0, 8)
			if err != nil {
				return bad
			}
			m.Proto = uint8(v)
		case "ct_tp_src", "ct_tp_dst":
			v, err := strconv.ParseUint(value, 0, 16)
			if err != nil {
				return bad
			}
			if key == "ct_tp_src" {
				t.SrcPort = uint16(v)
			} else {
				t.DstPort = uint16(v)
			}
		case "icmp_type", "icmp_code", "icmp_id":
			if m.Proto != packet.ProtoICMP && m.Proto != packet.ProtoICMPv6 {
				return errors.New("invalid L4 fields")
			}
			bitSize := 8
			if key == "icmp_id" {
				bitSize = 16
			}
			v, err := strconv.ParseUint(value, 0, bitSize)
			if err != nil {
				return bad
			}
			switch key {
			case "icmp_type":
				t.ICMPType = uint8(v)
			case "icmp_code":
				t.ICMPCode = uint8(v)
			default:
				t.ICMPID = uint16(v)
			}
		default:
			return fmt.Errorf("invalid conntrack tuple field: %s", key)
		}
	}
	if m.Proto == 0 && (t.SrcPort != 0 || t.DstPort != 0) {
		return errors.New("port is set without protocol")
	}
	return nil
}

func (m *Match) isICMP() bool { return m.Proto == packet.ProtoICMP || m.Proto == packet.ProtoICMPv6 }

func (t *MatchTuple) zero(icmp bool) bool {
	return !t.Src.IsValid() && !t.Dst.IsValid() && (icmp || (t.SrcPort == 0 && t.DstPort == 0))
}

// IsZero reports whether m matches every connection.
func (m *Match) IsZero() bool {
	return m.Proto == 0 && m.L3 == 0 && m.Orig.zero(m.isICMP()) && m.Reply.zero(m.isICMP())
}

func (t *MatchTuple) matches(u *Tuple, icmp bool) bool {
	if t.Src.IsValid() && t.Src != u.Src || t.Dst.IsValid() && t.Dst != u.Dst {
		return false
	}
	if icmp {
		return t.ICMPID == u.SrcPort && uint16(t.ICMPType)<<8|uint16(t.ICMPCode) == u.DstPort
	}
	return (t.SrcPort == 0 || t.SrcPort == u.SrcPort) && (t.DstPort == 0 || t.DstPort == u.DstPort)
}

// Matches reports whether the connection e is one m selects
// (ct_dpif_entry_cmp).
func (m *Match) Matches(e *Entry) bool {
	if m.L3 == 4 && !e.Orig.Src.Is4() || m.L3 == 6 && e.Orig.Src.Is4() {
		return false
	}
	if m.Proto != 0 && m.Proto != e.Orig.Proto {
		return false
	}
	return m.Orig.matches(&e.Orig, m.isICMP()) && m.Reply.matches(&e.Reply, m.isICMP())
}

// FlushMatching is dpctl/flush-conntrack with tuples (ct_dpif_flush):
// with a full original 5-tuple and no reply tuple, the one connection
// of that tuple in zone (zone 0 when AllZones); otherwise every
// connection of zone (AllZones: any) the match selects. It returns how
// many went.
func FlushMatching(ct Conntrack, zone int32, m *Match) int {
	if m == nil || m.IsZero() {
		return ct.Flush(zone, nil)
	}
	icmp := m.isICMP()
	five := m.Orig.Src.IsValid() && m.Orig.Dst.IsValid() && (icmp || m.Orig.SrcPort != 0 && m.Orig.DstPort != 0)
	if five && m.Reply.zero(icmp) {
		t := Tuple{Src: m.Orig.Src, Dst: m.Orig.Dst, Proto: m.Proto, SrcPort: m.Orig.SrcPort, DstPort: m.Orig.DstPort}
		if icmp {
			t.SrcPort, t.DstPort = m.Orig.ICMPID, uint16(m.Orig.ICMPType)<<8|uint16(m.Orig.ICMPCode)
		}
		if zone == AllZones {
			zone = 0
		}
		t.Zone = uint16(zone)
		return ct.Flush(zone, &t)
	}
	var victims []Tuple
	ct.Dump(zone, func(e *Entry) bool {
		if m.Matches(e) {
			o := e.Orig
			o.Zone = e.Zone
			victims = append(victims, o)
		}
		return true
	})
	n := 0
	for i := range victims {
		n += ct.Flush(int32(victims[i].Zone), &victims[i])
	}
	return n
}

package appctl

import (
	"iter"
	"math"
	"net/netip"
	"strings"

	"gvs/dpif/conntrack"
)

// ctMatch is what dpctl/flush-conntrack's tuples select, as Open
// vSwitch 3.1's struct ofp_ct_match: any field left zero matches
// anything.
type ctMatch struct {
	proto uint8
	v6    bool // the addresses given are IPv6 (l3_type AF_INET6)
	l3    bool // an address was given (l3_type set)
	tuple [2]ctPartialTuple
}

// ctPartialTuple is one direction of a ctMatch (struct ofp_ct_tuple).
type ctPartialTuple struct {
	src, dst           netip.Addr
	srcPort, dstPort   uint16
	icmpID             uint16
	icmpType, icmpCode uint8
}

// keyValue is one "key=value" of an Open vSwitch argument.
type keyValue struct{ key, value string }

// keyValues splits s as ofputil_parse_key_value does: fields separated
// by commas or white space, each "key=value", "key:value" or a bare key
// (empty value).
func keyValues(s string) iter.Seq[keyValue] {
	return func(yield func(keyValue) bool) {
		for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
			kv := keyValue{key: f}
			if i := strings.IndexAny(f, "=:"); i >= 0 {
				kv.key, kv.value = f[:i], f[i+1:]
			}
			if !yield(kv) {
				return
			}
		}
	}
}

// parseTuple parses one tuple argument (the reply tuple when reply) as
// ofp_ct_tuple_parse; on error it returns Open vSwitch's message.
func (m *ctMatch) parseTuple(reply bool, s string) (string, bool) {
	t := &m.tuple[0]
	if reply {
		t = &m.tuple[1]
	}
	for kv := range keyValues(s) {
		key, value := kv.key, kv.value
		if value == "" {
			return "field " + key + " missing value", false
		}
		switch key {
		case "ct_nw_src", "ct_nw_dst", "ct_ipv6_src", "ct_ipv6_dst":
			v6 := strings.HasPrefix(key, "ct_ipv6")
			if m.l3 && m.v6 != v6 {
				return "the L3 protocol does not match " + value, false
			}
			addr := &t.dst
			if strings.HasSuffix(key, "_src") {
				addr = &t.src
			}
			if addr.IsValid() && !addr.IsUnspecified() {
				return key + " is set multiple times", false
			}
			a, err := netip.ParseAddr(value)
			if err != nil || a.Is4() == v6 || a.Zone() != "" {
				return "failed to parse field " + key, false
			}
			*addr, m.l3, m.v6 = a, true, v6
		case "ct_nw_proto":
			v, bad := parseCUint(value, math.MaxUint8)
			if bad {
				return "failed to parse field " + key, false
			}
			m.proto = uint8(v)
		case "ct_tp_src", "ct_tp_dst":
			v, bad := parseCUint(value, math.MaxUint16)
			if bad {
				return "failed to parse field " + key, false
			}
			if key == "ct_tp_src" {
				t.srcPort = uint16(v)
			} else {
				t.dstPort = uint16(v)
			}
		case "icmp_type", "icmp_code", "icmp_id":
			if m.proto != protoICMP && m.proto != protoICMPv6 {
				return "invalid L4 fields", false
			}
			max := uint64(math.MaxUint8)
			if key == "icmp_id" {
				max = math.MaxUint16
			}
			v, bad := parseCUint(value, max)
			if bad {
				return "failed to parse field " + key, false
			}
			switch key {
			case "icmp_type":
				t.icmpType = uint8(v)
			case "icmp_code":
				t.icmpCode = uint8(v)
			default:
				t.icmpID = uint16(v)
			}
		default:
			return "invalid conntrack tuple field: " + key, false
		}
	}
	if m.proto == 0 && (t.srcPort != 0 || t.dstPort != 0) {
		return "port is set without protocol", false
	}
	return "", true
}

func (m *ctMatch) icmp() bool { return m.proto == protoICMP || m.proto == protoICMPv6 }

// isZero is ofp_ct_tuple_is_zero.
func (m *ctMatch) isZero(t *ctPartialTuple) bool {
	zero := !t.src.IsValid() && !t.dst.IsValid()
	if !m.icmp() {
		zero = zero && t.srcPort == 0 && t.dstPort == 0
	}
	return zero
}

// isFiveTuple is ofp_ct_tuple_is_five_tuple.
func (m *ctMatch) isFiveTuple(t *ctPartialTuple) bool {
	five := t.src.IsValid() && t.dst.IsValid()
	if !m.icmp() {
		five = five && t.srcPort != 0 && t.dstPort != 0
	}
	return five && m.proto != 0
}

// apiTuple converts a full tuple to the tracker's Tuple.
func (m *ctMatch) apiTuple(t *ctPartialTuple) *conntrack.Tuple {
	ct := &conntrack.Tuple{Src: t.src, Dst: t.dst, Proto: m.proto, SrcPort: t.srcPort, DstPort: t.dstPort}
	if m.icmp() {
		ct.SrcPort, ct.DstPort = t.icmpID, uint16(t.icmpType)<<8|uint16(t.icmpCode)
	}
	return ct
}

// matches is ct_dpif_tuple_ip_cmp_partial for one direction.
func (m *ctMatch) matches(e *conntrack.Tuple, t *ctPartialTuple) bool {
	if t.src.IsValid() && t.src != e.Src || t.dst.IsValid() && t.dst != e.Dst {
		return false
	}
	if m.icmp() {
		return t.icmpID == e.SrcPort && uint16(t.icmpType)<<8|uint16(t.icmpCode) == e.DstPort
	}
	return (t.srcPort == 0 || t.srcPort == e.SrcPort) && (t.dstPort == 0 || t.dstPort == e.DstPort)
}

// entryMatches is ct_dpif_entry_cmp.
func (m *ctMatch) entryMatches(e *conntrack.Entry) bool {
	if m.l3 && m.v6 != e.Orig.Src.Is6() {
		return false
	}
	if m.proto != 0 && m.proto != e.Orig.Proto {
		return false
	}
	return m.matches(&e.Orig, &m.tuple[0]) && m.matches(&e.Reply, &m.tuple[1])
}

// flush deletes what the match selects in zone (AllZones: none given),
// as ct_dpif_flush: everything (of the zone) for an empty match; the one
// connection of a full original tuple directly (zone 0 if none given),
// "No such file or directory" when there is none; otherwise each
// connection the match selects. It returns the errno text of a failure.
func (m *ctMatch) flush(ct conntrack.Conntrack, zone int32) string {
	if m.proto == 0 && !m.l3 && m.isZero(&m.tuple[0]) && m.isZero(&m.tuple[1]) {
		ct.Flush(zone, nil)
		return ""
	}
	if m.isFiveTuple(&m.tuple[0]) && m.isZero(&m.tuple[1]) {
		z := zone
		if z == conntrack.AllZones {
			z = 0
		}
		t := m.apiTuple(&m.tuple[0])
		t.Zone = uint16(z)
		if ct.Flush(z, t) == 0 {
			return errNoEnt
		}
		return ""
	}
	var victims []conntrack.Tuple
	ct.Dump(zone, func(e *conntrack.Entry) bool {
		if m.entryMatches(e) {
			o := e.Orig
			o.Zone = e.Zone
			victims = append(victims, o)
		}
		return true
	})
	for i := range victims {
		ct.Flush(int32(victims[i].Zone), &victims[i])
	}
	return ""
}

package appctl

import (
	"fmt"
	"strings"

	"gvs/dpif/conntrack"
)

// formatCTEntry writes one dump-conntrack line as Open vSwitch's
// ct_dpif_format_entry (verbose: -m, stats: -s).
//
// STAND-IN until helper ctcore's conntrack.FormatEntry is on main: the
// plain fields only (protocol, tuples, id, zone, timeout, mark, labels,
// TCP state, helper).
func formatCTEntry(e *conntrack.Entry, verbose, stats bool) string {
	var b strings.Builder
	switch e.Orig.Proto {
	case protoICMP:
		b.WriteString("icmp")
	case protoICMPv6:
		b.WriteString("icmpv6")
	case protoTCP:
		b.WriteString("tcp")
	case protoUDP:
		b.WriteString("udp")
	case protoSCTP:
		b.WriteString("sctp")
	case protoUDPLite:
		b.WriteString("udplite")
	case protoDCCP:
		b.WriteString("dccp")
	case protoIGMP:
		b.WriteString("igmp")
	default:
		fmt.Fprintf(&b, "%d", e.Orig.Proto)
	}
	tuple := func(t *conntrack.Tuple) {
		fmt.Fprintf(&b, "src=%s,dst=%s", t.Src, t.Dst)
		if t.Proto == protoICMP || t.Proto == protoICMPv6 {
			fmt.Fprintf(&b, ",id=%d,type=%d,code=%d", t.SrcPort, t.DstPort>>8, t.DstPort&0xff)
		} else {
			fmt.Fprintf(&b, ",sport=%d,dport=%d", t.SrcPort, t.DstPort)
		}
	}
	b.WriteString(",orig=(")
	tuple(&e.Orig)
	b.WriteString("),reply=(")
	tuple(&e.Reply)
	b.WriteByte(')')
	if verbose {
		fmt.Fprintf(&b, ",id=%d", e.ID)
	}
	if e.Zone != 0 {
		fmt.Fprintf(&b, ",zone=%d", e.Zone)
	}
	if stats {
		fmt.Fprintf(&b, ",timeout=%d", int64(e.Timeout.Seconds()))
	}
	if e.Mark != 0 {
		fmt.Fprintf(&b, ",mark=%d", e.Mark)
	}
	if e.Label != ([16]byte{}) {
		b.WriteString(",labels=0x")
		s := fmt.Sprintf("%x", e.Label[:])
		b.WriteString(strings.TrimLeft(s, "0"))
	}
	if e.TCPState != "" {
		fmt.Fprintf(&b, ",protoinfo=(state=%s)", e.TCPState)
	}
	switch e.Helper {
	case conntrack.HelperFTP:
		b.WriteString(",helper=ftp")
	case conntrack.HelperTFTP:
		b.WriteString(",helper=tftp")
	}
	return b.String()
}

package xlate

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"gvs/dpif/conntrack"
	"gvs/ofproto/mf"
	"gvs/ofproto/ofpact"
)

// TraceOptions are ofproto/trace's options. The formatters default to
// Open vSwitch's formats (flow_format, match_format, ofpacts_format by
// way of mf and ofpact); a caller with port names passes its own.
type TraceOptions struct {
	FormatFlow   func(*mf.Flow) string
	FormatMatch  func(*mf.Match) string
	FormatAction func(Action) string
	// Actions, when non-nil, are traced instead of a table lookup
	// (ofproto/trace's trailing actions argument).
	Actions []Action
	// Packet, when non-nil, is the packet traced (translation then has its
	// side effects, as Open vSwitch's does with a packet).
	Packet []byte
	// Recirc is the datapath's frozen state table, so the recirc_id of a
	// controller action's userspace action is the one the datapath's
	// flows use; nil: a table of the trace's own.
	Recirc *RecircTable
	// CTNext are the ct_state values the recirculations after ct actions
	// resume with, in order (--ct-next; ParseCTNext); after them,
	// +trk+new.
	CTNext []uint32
}

// TraceText translates flow in br and returns Open vSwitch's
// ofproto/trace text: "Flow:", the bridge and its tables with the actions
// each rule ran, "Final flow:", "Megaflow:" and "Datapath actions:",
// then why translation failed or why the flow is slow-pathed. Each
// recirculation a ct(table=N) action forked follows, as Open vSwitch's
// ofproto_trace: a banner naming the recirculation and the conntrack
// state it resumes with (opt.CTNext, in order; then +trk+new), and the
// trace of the resumed pipeline.
func TraceText(br Bridge, flow mf.Flow, opt TraceOptions) string {
	if flow.ActsetOutput == 0 {
		flow.ActsetOutput = mf.PortUnset
	}
	if opt.FormatFlow == nil {
		opt.FormatFlow = formatFlowOVS
	}
	if opt.FormatMatch == nil {
		opt.FormatMatch = func(m *mf.Match) string { return m.Format(mf.DefaultPriority) }
	}
	if opt.Recirc == nil {
		opt.Recirc = NewRecircTable() // controller actions trace as the userspace actions they are
	}
	var b strings.Builder
	var fz *Frozen
	if flow.RecircID != 0 {
		// A datapath flow's recirc_id: resume its frozen state, as
		// Open vSwitch's trace does (an unknown id fails).
		fz = opt.Recirc.Lookup(flow.RecircID)
	}
	queue, failed := traceOnce(&b, br, flow, fz, &opt)
	ctNext := opt.CTNext
	for len(queue) > 0 {
		r := queue[0]
		queue = queue[1:]
		// Open vSwitch's text ends a translation without a newline
		// (ovs-appctl adds the last one) unless it failed.
		if failed {
			b.WriteByte('\n')
		}
		b.WriteString("\n" + strings.Repeat("=", 79) + "\n")
		fmt.Fprintf(&b, "recirc(%#x)", r.id)
		if len(ctNext) == 0 {
			r.flow.CTState = conntrack.StateTracked | conntrack.StateNew
			b.WriteString(" - resume conntrack with default ct_state=trk|new (use --ct-next to customize)")
		} else {
			r.flow.CTState, ctNext = ctNext[0], ctNext[1:]
			b.WriteString(" - resume conntrack with ct_state=" + FormatCTStateFlags(r.flow.CTState, "|"))
		}
		b.WriteByte('\n')
		if n := r.nat; n != nil {
			b.WriteString("Replacing src/dst IP/ports to simulate NAT:\n Initial flow: ")
			writeIPFlow(&b, &r.flow, n)
			simulateNAT(&r.flow, n)
			b.WriteString(" Modified flow: ")
			writeIPFlow(&b, &r.flow, n)
		}
		b.WriteString(strings.Repeat("=", 79) + "\n\n")
		fz := opt.Recirc.Lookup(r.id)
		more, f := traceOnce(&b, br, r.flow, fz, &opt)
		queue, failed = append(queue, more...), f
	}
	return b.String()
}

// traceOnce writes the trace of one translation (Open vSwitch's
// ofproto_trace__) and returns the recirculations it forked and whether
// it failed.
func traceOnce(b *strings.Builder, br Bridge, flow mf.Flow, fz *Frozen, opt *TraceOptions) ([]traceRecirc, bool) {
	tr := NewTrace(opt.FormatAction)
	// A frozen state of another bridge (behind a patch port) resumes in
	// its own bridge, but the trace names the input port's, as Open
	// vSwitch's (Translate switches).
	in := Input{Bridge: br, Version: br.Version(), Flow: flow, Actions: opt.Actions, Packet: opt.Packet,
		SideEffects: opt.Packet != nil, Trace: tr, Recirc: opt.Recirc}
	if fz != nil {
		in.Frozen, in.Flow, in.Table, in.Actions = fz, fz.Thaw(&flow.Key), fz.Table, fz.Actions
	}
	res := NewTranslator().Translate(&in)

	b.WriteString("Flow: " + opt.FormatFlow(&flow) + "\n")
	b.WriteString(tr.String())
	b.WriteString("\nFinal flow: ")
	if res.FinalFlow == flow {
		b.WriteString("unchanged")
	} else {
		b.WriteString(opt.FormatFlow(&res.FinalFlow))
	}
	b.WriteString("\n")
	var mega mf.Match
	mega.Flow = flow
	mega.Wildcards.Masks.Key = res.Wildcards.Masks.Key // the datapath part only
	for i := range mega.Wildcards.Masks.VLANs {
		// A tag's presence alone stands for Open vSwitch's implicit
		// match on the outer EtherType, which its Megaflow line does
		// not show.
		if v := &mega.Wildcards.Masks.VLANs[i]; v.TCI == 0 {
			v.TPID = 0
		}
	}
	mega.Normalize()
	b.WriteString("Megaflow: " + opt.FormatMatch(&mega) + "\n")
	b.WriteString("Datapath actions: " + res.Actions.String())
	switch {
	case res.Error != nil:
		fmt.Fprintf(b, "\nTranslation failed (%s), packet is dropped.\n", res.Error)
	case res.Slow != 0:
		b.WriteString("\nThis flow is handled by the userspace slow path because it:")
		for _, r := range []struct {
			bit  SlowReason
			text string
		}{
			{SlowController, "Sends \"packet-in\" messages to the OpenFlow controller"},
			{SlowAction, "Uses action(s) not supported by datapath"},
			{SlowMatch, "Datapath can't match specifically enough"},
		} {
			if res.Slow&r.bit != 0 {
				b.WriteString("\n  - " + r.text + ".")
			}
		}
		b.WriteString("\n")
	default:
		b.WriteString("\n")
	}
	return tr.recircs, res.Error != nil
}

// ctStateNames are the ct_state flags' names, bit 0 first (Open
// vSwitch's CS_STATES).
var ctStateNames = [...]string{"new", "est", "rel", "rpl", "inv", "trk", "snat", "dnat"}

// FormatCTStateFlags formats ct_state bits as Open vSwitch's format_flags
// with ct_state_to_string: names from the lowest bit up, joined by sep;
// "0" for none.
func FormatCTStateFlags(state uint32, sep string) string {
	if state == 0 {
		return "0"
	}
	var parts []string
	for i, n := range ctStateNames {
		if state&(1<<i) != 0 {
			parts = append(parts, n)
		}
	}
	if rest := state &^ (1<<len(ctStateNames) - 1); rest != 0 {
		parts = append(parts, fmt.Sprintf("0x%x", rest))
	}
	return strings.Join(parts, sep)
}

// ParseCTNext parses ofproto/trace's --ct-next argument: ct_state flag
// names separated by commas or spaces, checked as Open vSwitch's
// parse_ct_state and validate_ct_state do, with their messages.
func ParseCTNext(s string) (uint32, error) {
	var state uint32
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		bit := uint32(0)
		for i, n := range ctStateNames {
			if f == n {
				bit = 1 << i
			}
		}
		if bit == 0 {
			return 0, fmt.Errorf("%s: unknown connection tracking state flag", f)
		}
		state |= bit
	}
	flags := FormatCTStateFlags(state, "|")
	var msg strings.Builder
	if state != 0 && state&conntrack.StateTracked == 0 {
		fmt.Fprintf(&msg, "%s: invalid connection state: If \"trk\" is unset, no other flags are set\n", flags)
	}
	if state&conntrack.StateInvalid != 0 && state&^(conntrack.StateTracked|conntrack.StateInvalid) != 0 {
		fmt.Fprintf(&msg, "%s: invalid connection state: when \"inv\" is set, only \"trk\" may also be set\n", flags)
	}
	if state&conntrack.StateNew != 0 && state&conntrack.StateEstablished != 0 {
		fmt.Fprintf(&msg, "%s: invalid connection state: \"new\" and \"est\" are mutually exclusive\n", flags)
	}
	if state&conntrack.StateNew != 0 && state&conntrack.StateReply != 0 {
		fmt.Fprintf(&msg, "%s: invalid connection state: \"new\" and \"rpy\" are mutually exclusive\n", flags)
	}
	if msg.Len() > 0 {
		return 0, errors.New(msg.String())
	}
	return state, nil
}

// writeIPFlow prints the 5-tuple as Open vSwitch's oftrace_print_ip_flow,
// for the address family of the nat clause (nothing but the newline
// without an address range).
func writeIPFlow(b *strings.Builder, f *mf.Flow, n *ofpact.NAT) {
	switch {
	case !n.AddrMin.IsValid():
	case n.AddrMin.Is4():
		fmt.Fprintf(b, "nw_src=%s,tp_src=%d,nw_dst=%s,tp_dst=%d", netip.AddrFrom4(f.SrcIPv4), f.SrcPort, netip.AddrFrom4(f.DstIPv4), f.DstPort)
	default:
		fmt.Fprintf(b, "ipv6_src=%s,tp_src=%d,ipv6_dst=%s,tp_dst=%d", bracketIPv6(f.SrcIPv6), f.SrcPort, bracketIPv6(f.DstIPv6), f.DstPort)
	}
	b.WriteByte('\n')
}

// bracketIPv6 is Open vSwitch's ipv6_format_addr_bracket with brackets.
func bracketIPv6(a [16]byte) string { return "[" + netip.AddrFrom16(a).String() + "]" }

// simulateNAT rewrites the flow as if the nat clause took the first
// address and port of its ranges (ofproto_trace_recirc_node), so the
// resumed pipeline's lookups see translated addresses.
func simulateNAT(f *mf.Flow, n *ofpact.NAT) {
	if !n.AddrMin.IsValid() {
		return
	}
	v4 := n.AddrMin.Is4()
	if n.Flags&ofpact.NATSrc != 0 {
		if v4 {
			f.SrcIPv4 = n.AddrMin.As4()
		} else {
			f.SrcIPv6 = n.AddrMin.As16()
		}
		if n.PortMin != 0 {
			f.SrcPort = n.PortMin
		}
	}
	if n.Flags&ofpact.NATDst != 0 {
		if v4 {
			f.DstIPv4 = n.AddrMin.As4()
		} else {
			f.DstIPv6 = n.AddrMin.As16()
		}
		if n.PortMin != 0 {
			f.DstPort = n.PortMin
		}
	}
}

// formatFlowOVS formats a flow as Open vSwitch's flow_format: mf's
// Flow.Format plus the non-zero registers and metadata, which flow_format
// prints and Flow.Format (so far) leaves out. It is the "Flow:" and
// "Final flow:" lines' default formatter.
func formatFlowOVS(f *mf.Flow) string {
	m := mf.Match{Flow: *f, Wildcards: mf.WildcardsForPacket(f)}
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
	if !mf.FieldByID(mf.CTNwProto).PrereqsMatched(&m) || f.CTNwProto == 0 {
		w.CTNwProto, w.CTTpSrc, w.CTTpDst = 0, 0, 0
		w.CTNwSrc, w.CTNwDst = [4]byte{}, [4]byte{}
		w.CTIPv6Src, w.CTIPv6Dst = [16]byte{}, [16]byte{}
	}
	for i, r := range f.Regs {
		if r != 0 {
			w.Regs[i] = ^uint32(0)
		}
	}
	if f.Metadata != 0 {
		w.Metadata = ^uint64(0)
	}
	m.Normalize()
	return m.Format(mf.DefaultPriority)
}

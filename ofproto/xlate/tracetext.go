package xlate

import (
	"fmt"
	"strings"

	"gvs/ofproto/mf"
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
}

// TraceText translates flow in br and returns Open vSwitch's
// ofproto/trace text: "Flow:", the bridge and its tables with the actions
// each rule ran, "Final flow:", "Megaflow:" and "Datapath actions:",
// then why translation failed or why the flow is slow-pathed.
func TraceText(br Bridge, flow mf.Flow, opt TraceOptions) string {
	if flow.ActsetOutput == 0 {
		flow.ActsetOutput = mf.PortUnset
	}
	formatFlow := opt.FormatFlow
	if formatFlow == nil {
		formatFlow = formatFlowOVS
	}
	formatMatch := opt.FormatMatch
	if formatMatch == nil {
		formatMatch = func(m *mf.Match) string { return m.Format(mf.DefaultPriority) }
	}
	if opt.Recirc == nil {
		opt.Recirc = NewRecircTable() // controller actions trace as the userspace actions they are
	}
	tr := NewTrace(opt.FormatAction)
	in := Input{Bridge: br, Version: br.Version(), Flow: flow, Actions: opt.Actions, Packet: opt.Packet,
		SideEffects: opt.Packet != nil, Trace: tr, Recirc: opt.Recirc}
	res := NewTranslator().Translate(&in)

	var b strings.Builder
	b.WriteString("Flow: " + formatFlow(&flow) + "\n")
	b.WriteString(tr.String())
	b.WriteString("\nFinal flow: ")
	if res.FinalFlow == flow {
		b.WriteString("unchanged")
	} else {
		b.WriteString(formatFlow(&res.FinalFlow))
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
	b.WriteString("Megaflow: " + formatMatch(&mega) + "\n")
	b.WriteString("Datapath actions: " + res.Actions.String())
	switch {
	case res.Error != nil:
		fmt.Fprintf(&b, "\nTranslation failed (%s), packet is dropped.\n", res.Error)
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
	return b.String()
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

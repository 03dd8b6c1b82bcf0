package xlate

import (
	"fmt"
	"strings"

	"gvs/ofproto/mf"
)

// TraceOptions are ofproto/trace's options. The formatters default to
// mf's and ofpact's (Flow.Format, Match.Format, ofpact.Format); a caller
// with port names passes its own.
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
	// Recirc is the datapath's frozen state table (controller actions
	// then trace as the userspace actions they are in the datapath).
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
		formatFlow = (*mf.Flow).Format
	}
	formatMatch := opt.FormatMatch
	if formatMatch == nil {
		formatMatch = func(m *mf.Match) string { return m.Format(mf.DefaultPriority) }
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

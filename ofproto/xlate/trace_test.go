package xlate_test

import (
	"strings"
	"testing"

	"gvs/ofproto/mf"
	"gvs/ofproto/ofpact"
	"gvs/ofproto/xlate"
	"gvs/ofproto/xlate/xlatetest"
)

func formatAction(a xlate.Action) string { return ofpact.Format([]ofpact.Action{a}) }

// The layout is Open vSwitch's: a resubmit chain prints flat, an action
// after a nested table indents the nested table, details print " -> ".
func TestTraceText(t *testing.T) {
	br := newBridge(t)
	br.AddRule(&xlatetest.Rule{Prio: 100, CookieV: 0x5, Acts: []xlate.Action{&ofpact.Resubmit{InPort: mf.PortInPort, TableID: 1}, &ofpact.Output{Port: 3}}})
	br.AddRule(&xlatetest.Rule{Table: 1, Prio: 1, Acts: []xlate.Action{&ofpact.Output{Port: 2}, &ofpact.Output{Port: 1}}})
	got := xlate.TraceText(br, ipFlow(1), xlate.TraceOptions{
		FormatFlow:   func(*mf.Flow) string { return "FLOW" },
		FormatMatch:  func(*mf.Match) string { return "MEGAFLOW" },
		FormatAction: formatAction,
	})
	want := `Flow: FLOW

bridge("br0")
-------------
 0. priority 100, cookie 0x5
    resubmit(,1)
     1. priority 1
            output:2
            output:1
             -> skipping output to input port
    output:3

Final flow: unchanged
Megaflow: MEGAFLOW
Datapath actions: 12,13
`
	if got != want {
		t.Fatalf("trace:\n%s\nwant:\n%s", got, want)
	}
	br.AddRule(&xlatetest.Rule{Table: 1, Prio: 9, Acts: []xlate.Action{&ofpact.Resubmit{InPort: mf.PortInPort, TableID: 1}}})
	got = xlate.TraceText(br, ipFlow(1), xlate.TraceOptions{FormatAction: formatAction})
	if !strings.Contains(got, ">>>> over max translation depth 64 <<<<") || !strings.HasSuffix(got, "Datapath actions: drop\nTranslation failed (Recursion too deep), packet is dropped.\n") {
		t.Fatalf("trace of a loop:\n%s", got)
	}
}

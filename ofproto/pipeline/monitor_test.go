package pipeline

import (
	"testing"
	"time"
)

// TestFlowMonitorUpdates: the updates a flow monitor sees, as
// ofmonitor_report sends them.
func TestFlowMonitorUpdates(t *testing.T) {
	p := newFixture(t)
	m := match().inPort(1).get()
	type want struct {
		event  FlowEvent
		reason RemovedReason
		old    bool
		req    any
	}
	check := func(what string, ws ...want) {
		t.Helper()
		got := p.events.takeUpdates()
		if len(got) != len(ws) {
			t.Fatalf("%s: %d updates %+v, want %d", what, len(got), got, len(ws))
		}
		for i, w := range ws {
			g := got[i]
			if g.Event != w.event || g.Reason != w.reason || (g.OldActions != nil) != w.old || g.Requester != w.req {
				t.Fatalf("%s: update %d %+v, want %+v", what, i, g, w)
			}
		}
	}
	fm := add(0, 5, m, out(1))
	fm.Requester = "c1"
	mustMod(t, p, fm)
	check("add", want{FlowAdded, 0, false, "c1"})
	mustMod(t, p, add(0, 5, m, out(1)))
	check("add replacing", want{FlowAdded, 0, false, nil})
	mustMod(t, p, mod(true, 0, 5, m, out(1)))
	check("modify to the same actions")
	fm = mod(false, 0, 0, m, out(2))
	fm.Requester = "c2"
	mustMod(t, p, fm)
	check("modify", want{FlowModified, 0, true, "c2"})
	fm = del(false, TableAll, 0, match().get())
	fm.Requester = "c3"
	mustMod(t, p, fm)
	check("delete", want{FlowDeleted, RemovedDelete, false, "c3"})
	mustMod(t, p, add(0, 5, m, out(1)).timeouts(1, 0))
	p.events.takeUpdates()
	p.Expire(p.clock.Now().Add(2 * time.Second))
	check("idle timeout", want{FlowDeleted, RemovedIdleTimeout, false, nil})
}

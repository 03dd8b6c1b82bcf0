package pipeline

import (
	"testing"
	"time"

	"gvs/ofproto/ofpact"
)

// TestFinTimeoutReduces: fin_timeout lowers timeouts (never raises them),
// makes a permanent rule with fin_timeout expire, and flow removed
// reports the lowered timeouts.
func TestFinTimeoutReduces(t *testing.T) {
	p := newFixture(t)
	fin := &ofpact.FinTimeout{IdleTimeout: 3, HardTimeout: 7}
	mustMod(t, p, add(0, 1, match().inPort(1).get(), []Action{&ofpact.Clone{Actions: []ofpact.Action{fin}}, out(2)[0]}).flags(FlagSendFlowRem))
	mustMod(t, p, add(0, 1, match().inPort(2).get(), []Action{fin}).timeouts(2, 0))
	permanent := p.Lookup(p.Version(), 0, flow(1), nil)
	short := p.Lookup(p.Version(), 0, flow(2), nil)
	if i, h := permanent.Timeouts(); i != 0 || h != 0 {
		t.Fatalf("timeouts %d/%d before any FIN", i, h)
	}
	permanent.ReduceTimeouts(3, 7)
	short.ReduceTimeouts(3, 7)
	permanent.ReduceTimeouts(5, 0) // higher: no change
	if i, h := permanent.Timeouts(); i != 3 || h != 7 {
		t.Fatalf("permanent rule's timeouts %d/%d, want 3/7", i, h)
	}
	if i, h := short.Timeouts(); i != 2 || h != 7 {
		t.Fatalf("idle 2 rule's timeouts %d/%d, want 2/7 (never raised)", i, h)
	}
	p.clock.Advance(4 * time.Second)
	if n := p.Expire(p.clock.Now()); n != 2 {
		t.Fatalf("expired %d after 4 idle seconds, want both", n)
	}
	got := p.events.take()
	if len(got) != 1 || got[0].Reason != RemovedIdleTimeout {
		t.Fatalf("flow removed %+v", got)
	}
	if i, h := got[0].Rule.Timeouts(); i != 3 || h != 7 {
		t.Fatalf("removed rule's timeouts %d/%d", i, h)
	}
}

package pipeline

import (
	"runtime"
	"testing"
	"time"

	"gvs/ofproto/mf"
	"gvs/ofproto/ofpact"
)

// TestActionsShared: rules with equal action lists share one copy; lists
// that differ (also only in what Check recorded) do not.
func TestActionsShared(t *testing.T) {
	p := newFixture(t)
	eth := mf.FieldByName("eth_dst")
	if eth == nil {
		t.Fatal("no eth_dst field")
	}
	list := func(port uint32, vlan bool) []Action {
		sf := &ofpact.SetField{Field: eth, Value: mf.Value{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 1}, FlowHasVLAN: vlan}
		return []Action{sf, &ofpact.DecTTL{}, &ofpact.Output{Port: port}}
	}
	for i := range 6 {
		mustMod(t, p, add(0, 10, match().inPort(uint32(i+1)).get(), list(uint32(i%2+1), false)))
	}
	mustMod(t, p, add(0, 10, match().inPort(20).get(), list(1, true)))
	rules := p.all(t)
	if len(rules) != 7 {
		t.Fatalf("%d rules", len(rules))
	}
	first := map[uint32]*Action{}
	var vlanList *Action
	for _, r := range rules {
		port := r.Actions[2].(*ofpact.Output).Port
		if r.Actions[0].(*ofpact.SetField).FlowHasVLAN {
			vlanList = &r.Actions[0]
			continue
		}
		if f := first[port]; f == nil {
			first[port] = &r.Actions[0]
		} else if f != &r.Actions[0] {
			t.Fatalf("rules outputting to %d do not share their actions", port)
		}
	}
	if first[1] == first[2] {
		t.Fatal("different lists are shared")
	}
	if vlanList == nil || vlanList == first[1] {
		t.Fatal("a list that differs only in FlowHasVLAN is shared")
	}
	// The VLAN list has port 1's key (the same OpenFlow 1.5 encoding)
	// but keeps a copy of its own.
	if n := p.actions.len(); n != 2 {
		t.Fatalf("%d lists interned, want 2", n)
	}
}

// TestInternedListsAreWeak: a list no rule uses any more leaves the table
// (the classifier may keep deleted rules a while, so this drives the
// table alone).
func TestInternedListsAreWeak(t *testing.T) {
	ai := newActionIntern()
	keep := ai.share(out(1))
	for port := range uint32(50) {
		ai.share(out(port + 2))
	}
	if again := ai.share(out(1)); &again[0] != &keep[0] {
		t.Fatal("an equal list is not shared")
	}
	deadline := time.Now().Add(5 * time.Second)
	for ai.len() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("%d lists interned, want only the one still used", ai.len())
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	runtime.KeepAlive(keep)
}

package pipeline

import (
	"testing"

	"gvs/ofproto/ofpact"
	"gvs/ofproto/ofperr"
)

// TestPreparedAddIsFlowModAdd: a prepared add applied in a transaction
// leaves the same tables, flow monitor updates and errors as the flow mod
// it came from, replaces an identical rule, fails check_overlap and
// missing groups at apply time, and is reverted by an abort.
func TestPreparedAddIsFlowModAdd(t *testing.T) {
	fms := func() []*FlowMod {
		return []*FlowMod{
			add(0, 5, match().inPort(1).get(), out(2)).cookie(7),
			add(1, 6, match().ethType(0x0800).nwSrc([4]byte{10, 0, 0, 1}, [4]byte{255, 255, 255, 255}).get(), out(3)).timeouts(10, 20),
			add(0, 5, match().inPort(1).get(), out(4)).cookie(8), // replaces the first
		}
	}
	direct, prepared := newFixture(t), newFixture(t)
	for _, fm := range fms() {
		mustMod(t, direct, fm)
	}
	for _, fm := range fms() {
		pa, err := prepared.PrepareAdd(fm)
		if err != nil {
			t.Fatal(err)
		}
		tx := prepared.Begin()
		if err := tx.AddPrepared(pa, "req"); err != nil {
			t.Fatal(err)
		}
		tx.Commit()
	}
	a, b := direct.all(t), prepared.all(t)
	if len(a) != 2 || len(b) != len(a) {
		t.Fatalf("rules: direct %v, prepared %v", a, b)
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.TableID != y.TableID || x.Priority != y.Priority || x.Match != y.Match || x.Cookie != y.Cookie ||
			x.IdleTimeout != y.IdleTimeout || x.HardTimeout != y.HardTimeout || !ActionsEqual(x.Actions, y.Actions) ||
			!x.Created().Equal(y.Created()) {
			t.Fatalf("rule %d: direct %+v, prepared %+v", i, x, y)
		}
	}
	du, pu := direct.events.takeUpdates(), prepared.events.takeUpdates()
	if len(du) != len(pu) {
		t.Fatalf("updates: direct %d, prepared %d", len(du), len(pu))
	}
	for i := range du {
		if du[i].Event != pu[i].Event || pu[i].Requester != "req" {
			t.Fatalf("update %d: direct %+v, prepared %+v", i, du[i], pu[i])
		}
	}

	// Errors of the add's own: a bad table and not an add.
	bad := add(TableInternal, 1, match().get(), out(1))
	if _, err := prepared.PrepareAdd(bad); err == nil {
		t.Fatal("prepared an add to the read-only table")
	}
	if _, err := prepared.PrepareAdd(del(false, 0, 0, match().get())); err == nil {
		t.Fatal("prepared a delete")
	}
	// Errors that depend on the tables come when it is applied.
	overlap, err := prepared.PrepareAdd(add(0, 5, match().inPort(1).get(), out(9)).flags(FlagCheckOverlap))
	if err != nil {
		t.Fatal(err)
	}
	missing, err := prepared.PrepareAdd(add(0, 9, match().inPort(2).get(), []Action{&ofpact.Group{ID: 3}}))
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := prepared.PrepareAdd(add(0, 9, match().inPort(5).get(), out(1)))
	if err != nil {
		t.Fatal(err)
	}
	v := prepared.Version()
	tx := prepared.Begin()
	if err := tx.AddPrepared(fresh, nil); err != nil {
		t.Fatal(err)
	}
	if err := tx.AddPrepared(overlap, nil); err != nil {
		// Same match and priority: a replacement, not an overlap (as
		// add_flow_start).
		t.Fatalf("check_overlap on an identical rule: %v", err)
	}
	wantErr(t, tx.AddPrepared(missing, nil), ofperr.OFPBAC_BAD_OUT_GROUP)
	tx.Abort()
	if prepared.Version() != v || len(prepared.all(t)) != 2 || prepared.NumRules() != 2 {
		t.Fatalf("after abort: version %d (was %d), %v", prepared.Version(), v, prepared.all(t))
	}
}

package pipeline

import (
	"gvs/ofproto/ofpact"
	"gvs/ofproto/ofperr"
	"sync"
	"sync/atomic"
	"testing"
)

// TestBundleAllOrNothing: a failing message rolls back everything the
// transaction did before it, and the failing message's own error comes
// back.
func TestBundleAllOrNothing(t *testing.T) {
	p := newFixture(t)
	mustMod(t, p, add(0, 5, match().inPort(1).get(), out(2)))
	if err := p.GroupMod(groupAdd(1, GroupTypeAll, bucket(0, &ofpact.Output{Port: 3}))); err != nil {
		t.Fatal(err)
	}
	v0 := p.Version()
	tx := p.Begin()
	steps := []func() error{
		func() error { return tx.FlowMod(add(0, 5, match().inPort(1).get(), out(9))) }, // replace
		func() error { return tx.FlowMod(add(0, 6, match().inPort(2).get(), out(9))) }, // add
		func() error { return tx.GroupMod(groupAdd(2, GroupTypeAll)) },
		func() error { return tx.FlowMod(add(0, 7, match().inPort(3).get(), []Action{&ofpact.Group{ID: 2}})) }, // uses the new group
		func() error { return tx.GroupMod(&GroupMod{Command: GroupDelete, GroupID: 1}) },
		func() error { return tx.FlowMod(del(false, TableAll, 0, match().inPort(1).get())) },
		func() error { return tx.FlowMod(add(0, 8, match().get(), []Action{&ofpact.Group{ID: 1}})) }, // group 1 is gone: fails
	}
	var err error
	for i, step := range steps {
		if err = step(); err != nil {
			if i != len(steps)-1 {
				t.Fatalf("step %d failed: %v", i, err)
			}
			break
		}
	}
	wantErr(t, err, ofperr.OFPBAC_BAD_OUT_GROUP)
	tx.Abort()
	if p.Version() != v0 {
		t.Fatalf("version moved to %d after an abort", p.Version())
	}
	rules := p.all(t)
	if len(rules) != 1 || rules[0].Actions[0].(*ofpact.Output).Port != 2 {
		t.Fatalf("rules after abort: %v", rules)
	}
	if p.Group(p.Version(), 1) == nil || p.Group(p.Version(), 2) != nil {
		t.Fatal("groups after abort are not the ones before")
	}
	if p.GroupRefCount(1) != 0 || p.NumRules() != 1 {
		t.Fatalf("indexes after abort: refs %d rules %d", p.GroupRefCount(1), p.NumRules())
	}
	if got := p.events.take(); len(got) != 0 {
		t.Fatalf("an aborted bundle sent %+v", got)
	}
	// The same bundle without the failing message commits all of it.
	tx = p.Begin()
	for _, step := range steps[:len(steps)-1] {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	tx.Commit()
	rules = p.all(t)
	if len(rules) != 2 {
		t.Fatalf("rules after commit: %v", rules)
	}
	if p.Group(p.Version(), 1) != nil || p.Group(p.Version(), 2) == nil {
		t.Fatal("groups after commit")
	}
}

// TestLookupsNeverSeeHalfABundle: readers translating at the published
// version see either all of a bundle's rules or none.
func TestLookupsNeverSeeHalfABundle(t *testing.T) {
	p := newFixture(t)
	const n = 20
	var stop atomic.Bool
	var wg sync.WaitGroup
	var bad atomic.Int64
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				v := p.Version()
				hits := 0
				for i := range n {
					if p.Lookup(v, 0, flow(uint32(i+1)), nil) != nil {
						hits++
					}
				}
				if hits != 0 && hits != n {
					bad.Add(1)
				}
			}
		}()
	}
	for round := range 50 {
		tx := p.Begin()
		for i := range n {
			var fm *FlowMod
			if round%2 == 0 {
				fm = add(0, 1, match().inPort(uint32(i+1)).get(), out(1))
			} else {
				fm = del(true, 0, 1, match().inPort(uint32(i+1)).get())
			}
			if err := tx.FlowMod(fm); err != nil {
				t.Fatal(err)
			}
		}
		tx.Commit()
	}
	stop.Store(true)
	wg.Wait()
	if bad.Load() != 0 {
		t.Fatalf("%d lookups saw half a bundle", bad.Load())
	}
}

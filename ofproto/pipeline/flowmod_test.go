package pipeline

import (
	"gvs/ofproto/ofpact"
	"gvs/ofproto/ofperr"
	"testing"
	"time"

	"gvs/ofproto/mf"
)

func TestAddAndLookupByPriority(t *testing.T) {
	p := newFixture(t)
	mustMod(t, p, add(0, 0, match().get(), out(9)))
	mustMod(t, p, add(0, 10, match().inPort(1).get(), out(2)))
	mustMod(t, p, add(0, 20, match().inPort(1).ethType(0x0806).get(), out(3)))
	var wc mf.Wildcards
	r := p.Lookup(p.Version(), 0, flow(1), &wc)
	if r == nil || r.Priority != 10 {
		t.Fatalf("lookup in_port=1,ip: %v, want priority 10", r)
	}
	if wc.Masks.InPort != ^uint32(0) {
		t.Errorf("wildcards do not have in_port: %+v", wc.Masks.InPort)
	}
	if r := p.Lookup(p.Version(), 0, flow(5), nil); r == nil || r.Priority != 0 {
		t.Fatalf("lookup in_port=5: %v, want the priority 0 rule", r)
	}
	if r := p.Lookup(p.Version(), 1, flow(5), nil); r != nil {
		t.Fatalf("empty table 1 matched %v", r)
	}
}

func TestAddTableChoice(t *testing.T) {
	p := newFixture(t)
	mustMod(t, p, add(TableAll, 1, match().get(), nil)) // 0xff: table 0
	if r := p.Lookup(p.Version(), 0, flow(1), nil); r == nil {
		t.Fatal("add with table 0xff did not go to table 0")
	}
	wantErr(t, p.FlowMod(add(TableInternal, 1, match().get(), nil)), ofperr.OFPBRC_EPERM)
	if err := p.FlowMod(add(TableInternal, 1, match().get(), nil).flags(FlagNoReadonly)); err != nil {
		t.Fatalf("internal add to the read-only table: %v", err)
	}
}

func TestAddReplacesSameMatchAndPriority(t *testing.T) {
	for _, reset := range []bool{false, true} {
		p := newFixture(t)
		m := match().inPort(1).get()
		mustMod(t, p, add(0, 5, m, out(2)).cookie(0x1).timeouts(0, 100).flags(FlagSendFlowRem))
		old := p.Lookup(p.Version(), 0, flow(1), nil)
		old.Credit(10, 1000, p.clock.Now())
		p.clock.Advance(3 * time.Second)
		fm := add(0, 5, m, out(3)).cookie(0x2)
		if reset {
			fm.flags(FlagResetCounts)
		}
		mustMod(t, p, fm)
		rules := p.all(t)
		if len(rules) != 1 {
			t.Fatalf("%d rules after replace, want 1", len(rules))
		}
		r := rules[0]
		if r.Cookie != 0x2 || r.HardTimeout != 0 || r.Flags&FlagSendFlowRem != 0 {
			t.Errorf("replacing add kept old attributes: cookie %#x hard %d flags %#x", r.Cookie, r.HardTimeout, r.Flags)
		}
		if !r.Created().Equal(p.clock.Now()) {
			t.Errorf("replacing add: created %v, want now", r.Created())
		}
		pk, by, _ := r.Stats()
		if reset && (pk != 0 || by != 0) || !reset && (pk != 10 || by != 1000) {
			t.Errorf("reset_counts=%v: counters %d/%d", reset, pk, by)
		}
		// A credit for a datapath flow translated with the old rule
		// reaches the new one only when counters were kept.
		old.Credit(1, 100, p.clock.Now())
		pk, _, _ = r.Stats()
		if want := map[bool]uint64{false: 11, true: 0}[reset]; pk != want {
			t.Errorf("reset_counts=%v: late credit gave %d packets, want %d", reset, pk, want)
		}
		if got := p.events.take(); len(got) != 0 {
			t.Errorf("replace sent flow removed: %+v", got)
		}
	}
}

func TestCheckOverlap(t *testing.T) {
	p := newFixture(t)
	mustMod(t, p, add(0, 5, match().inPort(1).get(), out(2)))
	// in_port=1 and ip overlap at the same priority.
	wantErr(t, p.FlowMod(add(0, 5, match().ethType(0x0800).get(), out(2)).flags(FlagCheckOverlap)), ofperr.OFPFMFC_OVERLAP)
	// Different priority: no overlap.
	mustMod(t, p, add(0, 6, match().ethType(0x0800).get(), out(2)).flags(FlagCheckOverlap))
	// Disjoint matches at the same priority.
	mustMod(t, p, add(0, 5, match().inPort(2).get(), out(2)).flags(FlagCheckOverlap))
	// The identical rule is replaced, not an overlap.
	mustMod(t, p, add(0, 5, match().inPort(1).get(), out(3)).flags(FlagCheckOverlap))
	// Without the flag an overlapping add is fine.
	mustMod(t, p, add(0, 5, match().ethType(0x0800).get(), out(2)))
	if n := len(p.all(t)); n != 4 {
		t.Fatalf("%d rules, want 4", n)
	}
}

func TestModify(t *testing.T) {
	setup := func(t *testing.T) *fixture {
		p := newFixture(t)
		mustMod(t, p, add(0, 5, match().inPort(1).get(), out(2)).cookie(0x10).timeouts(30, 60).flags(FlagSendFlowRem))
		mustMod(t, p, add(0, 7, match().inPort(1).ethType(0x0800).get(), out(2)).cookie(0x11))
		mustMod(t, p, add(1, 5, match().inPort(1).get(), out(2)).cookie(0x20))
		mustMod(t, p, add(0, 5, match().inPort(2).get(), out(2)).cookie(0x30))
		for _, r := range p.all(t) {
			r.Credit(1, 64, p.clock.Now())
		}
		p.clock.Advance(time.Second)
		return p
	}
	actionsOf := func(p *fixture) map[[2]int]uint32 {
		out := map[[2]int]uint32{}
		for _, r := range p.all(t) {
			port := uint32(0)
			if len(r.Actions) > 0 {
				port = r.Actions[0].(*ofpact.Output).Port
			}
			out[[2]int{int(r.TableID), int(r.Priority) + int(r.Match.Flow.InPort)*100 + int(r.Match.Flow.EtherType)}] = port
		}
		return out
	}
	t.Run("loose", func(t *testing.T) {
		p := setup(t)
		mustMod(t, p, mod(false, 0, 0, match().inPort(1).get(), out(9)))
		got := actionsOf(p)
		want := map[[2]int]uint32{{0, 105}: 9, {0, 107 + 0x800}: 9, {1, 105}: 2, {0, 205}: 2}
		if len(got) != len(want) {
			t.Fatalf("rules %v, want %v", got, want)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("rule %v: output %d, want %d", k, got[k], v)
			}
		}
		r := p.Lookup(p.Version(), 0, &mf.Flow{Key: flow(1).Key}, nil)
		if r == nil || r.Priority != 7 {
			t.Fatalf("lookup: %v", r)
		}
		// Modify keeps cookie, timeouts, flags, created time and counters.
		for _, r := range p.all(t) {
			if r.TableID == 0 && r.Priority == 5 && r.Match.Flow.InPort == 1 {
				if r.Cookie != 0x10 || r.IdleTimeout != 30 || r.HardTimeout != 60 || r.Flags != FlagSendFlowRem {
					t.Errorf("modified rule lost attributes: %+v", r)
				}
				if !r.Created().Equal(p.clock.Now().Add(-time.Second)) || !r.Modified().Equal(p.clock.Now()) {
					t.Errorf("created %v modified %v", r.Created(), r.Modified())
				}
				if pk, _, _ := r.Stats(); pk != 1 {
					t.Errorf("modify lost counters: %d", pk)
				}
			}
		}
	})
	t.Run("strict", func(t *testing.T) {
		p := setup(t)
		mustMod(t, p, mod(true, 0, 5, match().inPort(1).get(), out(9)))
		got := actionsOf(p)
		if got[[2]int{0, 105}] != 9 || got[[2]int{0, 107 + 0x800}] != 2 {
			t.Fatalf("strict modify changed the wrong rules: %v", got)
		}
		mustMod(t, p, mod(true, 0, 6, match().inPort(1).get(), out(8))) // wrong priority: nothing
		if n := len(p.all(t)); n != 4 {
			t.Fatalf("OpenFlow 1.3 strict modify matching nothing added a flow (%d rules)", n)
		}
	})
	t.Run("all tables", func(t *testing.T) {
		p := setup(t)
		mustMod(t, p, mod(false, TableAll, 0, match().inPort(1).get(), out(9)))
		if got := actionsOf(p); got[[2]int{1, 105}] != 9 {
			t.Fatalf("modify with table 0xff missed table 1: %v", got)
		}
	})
	t.Run("cookie mask", func(t *testing.T) {
		p := setup(t)
		fm := mod(false, TableAll, 0, match().get(), out(9))
		fm.Cookie, fm.CookieMask = 0x20, 0xf0
		mustMod(t, p, fm)
		got := actionsOf(p)
		if got[[2]int{1, 105}] != 9 || got[[2]int{0, 105}] != 2 || got[[2]int{0, 205}] != 2 {
			t.Fatalf("cookie-masked modify: %v", got)
		}
	})
	t.Run("reset counts", func(t *testing.T) {
		p := setup(t)
		mustMod(t, p, mod(true, 0, 5, match().inPort(2).get(), out(9)).flags(FlagResetCounts))
		for _, r := range p.all(t) {
			pk, _, _ := r.Stats()
			if r.Match.Flow.InPort == 2 && pk != 0 || r.Match.Flow.InPort == 1 && pk != 1 {
				t.Errorf("rule %v: %d packets", r, pk)
			}
		}
	})
	t.Run("OpenFlow 1.0 adds when nothing matched", func(t *testing.T) {
		p := setup(t)
		mustMod(t, p, mod10(false, 0, 9, match().inPort(3).get(), out(4), 0x99))
		var found *Rule
		for _, r := range p.all(t) {
			if r.Match.Flow.InPort == 3 {
				found = r
			}
		}
		if found == nil || found.Priority != 9 || found.Cookie != 0x99 {
			t.Fatalf("OpenFlow 1.0 modify did not add: %v", found)
		}
		// With a cookie mask it does not.
		fm := mod10(false, 0, 9, match().inPort(4).get(), out(4), 0x99)
		fm.CookieMask = 0xff
		mustMod(t, p, fm)
		if n := len(p.all(t)); n != 5 {
			t.Fatalf("%d rules, want 5", n)
		}
	})
	t.Run("OpenFlow 1.0 modify changes the cookie", func(t *testing.T) {
		p := setup(t)
		mustMod(t, p, mod10(true, 0, 5, match().inPort(2).get(), out(4), 0x77))
		for _, r := range p.all(t) {
			if r.Match.Flow.InPort == 2 && r.Cookie != 0x77 {
				t.Fatalf("cookie %#x, want 0x77", r.Cookie)
			}
		}
	})
	t.Run("bad table", func(t *testing.T) {
		p := setup(t)
		wantErr(t, p.FlowMod(mod(false, TableInternal, 0, match().get(), nil)), ofperr.OFPBRC_EPERM)
	})
}

func TestDelete(t *testing.T) {
	setup := func(t *testing.T) *fixture {
		p := newFixture(t)
		mustMod(t, p, add(0, 5, match().inPort(1).get(), out(2)).cookie(0x10).flags(FlagSendFlowRem))
		mustMod(t, p, add(0, 7, match().inPort(1).ethType(0x0800).get(), out(3)).cookie(0x11).flags(FlagSendFlowRem))
		mustMod(t, p, add(1, 5, match().inPort(1).get(), out(2)).cookie(0x20))
		mustMod(t, p, add(0, 5, match().inPort(2).get(), out(3)).cookie(0x30).flags(FlagSendFlowRem))
		return p
	}
	count := func(p *fixture) int { return len(p.all(t)) }
	t.Run("loose", func(t *testing.T) {
		p := setup(t)
		mustMod(t, p, del(false, 0, 0, match().inPort(1).get()))
		if n := count(p); n != 2 {
			t.Fatalf("%d rules left, want 2", n)
		}
		got := p.events.take()
		if len(got) != 2 || got[0].Reason != RemovedDelete || got[1].Reason != RemovedDelete {
			t.Fatalf("flow removed: %+v", got)
		}
	})
	t.Run("strict", func(t *testing.T) {
		p := setup(t)
		mustMod(t, p, del(true, 0, 5, match().inPort(1).get()))
		if n := count(p); n != 3 {
			t.Fatalf("%d rules left, want 3", n)
		}
		mustMod(t, p, del(true, 0, 6, match().inPort(1).ethType(0x0800).get())) // wrong priority
		if n := count(p); n != 3 {
			t.Fatalf("%d rules left, want 3", n)
		}
	})
	t.Run("all tables", func(t *testing.T) {
		p := setup(t)
		mustMod(t, p, del(false, TableAll, 0, match().get()))
		if n := count(p); n != 0 {
			t.Fatalf("%d rules left", n)
		}
		if got := p.events.take(); len(got) != 3 {
			t.Fatalf("%d flow removed, want 3 (only send_flow_rem rules)", len(got))
		}
	})
	t.Run("out_port", func(t *testing.T) {
		p := setup(t)
		fm := del(false, TableAll, 0, match().get())
		fm.OutPort = 3
		mustMod(t, p, fm)
		if n := count(p); n != 2 {
			t.Fatalf("%d rules left, want 2", n)
		}
	})
	t.Run("cookie", func(t *testing.T) {
		p := setup(t)
		fm := del(false, TableAll, 0, match().get())
		fm.Cookie, fm.CookieMask = 0x10, 0xf0
		mustMod(t, p, fm)
		if n := count(p); n != 2 {
			t.Fatalf("%d rules left, want 2", n)
		}
	})
	t.Run("nothing matched", func(t *testing.T) {
		p := setup(t)
		mustMod(t, p, del(false, 0, 0, match().inPort(9).get()))
		if n := count(p); n != 4 {
			t.Fatalf("%d rules left", n)
		}
	})
}

func TestMissingGroupAndMeter(t *testing.T) {
	p := newFixture(t)
	wantErr(t, p.FlowMod(add(0, 1, match().get(), []Action{&ofpact.Group{ID: 5}})), ofperr.OFPBAC_BAD_OUT_GROUP)
	wantErr(t, p.FlowMod(add(0, 1, match().get(), []Action{&ofpact.Meter{ID: 5}})), ofperr.OFPMMFC_INVALID_METER)
	wantErr(t, p.FlowMod(add(0, 1, match().get(), []Action{&ofpact.WriteActions{Actions: []ofpact.Action{&ofpact.Group{ID: 5}}}})), ofperr.OFPBAC_BAD_OUT_GROUP)
	if n := len(p.all(t)); n != 0 {
		t.Fatalf("%d rules after failed adds", n)
	}
}

func TestTimeouts(t *testing.T) {
	p := newFixture(t)
	mustMod(t, p, add(0, 1, match().inPort(1).get(), out(2)).timeouts(0, 10).flags(FlagSendFlowRem))
	mustMod(t, p, add(0, 1, match().inPort(2).get(), out(2)).timeouts(5, 0).flags(FlagSendFlowRem))
	mustMod(t, p, add(0, 1, match().inPort(3).get(), out(2)).timeouts(5, 0))
	if n := p.Expire(p.clock.Now().Add(5 * time.Second)); n != 0 {
		t.Fatalf("expired %d at exactly the idle timeout", n)
	}
	p.clock.Advance(4 * time.Second)
	idle := p.Lookup(p.Version(), 0, flow(2), nil)
	idle.Credit(1, 60, p.clock.Now()) // in_port=2 was used at t+4
	p.clock.Advance(2 * time.Second)  // t+6
	if n := p.Expire(p.clock.Now()); n != 1 {
		t.Fatalf("expired %d at t+6, want 1 (the unused idle rule)", n)
	}
	if got := p.events.take(); len(got) != 0 {
		t.Fatalf("a rule without send_flow_rem sent %+v", got)
	}
	p.clock.Advance(4 * time.Second) // t+10: idle rule used at t+4 expires after t+9
	if n := p.Expire(p.clock.Now()); n != 1 {
		t.Fatalf("expired %d at t+10, want 1", n)
	}
	got := p.events.take()
	if len(got) != 1 || got[0].Reason != RemovedIdleTimeout || got[0].Packets != 1 || got[0].Duration != 10*time.Second {
		t.Fatalf("flow removed %+v", got)
	}
	p.clock.Advance(time.Second)
	if n := p.Expire(p.clock.Now()); n != 1 {
		t.Fatalf("hard timeout did not expire")
	}
	if got := p.events.take(); len(got) != 1 || got[0].Reason != RemovedHardTimeout {
		t.Fatalf("flow removed %+v", got)
	}
	if n := len(p.all(t)); n != 0 {
		t.Fatalf("%d rules left", n)
	}
}

func TestModifyRestartsHardTimeout(t *testing.T) {
	p := newFixture(t)
	mustMod(t, p, add(0, 1, match().inPort(1).get(), out(2)).timeouts(0, 10))
	p.clock.Advance(8 * time.Second)
	mustMod(t, p, mod(true, 0, 1, match().inPort(1).get(), out(3)))
	p.clock.Advance(8 * time.Second)
	if n := p.Expire(p.clock.Now()); n != 0 {
		t.Fatalf("hard timeout counted from the add, not the modify")
	}
}

// TestDeleteLearned: deleting the last rule whose learn action has
// delete_learned deletes the flows it learned (same table and cookie).
func TestDeleteLearned(t *testing.T) {
	p := newFixture(t)
	learn := &ofpact.Learn{TableID: 1, Cookie: 0x9, Flags: ofpact.LearnDeleteLearned}
	mustMod(t, p, add(0, 5, match().inPort(1).get(), []Action{learn}))
	mustMod(t, p, add(0, 5, match().inPort(2).get(), []Action{learn}))
	mustMod(t, p, add(1, 1, match().ethType(0x0800).get(), out(1)).cookie(0x9))  // learned
	mustMod(t, p, add(1, 1, match().ethType(0x0806).get(), out(1)).cookie(0x10)) // another cookie
	mustMod(t, p, del(true, 0, 5, match().inPort(1).get()))
	if n := len(p.all(t)); n != 3 {
		t.Fatalf("%d rules after deleting one of two learning rules, want 3", n)
	}
	mustMod(t, p, del(true, 0, 5, match().inPort(2).get()))
	rules := p.all(t)
	if len(rules) != 1 || rules[0].Cookie != 0x10 {
		t.Fatalf("after deleting the last learning rule: %v", rules)
	}
}

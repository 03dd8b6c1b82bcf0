package pipeline

import (
	"errors"
	"fmt"
	"gvs/ofproto/ofpact"
	"math/rand/v2"
	"slices"
	"testing"

	"gvs/ofproto/mf"
	"gvs/ofproto/ofperr"
)

// modelRule is a rule in the reference model: a plain list with Open
// vSwitch's flow mod semantics spelled out directly.
type modelRule struct {
	table  uint8
	prio   int
	match  mf.Match
	cookie uint64
	port   uint32 // output port
}

type model struct{ rules []modelRule }

func (m *model) apply(fm *FlowMod) error {
	port := uint32(0)
	if len(fm.Actions) > 0 {
		port = fm.Actions[0].(*ofpact.Output).Port
	}
	selects := func(r *modelRule, strict bool, outPort uint32) bool {
		if fm.TableID != TableAll && r.table != fm.TableID {
			return false
		}
		if (r.cookie^fm.Cookie)&fm.CookieMask != 0 {
			return false
		}
		if outPort != mf.PortNone && r.port != outPort {
			return false
		}
		if strict {
			return r.prio == fm.Priority && r.match == fm.Match
		}
		return looseMatch(&r.match, &fm.Match)
	}
	switch fm.Command {
	case FlowAdd:
		table := fm.TableID
		if table == TableAll {
			table = 0
		}
		for i := range m.rules {
			r := &m.rules[i]
			if r.table == table && r.prio == fm.Priority && r.match == fm.Match {
				r.cookie, r.port = fm.NewCookie, port
				return nil
			}
		}
		if fm.Flags&FlagCheckOverlap != 0 {
			for _, r := range m.rules {
				if r.table == table && r.prio == fm.Priority && matchesOverlap(&r.match, &fm.Match) {
					return ofperr.OFPFMFC_OVERLAP
				}
			}
		}
		m.rules = append(m.rules, modelRule{table, fm.Priority, fm.Match, fm.NewCookie, port})
	case FlowModify, FlowModifyStrict:
		n := 0
		for i := range m.rules {
			if selects(&m.rules[i], fm.Command == FlowModifyStrict, mf.PortNone) {
				m.rules[i].port = port
				n++
			}
		}
		_ = n // OpenFlow 1.3 modify never adds
	case FlowDelete, FlowDeleteStrict:
		m.rules = slices.DeleteFunc(m.rules, func(r modelRule) bool {
			return selects(&r, fm.Command == FlowDeleteStrict, fm.OutPort)
		})
	}
	return nil
}

// lookup returns the model's highest-priority match, and whether it is
// the only rule at that priority that matches (otherwise the winner is
// unspecified, as in OpenFlow).
func (m *model) lookup(table uint8, f *mf.Flow) (*modelRule, bool) {
	var best *modelRule
	unique := true
	for i := range m.rules {
		r := &m.rules[i]
		if r.table != table || !r.match.Matches(f) {
			continue
		}
		switch {
		case best == nil || r.prio > best.prio:
			best, unique = r, true
		case r.prio == best.prio:
			unique = false
		}
	}
	return best, unique
}

func randomMatch(rng *rand.Rand) mf.Match {
	b := match()
	switch rng.IntN(3) {
	case 1:
		b.inPort(1)
	case 2:
		b.inPort(2)
	}
	switch rng.IntN(3) {
	case 1:
		b.ethType(0x0800)
	case 2:
		b.ethType(0x0806)
	}
	switch rng.IntN(3) {
	case 1:
		b.reg(0, 1)
	case 2:
		b.reg(0, 2)
	}
	return b.get()
}

func randomFlow(rng *rand.Rand) *mf.Flow {
	f := &mf.Flow{}
	f.InPort = uint32(rng.IntN(3))
	f.EtherType = []uint16{0x0800, 0x0806, 0x86dd}[rng.IntN(3)]
	f.Regs[0] = uint32(rng.IntN(3))
	return f
}

func randomFlowMod(rng *rand.Rand) *FlowMod {
	m := randomMatch(rng)
	prio := 1 + rng.IntN(3)
	table := uint8(rng.IntN(2))
	if rng.IntN(8) == 0 {
		table = TableAll
	}
	port := uint32(1 + rng.IntN(3))
	var fm *FlowMod
	switch rng.IntN(6) {
	case 0, 1:
		fm = add(table, prio, m, out(port)).cookie(uint64(rng.IntN(4)))
		if rng.IntN(3) == 0 {
			fm.flags(FlagCheckOverlap)
		}
	case 2:
		fm = mod(false, table, prio, m, out(port))
	case 3:
		fm = mod(true, table, prio, m, out(port))
	case 4:
		fm = del(false, table, prio, m)
	default:
		fm = del(true, table, prio, m)
	}
	if fm.Command != FlowAdd && rng.IntN(3) == 0 {
		fm.Cookie, fm.CookieMask = uint64(rng.IntN(4)), 3
	}
	if (fm.Command == FlowDelete || fm.Command == FlowDeleteStrict) && rng.IntN(3) == 0 {
		fm.OutPort = uint32(1 + rng.IntN(3))
	}
	return fm
}

// TestAgainstModel applies random flow mods to the pipeline and to the
// reference model and requires the same errors, the same rules and the
// same lookup results (where the winner is unique).
func TestAgainstModel(t *testing.T) {
	for seed := range uint64(30) {
		rng := rand.New(rand.NewPCG(seed, 7))
		p := newFixture(t)
		var m model
		for step := range 300 {
			fm := randomFlowMod(rng)
			want := m.apply(fm)
			got := p.FlowMod(fm)
			if !errors.Is(got, want) && (got != nil || want != nil) {
				t.Fatalf("seed %d step %d: %+v: error %v, model %v", seed, step, fm, got, want)
			}
			if err := compareRules(p, &m); err != nil {
				t.Fatalf("seed %d step %d after %+v: %v", seed, step, fm, err)
			}
			for range 5 {
				f := randomFlow(rng)
				table := uint8(rng.IntN(2))
				mr, unique := m.lookup(table, f)
				r := p.Lookup(p.Version(), table, f, nil)
				switch {
				case mr == nil && r != nil, mr != nil && r == nil:
					t.Fatalf("seed %d step %d: lookup %+v in %d: %v, model %v", seed, step, f.Key.InPort, table, r, mr)
				case mr != nil && r.Priority != mr.prio:
					t.Fatalf("seed %d step %d: lookup priority %d, model %d", seed, step, r.Priority, mr.prio)
				case mr != nil && unique && (r.Match != mr.match || r.Actions[0].(*ofpact.Output).Port != mr.port):
					t.Fatalf("seed %d step %d: lookup found %v, model %+v", seed, step, r, mr)
				}
			}
		}
	}
}

func compareRules(p *fixture, m *model) error {
	rules, err := p.Flows(&FlowQuery{TableID: TableAll, OutPort: mf.PortNone, OutGroup: GroupAny})
	if err != nil {
		return err
	}
	if len(rules) != len(m.rules) || p.NumRules() != len(m.rules) {
		return fmt.Errorf("%d rules (%d counted), model %d", len(rules), p.NumRules(), len(m.rules))
	}
	for _, mr := range m.rules {
		found := false
		for _, r := range rules {
			if r.TableID == mr.table && r.Priority == mr.prio && r.Match == mr.match {
				if r.Cookie != mr.cookie || r.Actions[0].(*ofpact.Output).Port != mr.port {
					return fmt.Errorf("rule %v: cookie %#x port %v, model %+v", r, r.Cookie, r.Actions, mr)
				}
				found = true
			}
		}
		if !found {
			return fmt.Errorf("model rule %+v missing", mr)
		}
	}
	return nil
}

// looseMatch: rule r is selected by criteria m when r matches every bit m
// does, with the same value (cls_rule_is_loose_match).
func looseMatch(r, m *mf.Match) bool {
	rv, rm := r.Flow.Words(), r.Wildcards.Masks.Words()
	cv, cm := m.Flow.Words(), m.Wildcards.Masks.Words()
	for i := range cm {
		if cm[i]&^rm[i] != 0 || (rv[i]^cv[i])&cm[i] != 0 {
			return false
		}
	}
	return true
}

// matchesOverlap: some flow matches both a and b.
func matchesOverlap(a, b *mf.Match) bool {
	av, am := a.Flow.Words(), a.Wildcards.Masks.Words()
	bv, bm := b.Flow.Words(), b.Wildcards.Masks.Words()
	for i := range am {
		if (av[i]^bv[i])&am[i]&bm[i] != 0 {
			return false
		}
	}
	return true
}

package pipeline

import (
	"sync"

	"gvs/ofproto/mf"
)

// STAND-IN for ofproto/classifier (being written by the lead; on main
// about 19:45): the same operations over a plain list, so the flow mod
// semantics above it can be written and tested now. Lookups are linear.

// ruleKey identifies a rule for strict matching: match and priority.
type ruleKey struct {
	match    mf.Match
	priority uint16
}

// table is one OpenFlow table.
type table struct {
	readonly, hidden bool
	nRules           int // visible in the latest version (n_flows)
	maxRules         int

	mu    sync.RWMutex // the stand-in's readers/writer lock
	rules []*Rule
	exact map[ruleKey][]*Rule // every version of a match+priority still held
}

func (t *table) insert(r *Rule) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.exact == nil {
		t.exact = map[ruleKey][]*Rule{}
	}
	t.rules = append(t.rules, r)
	k := ruleKey{r.Match, r.Priority}
	t.exact[k] = append(t.exact[k], r)
}

func (t *table) remove(r *Rule) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, x := range t.rules {
		if x == r {
			t.rules[i] = t.rules[len(t.rules)-1]
			t.rules[len(t.rules)-1] = nil
			t.rules = t.rules[:len(t.rules)-1]
			break
		}
	}
	k := ruleKey{r.Match, r.Priority}
	list := t.exact[k]
	for i, x := range list {
		if x == r {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(t.exact, k)
	} else {
		t.exact[k] = list
	}
}

// findExactly returns the rule with exactly this match and priority
// visible in version v.
func (t *table) findExactly(m *mf.Match, priority uint16, v uint64) *Rule {
	t.mu.RLock()
	defer t.mu.RUnlock()
	for _, r := range t.exact[ruleKey{*m, priority}] {
		if r.VisibleIn(v) {
			return r
		}
	}
	return nil
}

// forEachLoose calls fn for each rule visible in v whose match is at least
// as specific as m and agrees with it where m matches (cls_rule_is_loose_match).
func (t *table) forEachLoose(m *mf.Match, v uint64, fn func(*Rule)) {
	t.mu.RLock()
	rules := make([]*Rule, 0, 8)
	for _, r := range t.rules {
		if r.VisibleIn(v) && looseMatch(&r.Match, m) {
			rules = append(rules, r)
		}
	}
	t.mu.RUnlock()
	for _, r := range rules {
		fn(r)
	}
}

// overlaps reports a rule visible in v with the same priority that some
// packet could match together with m (classifier_rule_overlaps).
func (t *table) overlaps(m *mf.Match, priority uint16, v uint64) bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	for _, r := range t.rules {
		if r.Priority == priority && r.VisibleIn(v) && matchesOverlap(&r.Match, m) {
			return true
		}
	}
	return false
}

// lookup returns the highest priority rule visible in v that matches f,
// adding the bits it examined to wc (the stand-in: every rule's mask).
func (t *table) lookup(v uint64, f *mf.Flow, wc *mf.Wildcards) *Rule {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var best *Rule
	for _, r := range t.rules {
		if !r.VisibleIn(v) {
			continue
		}
		if wc != nil {
			wc.Or(&r.Match.Wildcards)
		}
		if (best == nil || r.Priority > best.Priority) && r.Match.Matches(f) {
			best = r
		}
	}
	return best
}

// forEach calls fn for every rule visible in v.
func (t *table) forEach(v uint64, fn func(*Rule)) {
	t.mu.RLock()
	rules := make([]*Rule, 0, len(t.rules))
	for _, r := range t.rules {
		if r.VisibleIn(v) {
			rules = append(rules, r)
		}
	}
	t.mu.RUnlock()
	for _, r := range rules {
		fn(r)
	}
}

// looseMatch: rule r is selected by criteria m when r matches every bit m
// does, with the same value (cls_rule_is_loose_match / minimatch_is_more_general).
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

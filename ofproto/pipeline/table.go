package pipeline

import (
	"gvs/ofproto/classifier"
	"gvs/ofproto/mf"
)

// table is one OpenFlow table: a classifier and Open vSwitch's oftable
// bookkeeping. The classifier's writer is whoever holds Pipeline.mu.
type table struct {
	readonly, hidden bool
	nRules           int // visible in the latest version (n_flows)
	nHidden          int // of which hidden (the switch's own flows)
	maxRules         int
	cls              *classifier.Classifier[*Rule]
}

func (t *table) insert(r *Rule, v uint64) {
	r.Value = r
	t.cls.Insert(&r.Rule, v)
}

func (t *table) findExactly(m *mf.Match, priority int, v uint64) *Rule {
	if cr := t.cls.FindExactly(m, priority, v); cr != nil {
		return cr.Value
	}
	return nil
}

func (t *table) forEachLoose(m *mf.Match, v uint64, fn func(*Rule)) {
	t.cls.ForEachLoose(m, v, func(cr *classifier.Rule[*Rule]) bool {
		fn(cr.Value)
		return true
	})
}

func (t *table) lookup(v uint64, f *mf.Flow, wc *mf.Wildcards) *Rule {
	if cr := t.cls.Lookup(v, f, wc); cr != nil {
		return cr.Value
	}
	return nil
}

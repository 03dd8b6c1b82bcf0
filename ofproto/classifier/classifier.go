package classifier

import (
	"cmp"
	"math"
	"slices"
	"sync/atomic"

	"gvs/ofproto/mf"
)

// Version numbers the states of a classifier (see the package comment).
type Version = uint64

// VersionNever is the remove version of a rule that is still visible.
const VersionNever Version = math.MaxUint64

// Conjunction says that a rule is clause Clause (0-based) of NClauses of
// conjunction ID, as OpenFlow's conjunction(id,k/n) action (k = Clause+1).
type Conjunction struct {
	ID       uint32
	Clause   uint8
	NClauses uint8
}

// Rule is one classifier entry. Fill Match, Priority, Conjunctions and
// Value before Insert; the classifier normalises Match and never looks
// at Value.
type Rule[T any] struct {
	Match        mf.Match
	Priority     int
	Conjunctions []Conjunction
	Value        T

	addVersion    Version
	removeVersion atomic.Uint64
	sub           *subtable[T] // nil when not in a classifier
	minClauses    uint8        // smallest NClauses of Conjunctions
}

// VisibleIn reports whether a lookup at version v sees r.
func (r *Rule[T]) VisibleIn(v Version) bool {
	return r.addVersion <= v && v < r.removeVersion.Load()
}

// AddVersion is the version r became visible in.
func (r *Rule[T]) AddVersion() Version { return r.addVersion }

// RemoveVersion is the version r stops being visible in (VersionNever while
// visible).
func (r *Rule[T]) RemoveVersion() Version { return r.removeVersion.Load() }

// Classifier holds rules; see the package comment for who may call what.
type Classifier[T any] struct {
	subs     atomic.Pointer[[]subEntry[T]] // by descending max priority
	byMask   map[mf.Wildcards]*subtable[T] // writer only
	n        int                           // rules, visible or not; writer only
	hidden   []*Rule[T]                    // made invisible since the last Collect
	doomed   []*Rule[T]                    // removed at the next Collect
	nextSeed uint64
	tries    []*trie // fixed at New
}

// subEntry is a subtable with the highest priority it held when the list
// was published: readers prune with it.
type subEntry[T any] struct {
	st     *subtable[T]
	maxPri int
}

// New returns an empty classifier with prefix tries on DefaultPrefixes.
func New[T any]() *Classifier[T] {
	return NewWithPrefixes[T](DefaultPrefixes...)
}

// NewWithPrefixes returns an empty classifier with prefix tries on the
// given fields (at most MaxPrefixes; more are ignored, duplicates
// dropped), as a Flow_Table's prefixes column configures.
func NewWithPrefixes[T any](fields ...PrefixField) *Classifier[T] {
	c := &Classifier[T]{byMask: make(map[mf.Wildcards]*subtable[T])}
	for _, f := range fields {
		dup := false
		for _, t := range c.tries {
			dup = dup || t.field.Offset == f.Offset
		}
		if !dup && len(c.tries) < MaxPrefixes {
			c.tries = append(c.tries, newTrie(f))
		}
	}
	c.subs.Store(new([]subEntry[T]))
	return c
}

// Prefixes returns the fields c keeps prefix tries for.
func (c *Classifier[T]) Prefixes() []PrefixField {
	out := make([]PrefixField, len(c.tries))
	for i, t := range c.tries {
		out[i] = t.field
	}
	return out
}

// Len returns the number of rules in c, visible or not. Writer.
func (c *Classifier[T]) Len() int { return c.n }

// NumSubtables returns how many distinct masks c holds. Safe from any
// goroutine.
func (c *Classifier[T]) NumSubtables() int { return len(*c.subs.Load()) }

// Insert adds r, visible from version v on. Another rule with the same
// match and priority may exist (a replacement hides the old one at the
// same version). Writer.
func (c *Classifier[T]) Insert(r *Rule[T], v Version) {
	if r.sub != nil {
		panic("classifier: rule inserted twice")
	}
	r.Match.Normalize()
	r.addVersion = v
	r.removeVersion.Store(VersionNever)
	r.minClauses = 0
	for i, cj := range r.Conjunctions {
		if i == 0 || cj.NClauses < r.minClauses {
			r.minClauses = cj.NClauses
		}
	}
	st := c.byMask[r.Match.Wildcards]
	if st == nil {
		c.nextSeed++
		st = newSubtable[T](&r.Match.Wildcards, c.nextSeed, c.tries)
		c.byMask[r.Match.Wildcards] = st
	}
	// Into the tries before any lookup can find r in st.
	c.trieUpdate(st, r, true)
	oldMax, had := st.maxPriority()
	st.insert(r)
	c.n++
	if newMax, _ := st.maxPriority(); !had || newMax != oldMax {
		c.publish()
	}
}

// MakeInvisible hides r from version v on (v must be later than the
// version r was added in and not earlier than any lookup still to come
// for which r should be gone). r stays in c until Collect removes it.
// Writer.
func (c *Classifier[T]) MakeInvisible(r *Rule[T], v Version) {
	if r.sub == nil || r.removeVersion.Load() != VersionNever {
		return
	}
	r.removeVersion.Store(v)
	c.hidden = append(c.hidden, r)
}

// Restore undoes MakeInvisible for a rule not yet collected (a bundle that
// failed rolls back). Writer.
func (c *Classifier[T]) Restore(r *Rule[T]) {
	r.removeVersion.Store(VersionNever)
	c.hidden = slices.DeleteFunc(c.hidden, func(h *Rule[T]) bool { return h == r })
	c.doomed = slices.DeleteFunc(c.doomed, func(h *Rule[T]) bool { return h == r })
}

// Remove takes r out of c now. Lookups in progress may miss it: use it for
// rules no lookup can still see (never published, or hidden long ago), and
// MakeInvisible plus Collect otherwise. Writer.
func (c *Classifier[T]) Remove(r *Rule[T]) {
	st := r.sub
	if st == nil {
		return
	}
	oldMax, _ := st.maxPriority()
	st.remove(r)
	c.trieUpdate(st, r, false)
	c.n--
	if st.n == 0 {
		delete(c.byMask, st.mask)
		c.publish()
		return
	}
	if newMax, _ := st.maxPriority(); newMax != oldMax {
		c.publish()
	}
}

// Collect removes the rules hidden before the previous Collect and keeps
// those hidden since for the next one. Call it periodically (each
// revalidation round, say): the interval between two calls is how long a
// lookup that started at an old version can take. Writer.
func (c *Classifier[T]) Collect() {
	for _, r := range c.doomed {
		if r.removeVersion.Load() != VersionNever {
			c.Remove(r)
		}
	}
	// The emptied list is reused for the next hidden rules: clear it so
	// the removed rules (and what they hold) are not kept reachable.
	clear(c.doomed)
	c.doomed, c.hidden = c.hidden, c.doomed[:0]
}

// trieUpdate counts r in (add) or out of the tries st's mask has a
// prefix for. Writer.
func (c *Classifier[T]) trieUpdate(st *subtable[T], r *Rule[T], add bool) {
	if !st.hasTries {
		return
	}
	for j, t := range c.tries {
		plen := int(st.triePlen[j])
		if plen == 0 {
			continue
		}
		v := t.field.load(&r.Match.Flow)
		if add {
			t.insert(v, plen)
		} else {
			t.remove(v, plen)
		}
	}
}

// publish republishes the subtable list sorted by max priority. Writer.
func (c *Classifier[T]) publish() {
	subs := make([]subEntry[T], 0, len(c.byMask))
	for _, st := range c.byMask {
		p, _ := st.maxPriority()
		subs = append(subs, subEntry[T]{st, p})
	}
	slices.SortFunc(subs, func(a, b subEntry[T]) int {
		if a.maxPri != b.maxPri {
			return b.maxPri - a.maxPri
		}
		return cmp.Compare(a.st.seq, b.st.seq)
	})
	c.subs.Store(&subs)
}

// maxSoft is how many soft (conjunctive) matches a lookup tracks without
// allocating.
const maxSoft = 32

// Lookup returns the highest-priority rule visible in version v that
// matches flow, or nil, and adds to wc (when not nil) every bit of flow the
// result depended on. flow.ConjID is used and restored by conjunctive
// matching. Safe from any goroutine; allocates nothing in the common case.
func (c *Classifier[T]) Lookup(v Version, flow *mf.Flow, wc *mf.Wildcards) *Rule[T] {
	return c.lookup(v, flow, wc, true)
}

func (c *Classifier[T]) lookup(v Version, flow *mf.Flow, wc *mf.Wildcards, allowConj bool) *Rule[T] {
	var (
		hard    *Rule[T]
		hardPri = math.MinInt
		softBuf [maxSoft]*Rule[T]
		soft    = softBuf[:0]
		softPri = math.MinInt
		tl      trieLookup
	)
	for _, e := range *c.subs.Load() {
		if e.maxPri <= hardPri {
			break
		}
		r := e.st.find(v, flow, wc, c.tries, &tl)
		if r == nil || r.Priority <= hardPri {
			continue
		}
		if len(r.Conjunctions) == 0 {
			hard, hardPri = r, r.Priority
		} else if allowConj {
			soft = append(soft, r)
			softPri = max(softPri, r.Priority)
		}
	}
	if hardPri >= softPri {
		return hard
	}
	return c.softMatch(v, flow, wc, soft, hard, hardPri)
}

// softMatch resolves conjunctive matches, as Open vSwitch's
// classifier_lookup__: among the highest-priority soft matches, a
// conjunction with every clause present sets conj_id for a second lookup;
// failing that, soft matches fall back to lower-priority rules with the
// same match.
func (c *Classifier[T]) softMatch(v Version, flow *mf.Flow, wc *mf.Wildcards, soft []*Rule[T], hard *Rule[T], hardPri int) *Rule[T] {
	for {
		soft = slices.DeleteFunc(soft, func(r *Rule[T]) bool { return r == nil || r.Priority <= hardPri })
		if len(soft) == 0 {
			return hard
		}
		softPri, nSoftPri := math.MinInt, 0
		for _, r := range soft {
			switch {
			case r.Priority > softPri:
				softPri, nSoftPri = r.Priority, 1
			case r.Priority == softPri:
				nSoftPri++
			}
		}
		var cm conjMatches
		for _, r := range soft {
			if r.Priority != softPri {
				continue
			}
			id, ok := cm.add(r.Conjunctions, r.minClauses, nSoftPri)
			if !ok {
				continue
			}
			saved := flow.ConjID
			flow.ConjID = id
			found := c.lookup(v, flow, wc, false)
			flow.ConjID = saved
			if found != nil {
				return found
			}
		}
		// No conjunction completed at softPri: try the next lower
		// visible rule with the same match for each of those.
		for i, r := range soft {
			if r.Priority != softPri {
				continue
			}
			next := r.sub.nextVisible(r, v)
			soft[i] = nil
			if next == nil {
				continue
			}
			if len(next.Conjunctions) == 0 {
				if next.Priority > hardPri {
					hard, hardPri = next, next.Priority
				}
			} else {
				soft[i] = next
			}
		}
	}
}

// conjMatches tracks, per conjunction id, which clauses matched.
type conjMatches struct {
	ids     [16]uint32
	clauses [16]uint64
	n       int
	more    map[uint32]*uint64 // beyond 16 conjunctions (rare)
}

// add records the clauses of a soft match; it returns a conjunction id
// whose clauses are all present. maxClauses is how many soft matches share
// the priority: a conjunction with more clauses cannot be complete.
func (m *conjMatches) add(conjs []Conjunction, minClauses uint8, maxClauses int) (uint32, bool) {
	if maxClauses < int(minClauses) {
		return 0, false
	}
	for _, cj := range conjs {
		if int(cj.NClauses) > maxClauses || cj.NClauses == 0 || cj.Clause >= cj.NClauses || cj.NClauses > 64 {
			continue
		}
		p := m.slot(cj.ID, cj.NClauses)
		*p |= 1 << cj.Clause
		if *p == math.MaxUint64 {
			return cj.ID, true
		}
	}
	return 0, false
}

// slot returns the clause bitmap of conjunction id, creating it with the
// bits beyond nClauses already set.
func (m *conjMatches) slot(id uint32, nClauses uint8) *uint64 {
	for i := range m.n {
		if m.ids[i] == id {
			return &m.clauses[i]
		}
	}
	initial := uint64(math.MaxUint64) << (nClauses & 63)
	if nClauses == 64 {
		initial = 0
	}
	if m.n < len(m.ids) {
		m.ids[m.n], m.clauses[m.n] = id, initial
		m.n++
		return &m.clauses[m.n-1]
	}
	if m.more == nil {
		m.more = make(map[uint32]*uint64)
	}
	p := m.more[id]
	if p == nil {
		p = new(uint64)
		*p = initial
		m.more[id] = p
	}
	return p
}

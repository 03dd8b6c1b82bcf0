package classifier

import "gvs/ofproto/mf"

// FindExactly returns the rule visible in v with exactly match m (after
// normalisation) and priority, or nil: OpenFlow's strict matching. Writer.
func (c *Classifier[T]) FindExactly(m *mf.Match, priority int, v Version) *Rule[T] {
	nm := *m
	nm.Normalize()
	st := c.byMask[nm.Wildcards]
	if st == nil {
		return nil
	}
	b := st.bucketFor(st.hashes(nm.Flow.Words(), nil), nm.Flow.Words())
	if b == nil {
		return nil
	}
	for _, r := range b.rules {
		if r.Priority == priority && r.VisibleIn(v) {
			return r
		}
	}
	return nil
}

// ForEach calls fn for every rule visible in v until fn returns false.
// Writer (fn must not change c).
func (c *Classifier[T]) ForEach(v Version, fn func(*Rule[T]) bool) {
	for _, e := range *c.subs.Load() {
		if !e.st.forEach(func(r *Rule[T]) bool { return !r.VisibleIn(v) || fn(r) }) {
			return
		}
	}
}

// ForEachLoose calls fn for every rule visible in v whose match is at
// least as specific as m (OpenFlow's non-strict matching: every bit m
// matches, the rule matches too, with the same value), until fn returns
// false. Writer (fn must not change c).
func (c *Classifier[T]) ForEachLoose(m *mf.Match, v Version, fn func(*Rule[T]) bool) {
	nm := *m
	nm.Normalize()
	tm, tv := nm.Wildcards.Masks.Words(), nm.Flow.Words()
	for _, e := range *c.subs.Load() {
		sm := e.st.mask.Masks.Words()
		covers := true
		for i := range tm {
			if tm[i]&^sm[i] != 0 {
				covers = false
				break
			}
		}
		if !covers {
			continue
		}
		more := e.st.forEach(func(r *Rule[T]) bool {
			if !r.VisibleIn(v) {
				return true
			}
			rv := r.Match.Flow.Words()
			for i := range tm {
				if rv[i]&tm[i] != tv[i] {
					return true
				}
			}
			return fn(r)
		})
		if !more {
			return
		}
	}
}

// Overlaps reports whether a rule visible in v with the given priority
// could match a packet m also matches (OpenFlow's OFPFF_CHECK_OVERLAP).
// Writer.
func (c *Classifier[T]) Overlaps(m *mf.Match, priority int, v Version) bool {
	nm := *m
	nm.Normalize()
	tm, tv := nm.Wildcards.Masks.Words(), nm.Flow.Words()
	found := false
	for _, e := range *c.subs.Load() {
		if e.maxPri < priority {
			break
		}
		sm := e.st.mask.Masks.Words()
		e.st.forEach(func(r *Rule[T]) bool {
			if r.Priority != priority || !r.VisibleIn(v) {
				return true
			}
			rv := r.Match.Flow.Words()
			for i := range tm {
				both := tm[i] & sm[i]
				if (rv[i]^tv[i])&both != 0 {
					return true
				}
			}
			found = true
			return false
		})
		if found {
			return true
		}
	}
	return false
}

package classifier

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"gvs/ofproto/mf"
	"gvs/packet"
)

// The random rules and flows of the property tests draw from a few
// fields, in every stage, with few values each, so that rules overlap and
// lookups hit.
type field int

const (
	fInPort field = iota
	fReg0
	fEtherType
	fDstMAC
	fSrcIP
	fDstIP
	fProto
	fDstPort
	numFields
)

func randValue(rng *rand.Rand, f field, fl *mf.Flow) {
	switch f {
	case fInPort:
		fl.InPort = uint32(1 + rng.IntN(3))
	case fReg0:
		fl.Regs[0] = uint32(rng.IntN(3))
	case fEtherType:
		fl.EtherType = []uint16{packet.EtherTypeIPv4, packet.EtherTypeIPv6}[rng.IntN(2)]
	case fDstMAC:
		fl.DstMAC = [6]byte{2, 0, 0, 0, 0, byte(rng.IntN(3))}
	case fSrcIP:
		fl.SrcIPv4 = [4]byte{198, 18, byte(rng.IntN(2)), byte(rng.IntN(3))}
	case fDstIP:
		fl.DstIPv4 = [4]byte{198, 18 + byte(rng.IntN(2)), byte(rng.IntN(2)), byte(rng.IntN(3))}
	case fProto:
		fl.IPProto = []uint8{6, 17}[rng.IntN(2)]
	case fDstPort:
		fl.DstPort = uint16(80 + rng.IntN(3))
	}
}

func randFlow(rng *rand.Rand) mf.Flow {
	var fl mf.Flow
	for f := range numFields {
		randValue(rng, f, &fl)
	}
	return fl
}

func prefix4(n int) [4]byte {
	v := uint32(math.MaxUint32) << (32 - n)
	if n == 0 {
		v = 0
	}
	return [4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}
}

func randMatch(rng *rand.Rand) mf.Match {
	var m mf.Match
	fl := randFlow(rng)
	m.Flow = fl
	w := &m.Wildcards.Masks
	for f := range numFields {
		if rng.IntN(3) != 0 {
			continue
		}
		switch f {
		case fInPort:
			w.InPort = math.MaxUint32
		case fReg0:
			w.Regs[0] = math.MaxUint32
		case fEtherType:
			w.EtherType = 0xffff
		case fDstMAC:
			w.DstMAC = [6]byte{255, 255, 255, 255, 255, 255}
		case fSrcIP:
			w.SrcIPv4 = prefix4([]int{16, 24, 32}[rng.IntN(3)])
		case fDstIP:
			w.DstIPv4 = prefix4([]int{8, 16, 24, 32}[rng.IntN(4)])
		case fProto:
			w.IPProto = 0xff
		case fDstPort:
			w.DstPort = 0xffff
		}
	}
	m.Normalize()
	return m
}

// linear is the reference: Open vSwitch's semantics by brute force, for
// rule sets whose hard rules have distinct priorities.
func linear(rules []*Rule[int], v Version, fl *mf.Flow, allowConj bool) *Rule[int] {
	byPri := map[int][]*Rule[int]{}
	var pris []int
	for _, r := range rules {
		if !r.VisibleIn(v) || !r.Match.Matches(fl) {
			continue
		}
		if !allowConj && (len(r.Conjunctions) > 0 || shadowedBySoft(rules, v, r)) {
			continue
		}
		if byPri[r.Priority] == nil {
			pris = append(pris, r.Priority)
		}
		byPri[r.Priority] = append(byPri[r.Priority], r)
	}
	// Descending priorities.
	for i := range pris {
		for j := i + 1; j < len(pris); j++ {
			if pris[j] > pris[i] {
				pris[i], pris[j] = pris[j], pris[i]
			}
		}
	}
	for _, p := range pris {
		clauses := map[uint32]uint64{}
		nclauses := map[uint32]uint8{}
		for _, r := range byPri[p] {
			if len(r.Conjunctions) == 0 {
				return r
			}
			for _, cj := range r.Conjunctions {
				clauses[cj.ID] |= 1 << cj.Clause
				nclauses[cj.ID] = cj.NClauses
			}
		}
		for id, got := range clauses {
			if got == 1<<nclauses[id]-1 {
				saved := fl.ConjID
				fl.ConjID = id
				r := linear(rules, v, fl, false)
				fl.ConjID = saved
				if r != nil {
					return r
				}
			}
		}
	}
	return nil
}

// shadowedBySoft reports whether a visible conjunction clause with r's
// match has a higher priority: Open vSwitch's lookup for conj_id looks at
// the highest-priority rule of each match only, and skips it when it is a
// clause, so r is not found (classifier_lookup__ with
// allow_conjunctive_matches false).
func shadowedBySoft(rules []*Rule[int], v Version, r *Rule[int]) bool {
	for _, o := range rules {
		if o.VisibleIn(v) && len(o.Conjunctions) > 0 && o.Priority > r.Priority && o.Match == r.Match {
			return true
		}
	}
	return false
}

func insertAll(c *Classifier[int], rules []*Rule[int]) {
	for _, r := range rules {
		c.Insert(r, 1)
	}
}

// TestLookupAgainstLinearScan is the classifier's property test: for
// random rule sets and random flows, Lookup finds what a linear scan
// finds, and the wildcards it reports are sufficient: every flow equal to
// the looked-up one on the reported bits gets the same rule.
func TestLookupAgainstLinearScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		c := New[int]()
		n := 1 + rng.IntN(60)
		var rules []*Rule[int]
		for i, p := range rng.Perm(n) {
			rules = append(rules, &Rule[int]{Match: randMatch(rng), Priority: p, Value: i})
		}
		insertAll(c, rules)
		for range 50 {
			fl := randFlow(rng)
			var wc mf.Wildcards
			got := c.Lookup(1, &fl, &wc)
			want := linear(rules, 1, &fl, true)
			if got != want {
				t.Fatalf("round %d: lookup %+v: got %v, want %v", round, fl, name(got), name(want))
			}
			checkSufficient(t, rng, c, rules, &fl, &wc, want)
		}
	}
}

// checkSufficient varies every bit wc leaves out and checks the winner.
func checkSufficient(t *testing.T, rng *rand.Rand, c *Classifier[int], rules []*Rule[int], fl *mf.Flow, wc *mf.Wildcards, want *Rule[int]) {
	t.Helper()
	for range 20 {
		other := randFlow(rng)
		ow, fw, mw := other.Words(), fl.Words(), wc.Masks.Words()
		for i := range ow {
			ow[i] = fw[i]&mw[i] | ow[i]&^mw[i]
		}
		if got := linear(rules, 1, &other, true); got != want {
			t.Fatalf("wildcards too wide: flow %+v and %+v agree on the reported bits but %v != %v", *fl, other, name(got), name(want))
		}
		if got := c.Lookup(1, &other, nil); got != want {
			t.Fatalf("lookup without wildcards: %v, want %v", name(got), name(want))
		}
	}
}

func name(r *Rule[int]) string {
	if r == nil {
		return "nil"
	}
	return fmt.Sprintf("rule %d (priority %d)", r.Value, r.Priority)
}

// Staged lookup: a subtable whose rules all differ from the flow in L3
// must not unwildcard its L4 bits.
func TestStagedLookupStopsEarly(t *testing.T) {
	c := New[int]()
	var m mf.Match
	m.Flow.EtherType = packet.EtherTypeIPv4
	m.Flow.DstIPv4 = [4]byte{198, 18, 0, 1}
	m.Flow.DstPort = 80
	m.Wildcards.Masks.EtherType = 0xffff
	m.Wildcards.Masks.DstIPv4 = prefix4(32)
	m.Wildcards.Masks.DstPort = 0xffff
	c.Insert(&Rule[int]{Match: m, Priority: 10}, 1)

	var fl mf.Flow
	fl.EtherType = packet.EtherTypeIPv4
	fl.DstIPv4 = [4]byte{198, 18, 0, 2}
	fl.DstPort = 80
	var wc mf.Wildcards
	if r := c.Lookup(1, &fl, &wc); r != nil {
		t.Fatalf("matched %v", name(r))
	}
	if wc.Masks.DstPort != 0 {
		t.Errorf("L4 unwildcarded (tp_dst mask %#x) though the lookup failed at L3", wc.Masks.DstPort)
	}
	// The nw_dst trie tells 198.18.0.2 from the rule's 198.18.0.1 by
	// their first 31 bits: the other L3 bits stay wildcarded.
	if wc.Masks.DstIPv4 != prefix4(31) || wc.Masks.EtherType != 0xffff {
		t.Errorf("L2/L3 bits consulted but not reported: %+v", wc.Masks.Key)
	}

	// Different EtherType: the lookup fails at L2 and leaves L3 alone.
	fl.EtherType = packet.EtherTypeIPv6
	wc = mf.Wildcards{}
	c.Lookup(1, &fl, &wc)
	if wc.Masks.DstIPv4 != [4]byte{} || wc.Masks.EtherType != 0xffff {
		t.Errorf("failing at L2: wildcards %+v", wc.Masks.Key)
	}
}

// A higher-priority subtable's match prunes the lower ones: their bits
// stay wildcarded.
func TestPriorityPruning(t *testing.T) {
	c := New[int]()
	hi := mf.Match{}
	hi.Flow.InPort = 1
	hi.Wildcards.Masks.InPort = math.MaxUint32
	lo := mf.Match{}
	lo.Flow.DstPort = 80
	lo.Wildcards.Masks.DstPort = 0xffff
	c.Insert(&Rule[int]{Match: hi, Priority: 100, Value: 1}, 1)
	c.Insert(&Rule[int]{Match: lo, Priority: 50, Value: 2}, 1)
	fl := mf.Flow{}
	fl.InPort = 1
	fl.DstPort = 80
	var wc mf.Wildcards
	if r := c.Lookup(1, &fl, &wc); r == nil || r.Value != 1 {
		t.Fatalf("got %v", r)
	}
	if wc.Masks.DstPort != 0 {
		t.Error("lower-priority subtable consulted after a higher-priority match")
	}
}

func TestVersions(t *testing.T) {
	c := New[int]()
	m := mf.Match{}
	m.Flow.InPort = 1
	m.Wildcards.Masks.InPort = math.MaxUint32
	old := &Rule[int]{Match: m, Priority: 5, Value: 1}
	c.Insert(old, 1)
	// A bundle at version 2 replaces it and adds another rule.
	repl := &Rule[int]{Match: m, Priority: 5, Value: 2}
	c.Insert(repl, 2)
	c.MakeInvisible(old, 2)
	other := &Rule[int]{Match: mf.Match{}, Priority: 1, Value: 3}
	c.Insert(other, 2)

	fl := mf.Flow{}
	fl.InPort = 1
	if r := c.Lookup(1, &fl, nil); r != old {
		t.Fatalf("version 1 sees %v, want the old rule", name(r))
	}
	if r := c.Lookup(2, &fl, nil); r != repl {
		t.Fatalf("version 2 sees %v, want the replacement", name(r))
	}
	fl.InPort = 2
	if r := c.Lookup(1, &fl, nil); r != nil {
		t.Fatalf("version 1 sees %v, added at 2", name(r))
	}
	if r := c.FindExactly(&m, 5, 1); r != old {
		t.Errorf("FindExactly at 1: %v", name(r))
	}
	if r := c.FindExactly(&m, 5, 2); r != repl {
		t.Errorf("FindExactly at 2: %v", name(r))
	}
	// Collect twice removes the hidden rule.
	c.Collect()
	if c.Len() != 3 {
		t.Fatalf("first Collect removed a rule: %d left", c.Len())
	}
	c.Collect()
	if c.Len() != 2 {
		t.Fatalf("second Collect: %d rules, want 2", c.Len())
	}
	fl.InPort = 1
	if r := c.Lookup(2, &fl, nil); r != repl {
		t.Fatalf("after collect: %v", name(r))
	}
	// Restore: a rolled-back bundle makes a hidden rule visible again.
	c.MakeInvisible(repl, 3)
	c.Restore(repl)
	c.Collect()
	c.Collect()
	if r := c.Lookup(3, &fl, nil); r != repl {
		t.Fatalf("restored rule not visible: %v", name(r))
	}
}

func conjMatch(set func(*mf.Flow, *mf.Flow)) mf.Match {
	var m mf.Match
	set(&m.Flow, &m.Wildcards.Masks)
	m.Normalize()
	return m
}

// conj_id rules: conjunction(7, 1/2) on ip_src, conjunction(7, 2/2) on
// tp_dst, and the conj_id=7 rule.
func TestConjunction(t *testing.T) {
	c := New[int]()
	src := conjMatch(func(f, m *mf.Flow) { f.SrcIPv4 = [4]byte{198, 18, 0, 1}; m.SrcIPv4 = prefix4(32) })
	src2 := conjMatch(func(f, m *mf.Flow) { f.SrcIPv4 = [4]byte{198, 18, 0, 2}; m.SrcIPv4 = prefix4(32) })
	port := conjMatch(func(f, m *mf.Flow) { f.DstPort = 80; m.DstPort = 0xffff })
	id := conjMatch(func(f, m *mf.Flow) { f.ConjID = 7; m.ConjID = math.MaxUint32 })
	c.Insert(&Rule[int]{Match: src, Priority: 100, Value: 1, Conjunctions: []Conjunction{{7, 0, 2}}}, 1)
	c.Insert(&Rule[int]{Match: src2, Priority: 100, Value: 2, Conjunctions: []Conjunction{{7, 0, 2}}}, 1)
	c.Insert(&Rule[int]{Match: port, Priority: 100, Value: 3, Conjunctions: []Conjunction{{7, 1, 2}}}, 1)
	target := &Rule[int]{Match: id, Priority: 100, Value: 4}
	c.Insert(target, 1)
	fallback := &Rule[int]{Priority: 0, Value: 5}
	c.Insert(fallback, 1)

	for _, tc := range []struct {
		src  byte
		port uint16
		want *Rule[int]
	}{{1, 80, target}, {2, 80, target}, {3, 80, fallback}, {1, 81, fallback}} {
		var fl mf.Flow
		fl.SrcIPv4 = [4]byte{198, 18, 0, tc.src}
		fl.DstPort = tc.port
		var wc mf.Wildcards
		if r := c.Lookup(1, &fl, &wc); r != tc.want {
			t.Errorf("src .%d port %d: %v, want %v", tc.src, tc.port, name(r), name(tc.want))
		}
		if fl.ConjID != 0 {
			t.Error("Lookup left conj_id set")
		}
	}
}

// Random conjunctions against the reference, including wildcards.
func TestConjunctionAgainstLinearScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 200 {
		c := New[int]()
		var rules []*Rule[int]
		pri := rng.Perm(1000)
		next := 0
		for range rng.IntN(20) {
			rules = append(rules, &Rule[int]{Match: randMatch(rng), Priority: pri[next], Value: len(rules)})
			next++
		}
		for id := uint32(1); id <= uint32(1+rng.IntN(3)); id++ {
			p := pri[next]
			next++
			n := uint8(2 + rng.IntN(2))
			for k := range n {
				for range 1 + rng.IntN(2) {
					addClause(&rules, randMatch(rng), p, Conjunction{id, k, n})
				}
			}
			m := randMatch(rng)
			m.Flow.ConjID, m.Wildcards.Masks.ConjID = id, math.MaxUint32
			rules = append(rules, &Rule[int]{Match: m, Priority: pri[next], Value: len(rules)})
			next++
		}
		insertAll(c, rules)
		for range 50 {
			fl := randFlow(rng)
			var wc mf.Wildcards
			got := c.Lookup(1, &fl, &wc)
			want := linear(rules, 1, &fl, true)
			if got != want {
				t.Fatalf("round %d: got %v, want %v", round, name(got), name(want))
			}
			checkSufficient(t, rng, c, rules, &fl, &wc, want)
		}
	}
}

// addClause adds a conjunction clause rule, or the clause to the rule with
// the same match and priority: OpenFlow has one flow per match and
// priority (conjunction(1,1/2),conjunction(2,1/2) as its actions).
func addClause(rules *[]*Rule[int], m mf.Match, pri int, cj Conjunction) {
	for _, r := range *rules {
		if r.Priority == pri && r.Match == m {
			// Two clauses of one conjunction in one flow: Open vSwitch
			// counts one clause per flow and never completes it.
			if !slices.ContainsFunc(r.Conjunctions, func(o Conjunction) bool { return o.ID == cj.ID }) {
				r.Conjunctions = append(r.Conjunctions, cj)
			}
			return
		}
	}
	*rules = append(*rules, &Rule[int]{Match: m, Priority: pri, Value: len(*rules), Conjunctions: []Conjunction{cj}})
}

// Removing rules keeps lookups right, and an emptied classifier is empty.
func TestRemove(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	c := New[int]()
	var rules []*Rule[int]
	for i, p := range rng.Perm(300) {
		rules = append(rules, &Rule[int]{Match: randMatch(rng), Priority: p, Value: i})
	}
	insertAll(c, rules)
	for len(rules) > 0 {
		i := rng.IntN(len(rules))
		c.Remove(rules[i])
		rules = append(rules[:i], rules[i+1:]...)
		for range 5 {
			fl := randFlow(rng)
			if got, want := c.Lookup(1, &fl, nil), linear(rules, 1, &fl, true); got != want {
				t.Fatalf("%d rules left: got %v, want %v", len(rules), name(got), name(want))
			}
		}
	}
	if c.Len() != 0 || c.NumSubtables() != 0 {
		t.Fatalf("empty classifier has %d rules, %d subtables", c.Len(), c.NumSubtables())
	}
}

func TestForEachLooseAndOverlaps(t *testing.T) {
	c := New[int]()
	a := conjMatch(func(f, m *mf.Flow) { f.InPort = 1; m.InPort = math.MaxUint32 })
	ab := conjMatch(func(f, m *mf.Flow) {
		f.InPort, m.InPort = 1, math.MaxUint32
		f.DstPort, m.DstPort = 80, 0xffff
	})
	b := conjMatch(func(f, m *mf.Flow) { f.DstPort = 80; m.DstPort = 0xffff })
	c.Insert(&Rule[int]{Match: a, Priority: 1, Value: 1}, 1)
	c.Insert(&Rule[int]{Match: ab, Priority: 2, Value: 2}, 1)
	c.Insert(&Rule[int]{Match: b, Priority: 3, Value: 3}, 1)
	got := map[int]bool{}
	c.ForEachLoose(&a, 1, func(r *Rule[int]) bool { got[r.Value] = true; return true })
	if len(got) != 2 || !got[1] || !got[2] {
		t.Errorf("loose in_port=1 found %v, want rules 1 and 2", got)
	}
	got = map[int]bool{}
	c.ForEachLoose(&mf.Match{}, 1, func(r *Rule[int]) bool { got[r.Value] = true; return true })
	if len(got) != 3 {
		t.Errorf("loose match-all found %v", got)
	}
	if !c.Overlaps(&b, 1, 1) {
		t.Error("tp_dst=80 at priority 1 overlaps in_port=1 at priority 1")
	}
	c2 := conjMatch(func(f, m *mf.Flow) { f.InPort = 2; m.InPort = math.MaxUint32 })
	if c.Overlaps(&c2, 1, 1) {
		t.Error("in_port=2 does not overlap in_port=1")
	}
	if c.Overlaps(&b, 4, 1) {
		t.Error("nothing has priority 4")
	}
}

func TestLookupAllocatesNothing(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	c := New[int]()
	for i, p := range rng.Perm(200) {
		c.Insert(&Rule[int]{Match: randMatch(rng), Priority: p, Value: i}, 1)
	}
	flows := make([]mf.Flow, 64)
	for i := range flows {
		flows[i] = randFlow(rng)
	}
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		var wc mf.Wildcards
		c.Lookup(1, &flows[i%len(flows)], &wc)
		i++
	})
	if allocs != 0 {
		t.Fatalf("Lookup allocates %.1f times per call", allocs)
	}
}

// One writer inserting and removing, readers looking up concurrently: run
// with -race. Readers must always find the catch-all at least.
func TestConcurrentReaders(t *testing.T) {
	c := New[int]()
	catchAll := &Rule[int]{Priority: 0, Value: -1}
	c.Insert(catchAll, 1)
	var stop atomic.Bool
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 9))
			for !stop.Load() {
				fl := randFlow(rng)
				var wc mf.Wildcards // with wildcards: the tries are read too
				if c.Lookup(1, &fl, &wc) == nil {
					t.Error("lookup found nothing despite the catch-all")
					return
				}
			}
		}()
	}
	rng := rand.New(rand.NewPCG(10, 11))
	var live []*Rule[int]
	for i := range 3000 {
		if len(live) > 100 && rng.IntN(2) == 0 {
			j := rng.IntN(len(live))
			c.Remove(live[j])
			live = append(live[:j], live[j+1:]...)
			continue
		}
		r := &Rule[int]{Match: randMatch(rng), Priority: 1 + rng.IntN(1000), Value: i}
		c.Insert(r, 1)
		live = append(live, r)
	}
	stop.Store(true)
	wg.Wait()
}

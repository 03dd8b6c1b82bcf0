package classifier

import (
	"math/bits"
	"slices"
	"sync/atomic"
	"unsafe"

	"gvs/ofproto/mf"
	"gvs/packet"
)

// The lookup stages, in the order a lookup checks them.
const (
	stageMetadata = iota
	stageL2
	stageL3
	stageL4
	numStages
)

// stageMasks[s] has every bit of the flow that belongs to stage s set.
// Stages are byte ranges of mf.Flow: packet.Key's metadata block and
// mf.Flow's pipeline fields (metadata), EtherType up to ARPOp (L2), ARPOp
// up to SrcPort (L3), SrcPort to the end of packet.Key (L4).
var stageMasks = func() (m [numStages]mf.Flow) {
	var k packet.Key
	keyEnd := unsafe.Sizeof(k)
	ranges := [numStages][][2]uintptr{
		stageMetadata: {{0, unsafe.Offsetof(k.EtherType)}, {keyEnd, unsafe.Sizeof(mf.Flow{})}},
		stageL2:       {{unsafe.Offsetof(k.EtherType), unsafe.Offsetof(k.ARPOp)}},
		stageL3:       {{unsafe.Offsetof(k.ARPOp), unsafe.Offsetof(k.SrcPort)}},
		stageL4:       {{unsafe.Offsetof(k.SrcPort), keyEnd}},
	}
	for s, rs := range ranges {
		b := unsafe.Slice((*byte)(unsafe.Pointer(&m[s])), unsafe.Sizeof(m[s]))
		for _, r := range rs {
			for i := r[0]; i < r[1]; i++ {
				b[i] = 0xff
			}
		}
	}
	return m
}()

// maskedWord is one word of a subtable's mask: its index and bits.
type maskedWord struct {
	idx  uint16
	bits uint64
}

// subtable holds the rules of one mask.
type subtable[T any] struct {
	mask mf.Wildcards
	seq  uint64 // creation order, to break priority ties deterministically
	seed uint64

	// words are the mask's non-zero words, stage by stage; stageEnd[i]
	// is where stage i's words end in words. A word split between two
	// stages appears in both with each stage's bits.
	words    []maskedWord
	stageEnd []int
	// indices[i] holds the hashes of the rules' values up to stage i,
	// for every non-empty stage but the last.
	indices []atomic.Pointer[hashSet]
	// indexCount counts the rules behind each hash of each index, so the
	// writer knows when a hash leaves. Writer only.
	indexCount []map[uint64]int

	table atomic.Pointer[bucketTable[T]]

	// triePlen[j] is the length of the CIDR prefix the mask has on the
	// classifier's trie j (0: none, or not a prefix: the trie does not
	// apply); trieStage[j] the index in stageEnd of the stage holding it.
	triePlen  [MaxPrefixes]uint8
	trieStage [MaxPrefixes]int8
	hasTries  bool

	// The ports trie (Open vSwitch's per-subtable one), when the mask
	// has L4 port bits: the rules' masked ports as prefixes of portsPlen
	// bits (up to the mask's last port bit). A lookup that misses in the
	// final stage adds only the port bits the trie needed to tell the
	// packet apart, and the final stage's other bits (lastNoPorts).
	portsTrie   *trie
	portsMask   prefixValue
	portsPlen   int
	lastNoPorts []maskedWord

	// Writer only.
	n        int
	priCount map[int]int // rules per priority
	maxPri   int         // highest key of priCount
}

// bucket is the immutable list of rules with one masked value, by
// descending priority; the writer replaces a bucket whole.
type bucket[T any] struct {
	hash  uint64
	rules []*Rule[T]
}

type bucketTable[T any] struct {
	slots []atomic.Pointer[bucket[T]]
	used  int // occupied slots, tombstones included; writer only
}

// Hash values with a meaning of their own: finish never returns them. A
// bucket with tombstoneHash marks a slot whose bucket was removed (readers
// probe past it); in a hashSet, emptyHash is a free slot.
const (
	emptyHash     = 0
	tombstoneHash = 1
)

func newSubtable[T any](mask *mf.Wildcards, seq uint64, tries []*trie) *subtable[T] {
	st := &subtable[T]{mask: *mask, seq: seq, seed: seq * 0x9e3779b97f4a7c15, priCount: map[int]int{}}
	mw := mask.Masks.Words()
	var fieldStage [numStages]int8 // stage -> index in stageEnd
	for s := range numStages {
		sw := stageMasks[s].Words()
		start := len(st.words)
		for i := range mw {
			if b := mw[i] & sw[i]; b != 0 {
				st.words = append(st.words, maskedWord{uint16(i), b})
			}
		}
		fieldStage[s] = int8(len(st.stageEnd))
		if len(st.words) > start {
			st.stageEnd = append(st.stageEnd, len(st.words))
		}
	}
	if pm := portsValue(&mask.Masks); pm[0] != 0 {
		st.portsTrie = newTrie(portsField)
		st.portsMask = pm
		st.portsPlen = 64 - bits.TrailingZeros64(pm[0])
		var ports mf.Flow
		ports.SrcPort, ports.DstPort = 0xffff, 0xffff
		pw := ports.Words()
		for _, w := range st.words[st.lastStart():] {
			if b := w.bits &^ pw[w.idx]; b != 0 {
				st.lastNoPorts = append(st.lastNoPorts, maskedWord{w.idx, b})
			}
		}
	}
	for j, t := range tries {
		if plen := t.field.prefixLen(&mask.Masks); plen > 0 {
			st.triePlen[j] = uint8(plen)
			st.trieStage[j] = fieldStage[stageOf(t.field.Offset)]
			st.hasTries = true
		}
	}
	n := max(len(st.stageEnd)-1, 0)
	st.indices = make([]atomic.Pointer[hashSet], n)
	st.indexCount = make([]map[uint64]int, n)
	for i := range n {
		st.indices[i].Store(newHashSet(minSlots))
		st.indexCount[i] = map[uint64]int{}
	}
	st.table.Store(&bucketTable[T]{slots: make([]atomic.Pointer[bucket[T]], minSlots)})
	return st
}

const minSlots = 8

// maxPriority returns the highest priority of the subtable's rules and
// whether it has any. Writer.
func (st *subtable[T]) maxPriority() (int, bool) { return st.maxPri, st.n > 0 }

// notePriority counts a rule of priority p in or out and keeps maxPri.
// Writer.
func (st *subtable[T]) notePriority(p, delta int) {
	st.priCount[p] += delta
	switch {
	case st.priCount[p] == 0:
		delete(st.priCount, p)
		if p == st.maxPri {
			first := true
			for q := range st.priCount {
				if first || q > st.maxPri {
					st.maxPri, first = q, false
				}
			}
		}
	case delta > 0 && (st.n == 1 || p > st.maxPri):
		st.maxPri = p
	}
}

// mix folds one masked word into a running hash.
func mix(h uint64, idx uint16, w uint64) uint64 {
	const m1, m2 = 0xa0761d6478bd642f, 0xe7037ed1a0b428db
	hi, lo := bits.Mul64(h^w^m1, uint64(idx)^m2)
	return h ^ hi ^ lo
}

// finish makes a stage hash from a running hash; never tombstoneHash.
func finish(h uint64, n int) uint64 {
	const m1, m2 = 0xa0761d6478bd642f, 0xe7037ed1a0b428db
	hi, lo := bits.Mul64(h^m2, uint64(n)^m1)
	if f := hi ^ lo; f > tombstoneHash {
		return f
	}
	return 2
}

// hashes computes the stage hashes of f's masked values into out (one
// per stage of st) and returns the full hash.
func (st *subtable[T]) hashes(fw *[mf.FlowWords]uint64, out []uint64) uint64 {
	h := st.seed
	j := 0
	for s, end := range st.stageEnd {
		for ; j < end; j++ {
			w := st.words[j]
			h = mix(h, w.idx, fw[w.idx]&w.bits)
		}
		if s < len(out) {
			out[s] = finish(h, j)
		}
	}
	return finish(h, j)
}

// lastStart is where the last stage's words start in words.
func (st *subtable[T]) lastStart() int {
	if len(st.stageEnd) < 2 {
		return 0
	}
	return st.stageEnd[len(st.stageEnd)-2]
}

// maskedPorts is flow's ports under the subtable's mask, as a prefix
// value for the ports trie.
func (st *subtable[T]) maskedPorts(flow *mf.Flow) prefixValue {
	v := portsValue(flow)
	return prefixValue{v[0] & st.portsMask[0], 0}
}

// stageOf returns the stage holding the flow byte at offset.
func stageOf(offset uintptr) int {
	for s := range numStages {
		if unsafe.Slice((*byte)(unsafe.Pointer(&stageMasks[s])), unsafe.Sizeof(stageMasks[s]))[offset] != 0 {
			return s
		}
	}
	return numStages - 1
}

// find looks flow up in the subtable: it returns the highest-priority
// rule visible in v in the matching bucket (or nil) and adds the mask
// bits of the stages examined to wc. With wc, before each stage it asks
// the classifier's prefix tries (through tl, shared by the subtables of
// one lookup) whether any rule of the subtable can match; if none can,
// it stops there and adds only the prefix bits that told.
func (st *subtable[T]) find(v Version, flow *mf.Flow, wc *mf.Wildcards, tries []*trie, tl *trieLookup) *Rule[T] {
	fw := flow.Words()
	h := st.seed
	j := 0
	last := len(st.stageEnd) - 1
	for s, end := range st.stageEnd {
		if st.hasTries && wc != nil && st.trieSkips(s, flow, wc, tries, tl) {
			st.unwildcard(wc, j)
			return nil
		}
		for ; j < end; j++ {
			w := st.words[j]
			h = mix(h, w.idx, fw[w.idx]&w.bits)
		}
		if s < last && !st.indices[s].Load().contains(finish(h, j)) {
			st.unwildcard(wc, end)
			return nil
		}
	}
	if b := st.bucketFor(finish(h, j), fw); b != nil {
		for _, r := range b.rules {
			if r.VisibleIn(v) {
				st.unwildcard(wc, len(st.words))
				return r
			}
		}
	}
	if st.portsTrie == nil || wc == nil {
		st.unwildcard(wc, len(st.words))
		return nil
	}
	// No match: of the ports, only the bits the ports trie needed to
	// tell the packet from every rule's ports.
	st.unwildcard(wc, st.lastStart())
	ww := wc.Masks.Words()
	for _, w := range st.lastNoPorts {
		ww[w.idx] |= w.bits
	}
	_, mbits := st.portsTrie.lookupValue(st.maskedPorts(flow))
	m := prefixMask(mbits)[0] & st.portsMask[0]
	wc.Masks.SrcPort |= uint16(m >> 48)
	wc.Masks.DstPort |= uint16(m >> 32)
	return nil
}

// trieSkips reports whether the tries show that no rule of the subtable
// can match flow, checked before stage s, after adding to wc the prefix
// bits that showed it (Open vSwitch's check_tries).
func (st *subtable[T]) trieSkips(s int, flow *mf.Flow, wc *mf.Wildcards, tries []*trie, tl *trieLookup) bool {
	for j, t := range tries {
		plen := int(st.triePlen[j])
		if plen == 0 || int(st.trieStage[j]) != s {
			continue
		}
		if !tl.done[j] {
			tl.plens[j], tl.maskbits[j] = t.lookup(flow)
			tl.done[j] = true
		}
		if tl.plens[j].has(plen) {
			continue
		}
		// No rule prefix of this subtable's length matches. The bits
		// the trie looked at are enough to tell, unless they are more
		// than the subtable would unwildcard itself and wc lacks them.
		if tl.maskbits[j] <= plen {
			t.field.setPrefix(wc, tl.maskbits[j])
			return true
		}
		if t.field.hasPrefix(wc, tl.maskbits[j]) {
			return true
		}
	}
	return false
}

// unwildcard adds the first n masked words to wc.
func (st *subtable[T]) unwildcard(wc *mf.Wildcards, n int) {
	if wc == nil {
		return
	}
	ww := wc.Masks.Words()
	for _, w := range st.words[:n] {
		ww[w.idx] |= w.bits
	}
}

// bucketFor returns the bucket whose value equals fw under the mask.
func (st *subtable[T]) bucketFor(h uint64, fw *[mf.FlowWords]uint64) *bucket[T] {
	_, b := st.probe(st.table.Load(), h, fw)
	return b
}

// equal reports whether fw masked equals the bucket's value.
func (st *subtable[T]) equal(b *bucket[T], fw *[mf.FlowWords]uint64) bool {
	if len(b.rules) == 0 {
		return false
	}
	vw := b.rules[0].Match.Flow.Words()
	for _, w := range st.words {
		if fw[w.idx]&w.bits != vw[w.idx]&w.bits {
			return false
		}
	}
	return true
}

// insert adds r (its match normalised, of this subtable's mask). Writer.
func (st *subtable[T]) insert(r *Rule[T]) {
	var stageHashes [numStages]uint64
	h := st.hashes(r.Match.Flow.Words(), stageHashes[:len(st.indices)])
	for i := range st.indices {
		if st.indexCount[i][stageHashes[i]]++; st.indexCount[i][stageHashes[i]] == 1 {
			addHash(&st.indices[i], stageHashes[i])
		}
	}
	r.sub = st
	st.n++
	st.notePriority(r.Priority, 1)
	if st.portsTrie != nil {
		st.portsTrie.insert(st.maskedPorts(&r.Match.Flow), st.portsPlen)
	}

	t := st.table.Load()
	slot := st.slotOf(t, h, r.Match.Flow.Words())
	if slot != nil {
		old := slot.Load()
		rules := make([]*Rule[T], 0, len(old.rules)+1)
		rules = append(rules, old.rules...)
		// After every rule of higher or equal priority: a newer rule of
		// the same priority comes after the one it replaces, which is
		// hidden by then.
		at := len(rules)
		for i, o := range rules {
			if o.Priority < r.Priority {
				at = i
				break
			}
		}
		rules = slices.Insert(rules, at, r)
		slot.Store(&bucket[T]{hash: h, rules: rules})
		return
	}
	if (t.used+1)*4 > len(t.slots)*3 {
		t = st.rebuild()
	}
	nb := &bucket[T]{hash: h, rules: []*Rule[T]{r}}
	n := uint64(len(t.slots))
	for i := h & (n - 1); ; i = (i + 1) & (n - 1) {
		old := t.slots[i].Load()
		if old == nil {
			t.used++
			t.slots[i].Store(nb)
			return
		}
		if old.hash == tombstoneHash {
			t.slots[i].Store(nb)
			return
		}
	}
}

// slotOf returns the slot holding the bucket of value fw, or nil.
func (st *subtable[T]) slotOf(t *bucketTable[T], h uint64, fw *[mf.FlowWords]uint64) *atomic.Pointer[bucket[T]] {
	slot, _ := st.probe(t, h, fw)
	return slot
}

// probe finds the bucket of value fw in t by linear probing from h and
// returns its slot and the bucket the slot held when read (a reader
// must use that one: the writer may replace it after).
func (st *subtable[T]) probe(t *bucketTable[T], h uint64, fw *[mf.FlowWords]uint64) (*atomic.Pointer[bucket[T]], *bucket[T]) {
	n := uint64(len(t.slots))
	for i, probes := h&(n-1), uint64(0); probes < n; i, probes = (i+1)&(n-1), probes+1 {
		b := t.slots[i].Load()
		if b == nil {
			return nil, nil
		}
		if b.hash == h && st.equal(b, fw) {
			return &t.slots[i], b
		}
	}
	return nil, nil
}

// rebuild publishes a table sized for the live buckets. Writer.
func (st *subtable[T]) rebuild() *bucketTable[T] {
	old := st.table.Load()
	live := 0
	for i := range old.slots {
		if b := old.slots[i].Load(); b != nil && b.hash != tombstoneHash {
			live++
		}
	}
	size := minSlots
	for size*3 < (live+1)*4*2 {
		size *= 2
	}
	nt := &bucketTable[T]{slots: make([]atomic.Pointer[bucket[T]], size)}
	mask := uint64(size - 1)
	for i := range old.slots {
		b := old.slots[i].Load()
		if b == nil || b.hash == tombstoneHash {
			continue
		}
		j := b.hash & mask
		for nt.slots[j].Load() != nil {
			j = (j + 1) & mask
		}
		nt.slots[j].Store(b)
		nt.used++
	}
	st.table.Store(nt)
	return nt
}

// remove takes r out. Writer.
func (st *subtable[T]) remove(r *Rule[T]) {
	var stageHashes [numStages]uint64
	h := st.hashes(r.Match.Flow.Words(), stageHashes[:len(st.indices)])
	t := st.table.Load()
	slot := st.slotOf(t, h, r.Match.Flow.Words())
	if slot == nil {
		return
	}
	old := slot.Load()
	i := slices.Index(old.rules, r)
	if i < 0 {
		return
	}
	if len(old.rules) == 1 {
		slot.Store(&bucket[T]{hash: tombstoneHash})
	} else {
		slot.Store(&bucket[T]{hash: h, rules: slices.Delete(slices.Clone(old.rules), i, i+1)})
	}
	for i := range st.indices {
		if st.indexCount[i][stageHashes[i]]--; st.indexCount[i][stageHashes[i]] == 0 {
			delete(st.indexCount[i], stageHashes[i])
			removeHash(&st.indices[i], stageHashes[i], len(st.indexCount[i]))
		}
	}
	r.sub = nil
	st.n--
	st.notePriority(r.Priority, -1)
	if st.portsTrie != nil {
		st.portsTrie.remove(st.maskedPorts(&r.Match.Flow), st.portsPlen)
	}
	if len(t.slots) > minSlots && st.n*8 < len(t.slots) {
		st.rebuild()
	}
}

// nextVisible returns the next rule after r in r's bucket visible in v.
func (st *subtable[T]) nextVisible(r *Rule[T], v Version) *Rule[T] {
	b := st.bucketFor(st.hashes(r.Match.Flow.Words(), nil), r.Match.Flow.Words())
	if b == nil {
		return nil
	}
	i := slices.Index(b.rules, r)
	if i < 0 {
		return nil
	}
	for _, n := range b.rules[i+1:] {
		if n.VisibleIn(v) {
			return n
		}
	}
	return nil
}

// forEach calls fn for every rule of the subtable; fn returning false
// stops it. Writer.
func (st *subtable[T]) forEach(fn func(*Rule[T]) bool) bool {
	t := st.table.Load()
	for i := range t.slots {
		b := t.slots[i].Load()
		if b == nil {
			continue
		}
		for _, r := range b.rules {
			if !fn(r) {
				return false
			}
		}
	}
	return true
}

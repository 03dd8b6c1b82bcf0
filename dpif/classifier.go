package dpif

import (
	"math/bits"
	"sync/atomic"
	"unsafe"

	"gvs/packet"
)

// classifier is the megaflow table: tuple space search, one hash table
// (subtable) per distinct mask, as in Open vSwitch's dpcls.
//
// One writer at a time (the datapath's flowMu) changes it; PMDs read it
// without locks:
//   - the subtable list is an immutable slice behind an atomic pointer,
//     replaced whole (copy on write) when a mask appears or disappears;
//   - a subtable's hash table is an open-addressing array of atomic
//     pointers: the writer stores a new flow into an empty slot with one
//     atomic store, and deletes by marking the flow dead, which leaves it
//     in place as a tombstone; readers skip dead flows;
//   - when tombstones and flows fill three quarters of a table, the writer
//     builds a new one and publishes it with one atomic store; a reader
//     still probing the old one sees a consistent, if stale, table.
//
// Subtables are searched in the order their masks appeared, so when two
// installed megaflows overlap, the one whose mask is older wins; that
// makes overlap deterministic. (The translation layer never installs
// overlapping megaflows.)
type classifier struct {
	seed    uint64
	subs    atomic.Pointer[[]*subtable]
	byMask  map[packet.Mask]*subtable // writer only
	nextSeq uint64                    // writer only
}

type subtable struct {
	mask  packet.Mask
	seq   uint64
	table atomic.Pointer[flowTable]
	live  int // flows not dead; writer only
	// The key words the mask covers and their mask bits: lookups mask,
	// hash and compare only these (a NORMAL megaflow covers 4 of 12).
	idx []uint8
	mw  []uint64
}

// keyWords is packet.Key's size in 64-bit words. Key is pointer-free,
// padding-free and 8-byte aligned (package packet checks this and hashes
// it the same way), so it can be read as words.
const keyWords = int(unsafe.Sizeof(packet.Key{}) / 8)

func words(k *packet.Key) *[keyWords]uint64 { return (*[keyWords]uint64)(unsafe.Pointer(k)) }

// Compile-time checks of what words relies on: whole words, 8-byte
// alignment. (No padding and no pointers: packet's key_test.go.)
var (
	_ [unsafe.Sizeof(packet.Key{}) % 8]struct{}  = [0]struct{}{}
	_ [unsafe.Alignof(packet.Key{}) - 8]struct{} = [0]struct{}{}
)

func newSubtable(m *packet.Mask, seq uint64) *subtable {
	st := &subtable{mask: *m, seq: seq}
	for i, w := range words((*packet.Key)(m)) {
		if w != 0 {
			st.idx = append(st.idx, uint8(i))
			st.mw = append(st.mw, w)
		}
	}
	st.table.Store(&flowTable{slots: make([]atomic.Pointer[flow], minTableSlots)})
	return st
}

// hash hashes k masked by the subtable's mask (k need not be masked).
func (st *subtable) hash(k *packet.Key, seed uint64) uint64 {
	const m1, m2 = 0xa0761d6478bd642f, 0xe7037ed1a0b428db
	kw := words(k)
	h := seed ^ m1
	for j, i := range st.idx {
		hi, lo := bits.Mul64(h^kw[i]&st.mw[j]^m1, uint64(i)^m2)
		h ^= hi ^ lo
	}
	hi, lo := bits.Mul64(h^m2, uint64(len(st.idx))^m1)
	return hi ^ lo
}

// matches reports whether k masked by the subtable's mask equals f's key
// (which is masked: the words outside idx are zero in both).
func (st *subtable) matches(f *flow, k *packet.Key) bool {
	kw, fw := words(k), words(&f.key)
	for j, i := range st.idx {
		if fw[i] != kw[i]&st.mw[j] {
			return false
		}
	}
	return true
}

type flowTable struct {
	slots []atomic.Pointer[flow]
	used  int // live flows plus tombstones; writer only
}

const minTableSlots = 16

func newClassifier(seed uint64) *classifier {
	c := &classifier{seed: seed, byMask: make(map[packet.Mask]*subtable)}
	c.subs.Store(new([]*subtable))
	return c
}

// lookup returns the flow matching k and how many subtables it probed to
// find it (the matching subtable's position, from 1; Open vSwitch's
// PMD_STAT_MASKED_LOOKUP counts the same), or nil and 0. Safe from any
// goroutine.
func (c *classifier) lookup(k *packet.Key) (*flow, int) {
	for i, st := range *c.subs.Load() {
		if f := st.find(k, st.hash(k, c.seed)); f != nil {
			return f, i + 1
		}
	}
	return nil, 0
}

// find returns the live flow matching k (masked or not) with hash h, or
// nil.
func (st *subtable) find(k *packet.Key, h uint64) *flow {
	t := st.table.Load()
	n := uint64(len(t.slots))
	for i, probes := h&(n-1), uint64(0); probes < n; i, probes = (i+1)&(n-1), probes+1 {
		f := t.slots[i].Load()
		if f == nil {
			return nil
		}
		if f.hash == h && st.matches(f, k) && !f.dead.Load() {
			return f
		}
	}
	return nil
}

// numSubtables is for statistics; safe from any goroutine.
func (c *classifier) numSubtables() int { return len(*c.subs.Load()) }

// get returns the live flow with exactly this mask and masked key. Writer.
func (c *classifier) get(mk *packet.Key, m *packet.Mask) *flow {
	st := c.byMask[*m]
	if st == nil {
		return nil
	}
	return st.find(mk, st.hash(mk, c.seed))
}

// insert links f (its key already masked) under mask m. The caller has
// checked that no live flow has the same mask and key. Writer.
func (c *classifier) insert(f *flow, m *packet.Mask) {
	st := c.byMask[*m]
	if st == nil {
		st = newSubtable(m, c.nextSeq)
		c.nextSeq++
		c.byMask[*m] = st
		old := *c.subs.Load()
		subs := make([]*subtable, len(old), len(old)+1)
		copy(subs, old)
		subs = append(subs, st)
		c.subs.Store(&subs)
	}
	f.sub = st
	f.hash = st.hash(&f.key, c.seed)
	t := st.table.Load()
	if (t.used+1)*4 > len(t.slots)*3 {
		t = st.rebuild(st.live + 1)
	}
	n := uint64(len(t.slots))
	for i := f.hash & (n - 1); ; i = (i + 1) & (n - 1) {
		old := t.slots[i].Load()
		if old == nil {
			t.used++
			t.slots[i].Store(f)
			break
		}
		if old.dead.Load() {
			// Reuse a tombstone: used stays, it already counted it.
			t.slots[i].Store(f)
			break
		}
	}
	st.live++
}

// rebuild publishes a table sized for want live flows holding only the
// live flows of the current one. Writer.
func (st *subtable) rebuild(want int) *flowTable {
	size := minTableSlots
	for size*3 < want*4*2 { // at most 3/8 full after a rebuild
		size *= 2
	}
	nt := &flowTable{slots: make([]atomic.Pointer[flow], size)}
	old := st.table.Load()
	mask := uint64(size - 1)
	for i := range old.slots {
		f := old.slots[i].Load()
		if f == nil || f.dead.Load() {
			continue
		}
		j := f.hash & mask
		for nt.slots[j].Load() != nil {
			j = (j + 1) & mask
		}
		nt.slots[j].Store(f)
		nt.used++
	}
	st.table.Store(nt)
	return nt
}

// remove marks f dead (a tombstone from now on) and drops its subtable
// once empty. Writer.
func (c *classifier) remove(f *flow) {
	if f.dead.Swap(true) {
		return
	}
	st := f.sub
	st.live--
	if st.live > 0 {
		t := st.table.Load()
		if len(t.slots) > minTableSlots && st.live*8 < len(t.slots) {
			st.rebuild(st.live)
		}
		return
	}
	delete(c.byMask, st.mask)
	old := *c.subs.Load()
	subs := make([]*subtable, 0, len(old))
	for _, s := range old {
		if s != st {
			subs = append(subs, s)
		}
	}
	c.subs.Store(&subs)
}

// forEach calls fn for every live flow, subtable by subtable. Writer.
func (c *classifier) forEach(fn func(*flow)) {
	for _, st := range *c.subs.Load() {
		t := st.table.Load()
		for i := range t.slots {
			if f := t.slots[i].Load(); f != nil && !f.dead.Load() {
				fn(f)
			}
		}
	}
}

package dpif

import "gvs/packet"

// DefaultEMCEntries is the size of each PMD's exact-match cache, as in
// Open vSwitch (EM_FLOW_HASH_ENTRIES).
const DefaultEMCEntries = 8192

// emc is a PMD's exact-match cache: full packet key -> megaflow. It
// belongs to its PMD goroutine alone, so it has no locks. Each key has two
// candidate slots (from the low and high halves of its hash); an insert
// takes an empty or stale slot, else the first one.
//
// A cached flow may be deleted by the writer at any time: lookup checks
// the flow's dead flag, so a deleted flow is never used (its slot is then
// stale and is overwritten by the next insert).
type emc struct {
	entries []emcEntry
	mask    uint64
	// insertInvProb: insert one megaflow hit in this many (1 = always);
	// Open vSwitch's emc-insert-inv-prob. rnd is a xorshift state.
	insertInvProb uint32
	rnd           uint32
}

type emcEntry struct {
	hash uint64
	flow *flow
	key  packet.Key
}

func newEMC(entries int, insertInvProb uint32) *emc {
	size := 1
	for size < entries {
		size <<= 1
	}
	return &emc{entries: make([]emcEntry, size), mask: uint64(size - 1), insertInvProb: insertInvProb, rnd: 0x9e3779b9}
}

func (c *emc) lookup(k *packet.Key, h uint64) *flow {
	if c == nil {
		return nil
	}
	for _, i := range [2]uint64{h & c.mask, (h >> 32) & c.mask} {
		e := &c.entries[i]
		if e.hash == h && e.flow != nil && e.key == *k && !e.flow.dead.Load() {
			return e.flow
		}
	}
	return nil
}

func (c *emc) insert(k *packet.Key, h uint64, f *flow) {
	if c == nil {
		return
	}
	if c.insertInvProb > 1 {
		c.rnd ^= c.rnd << 13
		c.rnd ^= c.rnd >> 17
		c.rnd ^= c.rnd << 5
		if c.rnd%c.insertInvProb != 0 {
			return
		}
	}
	i0, i1 := h&c.mask, (h>>32)&c.mask
	e := &c.entries[i0]
	if alt := &c.entries[i1]; e.flow != nil && !e.flow.dead.Load() && (alt.flow == nil || alt.flow.dead.Load() || alt.hash == h) {
		e = alt
	}
	e.hash, e.flow, e.key = h, f, *k
}

// clear forgets every entry (after a flush, so dead flows can be freed).
func (c *emc) clear() {
	if c != nil {
		clear(c.entries)
	}
}

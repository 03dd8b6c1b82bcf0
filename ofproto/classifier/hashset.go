package classifier

import "sync/atomic"

// hashSet is a set of stage hashes read without locks: an open-addressing
// array of atomic words, filled in place by the writer with single atomic
// stores (emptyHash: free; tombstoneHash: removed, probe on), and replaced
// whole when it must grow or shrink.
type hashSet struct {
	slots []atomic.Uint64
	used  int // occupied slots, tombstones included; writer only
}

func newHashSet(size int) *hashSet {
	return &hashSet{slots: make([]atomic.Uint64, size)}
}

// contains reports whether h is in the set. Safe from any goroutine.
func (s *hashSet) contains(h uint64) bool {
	n := uint64(len(s.slots))
	for i, probes := h&(n-1), uint64(0); probes < n; i, probes = (i+1)&(n-1), probes+1 {
		switch s.slots[i].Load() {
		case h:
			return true
		case emptyHash:
			return false
		}
	}
	return false
}

// addHash inserts h, which the set does not hold. Writer.
func addHash(p *atomic.Pointer[hashSet], h uint64) {
	s := p.Load()
	if (s.used+1)*4 > len(s.slots)*3 {
		s = s.resized(s.live() + 1)
		p.Store(s)
	}
	n := uint64(len(s.slots))
	for i := h & (n - 1); ; i = (i + 1) & (n - 1) {
		switch s.slots[i].Load() {
		case emptyHash:
			s.used++
			s.slots[i].Store(h)
			return
		case tombstoneHash:
			s.slots[i].Store(h)
			return
		}
	}
}

// removeHash removes h, leaving live hashes; it shrinks the set when
// mostly empty. Writer.
func removeHash(p *atomic.Pointer[hashSet], h uint64, live int) {
	s := p.Load()
	n := uint64(len(s.slots))
	for i, probes := h&(n-1), uint64(0); probes < n; i, probes = (i+1)&(n-1), probes+1 {
		switch s.slots[i].Load() {
		case h:
			s.slots[i].Store(tombstoneHash)
			if len(s.slots) > minSlots && live*8 < len(s.slots) {
				p.Store(s.resized(live))
			}
			return
		case emptyHash:
			return
		}
	}
}

func (s *hashSet) live() int {
	n := 0
	for i := range s.slots {
		if v := s.slots[i].Load(); v > tombstoneHash {
			n++
		}
	}
	return n
}

// resized returns a new set with s's hashes, sized for want.
func (s *hashSet) resized(want int) *hashSet {
	size := minSlots
	for size*3 < want*4*2 {
		size *= 2
	}
	ns := newHashSet(size)
	mask := uint64(size - 1)
	for i := range s.slots {
		v := s.slots[i].Load()
		if v <= tombstoneHash {
			continue
		}
		j := v & mask
		for ns.slots[j].Load() != emptyHash {
			j = (j + 1) & mask
		}
		ns.slots[j].Store(v)
		ns.used++
	}
	return ns
}

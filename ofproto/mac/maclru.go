package mac

// An entry sits on two least-recently-used lists at once: the table's
// (aging walks it, fdb/show lists it) and its port's (fair eviction takes
// the head of the fullest port's). Intrusive links keep both O(1) and
// allocation-free.
const (
	tableLinks = iota
	portLinks
)

type macLinks struct{ prev, next *macEntry }

// macList is a list of entries threaded through links[which], least
// recently used at the head.
type macList struct {
	head, tail *macEntry
	which      uint8
}

func (l *macList) pushBack(e *macEntry) {
	lk := &e.links[l.which]
	lk.prev, lk.next = l.tail, nil
	if l.tail != nil {
		l.tail.links[l.which].next = e
	} else {
		l.head = e
	}
	l.tail = e
}

func (l *macList) remove(e *macEntry) {
	lk := &e.links[l.which]
	if lk.prev != nil {
		lk.prev.links[l.which].next = lk.next
	} else {
		l.head = lk.next
	}
	if lk.next != nil {
		lk.next.links[l.which].prev = lk.prev
	} else {
		l.tail = lk.prev
	}
	lk.prev, lk.next = nil, nil
}

// macPort is the share of the table one port holds. It exists while the
// port holds at least one entry, like Open vSwitch's mac_learning_port.
type macPort struct {
	no      uint32
	count   int
	entries macList // this port's entries, least recently used first
	slot    int     // index in the table's portHeap
}

// portHeap orders the ports holding entries by eviction priority: the
// port with the most entries first, as Open vSwitch's ports_by_usage
// heap does. Open vSwitch leaves ties to the heap's layout; here the
// lower port number goes first, so eviction is deterministic. The key is
// the count alone (no timestamps), so refreshing an entry, the common
// upcall, never re-sifts the heap.
type portHeap []*macPort

func (h portHeap) evictsBefore(i, j int) bool {
	a, b := h[i], h[j]
	if a.count != b.count {
		return a.count > b.count
	}
	return a.no < b.no
}

func (h portHeap) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].slot, h[j].slot = i, j
}

// up moves slot i towards the root while it beats its parent; it reports
// whether it moved.
func (h portHeap) up(i int) bool {
	start := i
	for i > 0 {
		parent := (i - 1) / 2
		if !h.evictsBefore(i, parent) {
			break
		}
		h.swap(i, parent)
		i = parent
	}
	return i != start
}

func (h portHeap) down(i int) {
	for {
		best, l := i, 2*i+1
		if l < len(h) && h.evictsBefore(l, best) {
			best = l
		}
		if r := l + 1; r < len(h) && h.evictsBefore(r, best) {
			best = r
		}
		if best == i {
			return
		}
		h.swap(i, best)
		i = best
	}
}

func (h *portHeap) push(p *macPort) {
	p.slot = len(*h)
	*h = append(*h, p)
	h.up(p.slot)
}

func (h *portHeap) remove(p *macPort) {
	i, last := p.slot, len(*h)-1
	if i != last {
		h.swap(i, last)
	}
	(*h)[last] = nil
	*h = (*h)[:last]
	if i < last {
		h.fix(i)
	}
	p.slot = -1
}

// fix restores the order after the count of slot i changed.
func (h portHeap) fix(i int) {
	if !h.up(i) {
		h.down(i)
	}
}

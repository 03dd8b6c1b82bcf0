package tnlroute

import (
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
)

// Route priorities over the prefix length (IPv4 counted from 96), as
// Open vSwitch's ovs-router gives them: a user route beats a kernel route
// 32 bits longer; a local route one 64 bits longer.
const (
	userPriorityBoost  = 32
	localPriorityBoost = 64
)

// Entry is one route as ovs/route/show lists it.
type Entry struct {
	Dst      [16]byte // network, masked; v4-mapped for IPv4
	Plen     uint8    // 0..128, IPv4's counted from 96
	Mark     uint32   // pkt_mark the route is for
	Priority uint8
	Local    bool // a kernel RTN_LOCAL route
	Dev      string
	GW       [16]byte // zero for none
	Src      [16]byte
}

// User reports whether the entry came from ovs/route/add (the kernel's
// have their prefix length as priority, or are local).
func (e *Entry) User() bool { return !(e.Priority == e.Plen || e.Local) }

// Result is what a lookup finds: the output device (a bridge for native
// tunnelling), the gateway (zero Addr for a directly connected
// destination) and the source address.
type Result struct {
	Dev     string
	Gateway netip.Addr
	Src     netip.Addr
}

// AddrSource lists a device's addresses with their prefix lengths (IPv4
// ones as IPv4), in the order the system gives them: Open vSwitch's
// netdev_get_addr_list.
type AddrSource interface {
	Addrs(dev string) ([]netip.Prefix, error)
}

// ruleKey identifies an entry: Open vSwitch replaces an entry with the
// same match and priority.
type ruleKey struct {
	dst      [16]byte
	plen     uint8
	mark     uint32
	priority uint8
}

type matchKey struct {
	dst  [16]byte
	mark uint32
}

// subtable holds the entries of one prefix length: the classifier's
// subtable for that mask.
type subtable struct {
	mask        [16]byte
	plen        uint8
	maxPriority uint8
	rules       map[matchKey]*Entry // the highest-priority entry of each match
}

// snapshot is an immutable view of the table.
type snapshot struct {
	subtables []*subtable // by maxPriority, then plen, descending
	entries   []*Entry    // ovs/route/show's order
}

// Table is the route table. The zero value is not usable; use NewTable.
type Table struct {
	addrs AddrSource
	// useSystem: kernel routes are kept (ovs-vswitchd without
	// --disable-system-route).
	useSystem bool

	snap atomic.Pointer[snapshot]
	seq  atomic.Uint64

	mu    sync.Mutex // writers; a leaf
	rules map[ruleKey]*Entry
}

// NewTable returns an empty table taking source addresses from addrs.
// useSystem false ignores kernel routes (--disable-system-route).
func NewTable(addrs AddrSource, useSystem bool) *Table {
	t := &Table{addrs: addrs, useSystem: useSystem, rules: map[ruleKey]*Entry{}}
	t.snap.Store(&snapshot{})
	return t
}

// UsesSystem reports whether the table takes the kernel's routes.
func (t *Table) UsesSystem() bool { return t.useSystem }

// Seq counts changes: tunnel port maps that depend on the routes' devices
// recompute when it moves (Open vSwitch's tnl_conf_seq).
func (t *Table) Seq() uint64 { return t.seq.Load() }

// Lookup finds the route to dst for packets with pkt_mark mark. With src
// valid (a tunnel's local_ip), the route to src must be a local one, else
// there is no route; the result's Src is then src. Lookup takes no lock
// and allocates nothing.
func (t *Table) Lookup(mark uint32, dst, src netip.Addr) (Result, bool) {
	s := t.snap.Load()
	if src.IsValid() && !src.IsUnspecified() {
		e := s.lookup(mark, src.As16())
		if e == nil || !e.Local {
			return Result{}, false
		}
	}
	e := s.lookup(mark, dst.As16())
	if e == nil {
		return Result{}, false
	}
	r := Result{Dev: e.Dev, Gateway: From16(e.GW), Src: From16(e.Src)}
	if src.IsValid() && !src.IsUnspecified() {
		r.Src = src
	}
	return r, true
}

// lookup is the classifier's: the highest-priority matching entry,
// visiting subtables while they may hold a higher priority than the best
// so far.
func (s *snapshot) lookup(mark uint32, dst [16]byte) *Entry {
	var best *Entry
	for _, st := range s.subtables {
		if best != nil && st.maxPriority <= best.Priority {
			break
		}
		if e, ok := st.rules[matchKey{and16(&dst, &st.mask), mark}]; ok {
			if best == nil || e.Priority > best.Priority {
				best = e
			}
		}
	}
	return best
}

// Entries returns the table's entries in ovs/route/show's order: by
// their prefix length's highest priority, then prefix length, address,
// mark and priority.
func (t *Table) Entries() []Entry {
	s := t.snap.Load()
	out := make([]Entry, len(s.entries))
	for i, e := range s.entries {
		out[i] = *e
	}
	return out
}

// sourceAddr picks a route's source address as Open vSwitch's
// ovs_router_get_netdev_source_address does: among dev's addresses (only
// IPv4 ones for an IPv4 destination), the one whose network, by its own
// mask, holds dst, with the longest mask (the first of equals).
func sourceAddr(addrs AddrSource, dst [16]byte, dev string) ([16]byte, bool) {
	list, err := addrs.Addrs(dev)
	if err != nil {
		return [16]byte{}, false
	}
	v4 := isMapped(&dst)
	var best [16]byte
	bestBits := -1
	for _, p := range list {
		a := p.Addr().As16()
		var mask [16]byte
		bits := p.Bits()
		if p.Addr().Is4() {
			// netdev_get_addr_list maps the netmask like the address:
			// ::ffff:MASK.
			m32 := prefixMask32(bits)
			mask = mapped4([4]byte{byte(m32 >> 24), byte(m32 >> 16), byte(m32 >> 8), byte(m32)})
			bits += 16
		} else {
			if v4 {
				continue
			}
			mask = prefixMask(uint8(bits))
		}
		if and16(&dst, &mask) == and16(&a, &mask) && bits > bestBits {
			best, bestBits = a, bits
		}
	}
	return best, bestBits >= 0
}

// newEntry builds an entry with its source address; false when the device
// has no address for it (Open vSwitch then installs nothing).
func newEntry(addrs AddrSource, mark uint32, dst [16]byte, plen uint8, local bool, priority uint8, dev string, gw [16]byte) (*Entry, bool) {
	if plen > 128 {
		return nil, false
	}
	mask := prefixMask(plen)
	e := &Entry{Dst: and16(&dst, &mask), Plen: plen, Mark: mark, Priority: priority, Local: local, Dev: truncName(dev), GW: gw}
	src, ok := sourceAddr(addrs, dst, dev)
	if !ok && !isZero(&gw) {
		src, ok = sourceAddr(addrs, gw, dev)
	}
	if !ok {
		return nil, false
	}
	e.Src = src
	return e, true
}

// AddUser adds or replaces a user route (ovs/route/add).
func (t *Table) AddUser(r RouteSpec) error {
	e, ok := newEntry(t.addrs, r.Mark, r.Dst, r.Plen, false, r.Plen+userPriorityBoost, r.Dev, r.GW)
	if !ok {
		return ErrInsert
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rules[e.key()] = e
	t.publishLocked()
	return nil
}

// DelUser deletes a user route (ovs/route/del); ErrNotFound when there
// is none with that prefix and mark.
func (t *Table) DelUser(r RouteSpec) error {
	mask := prefixMask(r.Plen)
	k := ruleKey{dst: and16(&r.Dst, &mask), plen: r.Plen, mark: r.Mark, priority: r.Plen + userPriorityBoost}
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.rules[k]; !ok {
		return ErrNotFound
	}
	delete(t.rules, k)
	t.publishLocked()
	return nil
}

// KernelRoute is a route as the kernel reports it.
type KernelRoute struct {
	Dst   [16]byte // v4-mapped for IPv4
	Plen  uint8    // IPv4's counted from 96
	Local bool     // RTN_LOCAL
	Dev   string
	GW    [16]byte
	Mark  uint32
}

// ReplaceSystem replaces every kernel-learned entry with routes (Open
// vSwitch's route_table_reset: flush the cached entries, insert each
// route whose device has a source address), in one step: lookups never
// see the table empty. Ignored (the table keeps no kernel routes) when
// the table does not use the system's.
func (t *Table) ReplaceSystem(routes []KernelRoute) {
	if !t.useSystem {
		return
	}
	fresh := make([]*Entry, 0, len(routes))
	// Each device's addresses are read once per reset, as Open vSwitch
	// reads them once (getifaddrs) until the next.
	addrs := &memoAddrs{src: t.addrs, seen: map[string]memoResult{}}
	for _, r := range routes {
		prio := r.Plen
		if r.Local {
			prio += localPriorityBoost
		}
		if e, ok := newEntry(addrs, r.Mark, r.Dst, r.Plen, r.Local, prio, r.Dev, r.GW); ok {
			fresh = append(fresh, e)
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, e := range t.rules {
		if !e.User() {
			delete(t.rules, k)
		}
	}
	for _, e := range fresh {
		t.rules[e.key()] = e
	}
	t.publishLocked()
}

// FlushSystem removes the kernel-learned entries (Open vSwitch's
// ovs_router_flush, done when it exits).
func (t *Table) FlushSystem() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, e := range t.rules {
		if !e.User() {
			delete(t.rules, k)
		}
	}
	t.publishLocked()
}

func (e *Entry) key() ruleKey {
	return ruleKey{dst: e.Dst, plen: e.Plen, mark: e.Mark, priority: e.Priority}
}

// publishLocked builds and publishes a snapshot of t.rules.
func (t *Table) publishLocked() {
	byPlen := map[uint8]*subtable{}
	s := &snapshot{entries: make([]*Entry, 0, len(t.rules))}
	for _, e := range t.rules {
		s.entries = append(s.entries, e)
		st := byPlen[e.Plen]
		if st == nil {
			st = &subtable{mask: prefixMask(e.Plen), plen: e.Plen, rules: map[matchKey]*Entry{}}
			byPlen[e.Plen] = st
			s.subtables = append(s.subtables, st)
		}
		st.maxPriority = max(st.maxPriority, e.Priority)
		k := matchKey{e.Dst, e.Mark}
		if old, ok := st.rules[k]; !ok || e.Priority > old.Priority {
			st.rules[k] = e
		}
	}
	// Equal priorities in different subtables: Open vSwitch's order is
	// unspecified there; the longer prefix goes first.
	slices.SortFunc(s.subtables, func(a, b *subtable) int {
		if a.maxPriority != b.maxPriority {
			return int(b.maxPriority) - int(a.maxPriority)
		}
		return int(b.plen) - int(a.plen)
	})
	// Open vSwitch lists subtable by subtable (by maximum priority), each
	// subtable's matches in hash order, and a match's entries by
	// priority; the hash order becomes prefix, address and mark here.
	slices.SortFunc(s.entries, func(a, b *Entry) int {
		if pa, pb := byPlen[a.Plen].maxPriority, byPlen[b.Plen].maxPriority; pa != pb {
			return int(pb) - int(pa)
		}
		return compareEntries(a, b)
	})
	t.snap.Store(s)
	t.seq.Add(1)
}

func compareEntries(a, b *Entry) int {
	if a.Plen != b.Plen {
		return int(b.Plen) - int(a.Plen)
	}
	if c := slices.Compare(a.Dst[:], b.Dst[:]); c != 0 {
		return c
	}
	switch {
	case a.Mark < b.Mark:
		return -1
	case a.Mark > b.Mark:
		return 1
	}
	return int(b.Priority) - int(a.Priority)
}

// memoAddrs remembers each device's answer.
type memoAddrs struct {
	src  AddrSource
	seen map[string]memoResult
}

type memoResult struct {
	list []netip.Prefix
	err  error
}

func (m *memoAddrs) Addrs(dev string) ([]netip.Prefix, error) {
	if r, ok := m.seen[dev]; ok {
		return r.list, r.err
	}
	list, err := m.src.Addrs(dev)
	m.seen[dev] = memoResult{list, err}
	return list, err
}

package mac

import (
	"net"
	"time"
)

// Defaults of Open vSwitch's other_config:mac-table-size and
// mac-aging-time.
const (
	DefaultTableSize = 8192
	DefaultAgingTime = 300 * time.Second
	minTableSize     = 1
	MaxTableSize     = 1 << 20
)

// Entry is one learned address, as ovs-appctl fdb/show lists it.
type Entry struct {
	Port uint32
	VLAN uint16
	MAC  net.HardwareAddr
	Age  time.Duration
}

// Stats are a MAC table's counters, as fdb/stats-show reports them.
type Stats struct {
	Entries, Max                     int
	Learned, Expired, Evicted, Moved uint64
}

type macKey struct {
	vlan uint16
	mac  [6]byte
}

type macEntry struct {
	macKey
	port    *macPort
	updated time.Time
	links   [2]macLinks // tableLinks and portLinks
}

// newer returns the next entry in the table's LRU order, or nil.
func (e *macEntry) newer() *macEntry { return e.links[tableLinks].next }

// macTable is the learning table of one bridge. Not safe for concurrent
// use: the bridge's mutex guards it.
//
// When full it evicts fairly, as Open vSwitch does: the least recently
// used entry of the port holding the most entries, so that a flood of
// source addresses on one port displaces that port's own entries and
// not the established hosts of the others. Refreshing an entry is O(1);
// adding, moving or removing one re-sifts the port heap, O(log ports).
type macTable struct {
	entries map[macKey]*macEntry
	lru     macList // every entry, least recently used first
	ports   map[uint32]*macPort
	byUsage portHeap
	max     int
	aging   time.Duration
	stats   Stats
}

func newMACTable(max int, aging time.Duration) *macTable {
	return &macTable{
		entries: make(map[macKey]*macEntry),
		lru:     macList{which: tableLinks},
		ports:   make(map[uint32]*macPort),
		max:     max,
		aging:   aging,
	}
}

// learnResult says what Learn changed.
type learnResult uint8

const (
	learnRefreshed learnResult = iota // known on this port; timestamp updated
	learnNew                          // a new entry
	learnMoved                        // known on another port; moved
)

// learnOutcome is what learn changed: the result, the port a moved entry
// left, and the address a new entry evicted (if didEvict).
type learnOutcome struct {
	res      learnResult
	oldPort  uint32
	evicted  macKey
	didEvict bool
}

// learn records that mac in vlan is on port. When the table is full a
// new entry evicts fairly (see macTable) and reuses the evicted entry's
// memory, so learning into a full table does not allocate.
func (t *macTable) learn(vlan uint16, mac [6]byte, port uint32, now time.Time) learnOutcome {
	k := macKey{vlan, mac}
	if e := t.entries[k]; e != nil {
		if e.port.no == port {
			t.touch(e, now)
			return learnOutcome{res: learnRefreshed, oldPort: port}
		}
		old := e.port.no
		t.lru.remove(e)
		t.detach(e)
		e.updated = now
		t.lru.pushBack(e)
		t.attach(e, port)
		t.stats.Moved++
		return learnOutcome{res: learnMoved, oldPort: old}
	}
	out := learnOutcome{res: learnNew}
	var e *macEntry
	if len(t.entries) >= t.max && t.lru.head != nil {
		e = t.evictFairly()
		out.evicted, out.didEvict = e.macKey, true
		*e = macEntry{}
	} else {
		e = new(macEntry)
	}
	e.macKey, e.updated = k, now
	t.entries[k] = e
	t.lru.pushBack(e)
	t.attach(e, port)
	t.stats.Learned++
	return out
}

// evictFairly removes and returns the least recently used entry of the
// port with the most entries (ties: the lower port number), counting an
// eviction.
// The table must not be empty.
func (t *macTable) evictFairly() *macEntry {
	e := t.byUsage[0].entries.head
	t.remove(e)
	t.stats.Evicted++
	return e
}

// shrink evicts fairly until the table fits its maximum.
func (t *macTable) shrink() {
	for len(t.entries) > t.max {
		t.evictFairly()
	}
}

func (t *macTable) lookup(vlan uint16, mac [6]byte) (uint32, bool) {
	if e := t.entries[macKey{vlan, mac}]; e != nil {
		return e.port.no, true
	}
	return 0, false
}

// oldest returns the least recently updated entry, or nil.
func (t *macTable) oldest() *macEntry { return t.lru.head }

// touch moves e to the young end of both its lists with timestamp when.
func (t *macTable) touch(e *macEntry, when time.Time) {
	p := e.port
	e.updated = when
	if t.lru.tail != e { // a host seen again and again is already there
		t.lru.remove(e)
		t.lru.pushBack(e)
	}
	if p.entries.tail != e {
		p.entries.remove(e)
		p.entries.pushBack(e)
	}
}

// remove deletes e (expiry, eviction, flush).
func (t *macTable) remove(e *macEntry) {
	t.lru.remove(e)
	t.detach(e)
	delete(t.entries, e.macKey)
}

// removePort deletes every entry on port no, in O(its entries).
func (t *macTable) removePort(no uint32) {
	if p := t.ports[no]; p != nil {
		for p.count > 0 {
			t.remove(p.entries.head)
		}
	}
}

// attach puts e, already timestamped, at the young end of port's list.
func (t *macTable) attach(e *macEntry, port uint32) {
	p := t.ports[port]
	if p == nil {
		p = &macPort{no: port, entries: macList{which: portLinks}}
		t.ports[port] = p
	}
	p.entries.pushBack(e)
	p.count++
	e.port = p
	if p.count == 1 {
		t.byUsage.push(p)
	} else {
		t.byUsage.fix(p.slot)
	}
}

// detach takes e off its port's list; a port left empty is forgotten.
func (t *macTable) detach(e *macEntry) {
	p := e.port
	p.entries.remove(e)
	p.count--
	e.port = nil
	if p.count == 0 {
		t.byUsage.remove(p)
		delete(t.ports, p.no)
	} else {
		t.byUsage.fix(p.slot)
	}
}

// list returns the entries oldest first.
func (t *macTable) list(now time.Time) []Entry {
	out := make([]Entry, 0, len(t.entries))
	for e := t.lru.head; e != nil; e = e.newer() {
		out = append(out, Entry{Port: e.port.no, VLAN: e.vlan, MAC: append(net.HardwareAddr(nil), e.mac[:]...), Age: now.Sub(e.updated)})
	}
	return out
}

func (t *macTable) snapshot() Stats {
	s := t.stats
	s.Entries, s.Max = len(t.entries), t.max
	return s
}

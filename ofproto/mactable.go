package ofproto

import (
	"net"
	"time"
)

// Defaults of Open vSwitch's other_config:mac-table-size and
// mac-aging-time.
const (
	DefaultMACTableSize = 8192
	DefaultMACAgingTime = 300 * time.Second
	minMACTableSize     = 1
	macTableSizeMaximum = 1 << 20
)

// MACEntry is one learned address, as ovs-appctl fdb/show lists it.
type MACEntry struct {
	Port uint32
	VLAN uint16
	MAC  net.HardwareAddr
	Age  time.Duration
}

// MACStats are a MAC table's counters, as fdb/stats-show reports them.
type MACStats struct {
	Entries, Max                     int
	Learned, Expired, Evicted, Moved uint64
}

type macKey struct {
	vlan uint16
	mac  [6]byte
}

type macEntry struct {
	macKey
	port       uint32
	updated    time.Time
	prev, next *macEntry // LRU list by update time, oldest at head
}

// macTable is the learning table of one bridge. Not safe for concurrent
// use: the bridge's mutex guards it.
type macTable struct {
	entries    map[macKey]*macEntry
	head, tail *macEntry
	max        int
	aging      time.Duration
	stats      MACStats
}

func newMACTable(max int, aging time.Duration) *macTable {
	return &macTable{entries: make(map[macKey]*macEntry), max: max, aging: aging}
}

// learnResult says what Learn changed.
type learnResult uint8

const (
	learnRefreshed learnResult = iota // known on this port; timestamp updated
	learnNew                          // a new entry
	learnMoved                        // known on another port; moved
)

// learn records that mac in vlan is on port. When the table is full a
// new entry evicts the oldest, which learn returns.
func (t *macTable) learn(vlan uint16, mac [6]byte, port uint32, now time.Time) (res learnResult, oldPort uint32, evicted *macEntry) {
	k := macKey{vlan, mac}
	if e := t.entries[k]; e != nil {
		t.unlink(e)
		e.updated = now
		t.append(e)
		if e.port == port {
			return learnRefreshed, port, nil
		}
		oldPort, e.port = e.port, port
		t.stats.Moved++
		return learnMoved, oldPort, nil
	}
	if len(t.entries) >= t.max && t.head != nil {
		evicted = t.head
		t.remove(evicted)
		t.stats.Evicted++
	}
	e := &macEntry{macKey: k, port: port, updated: now}
	t.entries[k] = e
	t.append(e)
	t.stats.Learned++
	return learnNew, 0, evicted
}

func (t *macTable) lookup(vlan uint16, mac [6]byte) (uint32, bool) {
	if e := t.entries[macKey{vlan, mac}]; e != nil {
		return e.port, true
	}
	return 0, false
}

// oldest returns the least recently updated entry, or nil.
func (t *macTable) oldest() *macEntry { return t.head }

// touch moves e to the young end with timestamp when.
func (t *macTable) touch(e *macEntry, when time.Time) {
	t.unlink(e)
	e.updated = when
	t.append(e)
}

// remove deletes e (expiry, eviction, flush).
func (t *macTable) remove(e *macEntry) {
	t.unlink(e)
	delete(t.entries, e.macKey)
}

func (t *macTable) append(e *macEntry) {
	e.prev, e.next = t.tail, nil
	if t.tail != nil {
		t.tail.next = e
	} else {
		t.head = e
	}
	t.tail = e
}

func (t *macTable) unlink(e *macEntry) {
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		t.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		t.tail = e.prev
	}
	e.prev, e.next = nil, nil
}

// list returns the entries oldest first.
func (t *macTable) list(now time.Time) []MACEntry {
	out := make([]MACEntry, 0, len(t.entries))
	for e := t.head; e != nil; e = e.next {
		out = append(out, MACEntry{Port: e.port, VLAN: e.vlan, MAC: append(net.HardwareAddr(nil), e.mac[:]...), Age: now.Sub(e.updated)})
	}
	return out
}

func (t *macTable) snapshot() MACStats {
	s := t.stats
	s.Entries, s.Max = len(t.entries), t.max
	return s
}

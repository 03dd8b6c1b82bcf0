package mac

import (
	"sync"
	"sync/atomic"
	"time"
)

// LearnResult says what Table.Learn changed.
type LearnResult uint8

const (
	// Refreshed: the address was known on this port; its age restarts.
	Refreshed LearnResult = iota
	// Learned: a new entry (perhaps evicting another).
	Learned
	// Moved: the address was known on another port and now is on this one.
	Moved
)

// Table is one bridge's MAC learning table, safe for concurrent use.
type Table struct {
	mu  sync.Mutex
	t   *macTable
	seq atomic.Uint64
}

// NewTable returns an empty table holding at most max entries (clamped to
// 1..MaxTableSize; 0 means DefaultTableSize) that expire after aging
// without traffic (0 means DefaultAgingTime).
func NewTable(size int, aging time.Duration) *Table {
	size, aging = clampLimits(size, aging)
	return &Table{t: newMACTable(size, aging)}
}

func clampLimits(size int, aging time.Duration) (int, time.Duration) {
	if size <= 0 {
		size = DefaultTableSize
	}
	size = min(max(size, minTableSize), MaxTableSize)
	if aging <= 0 {
		aging = DefaultAgingTime
	}
	return size, aging
}

// Seq changes whenever an entry is added, moved or removed: a flow
// translated when Seq had another value may forward wrongly now.
func (t *Table) Seq() uint64 { return t.seq.Load() }

func (t *Table) changed() { t.seq.Add(1) }

// Lookup returns the port mac is learned on in vlan.
func (t *Table) Lookup(vlan uint16, mac [6]byte) (port uint32, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.t.lookup(vlan, mac)
}

// Learn records that mac in vlan is on port, as of now. A full table
// evicts fairly.
func (t *Table) Learn(vlan uint16, mac [6]byte, port uint32, now time.Time) LearnResult {
	t.mu.Lock()
	out := t.t.learn(vlan, mac, port, now)
	t.mu.Unlock()
	if out.res != learnRefreshed || out.didEvict {
		t.changed()
	}
	switch out.res {
	case learnNew:
		return Learned
	case learnMoved:
		return Moved
	}
	return Refreshed
}

// Touch restarts the age of mac in vlan as of used if it is learned on
// port and was last seen before used; it learns nothing new.
func (t *Table) Touch(vlan uint16, mac [6]byte, port uint32, used time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.t.entries[macKey{vlan, mac}]; e != nil && e.port.no == port && e.updated.Before(used) {
		t.t.touch(e, used)
	}
}

// Refresh is learning from traffic that hit an installed flow (no
// upcall), as of used: the revalidator's credit, as Open vSwitch's xlate
// cache pushes NORMAL's statistics into its MAC table
// (xlate_mac_learning_update). An address still on port has its age
// restarted (if used is later than its last update); one learned
// elsewhere before used moves back to port; a forgotten one is learned
// again.
func (t *Table) Refresh(vlan uint16, mac [6]byte, port uint32, used time.Time) {
	t.mu.Lock()
	e := t.t.entries[macKey{vlan, mac}]
	if e != nil && e.port.no == port {
		if e.updated.Before(used) {
			t.t.touch(e, used)
		}
		t.mu.Unlock()
		return
	}
	if e != nil && !e.updated.Before(used) {
		// Learned elsewhere after this traffic: the move is newer.
		t.mu.Unlock()
		return
	}
	out := t.t.learn(vlan, mac, port, used)
	t.mu.Unlock()
	if out.res != learnRefreshed || out.didEvict {
		t.changed()
	}
}

// Expire removes the entries not seen for longer than the aging time as
// of now, and returns how many.
func (t *Table) Expire(now time.Time) int {
	t.mu.Lock()
	limit := now.Add(-t.t.aging)
	n := 0
	for e := t.t.oldest(); e != nil && e.updated.Before(limit); e = t.t.oldest() {
		t.t.remove(e)
		t.t.stats.Expired++
		n++
	}
	t.mu.Unlock()
	if n > 0 {
		t.changed()
	}
	return n
}

// FlushPort forgets every address learned on port (the port left the
// bridge or changed its VLAN configuration).
func (t *Table) FlushPort(port uint32) {
	t.mu.Lock()
	t.t.removePort(port)
	t.mu.Unlock()
	t.changed()
}

// Flush empties the table (fdb/flush). The learned/expired/evicted/moved
// totals carry on, as in Open vSwitch: they are counters that must never
// go back (flushed entries are not counted as expired).
func (t *Table) Flush() {
	t.mu.Lock()
	totals := t.t.stats
	t.t = newMACTable(t.t.max, t.t.aging)
	t.t.stats = totals
	t.mu.Unlock()
	t.changed()
}

// SetLimits changes mac-table-size and mac-aging-time; a smaller table
// evicts fairly now.
func (t *Table) SetLimits(size int, aging time.Duration) {
	size, aging = clampLimits(size, aging)
	t.mu.Lock()
	t.t.max, t.t.aging = size, aging
	t.t.shrink()
	t.mu.Unlock()
	t.changed()
}

// Entries lists the table, oldest first (fdb/show).
func (t *Table) Entries(now time.Time) []Entry {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.t.list(now)
}

// Stats returns the table's counters (fdb/stats-show).
func (t *Table) Stats() Stats {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.t.snapshot()
}

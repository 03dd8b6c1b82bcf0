// Package xlatetest is a fake xlate.Bridge (and upcall.Bridge) for tests:
// rule tables searched linearly, ports, groups, meters and a MAC table,
// all set up by the test. Lookups report as wildcards every bit of every
// rule they examined, which is correct (if wider than a classifier's) and
// independent of the real classifier.
package xlatetest

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"gvs/ofproto/mac"
	"gvs/ofproto/mf"
	"gvs/ofproto/xlate"
)

// Rule is a fake rule with counters.
type Rule struct {
	Table    uint8
	Prio     uint16
	CookieV  uint64
	M        mf.Match
	Acts     []xlate.Action
	Packets  atomic.Uint64
	Bytes    atomic.Uint64
	UsedNano atomic.Int64
}

func (r *Rule) TableID() uint8          { return r.Table }
func (r *Rule) Priority() uint16        { return r.Prio }
func (r *Rule) Cookie() uint64          { return r.CookieV }
func (r *Rule) Match() *mf.Match        { return &r.M }
func (r *Rule) Actions() []xlate.Action { return r.Acts }
func (r *Rule) Credit(s xlate.Stats) {
	r.Packets.Add(s.Packets)
	r.Bytes.Add(s.Bytes)
	if !s.Used.IsZero() {
		r.UsedNano.Store(s.Used.UnixNano())
	}
}

// Group is a fake group.
type Group struct {
	ID      uint32
	Type    xlate.GroupType
	B       []xlate.Bucket
	Method  xlate.SelectionMethod
	Fields  *mf.Wildcards
	Basis   uint64
	Packets atomic.Uint64
	mu      sync.Mutex
	PerBkt  map[int]uint64
}

func (g *Group) GroupID() uint32            { return g.ID }
func (g *Group) GroupType() xlate.GroupType { return g.Type }
func (g *Group) Buckets() []xlate.Bucket    { return g.B }
func (g *Group) Selection() (xlate.SelectionMethod, *mf.Wildcards, uint64) {
	return g.Method, g.Fields, g.Basis
}
func (g *Group) Credit(bucket int, s xlate.Stats) {
	g.Packets.Add(s.Packets)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.PerBkt == nil {
		g.PerBkt = map[int]uint64{}
	}
	g.PerBkt[bucket] += s.Packets
}

// Bridge is a fake bridge. Configure it before translating; the setters
// are safe while translations run (copy on write under mu).
type Bridge struct {
	NameV string

	mu      sync.Mutex
	version atomic.Uint64
	tables  atomic.Pointer[[][]*Rule] // per table, by priority descending
	ports   atomic.Pointer[[]*xlate.Port]
	groups  atomic.Pointer[map[uint32]xlate.Group]
	meters  map[uint32]uint32
	misses  map[uint8]xlate.TableMiss
	cfg     atomic.Pointer[xlate.Config]
	macs    *mac.Table

	// Lookup, when set, replaces the linear scan (a real classifier).
	Lookup func(version uint64, table uint8, f *mf.Flow, wc *mf.Wildcards) xlate.Rule

	// Learned and PacketIns record side effects (upcall.Bridge).
	LearnedMu sync.Mutex
	Learned   []xlate.LearnedFlow
	PacketIns []xlate.PacketIn
}

// NewBridge returns an empty bridge with a MAC table.
func NewBridge(name string) *Bridge {
	b := &Bridge{NameV: name, macs: mac.NewTable(0, 0), meters: map[uint32]uint32{}, misses: map[uint8]xlate.TableMiss{}}
	t := make([][]*Rule, 255)
	b.tables.Store(&t)
	b.ports.Store(&[]*xlate.Port{})
	b.groups.Store(&map[uint32]xlate.Group{})
	b.cfg.Store(&xlate.Config{})
	return b
}

// AddRule adds r to its table (after existing rules of equal priority).
func (b *Bridge) AddRule(r *Rule) *Rule {
	r.M.Normalize()
	b.mu.Lock()
	defer b.mu.Unlock()
	t := slices.Clone(*b.tables.Load())
	list := slices.Clone(t[r.Table])
	i := 0
	for i < len(list) && list[i].Prio >= r.Prio {
		i++
	}
	list = slices.Insert(list, i, r)
	t[r.Table] = list
	b.tables.Store(&t)
	b.version.Add(1)
	return r
}

// ClearTable removes every rule of table.
func (b *Bridge) ClearTable(table uint8) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := slices.Clone(*b.tables.Load())
	t[table] = nil
	b.tables.Store(&t)
	b.version.Add(1)
}

// AddPort adds (or replaces) a port.
func (b *Bridge) AddPort(p *xlate.Port) {
	b.mu.Lock()
	defer b.mu.Unlock()
	ps := slices.DeleteFunc(slices.Clone(*b.ports.Load()), func(q *xlate.Port) bool { return q.OFPort == p.OFPort })
	ps = append(ps, p)
	slices.SortFunc(ps, func(a, c *xlate.Port) int { return int(a.OFPort) - int(c.OFPort) })
	b.ports.Store(&ps)
}

// SetGroup adds or replaces a group.
func (b *Bridge) SetGroup(g xlate.Group) {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := map[uint32]xlate.Group{}
	for k, v := range *b.groups.Load() {
		m[k] = v
	}
	m[g.GroupID()] = g
	b.groups.Store(&m)
}

// SetMeter maps OpenFlow meter id to datapath meter dp.
func (b *Bridge) SetMeter(id, dp uint32) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.meters[id] = dp
}

// SetTableMiss sets a table's miss behaviour.
func (b *Bridge) SetTableMiss(table uint8, m xlate.TableMiss) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.misses[table] = m
}

// SetConfig publishes a new config.
func (b *Bridge) SetConfig(c xlate.Config) { b.cfg.Store(&c) }

// xlate.Bridge.

func (b *Bridge) Name() string          { return b.NameV }
func (b *Bridge) Version() uint64       { return b.version.Load() }
func (b *Bridge) Config() *xlate.Config { return b.cfg.Load() }
func (b *Bridge) MACs() *mac.Table      { return b.macs }

func (b *Bridge) LookupRule(v uint64, table uint8, f *mf.Flow, wc *mf.Wildcards) xlate.Rule {
	if b.Lookup != nil {
		return b.Lookup(v, table, f, wc)
	}
	for _, r := range (*b.tables.Load())[table] {
		wc.Or(&r.M.Wildcards)
		if r.M.Matches(f) {
			return r
		}
	}
	return nil
}

func (b *Bridge) TableMiss(table uint8) xlate.TableMiss {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.misses[table]
}

func (b *Bridge) Port(no uint32) *xlate.Port {
	for _, p := range *b.ports.Load() {
		if p.OFPort == no {
			return p
		}
	}
	return nil
}

func (b *Bridge) PortByDatapath(no uint32) *xlate.Port {
	for _, p := range *b.ports.Load() {
		if p.DPPort == no {
			return p
		}
	}
	return nil
}

func (b *Bridge) Ports() []*xlate.Port { return *b.ports.Load() }

func (b *Bridge) Group(_ uint64, id uint32) xlate.Group { return (*b.groups.Load())[id] }

func (b *Bridge) Meter(id uint32) (uint32, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	dp, ok := b.meters[id]
	return dp, ok
}

// upcall.Bridge.

func (b *Bridge) SendPacketIn(pi *xlate.PacketIn) {
	b.LearnedMu.Lock()
	defer b.LearnedMu.Unlock()
	b.PacketIns = append(b.PacketIns, *pi)
}

// Learn records f and adds its rule to its table, replacing a rule with
// the same match and priority (as a learn's flow mod does).
func (b *Bridge) Learn(f *xlate.LearnedFlow) error {
	b.LearnedMu.Lock()
	b.Learned = append(b.Learned, *f)
	b.LearnedMu.Unlock()
	r := &Rule{Table: f.TableID, Prio: f.Priority, CookieV: f.Cookie, M: f.Match, Acts: f.Actions}
	r.M.Normalize()
	b.mu.Lock()
	t := slices.Clone(*b.tables.Load())
	list := slices.Clone(t[r.Table])
	for i, old := range list {
		if old.Prio == r.Prio && old.M == r.M {
			if slices.Equal(old.Acts, r.Acts) || sameActionText(old.Acts, r.Acts) {
				b.mu.Unlock()
				return nil // a refresh: nothing changes
			}
			list = slices.Delete(list, i, i+1)
			break
		}
	}
	t[r.Table] = list
	b.tables.Store(&t)
	b.mu.Unlock()
	b.AddRule(r)
	return nil
}

func sameActionText(a, c []xlate.Action) bool {
	if len(a) != len(c) {
		return false
	}
	for i := range a {
		if fmt.Sprintf("%+v", a[i]) != fmt.Sprintf("%+v", c[i]) {
			return false
		}
	}
	return true
}

var _ xlate.Bridge = (*Bridge)(nil)

// Rules returns table's rules, highest priority first.
func (b *Bridge) Rules(table uint8) []*Rule { return (*b.tables.Load())[table] }

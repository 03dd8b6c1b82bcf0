package pipeline

import (
	"errors"
	"gvs/ofproto/ofpact"
	"sync"
	"testing"
	"time"

	"gvs/ofproto/mf"
)

// fakeClock is a settable clock.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// recorder collects flow removed messages and flow monitor updates.
type recorder struct {
	mu      sync.Mutex
	removed []FlowRemoved
	updates []FlowUpdate
}

func (r *recorder) FlowChanged(u FlowUpdate) {
	r.mu.Lock()
	r.updates = append(r.updates, u)
	r.mu.Unlock()
}

func (r *recorder) takeUpdates() []FlowUpdate {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.updates
	r.updates = nil
	return out
}

func (r *recorder) FlowRemoved(fr FlowRemoved) {
	r.mu.Lock()
	r.removed = append(r.removed, fr)
	r.mu.Unlock()
}

func (r *recorder) take() []FlowRemoved {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.removed
	r.removed = nil
	return out
}

type fixture struct {
	*Pipeline
	clock  *fakeClock
	events *recorder
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{clock: &fakeClock{now: time.Unix(1_700_000_000, 0)}, events: &recorder{}}
	f.Pipeline = New(Config{Now: f.clock.Now, Events: f.events, Meters: &fakeMeters{}})
	return f
}

// matchBuilder builds matches on a few fields.
type matchBuilder struct{ m mf.Match }

func match() *matchBuilder { return &matchBuilder{} }

func (b *matchBuilder) inPort(p uint32) *matchBuilder {
	b.m.Flow.InPort, b.m.Wildcards.Masks.InPort = p, ^uint32(0)
	return b
}

func (b *matchBuilder) ethType(t uint16) *matchBuilder {
	b.m.Flow.EtherType, b.m.Wildcards.Masks.EtherType = t, 0xffff
	return b
}

func (b *matchBuilder) nwSrc(a [4]byte, mask [4]byte) *matchBuilder {
	b.m.Flow.SrcIPv4, b.m.Wildcards.Masks.SrcIPv4 = a, mask
	b.m.Normalize()
	return b
}

func (b *matchBuilder) reg(n int, v uint32) *matchBuilder {
	b.m.Flow.Regs[n], b.m.Wildcards.Masks.Regs[n] = v, ^uint32(0)
	return b
}

func (b *matchBuilder) get() mf.Match { return b.m }

func flow(inPort uint32) *mf.Flow {
	f := &mf.Flow{}
	f.InPort = inPort
	f.EtherType = 0x0800
	return f
}

func out(p uint32) []Action { return []Action{&ofpact.Output{Port: p}} }

// add is an OpenFlow 1.3 add: new_cookie is the cookie.
func add(table uint8, prio int, m mf.Match, acts []Action) *FlowMod {
	return &FlowMod{Command: FlowAdd, TableID: table, Priority: prio, Match: m, Actions: acts,
		NewCookie: 0, BufferID: BufferNone, OutPort: mf.PortNone, OutGroup: GroupAny}
}

func (fm *FlowMod) cookie(c uint64) *FlowMod { fm.Cookie, fm.NewCookie = c, c; return fm }
func (fm *FlowMod) flags(f Flags) *FlowMod   { fm.Flags |= f; return fm }
func (fm *FlowMod) timeouts(idle, hard uint16) *FlowMod {
	fm.IdleTimeout, fm.HardTimeout = idle, hard
	return fm
}

// mod is an OpenFlow 1.3 modify: never adds, keeps the cookie.
func mod(strict bool, table uint8, prio int, m mf.Match, acts []Action) *FlowMod {
	fm := add(table, prio, m, acts)
	fm.Command = FlowModify
	if strict {
		fm.Command = FlowModifyStrict
	}
	fm.NewCookie = CookieNone
	return fm
}

// mod10 is an OpenFlow 1.0 modify: adds when nothing matched, sets the cookie.
func mod10(strict bool, table uint8, prio int, m mf.Match, acts []Action, cookie uint64) *FlowMod {
	fm := mod(strict, table, prio, m, acts)
	fm.Cookie, fm.NewCookie, fm.ModifyCookie = cookie, cookie, true
	return fm
}

func del(strict bool, table uint8, prio int, m mf.Match) *FlowMod {
	fm := add(table, prio, m, nil)
	fm.Command = FlowDelete
	if strict {
		fm.Command = FlowDeleteStrict
	}
	return fm
}

func mustMod(t *testing.T, p *fixture, fm *FlowMod) {
	t.Helper()
	if err := p.FlowMod(fm); err != nil {
		t.Fatalf("flow mod %+v: %v", fm, err)
	}
}

func wantErr(t *testing.T, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("error %v, want %v", err, want)
	}
}

func (f *fixture) all(t *testing.T) []*Rule {
	t.Helper()
	rules, err := f.Flows(&FlowQuery{TableID: TableAll, OutPort: mf.PortNone, OutGroup: GroupAny})
	if err != nil {
		t.Fatal(err)
	}
	return rules
}

// fakeMeters is a meter provider that keeps configurations.
type fakeMeters struct {
	mu   sync.Mutex
	next uint32
	set  map[uint32]MeterConfig
}

func (m *fakeMeters) Features() MeterFeatures {
	return MeterFeatures{MaxMeters: 1 << 18, BandTypes: 1 << BandDrop, Capabilities: 0xf, MaxBands: 1}
}

func (m *fakeMeters) AddMeter(cfg MeterConfig) (uint32, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.set == nil {
		m.set = map[uint32]MeterConfig{}
	}
	m.next++
	m.set[m.next] = cfg
	return m.next, nil
}

func (m *fakeMeters) ModifyMeter(id uint32, cfg MeterConfig) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.set[id] = cfg
	return nil
}

func (m *fakeMeters) DelMeter(id uint32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.set, id)
}

func (m *fakeMeters) MeterStats(id uint32, n int) (MeterStats, error) {
	return MeterStats{Packets: 7, Bands: make([]BandStats, n)}, nil
}

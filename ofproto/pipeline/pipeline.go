package pipeline

import (
	"sync"
	"sync/atomic"
	"time"

	"gvs/ofproto/classifier"
	"gvs/ofproto/mf"
)

// EventSink receives what the pipeline reports to controllers.
type EventSink interface {
	// FlowRemoved reports a rule with send_flow_rem that a delete,
	// timeout, group or meter deletion removed.
	FlowRemoved(FlowRemoved)
	// FlowChanged reports every change of a visible rule, for flow
	// monitors (Open vSwitch's ofmonitor_report).
	FlowChanged(FlowUpdate)
}

// FlowEvent is a flow monitor event (NXFME_* / OFPFME_*).
type FlowEvent uint8

const (
	FlowAdded    FlowEvent = 0
	FlowDeleted  FlowEvent = 1
	FlowModified FlowEvent = 2
)

// FlowUpdate is one flow monitor update.
type FlowUpdate struct {
	Event  FlowEvent
	Rule   *Rule
	Reason RemovedReason // FlowDeleted only
	// OldActions are the actions a modification replaced (nil when the
	// actions did not change).
	OldActions []Action
	// Requester is the FlowMod's Requester (nil for the switch's own
	// changes: timeouts, group and meter deletions).
	Requester any
}

// FlowRemoved is a flow removed message's content (struct
// ofputil_flow_removed).
type FlowRemoved struct {
	Rule     *Rule
	Reason   RemovedReason
	Duration time.Duration // since the rule was created
	Packets  uint64
	Bytes    uint64
}

// Config configures a pipeline.
type Config struct {
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Events receives flow removed messages; nil drops them.
	Events EventSink
	// Changed, if set, is called (with Pipeline.mu held, after the new
	// version is published) whenever a commit changed rules, groups or
	// meters: the revalidator's trigger. It must not block.
	Changed func(version uint64)
	// Meters is the datapath's meter implementation; nil keeps meters
	// in the pipeline only (their features say none are supported).
	Meters MeterProvider
	// MaxFlowsPerTable limits each table (ofperr.OFPFMFC_TABLE_FULL); 0 for
	// unlimited (Open vSwitch's default: UINT_MAX).
	MaxFlowsPerTable int
	// MaxGroups limits each group type; 0 for Open vSwitch's default
	// (OFPG_MAX).
	MaxGroups int
}

// Pipeline is one bridge's OpenFlow tables, groups and meters.
type Pipeline struct {
	cfg Config
	now func() time.Time

	version atomic.Uint64 // the version lookups use
	actions *actionIntern // the rules' action lists, shared
	churn   atomic.Uint64 // rules added, replaced and removed, ever (Churn)

	mu       sync.Mutex // held by the one writer (a Txn, meter mods, expiry)
	tables   [NumTables]table
	counters [NumTables]tableCounters
	groups   atomic.Pointer[groupMap]
	meters   atomic.Pointer[meterMap]

	// Writer-side indexes (under mu).
	nGroups     [4]int
	groupRefs   map[uint32]map[*Rule]struct{} // group id -> rules using it
	meterRefs   map[uint32]map[*Rule]struct{}
	expirable   map[*Rule]struct{}
	lastCollect time.Time
	// learned counts the rules with a learn action that has
	// delete_learned, per learned table and cookie (Open vSwitch's
	// learned_cookies); deadLearned are the keys whose count reached zero
	// in the current transaction.
	learned     map[learnedKey]int
	deadLearned map[learnedKey]bool
}

// New returns a pipeline with empty tables.
func New(cfg Config) *Pipeline {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxGroups <= 0 {
		cfg.MaxGroups = int(GroupMax)
	}
	p := &Pipeline{
		cfg: cfg, now: cfg.Now,
		groupRefs: map[uint32]map[*Rule]struct{}{},
		meterRefs: map[uint32]map[*Rule]struct{}{},
		expirable: map[*Rule]struct{}{},
		learned:   map[learnedKey]int{},
		actions:   newActionIntern(),
	}
	for i := range p.tables {
		p.tables[i].maxRules = cfg.MaxFlowsPerTable
		p.tables[i].cls = classifier.New[*Rule]()
	}
	p.tables[TableInternal].readonly = true
	p.tables[TableInternal].hidden = true
	p.groups.Store(&groupMap{})
	p.meters.Store(&meterMap{})
	return p
}

// Churn counts the rules committed transactions added, replaced or
// removed since the pipeline was made: a measure of how much table memory
// changed hands. Any goroutine.
func (p *Pipeline) Churn() uint64 { return p.churn.Load() }

// Version returns the version lookups use now.
func (p *Pipeline) Version() uint64 { return p.version.Load() }

// Lookup finds the highest priority rule of table tableID matching f at
// version v, adding the bits the lookup examined to wc. It returns nil on
// a miss (the caller applies the table-miss behaviour: Open vSwitch drops
// unless a table-miss rule says otherwise). Safe from any goroutine.
func (p *Pipeline) Lookup(v uint64, tableID uint8, f *mf.Flow, wc *mf.Wildcards) *Rule {
	if int(tableID) >= NumTables {
		return nil
	}
	return p.tables[tableID].lookup(v, f, wc)
}

// Begin starts a transaction at the next version. Only one transaction
// runs at a time: Begin waits for the current one to end. The caller must
// end it with Commit or Abort.
func (p *Pipeline) Begin() *Txn {
	p.mu.Lock()
	return &Txn{p: p, version: p.version.Load() + 1}
}

// FlowMod applies one flow mod in its own transaction.
func (p *Pipeline) FlowMod(fm *FlowMod) error {
	t := p.Begin()
	if err := t.FlowMod(fm); err != nil {
		t.Abort()
		return err
	}
	t.Commit()
	return nil
}

// GroupMod applies one group mod in its own transaction.
func (p *Pipeline) GroupMod(gm *GroupMod) error {
	t := p.Begin()
	if err := t.GroupMod(gm); err != nil {
		t.Abort()
		return err
	}
	t.Commit()
	return nil
}

// Txn is a set of flow and group mods applied atomically at one version
// (a bundle, or a single message).
type Txn struct {
	p       *Pipeline
	version uint64
	ops     []*txnOp
	ended   bool
}

type txnOp struct {
	group bool
	cmd   Command
	// Flow mods: rules replaced or deleted, and their replacements
	// (old[i] replaced by new[i] when both; new only for a fresh add).
	old, new   []*Rule
	keepCounts bool
	reason     RemovedReason
	requester  any
	// Group mods.
	oldGroups []*Group
	newGroup  *Group
	// Rules deleted along with deleted groups.
	groupRules []*Rule
}

// Version is the version the transaction's changes become visible at.
func (t *Txn) Version() uint64 { return t.version }

// Abort reverts every change of the transaction, newest first, and ends it.
func (t *Txn) Abort() {
	if t.ended {
		return
	}
	t.ended = true
	p := t.p
	for i := len(t.ops) - 1; i >= 0; i-- {
		p.revertOp(t.ops[i])
	}
	p.deadLearned = nil
	p.mu.Unlock()
}

// Commit publishes the transaction's version, then finishes: replaced and
// deleted rules leave the tables and flow removed messages go out.
func (t *Txn) Commit() {
	if t.ended {
		return
	}
	t.ended = true
	p := t.p
	p.version.Store(t.version)
	now := p.now()
	changed := false
	for _, op := range t.ops {
		if p.finishOp(op, now) {
			changed = true
		}
	}
	p.flushLearned(t.version)
	p.collect()
	if changed && p.cfg.Changed != nil {
		p.cfg.Changed(t.version)
	}
	p.mu.Unlock()
}

// Flush deletes every rule of every table OpenFlow sees (flow removed
// goes out for those that asked, reason delete), every group and every
// meter: Open vSwitch's ofproto_flush__.
func (p *Pipeline) Flush() {
	t := p.Begin()
	for id := range p.tables {
		tb := &p.tables[id]
		if tb.hidden {
			continue
		}
		var rules []*Rule
		tb.cls.ForEach(VersionMax, func(cr *classifier.Rule[*Rule]) bool {
			rules = append(rules, cr.Value)
			return true
		})
		t.deleteRulesStart(rules, RemovedDelete)
	}
	t.deleteGroups(GroupAll)
	t.Commit()
	_ = p.MeterMod(&MeterMod{Command: MeterDelete, Config: MeterConfig{ID: MeterAll}})
}

// learnedKey identifies the flows a learn action with delete_learned
// produces: its table and cookie.
type learnedKey struct {
	table  uint8
	cookie uint64
}

// flushLearned deletes the learned flows whose last learning rule this
// transaction removed (learned_cookies_flush), as one more version.
// Caller holds p.mu; the transaction's version is published.
func (p *Pipeline) flushLearned(version uint64) {
	if len(p.deadLearned) == 0 {
		return
	}
	dead := p.deadLearned
	p.deadLearned = nil
	t := &Txn{p: p, version: version + 1}
	for k := range dead {
		if p.learned[k] > 0 {
			continue // learning rules came back (replaced, or reverted)
		}
		var m mf.Match
		rules, err := p.collectRules(&criteria{tableID: k.table, match: &m, cookie: k.cookie, cookieMask: ^uint64(0),
			outPort: mf.PortNone, outGroup: GroupAny, includeReadonly: true})
		if err == nil {
			t.deleteRulesStart(rules, RemovedDelete)
		}
	}
	if len(t.ops) == 0 {
		return
	}
	p.version.Store(t.version)
	now := p.now()
	for _, op := range t.ops {
		p.finishOp(op, now)
	}
	p.flushLearned(t.version) // the flows deleted may have learned too
}

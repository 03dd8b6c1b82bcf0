package pipeline

import (
	"slices"
	"sync/atomic"
	"time"

	"gvs/ofproto/classifier"
	"gvs/ofproto/mf"
)

// FlowQuery selects rules for flow and aggregate statistics (the
// request's table, match, out_port, out_group and cookie).
type FlowQuery struct {
	TableID            uint8 // TableAll for every table
	Match              mf.Match
	Strict             bool // OpenFlow 1.0 has no strict stats; gvs's own callers may want it
	Priority           int
	Cookie, CookieMask uint64
	OutPort            uint32 // mf.PortNone for any
	OutGroup           uint32 // GroupAny for any
	// IncludeHidden also selects the switch's own hidden flows.
	IncludeHidden bool
}

// Flows returns the rules the query selects as of the current version, in
// table order then priority (high first). Errors: ofperr.OFPBRC_BAD_TABLE_ID.
func (p *Pipeline) Flows(q *FlowQuery) ([]*Rule, error) {
	p.mu.Lock() // the classifier's iterators are the writer's
	defer p.mu.Unlock()
	m := q.Match
	m.Normalize()
	rules, err := p.collectRules(&criteria{
		tableID: q.TableID, match: &m, strict: q.Strict, priority: q.Priority,
		cookie: q.Cookie, cookieMask: q.CookieMask, outPort: q.OutPort, outGroup: q.OutGroup,
		includeReadonly: true, includeHidden: q.IncludeHidden, version: p.Version(),
	})
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(rules, ruleOrder)
	return rules, nil
}

// Aggregate sums the counters of the rules the query selects.
func (p *Pipeline) Aggregate(q *FlowQuery) (packets, bytes uint64, flows int, err error) {
	rules, err := p.Flows(q)
	if err != nil {
		return 0, 0, 0, err
	}
	for _, r := range rules {
		pk, by, _ := r.Stats()
		packets += pk
		bytes += by
	}
	return packets, bytes, len(rules), nil
}

// TableStats are one table's counters (struct ofputil_table_stats).
type TableStats struct {
	TableID      uint8
	ActiveCount  int
	LookupCount  uint64
	MatchedCount uint64
}

// tableCounters are credited by translation (CountLookup).
type tableCounters struct{ lookups, matched atomic.Uint64 }

// CountLookup records a translation's lookup in table id: hit says whether
// a rule matched. Translation calls it per upcall, not per packet, as Open
// vSwitch's rule_dpif_lookup_from_table does; the revalidator credits
// megaflow hits with CreditLookups.
func (p *Pipeline) CountLookup(id uint8, hit bool) { p.CreditLookups(id, 1, hit) }

// CreditLookups records n lookups in table id.
func (p *Pipeline) CreditLookups(id uint8, n uint64, hit bool) {
	if int(id) >= NumTables {
		return
	}
	c := &p.counters[id]
	c.lookups.Add(n)
	if hit {
		c.matched.Add(n)
	}
}

// TableStats returns the statistics of every table that OpenFlow sees
// (not the internal one); hidden flows are not counted, as
// query_tables subtracts them.
func (p *Pipeline) TableStats() []TableStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]TableStats, 0, NumTables)
	for id := range NumTables {
		if p.tables[id].hidden {
			continue
		}
		out = append(out, TableStats{
			TableID: uint8(id), ActiveCount: p.tables[id].nRules - p.tables[id].nHidden,
			LookupCount: p.counters[id].lookups.Load(), MatchedCount: p.counters[id].matched.Load(),
		})
	}
	return out
}

// NumRules is the number of rules visible in the latest version.
func (p *Pipeline) NumRules() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for id := range p.tables {
		n += p.tables[id].nRules
	}
	return n
}

// NextExpiry is when the earliest timeout can fire, or zero if no rule has
// a timeout (a hint for the caller's timer; Expire is authoritative).
func (p *Pipeline) NextExpiry() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	var next time.Time
	for r := range p.expirable {
		for _, at := range r.expiryTimes() {
			if !at.IsZero() && (next.IsZero() || at.Before(next)) {
				next = at
			}
		}
	}
	return next
}

func (r *Rule) expiryTimes() [2]time.Time {
	var out [2]time.Time
	idleTimeout, hardTimeout := r.Timeouts()
	if hardTimeout != 0 {
		out[0] = r.hardStart().Add(time.Duration(hardTimeout) * time.Second)
	}
	if idleTimeout != 0 {
		_, _, used := r.Stats()
		out[1] = used.Add(time.Duration(idleTimeout) * time.Second)
	}
	return out
}

// Expire removes the rules whose hard timeout (since the rule was added
// or last modified) or idle timeout (since it last matched a packet)
// passed as of now, sending flow removed with the reason (ofproto-dpif's
// rule_expire: hard first). It returns how many it removed. Call it after
// the revalidator credited the latest statistics.
func (p *Pipeline) Expire(now time.Time) int {
	t := p.Begin()
	var hard, idle []*Rule
	for r := range p.expirable {
		idleTimeout, hardTimeout := r.Timeouts()
		if hardTimeout != 0 && now.After(r.hardStart().Add(time.Duration(hardTimeout)*time.Second)) {
			hard = append(hard, r)
			continue
		}
		if idleTimeout != 0 {
			if _, _, used := r.Stats(); now.After(used.Add(time.Duration(idleTimeout) * time.Second)) {
				idle = append(idle, r)
			}
		}
	}
	if len(hard)+len(idle) == 0 {
		p.collect() // removed rules go even when nothing else changes
		t.Abort()
		return 0
	}
	slices.SortFunc(hard, ruleOrder)
	slices.SortFunc(idle, ruleOrder)
	t.deleteRulesStart(hard, RemovedHardTimeout)
	t.deleteRulesStart(idle, RemovedIdleTimeout)
	t.Commit()
	return len(hard) + len(idle)
}

// AllRules returns every rule visible now in every table, the internal
// table and hidden rules included, table by table in classifier order
// (ofproto_get_all_flows: bridge/dump-flows).
func (p *Pipeline) AllRules() []*Rule {
	p.mu.Lock()
	defer p.mu.Unlock()
	v := p.Version()
	var out []*Rule
	for id := range p.tables {
		p.tables[id].cls.ForEach(v, func(cr *classifier.Rule[*Rule]) bool {
			out = append(out, cr.Value)
			return true
		})
	}
	return out
}

package pipeline

import (
	"gvs/ofproto/ofpact"
	"gvs/ofproto/ofperr"
	"time"

	"gvs/ofproto/mf"
)

// FlowMod applies fm within the transaction (Open vSwitch's
// ofproto_flow_mod_init + _start). On error nothing of fm is applied; the
// caller decides whether to abort the whole transaction (a bundle does).
func (t *Txn) FlowMod(fm *FlowMod) error {
	if t.ended {
		panic("pipeline: FlowMod on an ended transaction")
	}
	switch fm.Command {
	case FlowAdd:
		tableID, err := t.p.addTable(fm)
		if err != nil {
			return err
		}
		op := &txnOp{cmd: FlowAdd, keepCounts: fm.Flags&FlagResetCounts == 0, requester: fm.Requester}
		if err := t.addFlowStart(op, t.p.newRule(fm, tableID, t.version), fm.Flags&FlagCheckOverlap != 0); err != nil {
			return err
		}
		t.ops = append(t.ops, op)
		return nil
	case FlowModify, FlowModifyStrict:
		return t.modifyFlows(fm, fm.Command == FlowModifyStrict)
	case FlowDelete, FlowDeleteStrict:
		return t.deleteFlows(fm, fm.Command == FlowDeleteStrict)
	default:
		return ofperr.OFPFMFC_BAD_COMMAND
	}
}

// PreparedAdd is an add flow mod already turned into its rule, ahead of
// the transaction that applies it, as Open vSwitch's
// ofproto_flow_mod_init creates the rule when a bundle message is added:
// a bundle then stages the rule itself rather than the message, and its
// commit copies nothing. Apply it once, with Txn.AddPrepared.
type PreparedAdd struct {
	rule  *Rule
	flags Flags
}

// PrepareAdd builds the rule of an add flow mod (its Requester is given
// to AddPrepared instead). It fails where FlowMod would before touching
// the tables: not an add, a bad or read-only table. Any goroutine: it
// takes no lock.
func (p *Pipeline) PrepareAdd(fm *FlowMod) (*PreparedAdd, error) {
	if fm.Command != FlowAdd {
		return nil, ofperr.OFPFMFC_BAD_COMMAND
	}
	tableID, err := p.addTable(fm)
	if err != nil {
		return nil, err
	}
	return &PreparedAdd{rule: p.newRule(fm, tableID, 0), flags: fm.Flags}, nil
}

// AddPrepared applies a prepared add within the transaction exactly as
// FlowMod applies the flow mod it was made from (check overlap, replace,
// table full, action checks); requester goes with its flow monitor
// updates.
func (t *Txn) AddPrepared(pa *PreparedAdd, requester any) error {
	if t.ended {
		panic("pipeline: AddPrepared on an ended transaction")
	}
	op := &txnOp{cmd: FlowAdd, keepCounts: pa.flags&FlagResetCounts == 0, requester: requester}
	if err := t.addFlowStart(op, pa.rule, pa.flags&FlagCheckOverlap != 0); err != nil {
		return err
	}
	t.ops = append(t.ops, op)
	return nil
}

// addTable picks the table an added flow goes to (add_flow_init).
func (p *Pipeline) addTable(fm *FlowMod) (uint8, error) {
	tableID := fm.TableID
	switch {
	case tableID == TableAll:
		tableID = 0
	case int(tableID) >= NumTables:
		return 0, ofperr.OFPBRC_BAD_TABLE_ID
	}
	if p.tables[tableID].readonly && fm.Flags&FlagNoReadonly == 0 {
		return 0, ofperr.OFPBRC_EPERM
	}
	return tableID, nil
}

func (p *Pipeline) newRule(fm *FlowMod, tableID uint8, version uint64) *Rule {
	now := p.now()
	r := &Rule{
		TableID: tableID, Cookie: fm.NewCookie, IdleTimeout: fm.IdleTimeout, HardTimeout: fm.HardTimeout,
		Importance: fm.Importance, Flags: fm.Flags & flagsState, Actions: p.actions.share(fm.Actions),
		created: now.UnixNano(), modified: now.UnixNano(),
	}
	r.Match, r.Priority = fm.Match, fm.Priority
	r.Match.Normalize()
	r.Conjunctions = conjunctions(fm.Actions)
	r.used.Store(now.UnixNano())
	return r
}

// addFlowStart is add_flow_start: check the actions, replace an identical
// rule or check overlap and room, insert.
func (t *Txn) addFlowStart(op *txnOp, r *Rule, checkOverlap bool) error {
	p := t.p
	if err := p.checkActions(r.Actions); err != nil {
		return err
	}
	tb := &p.tables[r.TableID]
	old := tb.findExactly(&r.Match, r.Priority, t.version)
	if old == nil {
		if checkOverlap {
			if tb.cls.Overlaps(&r.Match, r.Priority, t.version) {
				return ofperr.OFPFMFC_OVERLAP
			}
		}
		if tb.maxRules > 0 && tb.nRules >= tb.maxRules {
			return ofperr.OFPFMFC_TABLE_FULL
		}
	}
	t.replaceRuleStart(op, old, r, true)
	if old != nil {
		op.old = append(op.old, old)
	}
	op.new = append(op.new, r)
	return nil
}

// replaceRuleStart is replace_rule_start: old (if any) becomes invisible
// at the transaction's version and r visible from it.
func (t *Txn) replaceRuleStart(op *txnOp, old, r *Rule, modifyCookie bool) {
	p := t.p
	if old != nil {
		changeCookie := modifyCookie && r.Cookie != CookieNone && r.Cookie != old.Cookie
		if op.cmd != FlowAdd {
			r.IdleTimeout, r.HardTimeout = old.IdleTimeout, old.HardTimeout
			r.Importance, r.Flags, r.created = old.Importance, old.Flags, old.created
		}
		if !changeCookie {
			r.Cookie = old.Cookie
		}
		p.tables[old.TableID].cls.MakeInvisible(&old.Rule, t.version)
		p.unindexRule(old)
	} else {
		p.tables[r.TableID].nRules++
	}
	p.indexRule(r)
	p.tables[r.TableID].insert(r, t.version)
}

// modifyFlows is modify_flows_start_loose/_strict + modify_flows_start__.
func (t *Txn) modifyFlows(fm *FlowMod, strict bool) error {
	p := t.p
	tableID, err := p.addTable(fm)
	if err != nil {
		return err
	}
	temp := p.newRule(fm, tableID, t.version)
	olds, err := p.collectRules(&criteria{
		tableID: fm.TableID, match: &temp.Match, strict: strict, priority: fm.Priority,
		cookie: fm.Cookie, cookieMask: fm.CookieMask, outPort: mf.PortNone, outGroup: GroupAny,
		includeReadonly: fm.Flags&FlagNoReadonly != 0, includeHidden: fm.Flags&FlagNoReadonly != 0,
	})
	if err != nil {
		return err
	}
	op := &txnOp{cmd: fm.Command, keepCounts: fm.Flags&FlagResetCounts == 0, requester: fm.Requester}
	if len(olds) == 0 {
		if fm.NewCookie == CookieNone || fm.CookieMask != 0 {
			return nil // nothing to modify, and may not add
		}
		if err := t.addFlowStart(op, temp, fm.Flags&FlagCheckOverlap != 0); err != nil {
			return err
		}
		t.ops = append(t.ops, op)
		return nil
	}
	if err := p.checkActions(temp.Actions); err != nil {
		return err
	}
	for _, old := range olds {
		r := &Rule{
			TableID: old.TableID, Cookie: temp.Cookie, IdleTimeout: temp.IdleTimeout, HardTimeout: temp.HardTimeout,
			Importance: temp.Importance, Flags: temp.Flags, Actions: temp.Actions,
			created: temp.created, modified: temp.modified,
		}
		r.Match, r.Priority, r.Conjunctions = old.Match, old.Priority, temp.Conjunctions
		r.used.Store(temp.used.Load())
		t.replaceRuleStart(op, old, r, fm.ModifyCookie)
		op.old = append(op.old, old)
		op.new = append(op.new, r)
	}
	t.ops = append(t.ops, op)
	return nil
}

// deleteFlows is delete_flows_start_loose/_strict.
func (t *Txn) deleteFlows(fm *FlowMod, strict bool) error {
	m := fm.Match
	m.Normalize()
	rules, err := t.p.collectRules(&criteria{
		tableID: fm.TableID, match: &m, strict: strict, priority: fm.Priority,
		cookie: fm.Cookie, cookieMask: fm.CookieMask, outPort: fm.OutPort, outGroup: fm.OutGroup,
		includeReadonly: fm.Flags&FlagNoReadonly != 0, includeHidden: fm.Flags&FlagNoReadonly != 0,
	})
	if err != nil {
		return err
	}
	t.deleteRulesStart(rules, RemovedDelete)
	if len(rules) > 0 {
		t.ops[len(t.ops)-1].requester = fm.Requester
	}
	return nil
}

// deleteRulesStart makes rules invisible at the transaction's version
// (delete_flows_start__); they leave at Commit with reason.
func (t *Txn) deleteRulesStart(rules []*Rule, reason RemovedReason) {
	if len(rules) == 0 {
		return
	}
	p := t.p
	for _, r := range rules {
		p.tables[r.TableID].nRules--
		p.tables[r.TableID].cls.MakeInvisible(&r.Rule, t.version)
		p.unindexRule(r)
	}
	t.ops = append(t.ops, &txnOp{cmd: FlowDelete, old: rules, reason: reason})
}

// criteria selects rules for modify, delete and statistics (struct
// rule_criteria).
type criteria struct {
	tableID         uint8
	match           *mf.Match
	strict          bool
	priority        int
	cookie          uint64
	cookieMask      uint64
	outPort         uint32
	outGroup        uint32
	includeReadonly bool
	includeHidden   bool
	version         uint64 // 0: VersionMax (the writer's view)
}

// collectRules is collect_rules_loose/_strict.
func (p *Pipeline) collectRules(c *criteria) ([]*Rule, error) {
	if c.tableID != TableAll && int(c.tableID) >= NumTables {
		return nil, ofperr.OFPBRC_BAD_TABLE_ID
	}
	v := c.version
	if v == 0 {
		v = VersionMax
	}
	var out []*Rule
	nReadonly := 0
	collect := func(r *Rule) {
		if (c.outPort != mf.PortNone && !actionsOutputTo(r.Actions, c.outPort)) ||
			(c.outGroup != GroupAny && !actionsOutputToGroup(r.Actions, c.outGroup)) ||
			(r.Cookie^c.cookie)&c.cookieMask != 0 || r.hidden() && !c.includeHidden {
			return
		}
		if p.tables[r.TableID].readonly && !c.includeReadonly {
			nReadonly++
			return
		}
		out = append(out, r)
	}
	for id := range NumTables {
		if c.tableID != TableAll && id != int(c.tableID) {
			continue
		}
		tb := &p.tables[id]
		if c.tableID == TableAll && tb.hidden {
			continue
		}
		if c.strict {
			if r := tb.findExactly(c.match, c.priority, v); r != nil {
				collect(r)
			}
		} else {
			tb.forEachLoose(c.match, v, collect)
		}
	}
	if len(out) == 0 && nReadonly > 0 {
		return nil, ofperr.OFPBRC_EPERM
	}
	return out, nil
}

// CheckActions is ofproto_check_ofpacts for actions outside a flow mod
// (a packet out's): groups and meters must exist.
func (p *Pipeline) CheckActions(acts []Action) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.checkActions(acts)
}

// CheckActions is Pipeline.CheckActions within the transaction (groups
// it added count).
func (t *Txn) CheckActions(acts []Action) error { return t.p.checkActions(acts) }

// checkActions is ofproto_check_ofpacts: groups must exist (also ones
// added earlier in the transaction), meters must exist.
func (p *Pipeline) checkActions(acts []Action) error {
	var err error
	walk(acts, func(a any) bool {
		switch a := a.(type) {
		case *ofpact.Meter:
			if a.ID == 0 || p.meters.Load().m[a.ID] == nil {
				err = ofperr.OFPMMFC_INVALID_METER
			}
		case *ofpact.Group:
			if p.groupAt(a.ID, VersionMax) == nil {
				err = ofperr.OFPBAC_BAD_OUT_GROUP
			}
		}
		return err == nil
	})
	return err
}

// indexRule and unindexRule keep the writer's indexes: group and meter
// references, rules with timeouts (ofproto_rule_insert__/_remove__).
func (p *Pipeline) indexRule(r *Rule) {
	if r.hidden() {
		p.tables[r.TableID].nHidden++
	}
	forEachDeleteLearned(r.Actions, func(k learnedKey) { p.learned[k]++ })
	actionsGroups(r.Actions, func(id uint32) {
		s := p.groupRefs[id]
		if s == nil {
			s = map[*Rule]struct{}{}
			p.groupRefs[id] = s
		}
		s[r] = struct{}{}
	})
	if id, ok := actionsMeter(r.Actions); ok {
		s := p.meterRefs[id]
		if s == nil {
			s = map[*Rule]struct{}{}
			p.meterRefs[id] = s
		}
		s[r] = struct{}{}
	}
	if r.IdleTimeout != 0 || r.HardTimeout != 0 || hasFinTimeout(r.Actions) {
		p.expirable[r] = struct{}{}
	}
}

func (p *Pipeline) unindexRule(r *Rule) {
	if r.hidden() {
		p.tables[r.TableID].nHidden--
	}
	forEachDeleteLearned(r.Actions, func(k learnedKey) {
		if p.learned[k]--; p.learned[k] <= 0 {
			delete(p.learned, k)
			if p.deadLearned == nil {
				p.deadLearned = map[learnedKey]bool{}
			}
			p.deadLearned[k] = true
		}
	})
	actionsGroups(r.Actions, func(id uint32) {
		if s := p.groupRefs[id]; s != nil {
			delete(s, r)
			if len(s) == 0 {
				delete(p.groupRefs, id)
			}
		}
	})
	if id, ok := actionsMeter(r.Actions); ok {
		if s := p.meterRefs[id]; s != nil {
			delete(s, r)
			if len(s) == 0 {
				delete(p.meterRefs, id)
			}
		}
	}
	delete(p.expirable, r)
}

// revertOp undoes one operation's start (replace_rule_revert,
// delete_flows_revert__, ofproto_group_mod_revert).
func (p *Pipeline) revertOp(op *txnOp) {
	if op.group {
		p.revertGroupOp(op)
		return
	}
	if op.cmd == FlowDelete {
		for _, r := range op.old {
			p.tables[r.TableID].nRules++
			p.tables[r.TableID].cls.Restore(&r.Rule)
			p.indexRule(r)
		}
		return
	}
	for i, r := range op.new {
		p.tables[r.TableID].cls.Remove(&r.Rule)
		p.unindexRule(r)
		if i < len(op.old) {
			old := op.old[i]
			p.tables[old.TableID].cls.Restore(&old.Rule)
			p.indexRule(old)
		} else {
			p.tables[r.TableID].nRules--
		}
	}
}

// finishOp runs after the version is published: counters move to the
// replacements, removed rules leave the tables and are reported. It
// reports whether anything changed.
func (p *Pipeline) finishOp(op *txnOp, now time.Time) bool {
	if op.group {
		return p.finishGroupOp(op, now)
	}
	for i, r := range op.new {
		switch {
		case i >= len(op.old) || op.cmd == FlowAdd:
			p.report(FlowUpdate{Event: FlowAdded, Rule: r, Requester: op.requester})
		case !actionsEqual(r.Actions, op.old[i].Actions):
			p.report(FlowUpdate{Event: FlowModified, Rule: r, OldActions: op.old[i].Actions, Requester: op.requester})
		case r.Cookie != op.old[i].Cookie:
			p.report(FlowUpdate{Event: FlowModified, Rule: r, Requester: op.requester})
		}
	}
	for i, old := range op.old {
		if op.cmd != FlowDelete && i < len(op.new) {
			// replace_rule_finish -> rule_insert(new, old, keep_counts)
			r := op.new[i]
			e := old.extension()
			e.forwardKeep = op.keepCounts
			e.next.Store(r)
			if pk, by, _ := old.Stats(); op.keepCounts && (pk != 0 || by != 0) {
				re := r.extension()
				re.packets.Add(pk)
				re.bytes.Add(by)
			}
			r.touch(time.Unix(0, old.used.Load()))
			continue
		}
		p.removeRule(old, op.reason, op.requester, now)
	}
	p.churn.Add(uint64(len(op.old) + len(op.new)))
	return len(op.old)+len(op.new) > 0
}

// removeRule takes a deleted rule out of its table and sends flow removed
// if it asked for it (rule_destroy_cb).
func (p *Pipeline) removeRule(r *Rule, reason RemovedReason, requester any, now time.Time) {
	r.removedReason = reason
	p.report(FlowUpdate{Event: FlowDeleted, Rule: r, Reason: reason, Requester: requester})
	if r.Flags&FlagSendFlowRem != 0 && !r.hidden() && p.cfg.Events != nil {
		pk, by, _ := r.Stats()
		p.cfg.Events.FlowRemoved(FlowRemoved{
			Rule: r, Reason: reason, Duration: now.Sub(r.Created()), Packets: pk, Bytes: by,
		})
	}
}

// collect lets the classifiers drop the rules hidden long enough ago that
// no lookup at an older version can still be running (Open vSwitch
// postpones classifier_remove with RCU for the same reason): each hidden
// rule stays through at least one full collectInterval.
func (p *Pipeline) collect() {
	now := time.Now() // wall clock, not Config.Now: it bounds real readers
	if now.Sub(p.lastCollect) < collectInterval {
		return
	}
	p.lastCollect = now
	for id := range p.tables {
		p.tables[id].cls.Collect()
	}
}

// collectInterval is far longer than any translation runs.
const collectInterval = time.Second

// report passes a flow monitor update on (hidden rules are never shown).
func (p *Pipeline) report(u FlowUpdate) {
	if p.cfg.Events != nil && !u.Rule.hidden() {
		p.cfg.Events.FlowChanged(u)
	}
}

package connmgr

import (
	"gvs/ofproto/mf"
	"gvs/ofproto/ofp"
	"gvs/ofproto/ofperr"
)

// flowMonitor is one flow monitor of a connection (struct ofmonitor).
type flowMonitor struct {
	ofp.FlowMonitor
}

// MonitorMatches reports whether a flow change concerns monitor mon
// (Open vSwitch's test in ofmonitor_report, without the event flags): the
// monitor's table, out port and out group, and its match loosely (the
// flow matches at least the fields the monitor names, with the same
// values).
func MonitorMatches(mon *ofp.FlowMonitor, fc *FlowChange) bool {
	if mon.TableID != ofp.TableAll && mon.TableID != fc.Update.TableID {
		return false
	}
	if fc.OutputsTo != nil && (mon.OutPort != mf.PortNone || mon.OutGroup != ofp.GroupAny) {
		if !fc.OutputsTo(mon.OutPort, mon.OutGroup) {
			return false
		}
	}
	return looseMatch(&fc.Update.Match, &mon.Match)
}

// looseMatch is cls_rule_is_loose_match(rule, criteria): every bit the
// criteria match on, the rule matches on too, with the same value.
func looseMatch(rule, criteria *mf.Match) bool {
	rf, rm := rule.Flow.Words(), rule.Wildcards.Masks.Words()
	cf, cm := criteria.Flow.Words(), criteria.Wildcards.Masks.Words()
	for i := range rf {
		if cm[i]&^rm[i] != 0 || (rf[i]^cf[i])&cm[i] != 0 {
			return false
		}
	}
	return true
}

// eventFlag is the monitor flag that asks for an event.
func eventFlag(event uint16) uint16 {
	switch event {
	case ofp.UpdateAdded:
		return ofp.MonitorAdd
	case ofp.UpdateRemoved:
		return ofp.MonitorRemoved
	case ofp.UpdateModified:
		return ofp.MonitorModify
	}
	return 0
}

// flowMonitorRequest is handle_flow_monitor_request: add, modify and
// delete monitors (all or none), then reply with the initial flows of
// the monitors added or modified.
func (m *Manager) flowMonitorRequest(c *ofconn, h *ofp.Header, req *ofp.FlowMonitorRequest) error {
	mons := c.state.monitors
	next := make(map[uint32]*flowMonitor, len(mons))
	for id, mon := range mons {
		next[id] = mon
	}
	var fresh []*flowMonitor
	for _, r := range req.Monitors {
		if r.TableID != ofp.TableAll && r.TableID >= m.br.Features().NTables {
			return ofperr.OFPBRC_BAD_TABLE_ID
		}
		switch r.Command {
		case ofp.MonitorCommandAdd:
			if next[r.ID] != nil {
				return ofperr.OFPMOFC_MONITOR_EXISTS
			}
		case ofp.MonitorCommandModify, ofp.MonitorCommandDelete:
			if next[r.ID] == nil {
				return ofperr.OFPMOFC_UNKNOWN_MONITOR
			}
			delete(next, r.ID)
			if r.Command == ofp.MonitorCommandDelete {
				continue
			}
		}
		mon := &flowMonitor{FlowMonitor: r}
		next[r.ID] = mon
		fresh = append(fresh, mon)
	}
	c.state.monitors = next
	var updates []ofp.FlowUpdate
	for _, mon := range fresh {
		if mon.Flags&ofp.MonitorInitial == 0 {
			continue
		}
		for _, u := range m.br.MonitorFlows(&ofp.FlowMonitorRequest{Monitors: []ofp.FlowMonitor{mon.FlowMonitor}}) {
			u.Event, u.Reason, u.Xid = ofp.UpdateInitial, 0, 0
			if mon.Flags&ofp.MonitorInstructions == 0 {
				u.Actions = nil
			}
			updates = append(updates, u)
		}
	}
	m.reply(c, h.Xid, &ofp.FlowMonitorReply{Updates: updates})
	return nil
}

// flowMonitorCancel is handle_flow_monitor_cancel.
func (m *Manager) flowMonitorCancel(c *ofconn, id uint32) error {
	if c.state.monitors[id] == nil {
		return ofperr.OFPMOFC_UNKNOWN_MONITOR
	}
	delete(c.state.monitors, id)
	return nil
}

// reportFlowChange is ofmonitor_report for one change: the connections
// whose monitors want it queue an update (full, or one abbreviated
// update per batch for the connection that made the change);
// flushMonitorUpdates sends them.
func (m *Manager) reportFlowChange(fc *FlowChange, o Origin) {
	want := eventFlag(fc.Update.Event)
	for _, c := range m.sortedConns() {
		var flags uint16
		for _, mon := range c.state.monitors {
			if mon.Flags&want != 0 && MonitorMatches(&mon.FlowMonitor, fc) {
				flags |= mon.Flags
			}
		}
		if flags == 0 {
			continue
		}
		if flags&ofp.MonitorOnlyOwn != 0 || c.id != o.Conn {
			u := fc.Update
			if u.Event != ofp.UpdateRemoved {
				u.Reason = 0
			}
			if flags&ofp.MonitorInstructions == 0 {
				u.Actions = nil
			}
			u.Xid = 0
			c.updates = append(c.updates, u)
		} else if !c.sentAbbrev {
			c.updates = append(c.updates, ofp.FlowUpdate{Event: ofp.UpdateAbbrev, Xid: o.XID})
			c.sentAbbrev = true
		}
	}
}

// flushMonitorUpdates is ofmonitor_flush: each connection's queued updates
// go out as flow monitor replies (xid 0).
func (m *Manager) flushMonitorUpdates() {
	for _, c := range m.conns {
		if len(c.updates) == 0 {
			continue
		}
		m.reply(c, 0, &ofp.FlowMonitorReply{Updates: c.updates})
		c.updates, c.sentAbbrev = nil, false
	}
}

package pipeline

import "gvs/ofproto/classifier"

// STAND-IN until ofproto/ofpact lands on main (helper "ofpact"): the
// action kinds the pipeline inspects (output, group, meter, conjunction,
// nested actions) are local types, replaced by ofpact's after merging.

// Action is an OpenFlow action (ofpact.Action).
type Action = any

// OutputAction is ofpact.Output.
type OutputAction struct{ Port uint32 }

// GroupAction is ofpact.Group.
type GroupAction struct{ ID uint32 }

// MeterAction is ofpact.Meter.
type MeterAction struct{ ID uint32 }

// ControllerAction is ofpact.Controller.
type ControllerAction struct{ MaxLen uint16 }

// ConjunctionAction is ofpact.Conjunction (clause is 0-based here).
type ConjunctionAction struct {
	ID               uint32
	Clause, NClauses uint8
}

// conjunctions returns the conjunctions of a rule whose actions are all
// conjunction actions (get_conjunctions), else nil.
func conjunctions(acts []Action) []classifier.Conjunction {
	var out []classifier.Conjunction
	for _, a := range acts {
		c, ok := a.(ConjunctionAction)
		if !ok {
			return nil
		}
		out = append(out, classifier.Conjunction{ID: c.ID, Clause: c.Clause, NClauses: c.NClauses})
	}
	return out
}

// WriteActions is ofpact.WriteActions (nested actions).
type WriteActions struct{ Actions []Action }

// forEachAction calls fn for every action in acts, nested ones included
// (Open vSwitch's OFPACT_FOR_EACH_FLATTENED).
func forEachAction(acts []Action, fn func(Action) bool) bool {
	for _, a := range acts {
		if !fn(a) {
			return false
		}
		if w, ok := a.(WriteActions); ok && !forEachAction(w.Actions, fn) {
			return false
		}
	}
	return true
}

// actionsOutputTo is ofpacts_output_to_port: an output (or enqueue) to
// port; FLOOD and ALL do not count.
func actionsOutputTo(acts []Action, port uint32) bool {
	return !forEachAction(acts, func(a Action) bool {
		o, ok := a.(OutputAction)
		return !ok || o.Port != port
	})
}

// actionsOutputToGroup is ofpacts_output_to_group.
func actionsOutputToGroup(acts []Action, id uint32) bool {
	return !forEachAction(acts, func(a Action) bool {
		g, ok := a.(GroupAction)
		return !ok || g.ID != id
	})
}

// actionsGroups and actionsMeter list what a rule's actions refer to.
func actionsGroups(acts []Action, fn func(uint32)) {
	forEachAction(acts, func(a Action) bool {
		if g, ok := a.(GroupAction); ok {
			fn(g.ID)
		}
		return true
	})
}

func actionsMeter(acts []Action) (uint32, bool) {
	var id uint32
	found := !forEachAction(acts, func(a Action) bool {
		m, ok := a.(MeterAction)
		if ok {
			id = m.ID
		}
		return !ok
	})
	return id, found
}

// ActionsEqual is ofpacts_equal.
func ActionsEqual(a, b []Action) bool { return actionsEqual(a, b) }

// actionsEqual is ofpacts_equal.
func actionsEqual(a, b []Action) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		wa, okA := a[i].(WriteActions)
		wb, okB := b[i].(WriteActions)
		if okA || okB {
			if !okA || !okB || !actionsEqual(wa.Actions, wb.Actions) {
				return false
			}
			continue
		}
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

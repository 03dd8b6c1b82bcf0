package pipeline

import (
	"reflect"

	"gvs/ofproto/classifier"
	"gvs/ofproto/ofpact"
	"gvs/ofproto/xlate"
)

// Action is an OpenFlow action or instruction (ofproto/ofpact's types,
// used by pointer): translation's own type, so a rule hands translation
// its actions without copying.
type Action = xlate.Action

// walk calls fn for every action in acts and, right after a clone, ct or
// write_actions, for its nested actions (Open vSwitch's
// OFPACT_FOR_EACH_FLATTENED), until fn returns false.
func walk[A any](acts []A, fn func(any) bool) bool {
	for _, a := range acts {
		if !fn(a) {
			return false
		}
		var nested []ofpact.Action
		switch a := any(a).(type) {
		case *ofpact.Clone:
			nested = a.Actions
		case *ofpact.CT:
			nested = a.Actions
		case *ofpact.WriteActions:
			nested = a.Actions
		}
		if !walk(nested, fn) {
			return false
		}
	}
	return true
}

// actionsOutputTo is ofpacts_output_to_port: an output or enqueue to port
// (and a controller action for CONTROLLER); FLOOD and ALL do not count.
func actionsOutputTo(acts []Action, port uint32) bool {
	return !walk(acts, func(a any) bool {
		switch a := a.(type) {
		case *ofpact.Output:
			return a.Port != port
		case *ofpact.Enqueue:
			return a.Port != port
		case *ofpact.Controller:
			return port != controllerPort
		}
		return true
	})
}

const controllerPort = 0xfffd // mf.PortController

// actionsOutputToGroup is ofpacts_output_to_group.
func actionsOutputToGroup(acts []Action, id uint32) bool {
	return !walk(acts, func(a any) bool {
		g, ok := a.(*ofpact.Group)
		return !ok || g.ID != id
	})
}

// actionsGroups calls fn for every group the actions name.
func actionsGroups(acts []Action, fn func(uint32)) {
	walk(acts, func(a any) bool {
		if g, ok := a.(*ofpact.Group); ok {
			fn(g.ID)
		}
		return true
	})
}

// actionsMeter returns the meter the actions name (ofpacts_get_meter;
// the first meter instruction or action).
func actionsMeter(acts []Action) (uint32, bool) {
	var id uint32
	found := !walk(acts, func(a any) bool {
		m, ok := a.(*ofpact.Meter)
		if ok {
			id = m.ID
		}
		return !ok
	})
	return id, found
}

// checkedMeters calls fn for every meter an action or instruction names
// (ofproto_check_ofpacts' OFPACT_METER) until fn returns false.
func checkedMeters(acts []Action, fn func(uint32) bool) bool {
	return walk(acts, func(a any) bool {
		if m, ok := a.(*ofpact.Meter); ok {
			return fn(m.ID)
		}
		return true
	})
}

// ActionsEqual is ofpacts_equal.
func ActionsEqual(a, b []Action) bool { return actionsEqual(a, b) }

func actionsEqual(a, b []Action) bool {
	return len(a) == len(b) && reflect.DeepEqual(a, b)
}

// conjunctions returns the conjunctions of a rule whose actions are all
// conjunction actions (get_conjunctions), else nil.
func conjunctions(acts []Action) []classifier.Conjunction {
	var out []classifier.Conjunction
	for _, a := range acts {
		c, ok := a.(*ofpact.Conjunction)
		if !ok {
			return nil
		}
		out = append(out, classifier.Conjunction{ID: c.ID, Clause: c.Clause, NClauses: c.NClauses})
	}
	return out
}

// forEachDeleteLearned calls fn for every learn action with
// delete_learned in acts.
func forEachDeleteLearned(acts []Action, fn func(learnedKey)) {
	walk(acts, func(a any) bool {
		if l, ok := a.(*ofpact.Learn); ok && l.Flags&ofpact.LearnDeleteLearned != 0 {
			fn(learnedKey{l.TableID, l.Cookie})
		}
		return true
	})
}

// ActionsOutputTo is ofpacts_output_to_port (flow monitors' out_port).
func ActionsOutputTo(acts []Action, port uint32) bool { return actionsOutputTo(acts, port) }

// ActionsOutputToGroup is ofpacts_output_to_group.
func ActionsOutputToGroup(acts []Action, group uint32) bool { return actionsOutputToGroup(acts, group) }

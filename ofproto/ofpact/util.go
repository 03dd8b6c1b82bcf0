package ofpact

import (
	"reflect"

	"gvs/ofproto/mf"
)

// Equal reports whether two action lists are the same, wire encoding
// choices included (OVS's ofpacts_equal compares its internal form the
// same way). Fields compare by identity, as registry entries.
func Equal(a, b []Action) bool {
	if len(a) != len(b) {
		return false
	}
	return reflect.DeepEqual(a, b)
}

// nested returns the actions nested in a (clone, ct, write_actions).
func nested(a Action) []Action {
	switch a := a.(type) {
	case *Clone:
		return a.Actions
	case *CT:
		return a.Actions
	case *WriteActions:
		return a.Actions
	}
	return nil
}

// Walk calls fn for every action of acts and, right after each clone, ct
// or write_actions, for its nested actions (OVS's
// OFPACT_FOR_EACH_FLATTENED), until fn returns false. It reports whether
// the walk ran to the end. Core uses it to find the groups and meters a
// flow refers to.
func Walk(acts []Action, fn func(Action) bool) bool {
	for _, a := range acts {
		if !fn(a) || !Walk(nested(a), fn) {
			return false
		}
	}
	return true
}

// OutputsToPort reports whether acts (nested actions included) can send
// the packet to OpenFlow port (OVS's ofpacts_output_to_port, for flow
// mod and flow stats out_port filters).
func OutputsToPort(acts []Action, port uint32) bool {
	for _, a := range acts {
		switch a := a.(type) {
		case *Output:
			if a.Port == port {
				return true
			}
		case *Enqueue:
			if a.Port == port {
				return true
			}
		case *Controller:
			if port == mf.PortController {
				return true
			}
		}
		if OutputsToPort(nested(a), port) {
			return true
		}
	}
	return false
}

// OutputsToGroup reports whether acts (nested actions included) send the
// packet through group id (OVS's ofpacts_output_to_group, for out_group
// filters).
func OutputsToGroup(acts []Action, id uint32) bool {
	for _, a := range acts {
		if g, ok := a.(*Group); ok && g.ID == id {
			return true
		}
		if OutputsToGroup(nested(a), id) {
			return true
		}
	}
	return false
}

// MeterID returns the meter of acts' meter instruction, 0 if none (OVS's
// ofpacts_get_meter: only a leading meter counts).
func MeterID(acts []Action) uint32 {
	for _, a := range acts {
		if m, ok := a.(*Meter); ok {
			return m.ID
		}
		if instructionSlot(a.Kind(), 0) > slotMeter {
			break
		}
	}
	return 0
}

// Action-set slots, in execution order (OVS's ACTION_SET_ORDER), and the
// final actions by priority (ACTION_SET_FINAL_PRIORITY).
var actionSetOrder = [...]Kind{KindStripVLAN, KindPopMPLS, KindDecap, KindPushMPLS, KindPushVLAN, KindDecTTL, KindDecMPLSTTL, KindDecNSHTTL}
var actionSetFinal = [...]Kind{KindCT, KindCTClear, KindResubmit, KindOutput, KindGroup}

// ExecuteActionSet turns an action set (what write_actions accumulated)
// into the action list to run at the end of the pipeline, as OVS's
// ofpacts_execute_action_set: one action per ordered slot, then the set
// and move actions in the order written, then the highest-priority final
// action (group over output over resubmit over ct_clear over ct). Without
// a final action nothing is executed.
func ExecuteActionSet(set []Action) []Action {
	var slots [len(actionSetOrder)]Action
	var sets []Action
	var final Action
	finalPrio := -1
	for _, a := range set {
		k := a.Kind()
		placed := false
		for i, s := range actionSetOrder {
			if k == s {
				slots[i], placed = a, true
			}
		}
		for p, f := range actionSetFinal {
			if k == f {
				placed = true
				if p >= finalPrio {
					final, finalPrio = a, p
				}
			}
		}
		if !placed && AllowedInActionSet(k) {
			sets = append(sets, a)
		}
	}
	if final == nil {
		return nil
	}
	var out []Action
	for _, a := range slots {
		if a != nil {
			out = append(out, a)
		}
	}
	out = append(out, sets...)
	return append(out, final)
}

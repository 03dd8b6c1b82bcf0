package pipeline

// STAND-IN until ofproto/ofperr and ofproto/ofpact land on main (helpers
// "ofp" and "ofpact"): the errors carry Open vSwitch's names, and the
// three action kinds the pipeline inspects (output, group, meter) are
// local types. Replaced by the real packages after merging main.

// Error is an OpenFlow error named as Open vSwitch's enum ofperr.
type Error string

func (e Error) Error() string { return string(e) }

// The errors the pipeline returns.
const (
	OFPBRC_BAD_TABLE_ID          Error = "OFPBRC_BAD_TABLE_ID"
	OFPBRC_EPERM                 Error = "OFPBRC_EPERM"
	OFPFMFC_OVERLAP              Error = "OFPFMFC_OVERLAP"
	OFPFMFC_TABLE_FULL           Error = "OFPFMFC_TABLE_FULL"
	OFPFMFC_BAD_COMMAND          Error = "OFPFMFC_BAD_COMMAND"
	OFPFMFC_UNKNOWN              Error = "OFPFMFC_UNKNOWN"
	OFPBAC_BAD_OUT_GROUP         Error = "OFPBAC_BAD_OUT_GROUP"
	OFPMMFC_INVALID_METER        Error = "OFPMMFC_INVALID_METER"
	OFPMMFC_UNKNOWN_METER        Error = "OFPMMFC_UNKNOWN_METER"
	OFPMMFC_METER_EXISTS         Error = "OFPMMFC_METER_EXISTS"
	OFPMMFC_OUT_OF_BANDS         Error = "OFPMMFC_OUT_OF_BANDS"
	OFPMMFC_BAD_COMMAND          Error = "OFPMMFC_BAD_COMMAND"
	OFPMMFC_OUT_OF_METERS        Error = "OFPMMFC_OUT_OF_METERS"
	OFPGMFC_GROUP_EXISTS         Error = "OFPGMFC_GROUP_EXISTS"
	OFPGMFC_INVALID_GROUP        Error = "OFPGMFC_INVALID_GROUP"
	OFPGMFC_UNKNOWN_GROUP        Error = "OFPGMFC_UNKNOWN_GROUP"
	OFPGMFC_BAD_TYPE             Error = "OFPGMFC_BAD_TYPE"
	OFPGMFC_BAD_COMMAND          Error = "OFPGMFC_BAD_COMMAND"
	OFPGMFC_OUT_OF_GROUPS        Error = "OFPGMFC_OUT_OF_GROUPS"
	OFPGMFC_UNKNOWN_BUCKET       Error = "OFPGMFC_UNKNOWN_BUCKET"
	OFPGMFC_BUCKET_EXISTS        Error = "OFPGMFC_BUCKET_EXISTS"
	OFPGMFC_LOOP                 Error = "OFPGMFC_LOOP"
	OFPGMFC_CHAINING_UNSUPPORTED Error = "OFPGMFC_CHAINING_UNSUPPORTED"
)

// Action is an OpenFlow action (ofpact.Action).
type Action interface{ standinAction() }

// OutputAction is ofpact.Output.
type OutputAction struct{ Port uint32 }

// GroupAction is ofpact.Group.
type GroupAction struct{ ID uint32 }

// MeterAction is ofpact.Meter.
type MeterAction struct{ ID uint32 }

// ControllerAction is ofpact.Controller.
type ControllerAction struct{ MaxLen uint16 }

// WriteActions is ofpact.WriteActions (nested actions).
type WriteActions struct{ Actions []Action }

func (OutputAction) standinAction()     {}
func (GroupAction) standinAction()      {}
func (MeterAction) standinAction()      {}
func (ControllerAction) standinAction() {}
func (WriteActions) standinAction()     {}

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

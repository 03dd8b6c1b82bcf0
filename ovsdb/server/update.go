package server

import (
	"gvs/ovsdb/db"
)

// tableUpdates is <table-updates> or <table-updates2>: table name -> row
// UUID -> <row-update> or <row-update2>.
type tableUpdates map[string]map[string]any

func (u tableUpdates) add(table string, uuid db.UUID, rowUpdate any) {
	rows := u[table]
	if rows == nil {
		rows = map[string]any{}
		u[table] = rows
	}
	rows[string(uuid)] = rowUpdate
}

// rowChange is a row's net change over one or more commits: old is nil for
// an insert, new is nil for a delete.
type rowChange struct{ old, new *db.Row }

// changeType is Open vSwitch's ovsdb_monitor_row_update_type().
func changeType(initial bool, old, new *db.Row) selection {
	switch {
	case initial:
		if new != nil {
			return selInitial
		}
		return 0
	case old == nil:
		return selInsert
	case new == nil:
		return selDelete
	}
	return selModify
}

// changedColumns says which monitored columns differ between old and new.
func (mt *monTable) changedColumns(old, new *db.Row) ([]bool, int) {
	changed := make([]bool, len(mt.cols))
	n := 0
	for i, c := range mt.cols {
		if !c.datum(old).Equal(c.datum(new)) {
			changed[i] = true
			n++
		}
	}
	return changed, n
}

// rowUpdate returns the <row-update> (version 1) or <row-update2> for one
// row change, or nil when the monitor is not to hear of it.
func (mt *monTable) rowUpdate(version monitorVersion, old, new *db.Row, initial bool) any {
	if version == monitorV1 {
		return mt.rowUpdate1(old, new, initial)
	}
	typ := changeType(initial, old, new)
	oldMatch := old != nil && mt.cond.match(old)
	newMatch := new != nil && mt.cond.match(new)
	switch typ {
	case selInitial, selInsert:
		if !newMatch {
			return nil
		}
	case selDelete:
		if !oldMatch {
			return nil
		}
	case selModify:
		switch {
		case !oldMatch && !newMatch:
			return nil
		case !oldMatch:
			typ = selInsert
		case !newMatch:
			typ = selDelete
		}
	}
	return mt.rowUpdate2(typ, old, new)
}

// condChangeUpdate is the <row-update2> that a condition change from
// oldCond to mt.cond causes for an unchanged row: rows that leave are
// deleted, rows that enter are inserted.
func (mt *monTable) condChangeUpdate(row *db.Row, oldCond *monCondition) any {
	was, is := oldCond.match(row), mt.cond.match(row)
	switch {
	case was && !is:
		return mt.rowUpdate2(selDelete, row, nil)
	case !was && is:
		return mt.rowUpdate2(selInsert, nil, row)
	}
	return nil
}

func (mt *monTable) rowUpdate1(old, new *db.Row, initial bool) any {
	typ := changeType(initial, old, new)
	if mt.sel&typ == 0 {
		return nil
	}
	var changed []bool
	if typ == selModify {
		var n int
		if changed, n = mt.changedColumns(old, new); n == 0 {
			return nil
		}
	}
	update := map[string]any{}
	var oldJSON, newJSON map[string]any
	if typ&(selDelete|selModify) != 0 {
		oldJSON = map[string]any{}
		update["old"] = oldJSON
	}
	if typ&(selInitial|selInsert|selModify) != 0 {
		newJSON = map[string]any{}
		update["new"] = newJSON
	}
	for i, c := range mt.cols {
		if c.sel&typ == 0 {
			continue
		}
		if typ == selDelete || typ == selModify && changed[i] {
			oldJSON[c.name] = db.DatumJSON(c.datum(old), c.typ)
		}
		if newJSON != nil {
			newJSON[c.name] = db.DatumJSON(c.datum(new), c.typ)
		}
	}
	return update
}

func (mt *monTable) rowUpdate2(typ selection, old, new *db.Row) any {
	if mt.sel&typ == 0 {
		return nil
	}
	if typ == selDelete {
		return map[string]any{"delete": nil}
	}
	row := map[string]any{}
	for _, c := range mt.cols {
		if c.sel&typ == 0 {
			continue
		}
		if typ == selModify {
			o, n := c.datum(old), c.datum(new)
			if !o.Equal(n) {
				row[c.name] = db.DatumJSON(db.DiffDatum(o, n, c.typ), c.typ)
			}
		} else if d := c.datum(new); !isDefaultDatum(d, c.typ) {
			row[c.name] = db.DatumJSON(d, c.typ)
		}
	}
	switch typ {
	case selInitial:
		return map[string]any{"initial": row}
	case selInsert:
		return map[string]any{"insert": row}
	}
	if len(row) == 0 {
		// Only columns this monitor does not report changed.
		return nil
	}
	return map[string]any{"modify": row}
}

// isDefaultDatum reports whether d is its type's default value: empty for
// optional columns, else the default atom (0, 0.0, false, "", zero UUID).
func isDefaultDatum(d db.Datum, t *db.ColumnType) bool {
	if t.Min == 0 {
		return len(d.Keys) == 0
	}
	if len(d.Keys) != 1 || !isDefaultAtom(d.Keys[0]) {
		return false
	}
	return t.Value == nil || len(d.Values) == 1 && isDefaultAtom(d.Values[0])
}

func isDefaultAtom(a db.Atom) bool {
	switch a := a.(type) {
	case int64:
		return a == 0
	case float64:
		return a == 0
	case bool:
		return !a
	case string:
		return a == ""
	case db.UUID:
		return a == db.ZeroUUID
	}
	return false
}

// commitUpdates is what one commit means to monitor m.
func (m *monitor) commitUpdates(c *db.Commit) tableUpdates {
	var u tableUpdates
	for _, name := range m.names {
		changes := c.Tables[name]
		if len(changes) == 0 {
			continue
		}
		mt := m.tables[name]
		for uuid, ch := range changes {
			if ru := mt.rowUpdate(m.version, ch.Old, ch.New, false); ru != nil {
				if u == nil {
					u = tableUpdates{}
				}
				u.add(name, uuid, ru)
			}
		}
	}
	return u
}

// initialUpdates is the initial contents for monitor m.
func (m *monitor) initialUpdates(rows map[string]map[db.UUID]*db.Row) tableUpdates {
	u := tableUpdates{}
	for _, name := range m.names {
		mt := m.tables[name]
		if mt.sel&selInitial == 0 {
			continue
		}
		for uuid, row := range rows[name] {
			if ru := mt.rowUpdate(m.version, nil, row, true); ru != nil {
				u.add(name, uuid, ru)
			}
		}
	}
	return u
}

// changeUpdates reports net changes accumulated over several commits.
func (m *monitor) changeUpdates(changes map[string]map[db.UUID]rowChange) tableUpdates {
	u := tableUpdates{}
	for _, name := range m.names {
		mt := m.tables[name]
		for uuid, ch := range changes[name] {
			if ru := mt.rowUpdate(m.version, ch.old, ch.new, false); ru != nil {
				u.add(name, uuid, ru)
			}
		}
	}
	return u
}

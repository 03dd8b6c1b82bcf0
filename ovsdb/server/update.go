package server

import (
	"maps"
	"slices"

	"gvs/ovsdb/db"
	"gvs/ovsdb/internal/fastjson"
)

// tableUpdates is <table-updates> or <table-updates2>: table name -> row
// UUID -> the encoded <row-update> or <row-update2>. It encodes itself as
// json.Marshal would encode the nested maps (keys sorted).
type tableUpdates map[string]map[string][]byte

var _ fastjson.Appender = tableUpdates(nil)

func (u tableUpdates) add(table string, uuid db.UUID, rowUpdate []byte) {
	rows := u[table]
	if rows == nil {
		rows = map[string][]byte{}
		u[table] = rows
	}
	rows[string(uuid)] = rowUpdate
}

// AppendJSON appends u as a JSON object.
func (u tableUpdates) AppendJSON(dst []byte) []byte {
	if u == nil {
		return append(dst, "null"...)
	}
	size := 2
	for table, rows := range u {
		size += len(table) + 5
		for uuid, ru := range rows {
			size += len(uuid) + len(ru) + 4
		}
	}
	dst = slices.Grow(dst, size)
	dst = append(dst, '{')
	for i, table := range slices.Sorted(maps.Keys(u)) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = fastjson.AppendString(dst, table)
		dst = append(dst, ":{"...)
		rows := u[table]
		for j, uuid := range slices.Sorted(maps.Keys(rows)) {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = fastjson.AppendString(dst, uuid)
			dst = append(dst, ':')
			dst = append(dst, rows[uuid]...)
		}
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

// MarshalJSON is AppendJSON, for encoding/json.
func (u tableUpdates) MarshalJSON() ([]byte, error) { return u.AppendJSON(nil), nil }

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

// rowUpdate returns the encoded <row-update> (version 1) or <row-update2>
// for one row change, or nil when the monitor is not to hear of it.
func (mt *monTable) rowUpdate(version monitorVersion, old, new *db.Row, initial bool) []byte {
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
func (mt *monTable) condChangeUpdate(row *db.Row, oldCond *monCondition) []byte {
	was, is := oldCond.match(row), mt.cond.match(row)
	switch {
	case was && !is:
		return mt.rowUpdate2(selDelete, row, nil)
	case !was && is:
		return mt.rowUpdate2(selInsert, nil, row)
	}
	return nil
}

func (mt *monTable) rowUpdate1(old, new *db.Row, initial bool) []byte {
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
	// {"new":{...},"old":{...}}: members in json.Marshal's sorted order.
	dst := []byte{'{'}
	if typ&(selInitial|selInsert|selModify) != 0 {
		dst = append(dst, `"new":{`...)
		first := true
		for _, i := range mt.byName {
			c := mt.cols[i]
			if c.sel&typ == 0 {
				continue
			}
			dst = c.appendMember(dst, &first, c.datum(new))
		}
		dst = append(dst, '}')
	}
	if typ&(selDelete|selModify) != 0 {
		if len(dst) > 1 {
			dst = append(dst, ',')
		}
		dst = append(dst, `"old":{`...)
		first := true
		for _, i := range mt.byName {
			c := mt.cols[i]
			if c.sel&typ == 0 || typ == selModify && !changed[i] {
				continue
			}
			dst = c.appendMember(dst, &first, c.datum(old))
		}
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

func (mt *monTable) rowUpdate2(typ selection, old, new *db.Row) []byte {
	if mt.sel&typ == 0 {
		return nil
	}
	var dst []byte
	switch typ {
	case selDelete:
		return []byte(`{"delete":null}`)
	case selInitial:
		dst = append(dst, `{"initial":{`...)
	case selInsert:
		dst = append(dst, `{"insert":{`...)
	default:
		dst = append(dst, `{"modify":{`...)
	}
	first := true
	for _, i := range mt.byName {
		c := mt.cols[i]
		if c.sel&typ == 0 {
			continue
		}
		if typ == selModify {
			o, n := c.datum(old), c.datum(new)
			if !o.Equal(n) {
				dst = c.appendMember(dst, &first, db.DiffDatum(o, n, c.typ))
			}
		} else if d := c.datum(new); !isDefaultDatum(d, c.typ) {
			dst = c.appendMember(dst, &first, d)
		}
	}
	if typ == selModify && first {
		// Only columns this monitor does not report changed.
		return nil
	}
	return append(dst, "}}"...)
}

// appendMember appends `"name":datum`, after a comma unless *first.
func (c *monColumn) appendMember(dst []byte, first *bool, d db.Datum) []byte {
	if !*first {
		dst = append(dst, ',')
	}
	*first = false
	dst = append(dst, c.key...)
	return db.AppendDatumJSON(dst, d, c.typ)
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
		if len(rows[name]) > 0 && u[name] == nil {
			u[name] = make(map[string][]byte, len(rows[name]))
		}
		for uuid, row := range rows[name] {
			if ru := mt.rowUpdate(m.version, nil, row, true); ru != nil {
				u.add(name, uuid, ru)
			}
		}
		if len(u[name]) == 0 {
			delete(u, name)
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

package db

import (
	"encoding/json"
	"sort"
)

// This file lets storage rebuild a database from its log: Replay applies a
// transaction read back from disk, ParseDiff reads a column diff.

// Replay applies one stored transaction: changes maps a table name to the
// UUIDs of the rows it changed, each with the row's complete new contents
// (Row.Columns indexed by Column.Index), or nil for a deleted row. Like
// Open vSwitch's ovsdb_txn_replay_commit it skips what only matters to
// clients (operations, mutability, "wait") but runs the commit-time checks
// (referential integrity, garbage collection, maxRows, weak references,
// indexes), so the database's indexes and reference counts stay right. The
// values are checked against the schema first: a malformed change is an
// error, never a panic. On error nothing changes. Subscribers are told;
// the BeforeCommit hook is not called (the change is already stored).
//
// Replay takes the write lock; it must not be called from a subscriber or
// hook.
func (d *Database) Replay(changes map[string]map[UUID]*Row) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	x := &txn{db: d, env: TxnEnv{}, rows: map[rowKey]*txnRow{}, symtab: symbolTable{}, timeout: -1, privileged: true}
	for _, tableName := range sortedTableNames(changes) {
		ts := d.tables[tableName]
		if ts == nil {
			return errorf("unknown table", "No table named %s.", tableName)
		}
		rows := changes[tableName]
		uuids := make([]UUID, 0, len(rows))
		for u := range rows {
			uuids = append(uuids, u)
		}
		sort.Slice(uuids, func(i, j int) bool { return uuids[i] < uuids[j] })
		for _, uuid := range uuids {
			if err := x.replayRow(ts, uuid, rows[uuid]); err != nil {
				return err
			}
		}
	}
	if len(x.order) == 0 {
		return nil
	}
	if err := x.precommit(); err != nil {
		return err
	}
	commit := x.buildCommit()
	if commit == nil {
		return nil
	}
	d.apply(x.order)
	for _, s := range d.subscribers {
		s.fn(commit)
	}
	return nil
}

func sortedTableNames(m map[string]map[UUID]*Row) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (x *txn) replayRow(ts *tableState, uuid UUID, row *Row) *Error {
	if _, ok := ParseUUID(string(uuid)); !ok {
		return syntaxError("\"%s\" is not a valid UUID", uuid)
	}
	if x.rows[rowKey{ts, uuid}] != nil {
		return syntaxError("transaction changes row %s twice", uuid)
	}
	if row == nil {
		if ts.rows[uuid] == nil {
			return syntaxError("transaction deletes row %s that does not exist", uuid)
		}
		x.deleteRow(ts, ts.rows[uuid])
		return nil
	}
	if len(row.Columns) != len(ts.schema.Columns) {
		return syntaxError("row %s of table %s has %d columns, the schema %d",
			uuid, ts.schema.Name, len(row.Columns), len(ts.schema.Columns))
	}
	columns := make([]Datum, len(row.Columns))
	for _, c := range ts.schema.Columns {
		datum, err := validDatum(row.Columns[c.Index], &c.Type)
		if err != nil {
			return errorf(err.Name, "column %s of %s row %s: %s", c.Name, ts.schema.Name, uuid, err.Details)
		}
		columns[c.Index] = datum
	}
	if ts.rows[uuid] == nil {
		x.insertRow(ts, &Row{UUID: uuid, Version: NewUUID(), Columns: columns})
		return nil
	}
	tr := x.touch(ts, uuid)
	tr.new.Columns = columns
	return nil
}

// validDatum checks a datum built outside the package against t: element
// count, atom Go types and constraints, sorted unique keys. It returns the
// datum with a set's Values normalised to nil.
func validDatum(d Datum, t *ColumnType) (Datum, *Error) {
	n := len(d.Keys)
	if n < t.Min || n > t.Max {
		return Datum{}, errorf("constraint violation", "%d elements where the type (%s) allows %d to %d", n, t.English(), t.Min, printMax(t.Max))
	}
	if t.IsMap() {
		if len(d.Values) != n {
			return Datum{}, syntaxError("map with %d keys and %d values", n, len(d.Values))
		}
	} else if len(d.Values) != 0 {
		return Datum{}, syntaxError("set with values")
	} else {
		d.Values = nil
	}
	for i, k := range d.Keys {
		if err := validAtom(k, &t.Key); err != nil {
			return Datum{}, err
		}
		if i > 0 && compareAtoms(d.Keys[i-1], k) >= 0 {
			return Datum{}, syntaxError("keys not sorted or not unique")
		}
		if t.IsMap() {
			if err := validAtom(d.Values[i], t.Value); err != nil {
				return Datum{}, err
			}
		}
	}
	return d, nil
}

func validAtom(a Atom, base *BaseType) *Error {
	ok := false
	switch base.Type {
	case TypeInteger:
		_, ok = a.(int64)
	case TypeReal:
		_, ok = a.(float64)
	case TypeBoolean:
		_, ok = a.(bool)
	case TypeString:
		_, ok = a.(string)
	case TypeUUID:
		var u UUID
		if u, ok = a.(UUID); ok {
			_, ok = ParseUUID(string(u))
		}
	}
	if !ok {
		return syntaxError("expected %s", base.Type)
	}
	return checkAtom(a, base)
}

// ParseDiff parses a column diff as a stored transaction or an update2
// "modify" carries it (see DiffDatum): like ParseDatum, but without the
// type's size limits, which a diff may exceed (a set of at most 2 may
// change both its elements: a diff of 4).
func ParseDiff(raw json.RawMessage, t *ColumnType) (Datum, error) {
	v, err := decodeJSON(raw)
	if err != nil {
		return Datum{}, syntaxError("%s", err)
	}
	relaxed := *t
	relaxed.Min, relaxed.Max = 0, Unlimited
	if t.Max <= 1 {
		// A diff of an at-most-one-element type is the new value.
		relaxed = *t
	}
	d, e := parseDatumValue(v, &relaxed, nil)
	if e != nil {
		return Datum{}, e
	}
	return d, nil
}

// DatumString renders a datum as ovsdb_datum_to_string does (what
// `ovsdb-tool show-log -mm` prints): "[a, b]", "{k=v}", a bare atom for a
// scalar.
func DatumString(d Datum, t *ColumnType) string { return datumString(d, t) }

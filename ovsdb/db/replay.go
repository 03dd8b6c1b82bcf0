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
	total := 0
	for _, rows := range changes {
		total += len(rows)
	}
	x := &txn{db: d, env: TxnEnv{}, rows: make(map[rowKey]*txnRow, total), symtab: symbolTable{}, timeout: -1, privileged: true}
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
	old := ts.rows[uuid]
	columns := make([]Datum, len(row.Columns))
	for _, c := range ts.schema.Columns {
		if old != nil && sameDatum(old.Columns[c.Index], row.Columns[c.Index]) {
			columns[c.Index] = old.Columns[c.Index] // unchanged: checked when stored
			continue
		}
		var known Datum // elements already checked, from the committed row
		if old != nil {
			known = old.Columns[c.Index]
		}
		datum, err := validDatum(row.Columns[c.Index], &c.Type, known)
		if err != nil {
			return errorf(err.Name, "column %s of %s row %s: %s", c.Name, ts.schema.Name, uuid, err.Details)
		}
		columns[c.Index] = datum
	}
	if old == nil {
		x.insertRow(ts, &Row{UUID: uuid, Version: NewUUID(), Columns: columns})
		return nil
	}
	tr := x.touch(ts, uuid)
	tr.new.Columns = columns
	return nil
}

// sameDatum reports whether two data share their storage (a column copied
// unchanged from a committed row), without comparing elements.
func sameDatum(a, b Datum) bool {
	if len(a.Keys) != len(b.Keys) || len(a.Values) != len(b.Values) {
		return false
	}
	if len(a.Keys) == 0 {
		return true
	}
	return &a.Keys[0] == &b.Keys[0] && (len(a.Values) == 0 || &a.Values[0] == &b.Values[0])
}

// validDatum checks a datum built outside the package against t: element
// count, atom Go types and constraints, sorted unique keys. Elements also
// in known (a committed, hence checked, value of the same column) skip the
// constraint checks, so changing one element of a big set costs little.
// It returns the datum with a set's Values normalised to nil.
func validDatum(d Datum, t *ColumnType, known Datum) (Datum, *Error) {
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
	j := 0 // next element of known not below d.Keys[i]
	for i, k := range d.Keys {
		if !hasGoType(k, t.Key.Type) || t.IsMap() && !hasGoType(d.Values[i], t.Value.Type) {
			return Datum{}, syntaxError("expected %s", t.English())
		}
		if i > 0 && compareAtoms(d.Keys[i-1], k) >= 0 {
			return Datum{}, syntaxError("keys not sorted or not unique")
		}
		for j < len(known.Keys) && compareAtoms(known.Keys[j], k) < 0 {
			j++
		}
		keyKnown := j < len(known.Keys) && compareAtoms(known.Keys[j], k) == 0
		if !keyKnown {
			if err := validAtom(k, &t.Key); err != nil {
				return Datum{}, err
			}
		}
		if t.IsMap() && !(keyKnown && compareAtoms(known.Values[j], d.Values[i]) == 0) {
			if err := validAtom(d.Values[i], t.Value); err != nil {
				return Datum{}, err
			}
		}
	}
	return d, nil
}

// hasGoType reports whether a holds the Go type of atomic type t, which
// compareAtoms relies on.
func hasGoType(a Atom, t AtomicType) bool {
	ok := false
	switch t {
	case TypeInteger:
		_, ok = a.(int64)
	case TypeReal:
		_, ok = a.(float64)
	case TypeBoolean:
		_, ok = a.(bool)
	case TypeString:
		_, ok = a.(string)
	case TypeUUID:
		_, ok = a.(UUID)
	}
	return ok
}

// validAtom checks an atom of the right Go type against base: a UUID's
// form, then base's constraints.
func validAtom(a Atom, base *BaseType) *Error {
	if u, isUUID := a.(UUID); isUUID && !isCanonicalUUID(u) {
		return syntaxError("expected %s", base.Type)
	}
	return checkAtom(a, base)
}

// isCanonicalUUID reports whether u is in lower-case 8-4-4-4-12 form.
func isCanonicalUUID(u UUID) bool {
	if len(u) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := u[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
		} else if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
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
	return ParseDiffValue(v, t)
}

// ParseDatumValue is ParseDatum on a JSON value already decoded by
// encoding/json with UseNumber (so a whole record is decoded once).
func ParseDatumValue(v any, t *ColumnType) (Datum, error) {
	d, e := parseDatumValue(v, t, nil)
	if e != nil {
		return Datum{}, e
	}
	return d, nil
}

// ParseDiffValue is ParseDiff on a JSON value already decoded by
// encoding/json with UseNumber.
func ParseDiffValue(v any, t *ColumnType) (Datum, error) {
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

package db

import (
	"sort"
	"strings"
)

// rowValues is a parsed <row>: the columns given and their values.
type rowValues struct {
	columns []*Column
	values  []Datum
}

// parseRow parses a JSON <row> object for ts's table. The pseudo columns
// are accepted (as Open vSwitch does); callers decide what they mean.
func parseRow(t *Table, v any, st symbolTable) (rowValues, *Error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return rowValues{}, syntaxError("row must be JSON object").at(v)
	}
	var rv rowValues
	for _, name := range sortedKeys(obj) {
		col := t.Column(name)
		if col == nil {
			return rowValues{}, errorf("unknown column", "No column %s in table %s.", name, t.Name).at(v)
		}
		d, err := parseDatumValue(obj[name], &col.Type, st)
		if err != nil {
			return rowValues{}, err
		}
		rv.columns = append(rv.columns, col)
		rv.values = append(rv.values, d)
	}
	return rv, nil
}

// newRow makes a row with every column at its default, then the values of
// rv (pseudo columns ignored).
func newRow(t *Table, uuid UUID, rv rowValues) *Row {
	r := &Row{UUID: uuid, Version: NewUUID(), Columns: make([]Datum, len(t.Columns))}
	for _, c := range t.Columns {
		r.Columns[c.Index] = c.Type.Default()
	}
	for i, c := range rv.columns {
		if c.Index >= 0 {
			r.Columns[c.Index] = rv.values[i]
		}
	}
	return r
}

func (x *txn) insert(p *objectParser) (map[string]any, *Error) {
	ts := x.table(p)
	uuidV := p.member("uuid", opString|opOptional)
	nameV := p.member("uuid-name", opID|opOptional)
	rowV := p.member("row", opObject)
	if p.err != nil {
		return nil, p.err
	}
	var uuid UUID
	if uuidV != nil {
		u, ok := ParseUUID(uuidV.(string))
		if !ok {
			return nil, syntaxError("bad uuid").at(uuidV)
		}
		if ts.rows[u] != nil || x.rows[rowKey{ts, u}] != nil {
			return nil, errorf("duplicate uuid", "This UUID would duplicate a UUID already present within the table or deleted within the same transaction.").at(uuidV)
		}
		uuid = u
	}
	if nameV != nil {
		sym := x.symtab.lookup(nameV.(string))
		if sym.created {
			return nil, errorf("duplicate uuid-name", "This \"uuid-name\" appeared on an earlier \"insert\" operation.").at(nameV)
		}
		if uuidV != nil {
			sym.uuid = uuid
		} else {
			uuid = sym.uuid
		}
		sym.created = true
	} else if uuidV == nil {
		uuid = NewUUID()
	}
	// A named UUID may coincide with a row created by "uuid" earlier.
	if ts.rows[uuid] != nil || x.rows[rowKey{ts, uuid}] != nil {
		return nil, errorf("duplicate uuid", "This UUID would duplicate a UUID already present within the table or deleted within the same transaction.").at(string(uuid))
	}
	rv, err := parseRow(ts.schema, rowV, x.symtab)
	if err != nil {
		return nil, err
	}
	row := newRow(ts.schema, uuid, rv)
	// Defaults of one element may violate constraints (an enum without "").
	for _, c := range ts.schema.Columns {
		if d := row.Columns[c.Index]; len(d.Keys) == 1 {
			if err := checkDatum(d, &c.Type); err != nil {
				return nil, err
			}
		}
	}
	x.insertRow(ts, row)
	return map[string]any{"uuid": []any{"uuid", string(uuid)}}, nil
}

// columnSet parses an optional array of distinct column names; absent
// means every column including _uuid and _version.
func columnSet(t *Table, v any) ([]*Column, *Error) {
	if v == nil {
		cols := []*Column{t.Column("_uuid"), t.Column("_version")}
		return append(cols, t.Columns...), nil
	}
	names, ok := stringArray(v)
	if !ok {
		return nil, syntaxError("array of distinct column names expected").at(v)
	}
	cols, err := t.ColumnsByName(names)
	if err != nil {
		return nil, err.(*Error).at(v)
	}
	return cols, nil
}

func (x *txn) where(ts *tableState, v any) (*condition, *Error) {
	return parseCondition(ts.schema, v.([]any), x.symtab)
}

func (x *txn) selectOp(p *objectParser) (map[string]any, *Error) {
	ts := x.table(p)
	whereV := p.member("where", opArray)
	colsV := p.member("columns", opArray|opOptional)
	sortV := p.member("sort", opArray|opOptional)
	if p.err != nil {
		return nil, p.err
	}
	cond, err := x.where(ts, whereV)
	if err != nil {
		return nil, err
	}
	cols, err := columnSet(ts.schema, colsV)
	if err != nil {
		return nil, err
	}
	var sortCols []*Column
	if sortV != nil {
		if sortCols, err = columnSet(ts.schema, sortV); err != nil {
			return nil, err
		}
	}
	rows := x.query(ts, cond)
	if sortCols != nil {
		sort.SliceStable(rows, func(i, j int) bool {
			for _, c := range sortCols {
				if r := compareDatums(rows[i].Datum(c), rows[j].Datum(c)); r != 0 {
					return r < 0
				}
			}
			return false
		})
	}
	out := make([]any, 0, len(rows))
	seen := map[string]bool{}
	for _, r := range rows {
		// Rows identical in the selected columns are reported once, as
		// ovsdb_query_distinct does.
		k := rowKeyString(r, cols)
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, ts.schema.RowJSON(r, cols))
	}
	return map[string]any{"rows": out}, nil
}

func (x *txn) update(p *objectParser) (map[string]any, *Error) {
	ts := x.table(p)
	whereV := p.member("where", opArray)
	rowV := p.member("row", opObject)
	if p.err != nil {
		return nil, p.err
	}
	rv, err := parseRow(ts.schema, rowV, x.symtab)
	if err != nil {
		return nil, err
	}
	for _, c := range rv.columns {
		if !c.Mutable || c.Index < 0 {
			return nil, errorf("constraint violation", "Cannot update immutable column %s in table %s.", c.Name, ts.schema.Name).at(p.obj)
		}
	}
	cond, err := x.where(ts, whereV)
	if err != nil {
		return nil, err
	}
	rows := x.query(ts, cond)
	for _, r := range rows {
		changed := false
		for i, c := range rv.columns {
			if !r.Columns[c.Index].Equal(rv.values[i]) {
				changed = true
				break
			}
		}
		if !changed {
			continue
		}
		w := x.modify(ts, r)
		for i, c := range rv.columns {
			w.Columns[c.Index] = rv.values[i]
		}
	}
	return map[string]any{"count": len(rows)}, nil
}

func (x *txn) mutate(p *objectParser) (map[string]any, *Error) {
	ts := x.table(p)
	whereV := p.member("where", opArray)
	mutV := p.member("mutations", opArray)
	if p.err != nil {
		return nil, p.err
	}
	muts, err := parseMutations(ts.schema, mutV.([]any), x.symtab)
	if err != nil {
		return nil, err
	}
	cond, err := x.where(ts, whereV)
	if err != nil {
		return nil, err
	}
	rows := x.query(ts, cond)
	if len(muts) == 0 {
		return map[string]any{"count": len(rows)}, nil
	}
	for _, r := range rows {
		w := x.modify(ts, r)
		for i := range muts {
			if err := muts[i].apply(w); err != nil {
				return nil, err
			}
		}
	}
	return map[string]any{"count": len(rows)}, nil
}

func (x *txn) delete(p *objectParser) (map[string]any, *Error) {
	whereV := p.member("where", opArray)
	ts := x.table(p)
	if p.err != nil {
		return nil, p.err
	}
	cond, err := x.where(ts, whereV)
	if err != nil {
		return nil, err
	}
	rows := x.query(ts, cond)
	for _, r := range rows {
		x.deleteRow(ts, r)
	}
	return map[string]any{"count": len(rows)}, nil
}

func (x *txn) wait(p *objectParser) (map[string]any, *Error) {
	timeoutV := p.member("timeout", opInteger|opOptional)
	whereV := p.member("where", opArray)
	colsV := p.member("columns", opArray|opOptional)
	untilV := p.member("until", opString)
	rowsV := p.member("rows", opArray)
	ts := x.table(p)
	if p.err != nil {
		return nil, p.err
	}
	cond, err := x.where(ts, whereV)
	if err != nil {
		return nil, err
	}
	cols, err := columnSet(ts.schema, colsV)
	if err != nil {
		return nil, err
	}
	var timeout int64 = -1
	if timeoutV != nil {
		timeout, _ = jsonInteger(timeoutV)
		if timeout < 0 {
			return nil, syntaxError("timeout must be nonnegative").at(timeoutV)
		}
		if x.timeout < 0 || timeout < x.timeout {
			x.timeout = timeout
		}
	}
	until := untilV.(string)
	if until != "==" && until != "!=" {
		return nil, syntaxError("\"until\" must be \"==\" or \"!=\"").at(untilV)
	}
	expected := map[string]bool{}
	for _, rowJSON := range rowsV.([]any) {
		rv, err := parseRow(ts.schema, rowJSON, x.symtab)
		if err != nil {
			return nil, err
		}
		expected[expectedRowKey(rv, cols)] = true
	}
	equal := true
	actual := map[string]bool{}
	for _, r := range x.query(ts, cond) {
		k := rowKeyString(r, cols)
		if !expected[k] {
			equal = false
			break
		}
		actual[k] = true
	}
	equal = equal && len(actual) == len(expected)
	if (until == "==") == equal {
		return nil, nil
	}
	elapsed := x.elapsedMs()
	if timeoutV != nil && elapsed >= timeout {
		if elapsed > 0 {
			return nil, errorf("timed out", "\"wait\" timed out after %d ms", elapsed)
		}
		return nil, errorf("timed out", "\"where\" clause test failed")
	}
	return nil, errorf("not supported", "triggers not supported")
}

// expectedRowKey is rowKeyString of the row a "wait" lists, over cols: a
// column the row leaves out has its default value (the zero UUID for
// _uuid and _version). Only the columns compared are built.
func expectedRowKey(rv rowValues, cols []*Column) string {
	var b strings.Builder
	for _, c := range cols {
		var d Datum
		given := false
		for i, rc := range rv.columns {
			if rc.Index == c.Index {
				d, given = rv.values[i], true
				break
			}
		}
		if !given {
			if c.Index < 0 {
				d = Datum{Keys: []Atom{ZeroUUID}}
			} else {
				d = c.Type.Default()
			}
		}
		writeDatumKey(&b, d)
	}
	return b.String()
}

func (x *txn) commitOp(p *objectParser) (map[string]any, *Error) {
	if v := p.member("durable", opBoolean); v != nil && v.(bool) {
		x.durable = true
	}
	return nil, nil
}

func (x *txn) abort(p *objectParser) (map[string]any, *Error) {
	return nil, errorf("aborted", "aborted by request")
}

func (x *txn) comment(p *objectParser) (map[string]any, *Error) {
	if v := p.member("comment", opString); v != nil {
		x.comments = append(x.comments, v.(string))
	}
	return nil, nil
}

func (x *txn) assert(p *objectParser) (map[string]any, *Error) {
	v := p.member("lock", opID)
	if v == nil {
		return nil, nil
	}
	if x.env.HasLock != nil && x.env.HasLock(v.(string)) {
		return nil, nil
	}
	return nil, errorf("not owner", "Asserted lock %s not held.", v)
}

package db

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// precommit runs Open vSwitch's commit-time checks (ovsdb_txn_precommit)
// in the same order: drop no-op row changes, count references and refuse
// dangling strong ones, collect garbage, check maxRows, remove dangling
// weak references, check index uniqueness, and give changed rows new
// versions.
func (x *txn) precommit() *Error {
	x.dropUnchanged()
	delta, err := x.countRefs()
	if err != nil {
		return err
	}
	x.collectGarbage(delta)
	if err := x.checkMaxRows(); err != nil {
		return err
	}
	if err := x.assessWeakRefs(); err != nil {
		return err
	}
	if err := x.checkIndexes(); err != nil {
		return err
	}
	for _, tr := range x.order {
		if tr.old != nil && tr.new != nil {
			tr.new.Version = NewUUID()
		}
	}
	return nil
}

// rowsEqual compares the user columns of two versions of a row.
func rowsEqual(a, b *Row) bool {
	for i := range a.Columns {
		if !a.Columns[i].Equal(b.Columns[i]) {
			return false
		}
	}
	return true
}

// dropUnchanged forgets rows the transaction touched without changing
// them, and rows it inserted and deleted again.
func (x *txn) dropUnchanged() {
	kept := x.order[:0]
	for _, tr := range x.order {
		if tr.old != nil && tr.new != nil && rowsEqual(tr.old, tr.new) || tr.old == nil && tr.new == nil {
			delete(x.rows, rowKey{tr.ts, tr.uuid})
			continue
		}
		kept = append(kept, tr)
	}
	x.order = kept
}

// strongRefs lists the strong references of a row version (nil row: none),
// with the column holding each, leaving out references to the row's own
// UUID in any table (Open vSwitch ignores those, so they may dangle).
func (x *txn) strongRefs(ts *tableState, r *Row, fn func(target rowKey, col *Column)) {
	if r == nil {
		return
	}
	for _, c := range ts.schema.Columns {
		d := r.Columns[c.Index]
		if c.Type.Key.RefTable != "" && c.Type.Key.RefType == RefStrong {
			target := x.db.tables[c.Type.Key.RefTable]
			for _, a := range d.Keys {
				if u := a.(UUID); u != r.UUID {
					fn(rowKey{target, u}, c)
				}
			}
		}
		if v := c.Type.Value; v != nil && v.RefTable != "" && v.RefType == RefStrong {
			target := x.db.tables[v.RefTable]
			for _, a := range d.Values {
				if u := a.(UUID); u != r.UUID {
					fn(rowKey{target, u}, c)
				}
			}
		}
	}
}

// countRefs computes how the transaction changes each row's count of
// inbound strong references, failing on references to rows that do not
// exist and on deleted rows that are still referenced.
func (x *txn) countRefs() (map[rowKey]int, *Error) {
	delta := map[rowKey]int{}
	var err *Error
	for _, tr := range x.order {
		if !hasRefs(tr.ts.schema) {
			continue
		}
		refChanges(tr.ts, x.db.tables, tr.old, tr.new, func(t rowKey, c *Column, weak bool, d int) {
			if weak {
				return
			}
			delta[t] += d
			if d > 0 && err == nil && x.rows[t] == nil && t.table.rows[t.uuid] == nil {
				err = errorf("referential integrity violation",
					"Table %s column %s row %s references nonexistent row %s in table %s.",
					tr.ts.schema.Name, c.Name, tr.uuid, t.uuid, t.table.schema.Name)
			}
		})
		if err != nil {
			return nil, err
		}
	}
	for _, tr := range x.order {
		if tr.old != nil && tr.new == nil {
			key := rowKey{tr.ts, tr.uuid}
			if n := x.db.strongRefsTo(key) + delta[key]; n > 0 {
				return nil, errorf("referential integrity violation",
					"cannot delete %s row %s because of %d remaining reference(s)",
					tr.ts.schema.Name, tr.uuid, n)
			}
		}
	}
	return delta, nil
}

// collectGarbage deletes rows of non-root tables that the transaction
// left without strong references, and then what only they referred to.
func (x *txn) collectGarbage(delta map[rowKey]int) {
	refs := func(k rowKey) int { return x.db.strongRefsTo(k) + delta[k] }
	var collect func(k rowKey)
	collect = func(k rowKey) {
		if k.table.schema.IsRoot || refs(k) != 0 {
			return
		}
		r := x.get(k.table, k.uuid)
		if r == nil {
			return
		}
		if tr := x.rows[k]; tr != nil {
			tr.new = nil
		} else {
			x.touch(k.table, k.uuid).new = nil
		}
		x.strongRefs(k.table, r, func(t rowKey, _ *Column) {
			delta[t]--
			collect(t)
		})
	}
	candidates := make([]rowKey, 0, len(x.order)+len(delta))
	for _, tr := range x.order {
		candidates = append(candidates, rowKey{tr.ts, tr.uuid})
	}
	for k := range delta {
		candidates = append(candidates, k)
	}
	for _, k := range candidates {
		collect(k)
	}
}

func (x *txn) checkMaxRows() *Error {
	count := map[*tableState]int{}
	for _, tr := range x.order {
		switch {
		case tr.old == nil && tr.new != nil:
			count[tr.ts]++
		case tr.old != nil && tr.new == nil:
			count[tr.ts]--
		}
	}
	for _, tr := range x.order {
		t := tr.ts.schema
		if n := len(tr.ts.rows) + count[tr.ts]; t.MaxRows > 0 && n > t.MaxRows {
			return errorf("constraint violation",
				"transaction causes \"%s\" table to contain %d rows, greater than the schema-defined limit of %d row(s)",
				t.Name, n, t.MaxRows)
		}
	}
	return nil
}

// assessWeakRefs removes weak references to rows that do not exist after
// the transaction, from the rows it changed and from the committed rows
// that referred to rows it deleted.
func (x *txn) assessWeakRefs() *Error {
	for _, tr := range append([]*txnRow(nil), x.order...) {
		if tr.old == nil || tr.new != nil {
			continue
		}
		for src, c := range x.db.inbound[rowKey{tr.ts, tr.uuid}] {
			if c.weak > 0 && x.get(src.table, src.uuid) != nil {
				x.touch(src.table, src.uuid)
			}
		}
	}
	for _, tr := range x.order {
		if tr.new == nil || !hasRefs(tr.ts.schema) {
			continue
		}
		for _, c := range tr.ts.schema.Columns {
			if err := x.pruneWeak(tr, c); err != nil {
				return err
			}
		}
	}
	return nil
}

func (x *txn) pruneWeak(tr *txnRow, c *Column) *Error {
	keyWeak := c.Type.Key.RefTable != "" && c.Type.Key.RefType == RefWeak
	valWeak := c.Type.Value != nil && c.Type.Value.RefTable != "" && c.Type.Value.RefType == RefWeak
	if !keyWeak && !valWeak {
		return nil
	}
	d := tr.new.Columns[c.Index]
	dangling := func(base *BaseType, a Atom) bool {
		u := a.(UUID)
		target := x.db.tables[base.RefTable]
		if target == tr.ts && u == tr.uuid {
			return false
		}
		return x.get(target, u) == nil
	}
	var out Datum
	zero := false
	removed := 0
	for i, k := range d.Keys {
		if keyWeak && dangling(&c.Type.Key, k) || valWeak && dangling(c.Type.Value, d.Values[i]) {
			removed++
			if keyWeak && k == ZeroUUID || valWeak && d.Values[i] == ZeroUUID {
				zero = true
			}
			continue
		}
		out.Keys = append(out.Keys, k)
		if d.Values != nil {
			out.Values = append(out.Values, d.Values[i])
		}
	}
	if removed == 0 {
		return nil
	}
	tr.new.Columns[c.Index] = out
	if len(out.Keys) >= c.Type.Min {
		return nil
	}
	if zero && tr.old == nil {
		return errorf("constraint violation",
			"Weak reference column \"%s\" in \"%s\" row %s (inserted within this transaction) contained all-zeros UUID (probably as the default value for this column) but deleting this value caused a constraint volation because this column is not allowed to be empty.",
			c.Name, tr.ts.schema.Name, tr.uuid)
	}
	inserted := ""
	if tr.old == nil {
		inserted = "(inserted within this transaction) "
	}
	return errorf("constraint violation",
		"Deletion of %d weak reference(s) to deleted (or never-existing) rows from column \"%s\" in \"%s\" row %s %scaused this column to become empty, but constraints on this column disallow an empty column.",
		removed, c.Name, tr.ts.schema.Name, tr.uuid, inserted)
}

// checkIndexes verifies that no two rows share the values of an index.
func (x *txn) checkIndexes() *Error {
	type seenKey struct {
		ts  *tableState
		idx int
		key string
	}
	seen := map[seenKey]*txnRow{}
	for _, tr := range x.order {
		if tr.new == nil {
			continue
		}
		for i, idx := range tr.ts.schema.Indexes {
			k := indexKey(tr.new, idx)
			if other := seen[seenKey{tr.ts, i, k}]; other != nil {
				return x.duplicateIndex(tr.ts, idx, other.new, tr.new)
			}
			if u, ok := tr.ts.indexes[i][k]; ok && x.rows[rowKey{tr.ts, u}] == nil {
				return x.duplicateIndex(tr.ts, idx, tr.ts.rows[u], tr.new)
			}
			seen[seenKey{tr.ts, i, k}] = tr
		}
	}
	return nil
}

func (x *txn) duplicateIndex(ts *tableState, idx []*Column, a, b *Row) *Error {
	// Order the rows predictably by their non-UUID columns, as Open
	// vSwitch does, so messages are reproducible.
	if compareComparable(ts.schema, a, b) < 0 {
		a, b = b, a
	}
	names := make([]string, len(idx))
	values := make([]string, len(idx))
	for i, c := range idx {
		names[i] = "\"" + c.Name + "\""
		values[i] = datumString(a.Datum(c), &c.Type)
	}
	plural := ""
	if len(idx) > 1 {
		plural = "s"
	}
	return errorf("constraint violation",
		"Transaction causes multiple rows in \"%s\" table to have identical values (%s) for index on column%s %s.  %s  %s",
		ts.schema.Name, englishList(values), plural, englishList(names),
		x.describeIndexRow(ts, idx, a, "First"), x.describeIndexRow(ts, idx, b, "Second"))
}

func (x *txn) describeIndexRow(ts *tableState, idx []*Column, r *Row, title string) string {
	s := fmt.Sprintf("%s row, with UUID %s, ", title, r.UUID)
	tr := x.rows[rowKey{ts, r.UUID}]
	switch {
	case tr == nil:
		return s + "existed in the database before this transaction and was not modified by the transaction."
	case tr.old == nil:
		return s + "was inserted by this transaction."
	}
	same := true
	for _, c := range idx {
		same = same && tr.old.Datum(c).Equal(tr.new.Datum(c))
	}
	if same {
		return s + "existed in the database before this transaction, which modified some of the row's columns but not any columns in this index."
	}
	values := make([]string, len(idx))
	for i, c := range idx {
		values[i] = datumString(tr.old.Datum(c), &c.Type)
	}
	return s + "had the following index values before the transaction: " + englishList(values) + "."
}

func compareComparable(t *Table, a, b *Row) int {
	for _, c := range t.Columns {
		if c.Type.Key.Type == TypeUUID || c.Type.Value != nil && c.Type.Value.Type == TypeUUID {
			continue
		}
		if r := compareDatums(a.Columns[c.Index], b.Columns[c.Index]); r != 0 {
			return r
		}
	}
	return 0
}

// indexKey encodes a row's values of cols as a string that is equal for
// equal values.
func indexKey(r *Row, cols []*Column) string {
	return rowKeyString(r, cols)
}

// rowKeyString encodes the row's values of cols unambiguously.
func rowKeyString(r *Row, cols []*Column) string {
	var b strings.Builder
	for _, c := range cols {
		writeDatumKey(&b, r.Datum(c))
	}
	return b.String()
}

func writeDatumKey(b *strings.Builder, d Datum) {
	b.WriteString(strconv.Itoa(len(d.Keys)))
	b.WriteByte('{')
	for i, k := range d.Keys {
		writeAtomKey(b, k)
		if d.Values != nil {
			b.WriteByte('=')
			writeAtomKey(b, d.Values[i])
		}
	}
	b.WriteByte('}')
}

func writeAtomKey(b *strings.Builder, a Atom) {
	switch a := a.(type) {
	case string:
		b.WriteString(strconv.Itoa(len(a)))
		b.WriteByte(':')
		b.WriteString(a)
	case float64:
		b.WriteString(strconv.FormatFloat(a, 'g', -1, 64))
	default:
		fmt.Fprint(b, a)
	}
	b.WriteByte(';')
}

// buildCommit describes the checked transaction, or returns nil when it
// changes nothing.
func (x *txn) buildCommit() *Commit {
	x.dropUnchanged()
	if len(x.order) == 0 {
		return nil
	}
	c := &Commit{
		TxnID:   NewUUID(),
		Tables:  map[string]map[UUID]Change{},
		Comment: strings.Join(x.comments, "\n"),
		Durable: x.durable,
		Date:    x.env.Now,
	}
	if c.Date.IsZero() {
		c.Date = time.Now()
	}
	for _, tr := range x.order {
		m := c.Tables[tr.ts.schema.Name]
		if m == nil {
			m = map[UUID]Change{}
			c.Tables[tr.ts.schema.Name] = m
		}
		m[tr.uuid] = Change{Old: tr.old, New: tr.new}
	}
	return c
}

package storage

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"

	"gvs/ovsdb/db"
)

// The bodies of transaction records, written straight into a buffer (a
// commit's record is built on every commit, with the database's write lock
// held, so it avoids building a tree of maps first).

// commitRecord turns a commit into the body of a log record as Open vSwitch
// writes it: per table, per row UUID, null for a deleted row, the
// non-default persistent columns of an inserted row, and for a modified row
// a per-column diff of the persistent columns that changed ("_is_diff").
// Ephemeral columns are never written. ok is false when the commit changed
// nothing persistent, in which case nothing is written, like Open vSwitch.
// With fullValues (ovsdb-server --disable-file-column-diff) modified
// columns carry their new values instead, and "_is_diff" is left out.
func commitRecord(schema *db.Schema, c *db.Commit, fullValues bool) (body json.RawMessage, ok bool, err error) {
	var b bytes.Buffer
	b.WriteByte('{')
	tables := 0
	for tableName, rows := range c.Tables {
		table := schema.Tables[tableName]
		tableStart := b.Len()
		if tables > 0 {
			b.WriteByte(',')
		}
		writeString(&b, tableName)
		b.WriteString(":{")
		written := 0
		for uuid, change := range rows {
			rowStart := b.Len()
			if written > 0 {
				b.WriteByte(',')
			}
			writeString(&b, string(uuid))
			b.WriteByte(':')
			wrote, err := writeRow(&b, table, change, fullValues)
			if err != nil {
				return nil, false, err
			}
			if !wrote {
				b.Truncate(rowStart)
				continue
			}
			written++
		}
		if written == 0 {
			b.Truncate(tableStart)
			continue
		}
		b.WriteByte('}')
		tables++
	}
	if tables == 0 {
		return nil, false, nil
	}
	annotate(&b, c.Comment, c.Date, !fullValues)
	return b.Bytes(), true, nil
}

// annotate ends a record with the members Open vSwitch puts beside the
// tables (ovsdb_file_txn_annotate): the comment if any, whether modified
// rows carry diffs, and the time in milliseconds; and closes it.
func annotate(b *bytes.Buffer, comment string, date time.Time, isDiff bool) {
	sep := func() {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
	}
	if comment != "" {
		sep()
		b.WriteString(`"_comment":`)
		writeString(b, comment)
	}
	if isDiff {
		sep()
		b.WriteString(`"_is_diff":true`)
	}
	sep()
	b.WriteString(`"_date":`)
	b.WriteString(strconv.FormatInt(date.UnixMilli(), 10))
	b.WriteByte('}')
}

// writeRow writes one row's entry and reports whether it had anything to
// write (a row changed only in ephemeral columns has not).
func writeRow(b *bytes.Buffer, table *db.Table, change db.Change, fullValues bool) (bool, error) {
	if change.New == nil {
		b.WriteString("null") // the row was deleted
		return true, nil
	}
	b.WriteByte('{')
	columns := 0
	for _, col := range table.Columns {
		if col.Ephemeral {
			continue
		}
		newValue := change.New.Columns[col.Index]
		var value db.Datum
		switch {
		case change.Old == nil:
			if newValue.Equal(col.Type.Default()) {
				continue
			}
			value = newValue
		case change.Old.Columns[col.Index].Equal(newValue):
			continue
		case fullValues:
			value = newValue
		default:
			value = db.DiffDatum(change.Old.Columns[col.Index], newValue, &col.Type)
		}
		raw, err := json.Marshal(db.DatumJSON(value, &col.Type))
		if err != nil {
			return false, err
		}
		if columns > 0 {
			b.WriteByte(',')
		}
		writeString(b, col.Name)
		b.WriteByte(':')
		b.Write(raw)
		columns++
	}
	b.WriteByte('}')
	return change.Old == nil || columns > 0, nil
}

// writeString writes s as a JSON string.
func writeString(b *bytes.Buffer, s string) {
	raw, _ := json.Marshal(s) // a string always marshals
	b.Write(raw)
}

// snapshotRecord is the record that holds a whole database, as
// ovsdb_to_txn_json writes it: every row with its non-default persistent
// columns. isDiff is what Open vSwitch's server writes (true); ovsdb-tool
// compact and convert leave "_is_diff" out. Either reads back the same,
// as every row of a snapshot is an insert.
func snapshotRecord(schema *db.Schema, rows map[string][]*db.Row, comment string, date time.Time, isDiff bool) (json.RawMessage, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	tables := 0
	for tableName, tableRows := range rows {
		if len(tableRows) == 0 {
			continue
		}
		table := schema.Tables[tableName]
		if tables > 0 {
			b.WriteByte(',')
		}
		writeString(&b, tableName)
		b.WriteString(":{")
		for i, r := range tableRows {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(&b, string(r.UUID))
			b.WriteByte(':')
			if _, err := writeRow(&b, table, db.Change{New: r}, false); err != nil {
				return nil, err
			}
		}
		b.WriteByte('}')
		tables++
	}
	annotate(&b, comment, date, isDiff)
	return b.Bytes(), nil
}

// allRows collects every row of the database from a view. Rows are
// immutable, so the result stays valid after the view's callback returns.
func allRows(schema *db.Schema, v db.View) map[string][]*db.Row {
	rows := make(map[string][]*db.Row, len(schema.Tables))
	for name := range schema.Tables {
		var list []*db.Row
		v.Rows(name, func(r *db.Row) bool {
			list = append(list, r)
			return true
		})
		rows[name] = list
	}
	return rows
}

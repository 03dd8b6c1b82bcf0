package storage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"gvs/ovsdb/db"
)

// replayRecords applies the transaction records (every record after the
// schema) to d in order, as ovsdb-server reads a standalone database: a
// record that cannot be decoded ends the replay, and its offset is returned
// as badOffset (the caller truncates the log there, as Open vSwitch
// overwrites it with the next write); a record that decodes but fails the
// commit-time checks is logged and skipped, as ovsdb_txn_replay_commit's
// error is. badOffset is -1 when every record decoded.
func replayRecords(d *db.Database, records []Record, logger *slog.Logger, file string) (badOffset int64, badErr error) {
	for _, rec := range records {
		changes, err := decodeTransaction(d, rec.Body)
		if err != nil {
			return rec.Offset, err
		}
		if err := d.Replay(changes); err != nil {
			logger.Error("transaction in database log failed its commit checks and was skipped",
				"file", file, "offset", rec.Offset, "error", err)
		}
	}
	return -1, nil
}

// replayErrorText is Open vSwitch's log text for a record that does not
// replay: `syntax "RECORD": unknown table: No table named x.` (the record
// as compact JSON), or the error itself when it is already a "syntax
// error".
func replayErrorText(records []Record, offset int64, err error) string {
	text := err.Error()
	if strings.HasPrefix(text, "syntax error") {
		return text
	}
	for _, rec := range records {
		if rec.Offset == offset {
			var b bytes.Buffer
			if json.Compact(&b, rec.Body) == nil {
				return fmt.Sprintf("syntax \"%s\": %s", b.String(), text)
			}
		}
	}
	return text
}

// decodeTransaction turns one record body into the rows it changes, each
// with its complete new contents, reading the rows it modifies from d: for
// a record with "_is_diff": true a modified row's columns are diffs to
// apply (ovsdb_datum_apply_diff), otherwise new values. A row not yet in
// the database is an insert of the columns given (others default); null
// deletes. Unknown tables and columns are errors. The body is decoded
// once, with numbers kept exact.
func decodeTransaction(d *db.Database, body json.RawMessage) (map[string]map[db.UUID]*db.Row, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("syntax error: %w", err)
	}
	members, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("syntax error: object expected")
	}
	isDiff := members["_is_diff"] == true
	schema := d.Schema()
	changes := map[string]map[db.UUID]*db.Row{}
	var err error
	d.View(func(view db.View) {
		for name, value := range members {
			table := schema.Tables[name]
			if table == nil {
				if name == "_date" || name == "_comment" || name == "_is_diff" {
					continue
				}
				err = fmt.Errorf("unknown table: No table named %s.", name)
				return
			}
			rows, ok := value.(map[string]any)
			if !ok {
				err = fmt.Errorf("syntax error: table %s: object expected", name)
				return
			}
			out := make(map[db.UUID]*db.Row, len(rows))
			for uuidText, rowValue := range rows {
				uuid, ok := db.ParseUUID(uuidText)
				if !ok {
					err = fmt.Errorf("syntax error: \"%s\" is not a valid UUID", uuidText)
					return
				}
				row, e := decodeRow(table, view.Row(name, uuid), uuid, rowValue, isDiff)
				if e != nil {
					err = fmt.Errorf("table %s row %s: %w", name, uuid, e)
					return
				}
				out[uuid] = row
			}
			changes[name] = out
		}
	})
	if err != nil {
		return nil, err
	}
	return changes, nil
}

// decodeRow builds a row's new contents from its entry in a record; old is
// the row as it is now (nil if it does not exist). It returns nil for a
// deletion.
func decodeRow(table *db.Table, old *db.Row, uuid db.UUID, value any, isDiff bool) (*db.Row, error) {
	if value == nil {
		if old == nil {
			return nil, fmt.Errorf("syntax error: transaction deletes row %s that does not exist", uuid)
		}
		return nil, nil
	}
	columns, ok := value.(map[string]any)
	if !ok {
		return nil, errors.New("syntax error: row must be JSON object")
	}
	row := &db.Row{UUID: uuid, Columns: make([]db.Datum, len(table.Columns))}
	for _, c := range table.Columns {
		if old != nil {
			row.Columns[c.Index] = old.Columns[c.Index]
		} else {
			row.Columns[c.Index] = c.Type.Default()
		}
	}
	for name, v := range columns {
		c := table.ByName[name]
		if c == nil {
			return nil, fmt.Errorf("unknown column: No column %s in table %s.", name, table.Name)
		}
		if old != nil && isDiff {
			diff, err := db.ParseDiffValue(v, &c.Type)
			if err != nil {
				return nil, fmt.Errorf("column %s: %w", name, err)
			}
			row.Columns[c.Index] = db.ApplyDiff(row.Columns[c.Index], diff, &c.Type)
			continue
		}
		datum, err := db.ParseDatumValue(v, &c.Type)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", name, err)
		}
		row.Columns[c.Index] = datum
	}
	return row, nil
}

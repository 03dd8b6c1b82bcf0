package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"time"

	"gvs/ovsdb/db"
	"gvs/ovsdb/storage"
)

// showLog prints each record as ovsdb-tool show-log does: the schema's
// name, version and checksum for record 0, then per transaction its date
// and comment, with -m the rows it inserts, changes and deletes (rows named
// by their "name" column when they have one), with -mm their columns.
// Tables and rows are printed sorted (Open vSwitch prints them in hash
// order).
func (t *tool) showLog(args []string) error {
	path := arg(args, 0, t.dbDefault)
	f, err := os.Open(path)
	if err != nil {
		return ioError(err, "open")
	}
	defer f.Close()
	records, _, readErr := storage.ReadRecords(f)
	names := map[string]string{}
	var schema *db.Schema
	for i, rec := range records {
		fmt.Fprintf(t.stdout, "record %d:", i)
		if i == 0 {
			if schema, err = db.ParseSchema(rec.Body); err != nil {
				return err
			}
			fmt.Fprintf(t.stdout, " \"%s\" schema, version=\"%s\", cksum=\"%s\"\n", schema.Name, schema.Version, schema.Cksum)
		} else {
			t.printChangeRecord(rec.Body, schema, names)
		}
		fmt.Fprintln(t.stdout)
	}
	if readErr != nil {
		return fmt.Errorf("%s: %w", path, readErr)
	}
	return nil
}

func (t *tool) printChangeRecord(body json.RawMessage, schema *db.Schema, names map[string]string) {
	var members map[string]json.RawMessage
	if json.Unmarshal(body, &members) != nil {
		return
	}
	var date int64
	if json.Unmarshal(members["_date"], &date) == nil && members["_date"] != nil {
		if date < 1<<31-1 {
			date *= 1000 // older versions wrote seconds
		}
		fmt.Fprint(t.stdout, time.UnixMilli(date).UTC().Format(" 2006-01-02 15:04:05.000"))
	}
	var comment string
	if json.Unmarshal(members["_comment"], &comment) == nil && members["_comment"] != nil {
		fmt.Fprintf(t.stdout, " \"%s\"", comment)
	}
	if t.verbosity == 0 {
		return
	}
	isDiff := bytes.Equal(bytes.TrimSpace(members["_is_diff"]), []byte("true"))
	first := true
	for _, tableName := range sortedKeys(members) {
		var rows map[string]json.RawMessage
		if tableName[0] == '_' || json.Unmarshal(members[tableName], &rows) != nil || rows == nil {
			continue
		}
		if first {
			fmt.Fprintln(t.stdout)
			first = false
		}
		table := schema.Tables[tableName]
		for _, uuid := range sortedKeys(rows) {
			t.printRowChange(tableName, table, uuid, rows[uuid], isDiff, names)
		}
	}
}

func (t *tool) printRowChange(tableName string, table *db.Table, uuid string, raw json.RawMessage, isDiff bool, names map[string]string) {
	var columns map[string]json.RawMessage
	isObject := json.Unmarshal(raw, &columns) == nil && columns != nil
	newName := ""
	if isObject && columns["name"] != nil {
		newName = compactJSON(columns["name"])
	}
	short := uuid
	if len(short) > 8 {
		short = short[:8]
	}
	oldName, known := names[uuid]
	switch {
	case !known && newName != "":
		fmt.Fprintf(t.stdout, "  table %s insert row %s (%s):\n", tableName, newName, short)
	case !known:
		fmt.Fprintf(t.stdout, "  table %s insert row %s:\n", tableName, short)
	default:
		diff := ""
		if isDiff {
			diff = " diff"
		}
		fmt.Fprintf(t.stdout, "  table %s row %s (%s)%s:\n", tableName, oldName, short, diff)
	}
	switch {
	case isObject:
		if t.verbosity > 1 {
			for _, name := range sortedKeys(columns) {
				fmt.Fprintf(t.stdout, "    %s=%s\n", name, valueString(table, name, columns[name]))
			}
		}
		if newName != "" && (!known || oldName != newName) {
			names[uuid] = newName
		} else if !known {
			names[uuid] = short
		}
	case bytes.Equal(bytes.TrimSpace(raw), []byte("null")):
		fmt.Fprintln(t.stdout, "    delete row")
		delete(names, uuid)
	}
}

// valueString renders a column value as ovsdb_datum_to_string when it
// parses for the column's type, else as JSON.
func valueString(table *db.Table, column string, raw json.RawMessage) string {
	if table != nil {
		if c := table.ByName[column]; c != nil {
			if d, err := db.ParseDatum(raw, &c.Type); err == nil {
				return db.DatumString(d, &c.Type)
			}
		}
	}
	return compactJSON(raw)
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

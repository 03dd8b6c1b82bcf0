package server

import (
	"encoding/json"
	"log/slog"
	"time"

	"gvs/ovsdb/db"
)

const serverDBName = "_Server"

// serverSchema is the schema of Open vSwitch's _Server database
// (ovsdb/_server.ovsschema), written out here: one row per served database.
const serverSchema = `{"name": "_Server",
 "version": "1.2.0",
 "cksum": "3009684573 744",
 "tables": {
   "Database": {
     "columns": {
       "name": {"type": "string"},
       "model": {
         "type": {"key": {"type": "string",
                          "enum": ["set", ["standalone", "clustered", "relay"]]}}},
       "connected": {"type": "boolean"},
       "leader": {"type": "boolean"},
       "schema": {"type": {"key": {"type": "string"}, "min": 0, "max": 1}},
       "cid": {"type": {"key": {"type": "uuid"}, "min": 0, "max": 1}},
       "sid": {"type": {"key": {"type": "uuid"}, "min": 0, "max": 1}},
       "index": {"type": {"key": {"type": "integer"}, "min": 0, "max": 1}}},
     "isRoot": true}}}`

func newServerDB(logger *slog.Logger, historyLen int) (*served, error) {
	schema, err := db.ParseSchema([]byte(serverSchema))
	if err != nil {
		return nil, err
	}
	d := db.New(schema, logger)
	sdb := newServed(d, historyLen)
	return sdb, nil
}

// stringColumn returns the value of a string column that holds one, else "".
func stringColumn(row *db.Row, col *db.Column) string {
	if d := row.Columns[col.Index]; len(d.Keys) == 1 {
		s, _ := d.Keys[0].(string)
		return s
	}
	return ""
}

// updateServerDB brings _Server's Database table in line with the set of
// served databases: a row per database, inserted when it is added, its
// schema updated when it is converted and deleted when it is removed, like
// ovsdb-server's update_server_status().
func (s *Server) updateServerDB() {
	sdb := s.serverDB
	if sdb == nil {
		return
	}
	// writeMu also orders concurrent updates, so each sees the last one's rows.
	sdb.writeMu.Lock()
	defer sdb.writeMu.Unlock()
	s.mu.Lock()
	want := make(map[string]*served, len(s.dbs))
	for name, d := range s.dbs {
		want[name] = d
	}
	s.mu.Unlock()

	var ops []json.RawMessage
	have := map[string]bool{}
	table := sdb.schema.Tables["Database"]
	nameCol, schemaCol := table.ByName["name"], table.ByName["schema"]
	for _, row := range sdb.snapshotRows("Database") {
		name := stringColumn(row, nameCol)
		if d := want[name]; d != nil && !have[name] {
			have[name] = true
			if stringColumn(row, schemaCol) != d.schemaJSON {
				// Converted to a new schema.
				op, _ := json.Marshal(map[string]any{
					"op": "update", "table": "Database",
					"where": []any{[]any{"_uuid", "==", []any{"uuid", string(row.UUID)}}},
					"row":   map[string]any{"schema": d.schemaJSON},
				})
				ops = append(ops, op)
			}
			continue
		}
		op, _ := json.Marshal(map[string]any{
			"op": "delete", "table": "Database",
			"where": []any{[]any{"_uuid", "==", []any{"uuid", string(row.UUID)}}},
		})
		ops = append(ops, op)
	}
	for name, d := range want {
		if have[name] {
			continue
		}
		op, _ := json.Marshal(map[string]any{
			"op": "insert", "table": "Database",
			"row": map[string]any{
				"name": name, "model": "standalone", "connected": true,
				"leader": true, "schema": d.schemaJSON,
			},
		})
		ops = append(ops, op)
	}
	if len(ops) == 0 {
		return
	}
	now := time.Now()
	res := sdb.db.TransactPrivileged(ops, db.TxnEnv{HasLock: func(string) bool { return false }, Started: now, Now: now})
	for _, r := range res.Results {
		if e, ok := r.(*db.Error); ok {
			s.logger.Error("cannot update _Server database", "err", e)
		}
	}
}

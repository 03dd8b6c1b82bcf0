package server

import (
	"testing"
	"time"

	"gvs/ovsdb/jsonrpc"
)

func TestServerDatabaseTable(t *testing.T) {
	srv, _ := newTestServer(t)
	aware := pipeClient(t, srv)
	plain := pipeClient(t, srv)
	var empty map[string]any
	aware.result(aware.call("set_db_change_aware", true), &empty)

	var initial map[string]map[string]map[string]map[string]any
	aware.result(aware.call("monitor_cond", "_Server", "s", map[string]any{"Database": []any{map[string]any{}}}), &initial)
	names := map[string]map[string]any{}
	for _, r := range initial["Database"] {
		names[r["initial"]["name"].(string)] = r["initial"]
	}
	test := names["Test"]
	if len(names) != 2 || names["_Server"] == nil || test == nil {
		t.Fatalf("Database rows %v", initial)
	}
	if test["model"] != "standalone" || test["connected"] != true || test["leader"] != true || test["schema"] == nil {
		t.Fatalf("Test row %v", test)
	}
	if _, ok := test["cid"]; ok {
		t.Fatalf("cid should be empty: %v", test)
	}
	aware.result(aware.call("monitor_cond", "Test", "t", map[string]any{"Item": []any{map[string]any{}}}), &empty)
	plain.result(plain.call("monitor_cond", "Test", "t", map[string]any{"Item": []any{map[string]any{}}}), &empty)

	// Adding a database: a new row; clients that are not change-aware are
	// disconnected.
	start := aware.count()
	other := newTestDB(t, `{"name":"Other","version":"1.0.0","tables":{"T":{"columns":{"c":{"type":"integer"}}}}}`)
	if err := srv.AddDatabase(other); err != nil {
		t.Fatal(err)
	}
	if err := srv.AddDatabase(other); err == nil {
		t.Fatal("duplicate database accepted")
	}
	note, _ := aware.note(start, "update2")
	if note == nil {
		t.Fatal("no update for the new database")
	}
	_, row := onlyRow(t, updatesOf(t, note), "Database")
	if row["insert"]["name"] != "Other" {
		t.Fatalf("insert %v", row)
	}
	plain.waitFor(0, 2*time.Second, func(*jsonrpc.Message) bool { return false })
	if !plain.isClosed() {
		t.Fatal("non-change-aware session kept after a database was added")
	}

	// Removing a database: its monitors are canceled for aware sessions.
	start = aware.count()
	if err := srv.RemoveDatabase("Test"); err != nil {
		t.Fatal(err)
	}
	if m, _ := aware.note(start, "monitor_canceled"); m == nil || string(m.Params) != `["t"]` {
		t.Fatalf("monitor_canceled %+v", m)
	}
	note, _ = aware.note(start, "update2")
	_, row = onlyRow(t, updatesOf(t, note), "Database")
	if _, ok := row["delete"]; !ok {
		t.Fatalf("delete %v", row)
	}
	if aware.isClosed() {
		t.Fatal("change-aware session disconnected")
	}
	var dbs []string
	aware.result(aware.call("list_dbs"), &dbs)
	if len(dbs) != 2 || dbs[0] != "Other" {
		t.Fatalf("list_dbs %v", dbs)
	}
	if err := srv.RemoveDatabase("_Server"); err == nil {
		t.Fatal("_Server removed")
	}
}

package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"gvs/ovsdb/db"
	"gvs/ovsdb/jsonrpc"
	"gvs/ovsdb/storage"
)

// testSchemaV2 is testSchema at version 2.0.0: table Other and column tags
// gone, a column "added" with a default.
func testSchemaV2(t testing.TB, edit func(tables map[string]any)) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(testSchema), &v); err != nil {
		t.Fatal(err)
	}
	v["version"] = "2.0.0"
	tables := v["tables"].(map[string]any)
	delete(tables, "Other")
	cols := tables["Item"].(map[string]any)["columns"].(map[string]any)
	delete(cols, "tags")
	cols["added"] = map[string]any{"type": map[string]any{"key": "string", "min": 0, "max": 1}}
	if edit != nil {
		edit(tables)
	}
	return v
}

func errorObjectOf(t testing.TB, raw json.RawMessage) map[string]string {
	t.Helper()
	var e map[string]string
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatalf("error %s: %v", raw, err)
	}
	return e
}

// A conversion keeps the data, serves the new schema, updates _Server,
// cancels change-aware sessions' monitors and blocked transactions on the
// database and disconnects the other sessions.
func TestConvertInMemory(t *testing.T) {
	srv, _ := newTestServer(t)
	c := pipeClient(t, srv)
	c.result(c.call("set_db_change_aware", true), new(any))
	c.transactOK("Test", insertItem("a", 1), `{"op":"insert","table":"Other","row":{"x":5}}`)
	reqs := map[string]any{"Item": []any{map[string]any{"columns": []string{"name"}}}}
	c.result(c.call("monitor_cond", "Test", "mon", reqs), new(any))
	c.result(c.call("monitor_cond", "_Server", "srv", map[string]any{"Database": []any{map[string]any{"columns": []string{"name", "schema"}}}}), new(any))
	// A transaction blocked on a "wait" that never holds.
	c.send("transact", "blocked", "Test", raw(`{"op":"wait","table":"Item","where":[],"columns":["name"],"until":"==","rows":[]}`))

	plain := pipeClient(t, srv) // not change-aware
	plain.result(plain.call("list_dbs"), new(any))

	start := c.count()
	m := c.call("convert", "Test", testSchemaV2(t, nil))
	if string(m.Result) != "{}" {
		t.Fatalf("convert: result %s error %s", m.Result, m.Error)
	}
	if note, _ := c.note(start, "monitor_canceled"); note == nil || string(note.Params) != `["mon"]` {
		t.Fatalf("monitor_canceled: %v", note)
	}
	blocked, _ := c.waitFor(start, 5*time.Second, func(m *jsonrpc.Message) bool { return m.IsResponse() && string(m.ID) == `"blocked"` })
	if blocked == nil || errorName(t, blocked) != "canceled" {
		t.Fatalf("blocked transaction: %v", blocked)
	}
	// The _Server monitor (not canceled) sees the new schema.
	if note, _ := c.waitFor(start, 5*time.Second, func(m *jsonrpc.Message) bool {
		return m.IsNotification() && m.Method == "update2" && strings.Contains(string(m.Params), `2.0.0`)
	}); note == nil {
		t.Fatal("no _Server update with the new schema")
	}
	if _, i := plain.waitFor(0, 5*time.Second, func(*jsonrpc.Message) bool { return false }); i != -1 || !plain.isClosed() {
		t.Fatal("a session that is not change-aware stayed connected")
	}
	if c.isClosed() {
		t.Fatal("the change-aware session was disconnected")
	}

	var schema map[string]any
	c.result(c.call("get_schema", "Test"), &schema)
	if schema["version"] != "2.0.0" {
		t.Fatalf("served schema after convert: %v", schema["version"])
	}
	res := c.transactOK("Test", `{"op":"select","table":"Item","where":[],"columns":["name","count","added"]}`)
	if got := fmt.Sprint(res[0]["rows"]); got != `[map[added:[set []] count:1 name:a]]` {
		t.Fatalf("rows after convert: %s", got)
	}
	c.transactOK("Test", `{"op":"insert","table":"Item","row":{"name":"b","added":"x"}}`)
	if got := errorName(t, c.call("monitor_cond", "Test", "m2", map[string]any{"Other": []any{map[string]any{}}})); got != "syntax error" {
		t.Fatalf("monitor of a dropped table: %q", got)
	}
	res = c.transactOK("_Server", `{"op":"select","table":"Database","where":[["name","==","Test"]],"columns":["schema"]}`)
	if s := fmt.Sprint(res[0]["rows"]); !strings.Contains(s, `"version":"2.0.0"`) {
		t.Fatalf("_Server schema after convert: %s", s)
	}
}

// The errors of a refused conversion, in ovsdb-server's shapes; nothing
// changes.
func TestConvertErrors(t *testing.T) {
	srv, _ := newTestServer(t)
	c := pipeClient(t, srv)
	c.transactOK("Test", `{"op":"insert","table":"Item","row":{"name":"a","tags":["set",["x","y","z"]]}}`)
	renamed := testSchemaV2(t, nil)
	renamed["name"] = "Other"
	narrow := testSchemaV2(t, func(tables map[string]any) {
		cols := tables["Item"].(map[string]any)["columns"].(map[string]any)
		cols["tags"] = map[string]any{"type": map[string]any{"key": "string", "min": 0, "max": 2}}
	})
	cases := []struct {
		params      []any
		name, about string
	}{
		{[]any{"Test", renamed}, "invalid parameters", "new schema name (Other) does not match database name (Test)"},
		{[]any{"Test", map[string]any{"name": "Test"}}, "syntax error", "Parsing database schema failed: Required 'tables' member is missing."},
		{[]any{"Test", narrow}, "syntax error", "set must have 0 to 2 members but 3 are present"},
		{[]any{"Test"}, "syntax error", "array expected"},
		{[]any{"Nope", renamed}, "unknown database", "convert request specifies unknown database Nope"},
		{[]any{"_Server", renamed}, "not allowed", "conversion is not allowed for read-only database _Server"},
	}
	for _, tc := range cases {
		m := c.call("convert", tc.params...)
		if string(m.Result) != "null" && len(m.Result) != 0 {
			t.Fatalf("convert %v succeeded: %s", tc.params, m.Result)
		}
		e := errorObjectOf(t, m.Error)
		if e["error"] != tc.name || tc.about != "" && e["details"] != tc.about {
			t.Errorf("convert %.60s: error %s, want %q %q", mustJSON(tc.params), m.Error, tc.name, tc.about)
		}
	}
	var schema map[string]any
	c.result(c.call("get_schema", "Test"), &schema)
	if schema["version"] != "1.0.0" || c.isClosed() {
		t.Fatalf("a refused conversion changed the database (version %v) or the session", schema["version"])
	}
}

// With a converter installed the server converts through it and serves
// what it returns; a converter's failure changes nothing.
func TestConvertUsesConverter(t *testing.T) {
	srv, d := newTestServer(t)
	c := pipeClient(t, srv)
	c.result(c.call("set_db_change_aware", true), new(any))
	c.transactOK("Test", insertItem("a", 1))
	var calls []string
	fail := errors.New("disk full")
	srv.SetConverter(func(name string, schema *db.Schema) (*db.Database, error) {
		calls = append(calls, name+" "+schema.Version)
		if schema.Version == "3.0.0" {
			return nil, fail
		}
		return storage.Convert(d, schema, nil)
	})
	v3 := testSchemaV2(t, nil)
	v3["version"] = "3.0.0"
	m := c.call("convert", "Test", v3)
	if e := errorObjectOf(t, m.Error); e["error"] != "I/O error" || e["details"] != "disk full" {
		t.Fatalf("converter failure: %s", m.Error)
	}
	c.transactOK("Test", insertItem("b", 2)) // still the old database
	if m := c.call("convert", "Test", testSchemaV2(t, nil)); string(m.Result) != "{}" {
		t.Fatalf("convert: %s", m.Error)
	}
	if strings.Join(calls, ",") != "Test 3.0.0,Test 2.0.0" {
		t.Fatalf("converter calls: %v", calls)
	}
	res := c.transactOK("Test", `{"op":"select","table":"Item","where":[],"columns":["name"]}`)
	if n := len(res[0]["rows"].([]any)); n != 2 {
		t.Fatalf("%d rows after convert, want 2", n)
	}
}

// No transaction is lost to a conversion: every insert acknowledged while
// a conversion runs is in the converted database, and none lands in the
// old one afterwards.
func TestConvertDuringTransactions(t *testing.T) {
	srv, _ := newTestServer(t)
	const writers, each = 4, 50
	var wg sync.WaitGroup
	acked := make([][]string, writers)
	for w := range writers {
		cl := pipeClient(t, srv)
		cl.result(cl.call("set_db_change_aware", true), new(any))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				name := fmt.Sprintf("w%d-%d", w, i)
				m := cl.call("transact", "Test", raw(insertItem(name, i)))
				var results []map[string]any
				if json.Unmarshal(m.Result, &results) == nil && len(results) == 1 && results[0]["uuid"] != nil {
					acked[w] = append(acked[w], name)
				}
			}
		}()
	}
	c := pipeClient(t, srv)
	c.result(c.call("set_db_change_aware", true), new(any))
	time.Sleep(5 * time.Millisecond)
	if m := c.call("convert", "Test", testSchemaV2(t, nil)); string(m.Result) != "{}" {
		t.Fatalf("convert: %s", m.Error)
	}
	wg.Wait()
	res := c.transactOK("Test", `{"op":"select","table":"Item","where":[],"columns":["name"]}`)
	have := map[string]bool{}
	for _, r := range res[0]["rows"].([]any) {
		have[r.(map[string]any)["name"].(string)] = true
	}
	total := 0
	for _, names := range acked {
		for _, name := range names {
			total++
			if !have[name] {
				t.Errorf("acknowledged insert %s missing after the conversion", name)
			}
		}
	}
	if total != len(have) {
		t.Errorf("%d rows, %d acknowledged inserts", len(have), total)
	}
}

// The replies to convert requests, failed and successful, are those of
// Open vSwitch's ovsdb-server.
func TestConvertMatchesOvsdbServer(t *testing.T) {
	real := realServer(t)
	srv, _ := newTestServer(t)
	ours := pipeClient(t, srv)
	for _, c := range []*client{real, ours} {
		c.result(c.call("set_db_change_aware", true), new(any))
		c.transactOK("Test", `{"op":"insert","table":"Item","row":{"name":"a","tags":["set",["x","y","z"]]}}`)
	}
	renamed := testSchemaV2(t, nil)
	renamed["name"] = "Other"
	narrow := testSchemaV2(t, func(tables map[string]any) {
		cols := tables["Item"].(map[string]any)["columns"].(map[string]any)
		cols["tags"] = map[string]any{"type": map[string]any{"key": "string", "min": 0, "max": 2}}
	})
	enum := testSchemaV2(t, func(tables map[string]any) {
		cols := tables["Item"].(map[string]any)["columns"].(map[string]any)
		cols["name"] = map[string]any{"type": map[string]any{"key": map[string]any{"type": "string", "enum": []any{"set", []any{"b", "c"}}}}}
	})
	// Not compared: a schema whose version is not x.y.z (ovsdb-server's
	// error also carries the whole schema as "syntax"; db.ParseSchema's
	// does not), and converting _Server, which Open vSwitch 3.1 does
	// (replacing its own bookkeeping database) and later versions refuse
	// as read-only, as we do (TestConvertErrors).
	requests := [][]any{
		{"Test", renamed},
		{"Test", map[string]any{"name": "Test"}},
		{"Test", "not a schema"},
		{"Test", narrow},
		{"Test", enum},
		{"Test"},
		{"Test", testSchemaV2(t, nil), 3},
		{},
		{"Nope", renamed},
		{"Test", testSchemaV2(t, nil)},
	}
	for _, params := range requests {
		want, got := real.call("convert", params...), ours.call("convert", params...)
		wantErr, gotErr := nullIfEmpty(want.Error), nullIfEmpty(got.Error)
		if canonicalJSON(wantErr) != canonicalJSON(gotErr) ||
			string(wantErr) == "null" && canonicalJSON(want.Result) != canonicalJSON(got.Result) {
			t.Errorf("convert %.80s:\n  ovsdb-server: result %s error %s\n  ours:         result %s error %s",
				mustJSON(params), want.Result, want.Error, got.Result, got.Error)
		}
	}
	for _, c := range []*client{real, ours} {
		var schema map[string]any
		c.result(c.call("get_schema", "Test"), &schema)
		if schema["version"] != "2.0.0" {
			t.Errorf("version after convert: %v", schema["version"])
		}
	}
}

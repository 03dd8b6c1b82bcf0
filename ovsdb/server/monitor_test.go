package server

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"gvs/ovsdb/db"
	"gvs/ovsdb/jsonrpc"
)

func TestUpdateBeforeTransactReply(t *testing.T) {
	srv, _ := newTestServer(t)
	c := pipeClient(t, srv)
	var initial map[string]any
	c.result(c.call("monitor_cond", "Test", "m", map[string]any{"Item": []any{map[string]any{}}}), &initial)
	if len(initial) != 0 {
		t.Fatalf("initial %v", initial)
	}
	for i := 0; i < 20; i++ {
		reply, ri := c.callIndex("transact", "Test", raw(insertItem("a", i)))
		var res []map[string]any
		c.result(reply, &res)
		uuid := res[0]["uuid"].([]any)[1].(string)
		note, ni := c.waitFor(0, time.Second, func(m *jsonrpc.Message) bool {
			if !m.IsNotification() || m.Method != "update2" {
				return false
			}
			_, ok := updatesOf(t, m)["Item"][uuid]
			return ok
		})
		if note == nil || ni > ri {
			t.Fatalf("txn %d: update2 at %d, reply at %d", i, ni, ri)
		}
	}
}

func TestMonitorV1Updates(t *testing.T) {
	srv, _ := newTestServer(t)
	c := pipeClient(t, srv)
	res := c.transactOK("Test", insertItem("a", 1))
	uuid := res[0]["uuid"].([]any)[1].(string)

	var initial map[string]map[string]map[string]map[string]any
	c.result(c.call("monitor", "Test", 7, map[string]any{"Item": map[string]any{"columns": []string{"name", "count"}}}), &initial)
	if got := initial["Item"][uuid]["new"]; !reflect.DeepEqual(got, map[string]any{"name": "a", "count": 1.0}) {
		t.Fatalf("initial %v", initial)
	}
	if _, hasOld := initial["Item"][uuid]["old"]; hasOld {
		t.Fatalf("initial has old: %v", initial)
	}

	// A change only to an unmonitored column is not sent; the next one is.
	start := c.count()
	c.transactOK("Test", `{"op":"update","table":"Item","where":[],"row":{"tags":["set",["x"]]}}`)
	c.transactOK("Test", `{"op":"update","table":"Item","where":[],"row":{"count":2}}`)
	note, _ := c.note(start, "update")
	if note == nil {
		t.Fatal("no update")
	}
	var params []json.RawMessage
	json.Unmarshal(note.Params, &params)
	if string(params[0]) != "7" {
		t.Fatalf("monitor id %s", params[0])
	}
	_, row := onlyRow(t, updatesOf(t, note), "Item")
	if !reflect.DeepEqual(row["old"], map[string]any{"count": 1.0}) ||
		!reflect.DeepEqual(row["new"], map[string]any{"name": "a", "count": 2.0}) {
		t.Fatalf("modify update %v", row)
	}
	if n, _ := c.note(start, "update"); n != note {
		t.Fatal("an update was sent for the unmonitored change")
	}

	start = c.count()
	c.transactOK("Test", `{"op":"delete","table":"Item","where":[]}`)
	note, _ = c.note(start, "update")
	_, row = onlyRow(t, updatesOf(t, note), "Item")
	if _, hasNew := row["new"]; hasNew || !reflect.DeepEqual(row["old"], map[string]any{"name": "a", "count": 2.0}) {
		t.Fatalf("delete update %v", row)
	}
}

func TestMonitorCondUpdate2(t *testing.T) {
	srv, _ := newTestServer(t)
	c := pipeClient(t, srv)
	c.transactOK("Test", insertItem("", 0))
	var initial map[string]map[string]map[string]map[string]any
	c.result(c.call("monitor_cond", "Test", "m", map[string]any{"Item": []any{map[string]any{}}}), &initial)
	for _, r := range initial["Item"] {
		// Default values are left out of "initial" and "insert".
		if got := r["initial"]; len(got) != 1 || got["_version"] == nil {
			t.Fatalf("initial row %v", r)
		}
	}
	start := c.count()
	res := c.transactOK("Test", `{"op":"insert","table":"Item","row":{"name":"b","opts":["map",[["k","v"],["k2","v2"]]]}}`)
	uuid := res[0]["uuid"].([]any)[1].(string)
	note, _ := c.note(start, "update2")
	ins := updatesOf(t, note)["Item"][uuid]["insert"]
	if ins["name"] != "b" || ins["count"] != nil || ins["opts"] == nil {
		t.Fatalf("insert %v", ins)
	}
	start = c.count()
	c.transactOK("Test", `{"op":"mutate","table":"Item","where":[["name","==","b"]],"mutations":[["opts","delete",["set",["k"]]],["opts","insert",["map",[["k3","v3"]]]]]}`)
	note, _ = c.note(start, "update2")
	mod := updatesOf(t, note)["Item"][uuid]["modify"]
	want := []any{"map", []any{[]any{"k", "v"}, []any{"k3", "v3"}}}
	if !reflect.DeepEqual(mod["opts"], want) || mod["name"] != nil {
		t.Fatalf("modify %v", mod)
	}
	start = c.count()
	c.transactOK("Test", `{"op":"delete","table":"Item","where":[["name","==","b"]]}`)
	note, _ = c.note(start, "update2")
	if r := updatesOf(t, note)["Item"][uuid]; len(r) != 1 || r["delete"] != nil {
		t.Fatalf("delete %v", r)
	} else if _, ok := r["delete"]; !ok {
		t.Fatalf("delete %v", r)
	}
}

func TestMonitorRequestArraysAndErrors(t *testing.T) {
	srv, _ := newTestServer(t)
	c := pipeClient(t, srv)
	c.transactOK("Test", insertItem("a", 1))
	// Two requests for one table: name for everything, count only on modify.
	reqs := map[string]any{"Item": []any{
		map[string]any{"columns": []string{"name"}},
		map[string]any{"columns": []string{"count"}, "select": map[string]any{"initial": false, "insert": false, "delete": false}},
	}}
	var initial map[string]map[string]map[string]map[string]any
	c.result(c.call("monitor_cond", "Test", "arr", reqs), &initial)
	for _, r := range initial["Item"] {
		if !reflect.DeepEqual(r["initial"], map[string]any{"name": "a"}) {
			t.Fatalf("initial %v", r)
		}
	}
	start := c.count()
	c.transactOK("Test", `{"op":"update","table":"Item","where":[],"row":{"count":5}}`)
	note, _ := c.note(start, "update2")
	_, r := onlyRow(t, updatesOf(t, note), "Item")
	if !reflect.DeepEqual(r["modify"], map[string]any{"count": 5.0}) {
		t.Fatalf("modify %v", r)
	}

	for _, tc := range []struct {
		name   string
		params []any
		want   string
	}{
		{"dup column", []any{"Test", "d1", map[string]any{"Item": []any{
			map[string]any{"columns": []string{"name"}}, map[string]any{"columns": []string{"name"}}}}}, "syntax error"},
		{"dup default", []any{"Test", "d2", map[string]any{"Item": []any{map[string]any{}, map[string]any{}}}}, "syntax error"},
		{"bad column", []any{"Test", "d3", map[string]any{"Item": map[string]any{"columns": []string{"zz"}}}}, "syntax error"},
		{"bad table", []any{"Test", "d4", map[string]any{"Nope": map[string]any{}}}, "syntax error"},
		{"not object", []any{"Test", "d5", []any{}}, "syntax error"},
		{"dup id", []any{"Test", "arr", map[string]any{"Item": map[string]any{}}}, "syntax error"},
		{"bad member", []any{"Test", "d6", map[string]any{"Item": map[string]any{"bogus": 1}}}, "syntax error"},
		{"unknown db", []any{"Nope", "d7", map[string]any{}}, "unknown database"},
	} {
		if got := errorName(t, c.call("monitor_cond", tc.params...)); got != tc.want {
			t.Errorf("%s: error %q, want %q", tc.name, got, tc.want)
		}
	}
	m := c.call("monitor_cond", "Test", "d8", map[string]any{"Item": []any{map[string]any{"columns": []string{"name"}}, map[string]any{"columns": []string{"name"}}}})
	var e ovsdbError
	json.Unmarshal(m.Error, &e)
	if e.Details != "column name mentioned more than once" {
		t.Errorf("details %q", e.Details)
	}
	// A failed request leaves no monitor behind: the id is free again.
	var ok map[string]any
	c.result(c.call("monitor_cond", "Test", "d1", map[string]any{"Item": map[string]any{}}), &ok)
}

func TestMonitorCancel(t *testing.T) {
	srv, _ := newTestServer(t)
	c := pipeClient(t, srv)
	var u map[string]any
	c.result(c.call("monitor", "Test", []int{1, 2}, map[string]any{"Item": map[string]any{}}), &u)
	c.result(c.call("monitor_cancel", []int{1, 2}), &u)
	if got := errorName(t, c.call("monitor_cancel", []int{1, 2})); got != "unknown monitor" {
		t.Fatalf("second cancel: %q", got)
	}
	start := c.count()
	c.transactOK("Test", insertItem("x", 1))
	c.call("echo")
	if n, _ := c.waitFor(start, 100*time.Millisecond, func(m *jsonrpc.Message) bool { return m.Method == "update" }); n != nil {
		t.Fatal("update after monitor_cancel")
	}
}

func TestMonitorCondSince(t *testing.T) {
	srv := newHistoryServer(t, 100)
	c := pipeClient(t, srv)
	c.transactOK("Test", insertItem("a", 1))
	reqs := map[string]any{"Item": []any{map[string]any{"columns": []string{"name", "count"}}}}

	var reply []json.RawMessage
	c.result(c.call("monitor_cond_since", "Test", "s", reqs, db.ZeroUUID), &reply)
	var found bool
	var last string
	json.Unmarshal(reply[0], &found)
	json.Unmarshal(reply[1], &last)
	if found || len(reply) != 3 {
		t.Fatalf("zero last-txn-id: %s", reply)
	}
	if _, ok := db.ParseUUID(last); !ok || last == string(db.ZeroUUID) {
		t.Fatalf("last-txn-id %q", last)
	}

	// Changes after the client's last-txn-id, then a reconnect.
	start := c.count()
	res := c.transactOK("Test", insertItem("b", 2))
	note, _ := c.note(start, "update3")
	var params []json.RawMessage
	json.Unmarshal(note.Params, &params)
	var noteLast string
	json.Unmarshal(params[1], &noteLast)
	if noteLast == last {
		t.Fatal("update3 did not advance last-txn-id")
	}
	c.transactOK("Test", `{"op":"update","table":"Item","where":[["name","==","a"]],"row":{"count":10}}`)

	c2 := pipeClient(t, srv)
	c2.result(c2.call("monitor_cond_since", "Test", "s", reqs, last), &reply)
	json.Unmarshal(reply[0], &found)
	var u map[string]map[string]map[string]map[string]any
	json.Unmarshal(reply[2], &u)
	if !found || len(u["Item"]) != 2 {
		t.Fatalf("since %s: %s", last, reply)
	}
	bUUID := res[0]["uuid"].([]any)[1].(string)
	if u["Item"][bUUID]["insert"]["name"] != "b" {
		t.Fatalf("insert of b missing: %v", u)
	}
	for uuid, r := range u["Item"] {
		if uuid != bUUID && !reflect.DeepEqual(r["modify"], map[string]any{"count": 10.0}) {
			t.Fatalf("modify of a: %v", r)
		}
	}

	// The newest id: found, nothing to send.
	json.Unmarshal(reply[1], &last)
	c3 := pipeClient(t, srv)
	c3.result(c3.call("monitor_cond_since", "Test", "s", reqs, last), &reply)
	if string(reply[0]) != "true" || string(reply[2]) != "{}" {
		t.Fatalf("up to date: %s", reply)
	}

	// An unknown id: everything, found false.
	c4 := pipeClient(t, srv)
	c4.result(c4.call("monitor_cond_since", "Test", "s", reqs, string(db.NewUUID())), &reply)
	json.Unmarshal(reply[2], &u)
	if string(reply[0]) != "false" || len(u["Item"]) != 2 || u["Item"][bUUID]["initial"] == nil {
		t.Fatalf("unknown id: %s", reply)
	}
	if got := errorName(t, c4.call("monitor_cond_since", "Test", "t", reqs, "zz")); got != "syntax error" {
		t.Fatalf("bad last-txn-id: %q", got)
	}
}

func TestMonitorCondChange(t *testing.T) {
	srv, _ := newTestServer(t)
	c := pipeClient(t, srv)
	a := c.transactOK("Test", insertItem("a", 1))[0]["uuid"].([]any)[1].(string)
	b := c.transactOK("Test", insertItem("b", 2))[0]["uuid"].([]any)[1].(string)
	reqs := map[string]any{"Item": []any{map[string]any{"where": []any{[]any{"name", "==", "a"}}}}}
	var initial map[string]map[string]map[string]map[string]any
	c.result(c.call("monitor_cond", "Test", "c", reqs), &initial)
	if len(initial["Item"]) != 1 || initial["Item"][a] == nil {
		t.Fatalf("initial %v", initial)
	}
	// A row entering the condition through a modify is an insert.
	start := c.count()
	c.transactOK("Test", `{"op":"update","table":"Item","where":[["name","==","b"]],"row":{"name":"a"}}`)
	note, _ := c.note(start, "update2")
	if updatesOf(t, note)["Item"][b]["insert"] == nil {
		t.Fatalf("entering row %s", note.Params)
	}
	c.transactOK("Test", `{"op":"update","table":"Item","where":[["_uuid","==",["uuid","`+b+`"]]],"row":{"name":"b"}}`)

	// Switch to name == "b" (or false): a leaves, b enters, before the reply.
	start = c.count()
	change := map[string]any{"Item": []any{map[string]any{"where": []any{false, []any{"name", "==", "b"}}}}}
	reply, ri := c.callIndex("monitor_cond_change", "c", "c2", change)
	var empty map[string]any
	c.result(reply, &empty)
	note, ni := c.note(start, "update2")
	if note == nil || ni > ri {
		t.Fatalf("update2 at %d, reply at %d", ni, ri)
	}
	var params []json.RawMessage
	json.Unmarshal(note.Params, &params)
	u := updatesOf(t, note)["Item"]
	if string(params[0]) != `"c2"` || u[a] == nil || u[b]["insert"]["name"] != "b" {
		t.Fatalf("cond change update %s", note.Params)
	}
	if _, ok := u[a]["delete"]; !ok {
		t.Fatalf("a not deleted: %v", u[a])
	}
	// The old id is gone, the new one works.
	if got := errorName(t, c.call("monitor_cond_change", "c", "c", change)); got != "syntax error" {
		t.Fatalf("old id: %q", got)
	}
	if got := errorName(t, c.call("monitor_cond_change", "c2", "c2", map[string]any{"Other": []any{}})); got != "syntax error" {
		t.Fatalf("unmonitored table: %q", got)
	}
	c.result(c.call("monitor_cancel", "c2"), &empty)
}

func TestMonitorsRemovedWithSession(t *testing.T) {
	srv, _ := newTestServer(t)
	c := pipeClient(t, srv)
	var u map[string]any
	c.result(c.call("monitor_cond", "Test", 1, map[string]any{"Item": []any{map[string]any{}}}), &u)
	sdb := srv.dbs["Test"]
	count := func() int {
		sdb.mu.Lock()
		defer sdb.mu.Unlock()
		return len(sdb.monitors)
	}
	if count() != 1 {
		t.Fatal("monitor not registered")
	}
	c.conn.Close()
	deadline := time.Now().Add(2 * time.Second)
	for count() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("monitor outlived its session")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestMonitorCondSinceHistoryLimit(t *testing.T) {
	srv := New(testLogger(t))
	t.Cleanup(func() { srv.Close() })
	srv.historyLen = 3
	if err := srv.AddDatabase(newTestDB(t, testSchema)); err != nil {
		t.Fatal(err)
	}
	c := pipeClient(t, srv)
	reqs := map[string]any{"Item": []any{map[string]any{"columns": []string{"name"}}}}
	var reply []json.RawMessage
	c.result(c.call("monitor_cond_since", "Test", "s", reqs, db.ZeroUUID), &reply)
	var ids []string
	for i := 0; i < 5; i++ {
		start := c.count()
		c.transactOK("Test", insertItem("x", i))
		note, _ := c.note(start, "update3")
		var params []json.RawMessage
		json.Unmarshal(note.Params, &params)
		var id string
		json.Unmarshal(params[1], &id)
		ids = append(ids, id)
	}
	for i, id := range ids {
		c2 := pipeClient(t, srv)
		c2.result(c2.call("monitor_cond_since", "Test", "s", reqs, id), &reply)
		var u map[string]map[string]any
		json.Unmarshal(reply[2], &u)
		// The last 3 commits are remembered: changes after ids[2..4] are known.
		wantFound := i >= 2
		if found := string(reply[0]) == "true"; found != wantFound {
			t.Fatalf("id %d: found %v", i, found)
		}
		if wantFound && len(u["Item"]) != 4-i || !wantFound && len(u["Item"]) != 5 {
			t.Fatalf("id %d: %d rows in %s", i, len(u["Item"]), reply[2])
		}
		var last string
		json.Unmarshal(reply[1], &last)
		if last != ids[4] {
			t.Fatalf("id %d: last-txn-id %s, want %s", i, last, ids[4])
		}
	}
}

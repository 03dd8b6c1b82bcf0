package server

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"gvs/ovsdb/db"
	"gvs/ovsdb/jsonrpc"
)

func TestBasicMethods(t *testing.T) {
	srv, _ := newTestServer(t)
	c := pipeClient(t, srv)

	var dbs []string
	c.result(c.call("list_dbs"), &dbs)
	if !reflect.DeepEqual(dbs, []string{"Test", "_Server"}) {
		t.Fatalf("list_dbs = %v", dbs)
	}
	if got := srv.Databases(); !reflect.DeepEqual(got, dbs) {
		t.Fatalf("Databases() = %v", got)
	}

	var schema struct{ Name string }
	c.result(c.call("get_schema", "Test"), &schema)
	if schema.Name != "Test" {
		t.Fatalf("get_schema name %q", schema.Name)
	}
	c.result(c.call("get_schema", "_Server"), &schema)
	if schema.Name != "_Server" {
		t.Fatalf("get_schema name %q", schema.Name)
	}
	if got := errorName(t, c.call("get_schema", "Nope")); got != "unknown database" {
		t.Fatalf("get_schema Nope: %q", got)
	}
	if got := errorName(t, c.call("get_schema")); got != "syntax error" {
		t.Fatalf("get_schema without name: %q", got)
	}
	if got := errorName(t, c.call("transact", "Nope")); got != "unknown database" {
		t.Fatalf("transact Nope: %q", got)
	}

	echo := c.call("echo", "a", 1, map[string]any{"b": true})
	if string(echo.Result) != `["a",1,{"b":true}]` {
		t.Fatalf("echo result %s", echo.Result)
	}

	var id1, id2 string
	c.result(c.call("get_server_id"), &id1)
	c2 := pipeClient(t, srv)
	c2.result(c2.call("get_server_id"), &id2)
	if _, ok := db.ParseUUID(id1); !ok || id1 != id2 {
		t.Fatalf("server ids %q %q", id1, id2)
	}

	m := c.call("no_such_method")
	if string(m.Error) != `"unknown method"` || string(m.Result) != "null" {
		t.Fatalf("unknown method: %+v", m)
	}

	var empty map[string]any
	c.result(c.call("set_db_change_aware", true), &empty)
	if got := errorName(t, c.call("set_db_change_aware", "yes")); got != "syntax error" {
		t.Fatalf("set_db_change_aware bad param: %q", got)
	}
}

func TestUnexpectedReplyDisconnects(t *testing.T) {
	srv, _ := newTestServer(t)
	c := pipeClient(t, srv)
	// A reply to the server's own echo probe is accepted silently...
	c.w.Write(mustMessage(`{"id":"echo","result":[],"error":null}`))
	var dbs []string
	c.result(c.call("list_dbs"), &dbs)
	// ...any other reply ends the session, as in Open vSwitch.
	c.w.Write(mustMessage(`{"id":42,"result":[],"error":null}`))
	if m, _ := c.waitFor(c.count(), 2*time.Second, func(*jsonrpc.Message) bool { return false }); m != nil || !c.isClosed() {
		t.Fatal("session survived an unexpected reply")
	}
}

func TestTransactReplyShape(t *testing.T) {
	srv, _ := newTestServer(t)
	c := pipeClient(t, srv)
	res := c.transactOK("Test", insertItem("a", 1))
	if _, ok := res[0]["uuid"]; !ok {
		t.Fatalf("insert result %v", res)
	}
	// A failing operation is reported inside a successful reply.
	m := c.call("transact", "Test", raw(`{"op":"insert","table":"Nope","row":{}}`))
	var results []json.RawMessage
	c.result(m, &results)
	if len(results) != 1 || string(results[0]) == "null" {
		t.Fatalf("bad results %s", m.Result)
	}
	// Clients may not write _Server.
	m = c.call("transact", "_Server", raw(`{"op":"insert","table":"Database","row":{"name":"x","model":"standalone","connected":true,"leader":true}}`))
	c.result(m, &results)
	var e struct{ Error string }
	json.Unmarshal(results[len(results)-1], &e)
	if e.Error == "" {
		t.Fatalf("write to _Server accepted: %s", m.Result)
	}
}

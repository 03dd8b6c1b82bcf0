package server

import (
	"gvs/ovsdb/jsonrpc"
	"testing"
	"time"
)

func waitOp(count int, timeoutMS int) string {
	return string(mustJSON(map[string]any{"op": "wait", "table": "Item", "timeout": timeoutMS,
		"where": []any{[]any{"name", "==", "a"}}, "columns": []string{"count"}, "until": "==",
		"rows": []any{map[string]any{"count": count}}}))
}

func TestBlockedTransactionCompletesAfterCommit(t *testing.T) {
	srv, _ := newTestServer(t)
	a, b := pipeClient(t, srv), pipeClient(t, srv)
	a.transactOK("Test", insertItem("a", 1))

	a.send("transact", 100, "Test", raw(waitOp(5, 60000)), raw(insertItem("done", 0)))
	// Other requests from the same session are still answered meanwhile.
	var dbs []string
	a.result(a.call("list_dbs"), &dbs)
	if m, _ := a.waitFor(0, 100*time.Millisecond, func(m *jsonrpcMessage) bool { return m.IsResponse() && string(m.ID) == "100" }); m != nil {
		t.Fatalf("wait completed early: %s", m.Result)
	}
	b.transactOK("Test", `{"op":"update","table":"Item","where":[["name","==","a"]],"row":{"count":5}}`)
	m, _ := a.response(100, 2*time.Second)
	var res []map[string]any
	a.result(m, &res)
	if len(res) != 2 || res[1]["uuid"] == nil {
		t.Fatalf("blocked transaction result %s", m.Result)
	}
}

func TestBlockedTransactionTimesOut(t *testing.T) {
	srv, _ := newTestServer(t)
	a := pipeClient(t, srv)
	a.transactOK("Test", insertItem("a", 1))
	start := time.Now()
	m := a.call("transact", "Test", raw(waitOp(5, 200)))
	if time.Since(start) < 150*time.Millisecond {
		t.Fatalf("wait returned after %v", time.Since(start))
	}
	var res []map[string]any
	a.result(m, &res)
	if res[0]["error"] != "timed out" {
		t.Fatalf("result %s", m.Result)
	}
}

func TestCancelBlockedTransaction(t *testing.T) {
	srv, _ := newTestServer(t)
	a := pipeClient(t, srv)
	a.transactOK("Test", insertItem("a", 1))
	a.send("transact", "w1", "Test", raw(waitOp(5, 60000)))
	var dbs []string
	a.result(a.call("list_dbs"), &dbs) // the transaction is now blocked
	// A duplicate id while it is pending is refused.
	a.send("transact", "w1", "Test", raw(waitOp(5, 60000)))
	dup, _ := a.waitFor(0, 2*time.Second, func(m *jsonrpcMessage) bool { return m.IsResponse() && string(m.ID) == `"w1"` })
	if dup == nil || errorName(t, dup) != "syntax error" {
		t.Fatalf("duplicate request id: %+v", dup)
	}
	start := a.count()
	a.send("cancel", nil, "w1")
	m, _ := a.waitFor(start, 2*time.Second, func(m *jsonrpcMessage) bool { return m.IsResponse() && string(m.ID) == `"w1"` })
	if m == nil || string(m.Error) != `"canceled"` {
		t.Fatalf("cancel reply %+v", m)
	}
}

type jsonrpcMessage = jsonrpc.Message

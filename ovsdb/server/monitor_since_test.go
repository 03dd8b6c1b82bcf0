package server

import (
	"encoding/json"
	"testing"

	"gvs/ovsdb/db"
)

// lastIDOf returns the last-txn-id of an update3 notification.
func lastIDOf(t *testing.T, c *client, from int) (string, int) {
	t.Helper()
	note, i := c.note(from, "update3")
	if note == nil {
		t.Fatal("no update3 notification")
	}
	var params []json.RawMessage
	var id string
	if json.Unmarshal(note.Params, &params) != nil || len(params) != 3 || json.Unmarshal(params[1], &id) != nil {
		t.Fatalf("update3 params %s", note.Params)
	}
	return id, i
}

// A client that reconnects with the last-txn-id of the last update3 it
// received resumes: found is true and it gets only the net changes made
// while it was away, on a server that keeps a transaction history (as Open
// vSwitch does for clustered databases; standalone ones send zeros and
// always start over, see TestMonitorCondSinceStandalone).
func TestMonitorCondSinceResumeAfterNotifications(t *testing.T) {
	srv := newHistoryServer(t, 100)
	c := pipeClient(t, srv)
	reqs := map[string]any{"Item": []any{map[string]any{"columns": []string{"name", "count"}}}}
	c.result(c.call("monitor_cond_since", "Test", "m", reqs, db.ZeroUUID), new(any))
	keep := c.transactOK("Test", insertItem("keep", 1))[0]["uuid"].([]any)[1].(string)
	gone := c.transactOK("Test", insertItem("gone", 2))[0]["uuid"].([]any)[1].(string)
	_, i := lastIDOf(t, c, 0)
	last, _ := lastIDOf(t, c, i+1) // the id of the second insert's commit
	c.conn.Close()

	// While the client is away: a modify, a delete, an insert, and a row
	// that comes and goes (which it must not hear of).
	w := pipeClient(t, srv)
	w.transactOK("Test", `{"op":"update","table":"Item","where":[["name","==","keep"]],"row":{"count":10}}`)
	w.transactOK("Test", `{"op":"delete","table":"Item","where":[["name","==","gone"]]}`)
	added := w.transactOK("Test", insertItem("new", 3))[0]["uuid"].([]any)[1].(string)
	w.transactOK("Test", insertItem("transient", 4))
	w.transactOK("Test", `{"op":"delete","table":"Item","where":[["name","==","transient"]]}`)

	c2 := pipeClient(t, srv)
	var reply []json.RawMessage
	c2.result(c2.call("monitor_cond_since", "Test", "m", reqs, last), &reply)
	var found bool
	var newest string
	var u map[string]map[string]map[string]any
	if len(reply) != 3 || json.Unmarshal(reply[0], &found) != nil || json.Unmarshal(reply[1], &newest) != nil || json.Unmarshal(reply[2], &u) != nil {
		t.Fatalf("reply %s", reply)
	}
	if !found || newest == last {
		t.Fatalf("resume from %s: found %v, last-txn-id %s", last, found, newest)
	}
	want := map[string]string{keep: "modify", gone: "delete", added: "insert"}
	if len(u["Item"]) != len(want) {
		t.Fatalf("changes since %s: %s, want only %v", last, reply[2], want)
	}
	for uuid, kind := range want {
		if _, ok := u["Item"][uuid][kind]; !ok {
			t.Fatalf("row %s: %v, want %s", uuid, u["Item"][uuid], kind)
		}
	}
	if u["Item"][keep]["modify"].(map[string]any)["count"] != 10.0 {
		t.Fatalf("modify of keep: %v", u["Item"][keep])
	}

	// The newest id resumes with nothing to send; the next update3
	// carries a newer id.
	c3 := pipeClient(t, srv)
	c3.result(c3.call("monitor_cond_since", "Test", "m", reqs, newest), &reply)
	if string(reply[0]) != "true" || string(reply[2]) != "{}" {
		t.Fatalf("resume from the newest id: %s", reply)
	}
	start := c3.count()
	w.transactOK("Test", insertItem("after", 5))
	if next, _ := lastIDOf(t, c3, start); next == newest || next == string(db.ZeroUUID) {
		t.Fatalf("update3 after resuming carries id %s", next)
	}
}

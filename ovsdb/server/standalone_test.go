package server

import (
	"encoding/json"
	"testing"

	"gvs/ovsdb/db"
)

// newHistoryServer is a server that keeps n commits of transaction history
// per database, as Open vSwitch does only for clustered databases.
func newHistoryServer(t testing.TB, n int) *Server {
	t.Helper()
	srv := New(testLogger(t))
	t.Cleanup(func() { srv.Close() })
	srv.historyLen = n
	if err := srv.AddDatabase(newTestDB(t, testSchema)); err != nil {
		t.Fatal(err)
	}
	return srv
}

// On a standalone database monitor_cond_since answers found=false with the
// all-zero transaction id, update3 carries zeros too, and a client that
// comes back with any id it saw gets the full state again, as from Open
// vSwitch's ovsdb-server (compared side by side in
// tests/standalone_since_test.go).
func TestMonitorCondSinceStandalone(t *testing.T) {
	srv, _ := newTestServer(t)
	c := pipeClient(t, srv)
	reqs := map[string]any{"Item": []any{map[string]any{"columns": []string{"name"}}}}
	var reply []json.RawMessage
	c.result(c.call("monitor_cond_since", "Test", "m", reqs, db.ZeroUUID), &reply)
	if len(reply) != 3 || string(reply[0]) != "false" || string(reply[1]) != `"`+string(db.ZeroUUID)+`"` {
		t.Fatalf("first reply %s", reply)
	}
	c.transactOK("Test", insertItem("a", 1))
	c.transactOK("Test", insertItem("b", 2))
	_, i := lastIDOf(t, c, 0)
	last, _ := lastIDOf(t, c, i+1)
	if last != string(db.ZeroUUID) {
		t.Fatalf("update3 last-txn-id %q, want zeros", last)
	}
	c.conn.Close()

	c2 := pipeClient(t, srv)
	reply = nil
	c2.result(c2.call("monitor_cond_since", "Test", "m", reqs, last), &reply)
	if string(reply[0]) != "false" || string(reply[1]) != `"`+string(db.ZeroUUID)+`"` {
		t.Fatalf("reconnect reply %s", reply[:2])
	}
	var u map[string]map[string]any
	if err := json.Unmarshal(reply[2], &u); err != nil || len(u["Item"]) != 2 {
		t.Fatalf("reconnect did not replay the full state: %s", reply[2])
	}
}

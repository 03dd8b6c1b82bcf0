package server

import (
	"encoding/json"
	"testing"
	"time"

	"gvs/ovsdb/jsonrpc"
)

func locked(t *testing.T, c *client, m *jsonrpc.Message) bool {
	t.Helper()
	var r struct {
		Locked *bool `json:"locked"`
	}
	c.result(m, &r)
	if r.Locked == nil {
		t.Fatalf("lock reply without \"locked\": %s", m.Result)
	}
	return *r.Locked
}

func lockNote(c *client, from int, method, name string) bool {
	return lockNoteWithin(c, from, method, name, 2*time.Second)
}

func lockNoteWithin(c *client, from int, method, name string, d time.Duration) bool {
	m, _ := c.waitFor(from, d, func(m *jsonrpc.Message) bool {
		return m.IsNotification() && m.Method == method && string(m.Params) == `["`+name+`"]`
	})
	return m != nil
}

func TestLockStealUnlock(t *testing.T) {
	srv, _ := newTestServer(t)
	a, b := pipeClient(t, srv), pipeClient(t, srv)

	if !locked(t, a, a.call("lock", "L")) {
		t.Fatal("first lock not granted")
	}
	if got := errorName(t, a.call("lock", "L")); got != "syntax error" {
		t.Fatalf("second lock by the same session: %q", got)
	}
	bStart := b.count()
	if locked(t, b, b.call("lock", "L")) {
		t.Fatal("lock granted twice")
	}
	// "assert" sees who owns the lock.
	assert := `{"op":"assert","lock":"L"}`
	a.transactOK("Test", assert)
	res := b.call("transact", "Test", raw(assert))
	var results []map[string]any
	b.result(res, &results)
	if results[0]["error"] != "not owner" {
		t.Fatalf("assert by waiter: %s", res.Result)
	}

	// a unlocks: b gets "locked".
	var empty map[string]any
	a.result(a.call("unlock", "L"), &empty)
	if !lockNote(b, bStart, "locked", "L") {
		t.Fatal("waiter not told it got the lock")
	}

	// a steals it back: b is told "stolen", and regains it when a unlocks.
	aStart := a.count()
	if !locked(t, a, a.call("steal", "L")) {
		t.Fatal("steal not granted")
	}
	bStart = b.count()
	if !lockNote(b, 0, "stolen", "L") {
		t.Fatal("owner not told its lock was stolen")
	}
	a.result(a.call("unlock", "L"), &empty)
	if !lockNote(b, bStart, "locked", "L") {
		t.Fatal("stolen-from waiter did not get the lock back")
	}
	if lockNoteWithin(a, aStart, "locked", "L", 200*time.Millisecond) {
		t.Fatal("stealer got a locked notification")
	}

	// Errors.
	if got := errorName(t, a.call("unlock", "L")); got != "syntax error" {
		t.Fatalf("unlock without lock: %q", got)
	}
	if got := errorName(t, a.call("lock", "1bad")); got != "syntax error" {
		t.Fatalf("bad lock name: %q", got)
	}

	// A session's locks go with it.
	c := pipeClient(t, srv)
	cStart := c.count()
	if locked(t, c, c.call("lock", "L")) {
		t.Fatal("lock granted while b owns it")
	}
	b.conn.Close()
	if !lockNote(c, cStart, "locked", "L") {
		t.Fatal("lock not passed on when its owner disconnected")
	}
	_ = json.RawMessage(nil)
}

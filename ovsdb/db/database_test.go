package db

import (
	"encoding/json"
	"errors"
	"os"
	"sync"
	"testing"
	"time"
)

func TestCommitContents(t *testing.T) {
	d := newTestDB(t)
	var got []*Commit
	cancel := d.Subscribe(func(c *Commit) { got = append(got, c) })
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	raws := func(s string) []json.RawMessage {
		var r []json.RawMessage
		json.Unmarshal([]byte(s), &r)
		return r
	}
	r := d.Transact(raws(`[{"op":"insert","table":"Root","row":{"name":"a"}},{"op":"comment","comment":"one"},{"op":"comment","comment":"two"},{"op":"commit","durable":true}]`),
		TxnEnv{Started: now, Now: now})
	c := r.Commit
	if c == nil || len(got) != 1 || got[0] != c {
		t.Fatalf("commit %+v, subscriber saw %d", c, len(got))
	}
	if c.Comment != "one\ntwo" || !c.Durable || !c.Date.Equal(now) {
		t.Errorf("comment %q durable %v date %v", c.Comment, c.Durable, c.Date)
	}
	if _, ok := ParseUUID(string(c.TxnID)); !ok {
		t.Errorf("TxnID %q", c.TxnID)
	}
	u := insertedUUID(t, r, 0)
	ch := c.Tables["Root"][u]
	if ch.Old != nil || ch.New == nil || ch.New.UUID != u || ch.New.Version == "" {
		t.Fatalf("insert change %+v", ch)
	}
	v1 := ch.New.Version

	// An update that changes nothing commits nothing.
	r = mustSucceed(t, d, `[{"op":"update","table":"Root","where":[],"row":{"name":"a"}}]`)
	if r.Commit != nil || len(got) != 1 {
		t.Fatal("no-op update committed")
	}
	// Read-only transactions commit nothing.
	r = mustSucceed(t, d, `[{"op":"select","table":"Root","where":[]},{"op":"comment","comment":"x"},{"op":"commit","durable":true}]`)
	if r.Commit != nil {
		t.Fatal("read-only transaction committed")
	}
	// A modification gets a new version; Old is the previous row.
	r = mustSucceed(t, d, `[{"op":"mutate","table":"Root","where":[],"mutations":[["i","+=",1]]}]`)
	ch = r.Commit.Tables["Root"][u]
	if ch.Old == nil || ch.New == nil || ch.Old.Version != v1 || ch.New.Version == v1 {
		t.Fatalf("modify change %+v", ch)
	}
	if ch.Old.Columns[d.schema.Tables["Root"].ByName["i"].Index].Keys[0] != int64(0) {
		t.Error("old row was modified in place")
	}
	// Deletes have New == nil.
	r = mustSucceed(t, d, `[{"op":"delete","table":"Root","where":[]}]`)
	if ch := r.Commit.Tables["Root"][u]; ch.Old == nil || ch.New != nil {
		t.Fatalf("delete change %+v", ch)
	}
	cancel()
	mustSucceed(t, d, `[{"op":"insert","table":"Root","row":{}}]`)
	if len(got) != 3 {
		t.Fatalf("subscriber calls = %d, want 3 (none after cancel)", len(got))
	}
}

func TestSubscribersInOrder(t *testing.T) {
	d := newTestDB(t)
	var order []string
	d.Subscribe(func(*Commit) { order = append(order, "first") })
	d.Subscribe(func(*Commit) { order = append(order, "second") })
	mustSucceed(t, d, `[{"op":"insert","table":"Root","row":{}}]`)
	if len(order) != 2 || order[0] != "first" {
		t.Fatalf("order %v", order)
	}
	var seen int
	d.ViewAndSubscribe(func(v View) {
		v.Rows("Root", func(*Row) bool { seen++; return true })
	}, func(*Commit) { seen += 10 })
	mustSucceed(t, d, `[{"op":"insert","table":"Root","row":{}}]`)
	if seen != 11 {
		t.Fatalf("ViewAndSubscribe saw %d", seen)
	}
}

func TestBeforeCommit(t *testing.T) {
	d := newTestDB(t)
	var notified int
	d.Subscribe(func(*Commit) { notified++ })
	var hooked *Commit
	d.SetBeforeCommit(func(c *Commit) error { hooked = c; return errors.New("disk full") })
	r := transact(t, d, `[{"op":"insert","table":"Root","row":{}}]`)
	if got := anonymize(resultsJSON(t, r)); got != `[{"uuid":["uuid","<u>"]},{"error":"I/O error","details":"disk full"}]` {
		t.Fatalf("got %s", got)
	}
	if hooked == nil || r.Commit != nil || notified != 0 || countRows(d, "Root") != 0 {
		t.Fatal("failed commit became visible")
	}
	d.SetBeforeCommit(func(*Commit) error { return &Error{Name: "I/O error", Details: "custom"} })
	r = transact(t, d, `[{"op":"insert","table":"Root","row":{}}]`)
	if e := txnError(r); e == nil || e.Details != "custom" {
		t.Fatalf("got %v", e)
	}
	d.SetBeforeCommit(func(c *Commit) error {
		if countRows2(d, "Root") != 0 {
			t.Error("commit visible before the hook returned")
		}
		return nil
	})
	mustSucceed(t, d, `[{"op":"insert","table":"Root","row":{}}]`)
	if countRows(d, "Root") != 1 || notified != 1 {
		t.Fatal("commit not applied")
	}
}

// countRows2 counts rows without locking, for use inside hooks.
func countRows2(d *Database, table string) int { return len(d.tables[table].rows) }

func TestReservedDatabase(t *testing.T) {
	data, err := os.ReadFile("testdata/_server.ovsschema")
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseSchema(data)
	if err != nil {
		t.Fatal(err)
	}
	d := New(s, nil)
	ops := `[{"op":"insert","table":"Database","row":{"name":"x","model":"standalone"}}]`
	r := transact(t, d, ops)
	if got := resultsJSON(t, r); got != `[{"error":"not allowed","details":"insert operation not allowed on table in reserved database _Server"}]` {
		t.Fatalf("got %s", got)
	}
	var raws []json.RawMessage
	json.Unmarshal([]byte(ops), &raws)
	if r := d.TransactPrivileged(raws, TxnEnv{}); r.Commit == nil {
		t.Fatalf("privileged insert failed: %v", r.Results)
	}
	mustSucceed(t, d, `[{"op":"select","table":"Database","where":[]}]`)
}

func TestWaitBlocks(t *testing.T) {
	d := newTestDB(t)
	mustSucceed(t, d, `[{"op":"insert","table":"Root","row":{"name":"a","i":1}}]`)
	ops := mustRaw(`[{"op":"insert","table":"Root","row":{"name":"b"}},
	  {"op":"wait","table":"Root","where":[["name","==","a"]],"columns":["i"],"until":"==","rows":[{"i":2}],"timeout":1000}]`)
	start := time.Now()
	r := d.Transact(ops, TxnEnv{Started: start, Now: start})
	if !r.Blocked || r.Commit != nil || r.Results != nil || !r.RetryAt.Equal(start.Add(time.Second)) {
		t.Fatalf("not blocked: %+v", r)
	}
	if countRows(d, "Root") != 1 {
		t.Fatal("blocked transaction changed the database")
	}
	// Still blocked half-way; after the timeout it fails.
	if r := d.Transact(ops, TxnEnv{Started: start, Now: start.Add(500 * time.Millisecond)}); !r.Blocked {
		t.Fatal("not blocked before the timeout")
	}
	r = d.Transact(ops, TxnEnv{Started: start, Now: start.Add(1500 * time.Millisecond)})
	if got := anonymize(resultsJSON(t, r)); got != `[{"uuid":["uuid","<u>"]},{"error":"timed out","details":"\"wait\" timed out after 1500 ms"}]` {
		t.Fatalf("got %s", got)
	}
	// Once another client makes the condition true, the retry commits.
	mustSucceed(t, d, `[{"op":"update","table":"Root","where":[["name","==","a"]],"row":{"i":2}}]`)
	r = d.Transact(ops, TxnEnv{Started: start, Now: start.Add(600 * time.Millisecond)})
	if r.Blocked || r.Commit == nil {
		t.Fatalf("retry did not commit: %+v", r)
	}
	// A wait without timeout blocks until a commit.
	r = d.Transact(mustRaw(`[{"op":"wait","table":"Root","where":[],"columns":["i"],"until":"!=","rows":[{"i":2},{"i":0}]}]`), TxnEnv{Started: start, Now: start})
	if !r.Blocked || !r.RetryAt.After(start.Add(24*time.Hour)) {
		t.Fatalf("wait without timeout: %+v", r)
	}
	// A huge timeout must not overflow into the past.
	r = d.Transact(mustRaw(`[{"op":"wait","table":"Root","where":[],"columns":["i"],"until":"!=","rows":[{"i":2},{"i":0}],"timeout":9223372036854775807}]`), TxnEnv{Started: start, Now: start})
	if !r.Blocked || !r.RetryAt.After(start.Add(24*time.Hour)) {
		t.Fatalf("wait with huge timeout: %+v", r)
	}
}

func mustRaw(s string) []json.RawMessage {
	var r []json.RawMessage
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		panic(err)
	}
	return r
}

func TestConcurrentUse(t *testing.T) {
	d := newTestDB(t)
	var readers, writers sync.WaitGroup
	stop := make(chan struct{})
	d.Subscribe(func(c *Commit) {
		for _, rows := range c.Tables {
			for _, ch := range rows {
				if ch.New != nil {
					_ = len(ch.New.Columns)
				}
			}
		}
	})
	for i := 0; i < 4; i++ {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				d.View(func(v View) {
					v.Rows("Root", func(r *Row) bool { _ = r.Columns[0]; return true })
				})
			}
		}()
	}
	for i := 0; i < 4; i++ {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for j := 0; j < 25; j++ {
				mustSucceed(t, d, `[{"op":"insert","table":"Root","row":{"i":1}},{"op":"mutate","table":"Root","where":[],"mutations":[["i","+=",1]]}]`)
			}
		}()
	}
	writers.Wait()
	close(stop)
	readers.Wait()
	if n := countRows(d, "Root"); n != 100 {
		t.Fatalf("rows = %d, want 100", n)
	}
	checkInvariants(t, d)
}

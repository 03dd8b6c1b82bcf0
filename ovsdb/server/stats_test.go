package server

import (
	"testing"
	"time"
)

func TestStatsCountSessionsMonitorsAndTransactions(t *testing.T) {
	srv, _ := newTestServer(t)
	if st := srv.Stats(); st.Sessions != 0 || st.Accepted != 0 || st.Monitors != 0 || st.Committed != 0 {
		t.Fatalf("fresh server stats %+v", st)
	}
	a, b := pipeClient(t, srv), pipeClient(t, srv)
	a.transactOK("Test", insertItem("a", 1))
	a.transactOK("Test", insertItem("b", 2))
	a.transactOK("Test", `{"op":"select","table":"Item","where":[]}`)
	b.call("transact", "Test", raw(`{"op":"insert","table":"Nope","row":{}}`))
	b.call("transact", "Test", raw(waitOp(5, 0)))
	b.call("monitor", "Test", "m1", map[string]any{"Item": map[string]any{}})

	st := srv.Stats()
	if st.Sessions != 2 || st.Accepted != 2 {
		t.Errorf("sessions %d accepted %d, want 2 and 2", st.Sessions, st.Accepted)
	}
	if st.Monitors != 1 {
		t.Errorf("monitors %d, want 1", st.Monitors)
	}
	if st.Committed != 2 || st.Unchanged != 1 || st.Failed != 2 {
		t.Errorf("committed %d unchanged %d failed %d, want 2 1 2", st.Committed, st.Unchanged, st.Failed)
	}
	if st.CommitDuration.Count != 2 || st.CommitDuration.Sum <= 0 {
		t.Errorf("commit duration %+v", st.CommitDuration)
	}
	if got := st.CommitDuration.Buckets[10]; got != 2 {
		t.Errorf("commits at or below 10 s: %d, want 2", got)
	}

	b.call("monitor_cancel", "m1")
	b.send("transact", "w1", "Test", raw(waitOp(5, 60000)))
	b.call("list_dbs") // the wait is now blocked
	b.send("cancel", nil, "w1")
	deadline := time.Now().Add(2 * time.Second)
	for srv.Stats().Canceled != 1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	st = srv.Stats()
	if st.Canceled != 1 || st.Monitors != 0 {
		t.Errorf("after cancel: canceled %d monitors %d, want 1 and 0", st.Canceled, st.Monitors)
	}
	b.conn.Close()
	for srv.Stats().Sessions != 1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if st := srv.Stats(); st.Sessions != 1 || st.Accepted != 2 {
		t.Errorf("after a disconnect: sessions %d accepted %d, want 1 and 2", st.Sessions, st.Accepted)
	}
}

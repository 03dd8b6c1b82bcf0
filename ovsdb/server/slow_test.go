package server

import (
	"net"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"gvs/ovsdb/jsonrpc"
)

func TestSlowClientDoesNotStallOthers(t *testing.T) {
	srv, _ := newTestServer(t)
	srv.maxBacklog = 64 << 10
	path := filepath.Join(t.TempDir(), "db.sock")
	if err := srv.AddRemote("punix:" + path); err != nil {
		t.Fatal(err)
	}
	dial := func() net.Conn {
		c, err := net.Dial("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	// The slow client asks for updates and then never reads.
	slow := dial()
	w := jsonrpc.NewWriter(slow)
	req, _ := jsonrpc.NewRequest("monitor_cond", []any{"Test", "slow", map[string]any{"Item": []any{map[string]any{}}}}, 1)
	if err := w.Write(req); err != nil {
		t.Fatal(err)
	}
	watcher := newClient(t, dial())
	var u map[string]any
	watcher.result(watcher.call("monitor_cond", "Test", "w", map[string]any{"Item": []any{map[string]any{}}}), &u)
	writer := newClient(t, dial())

	sessions := func() int {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		return len(srv.sessions)
	}
	for wait := time.Now().Add(2 * time.Second); sessions() != 3; time.Sleep(time.Millisecond) {
		if time.Now().After(wait) {
			t.Fatalf("%d sessions", sessions())
		}
	}
	const n = 3000
	start := time.Now()
	for i := 0; i < n; i++ {
		writer.transactOK("Test", insertItem("item-with-a-longish-name-to-fill-the-pipe", i))
	}
	elapsed := time.Since(start)
	t.Logf("%d transactions in %v (%.0f/s) with a stalled monitor client", n, elapsed, n/elapsed.Seconds())
	// Every update reached the client that reads.
	got := 0
	watcher.waitFor(0, 5*time.Second, func(m *jsonrpc.Message) bool {
		if m.Method == "update2" {
			got++
		}
		return got == n
	})
	if got != n {
		t.Fatalf("watcher saw %d of %d updates", got, n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for sessions() != 2 {
		if time.Now().After(deadline) {
			t.Fatal("the client that stopped reading was not dropped")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A client that sends many requests before reading any reply is slowed
// down, not dropped: the server stops reading from it while its replies
// wait (as ovsdb-server does).
func TestPipeliningClientIsPausedNotDropped(t *testing.T) {
	srv, _ := newTestServer(t)
	srv.maxBacklog = 256 << 10
	srv.pauseBacklog = 16 << 10
	path := filepath.Join(t.TempDir(), "db.sock")
	if err := srv.AddRemote("punix:" + path); err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const n = 5000
	payload := make([]byte, 200)
	for i := range payload {
		payload[i] = 'x'
	}
	go func() {
		w := jsonrpc.NewWriter(conn)
		for i := 0; i < n; i++ {
			req, _ := jsonrpc.NewRequest("echo", []any{string(payload)}, i)
			if w.Write(req) != nil {
				return
			}
		}
	}()
	time.Sleep(300 * time.Millisecond) // replies pile up meanwhile
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	r := jsonrpc.NewReader(conn)
	for i := 0; i < n; i++ {
		m, err := r.Read()
		if err != nil {
			t.Fatalf("reply %d: %v (the server dropped the client?)", i, err)
		}
		if string(m.ID) != strconv.Itoa(i) {
			t.Fatalf("reply %d has id %s", i, m.ID)
		}
	}
}

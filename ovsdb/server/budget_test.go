package server

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"gvs/ovsdb/jsonrpc"
)

// largeSelect is a transaction of about size bytes that changes nothing.
func largeSelect(id, size int) []byte {
	return []byte(`{"id":` + itoa(id) + `,"method":"transact","params":["Test",{"op":"select","table":"Item","where":[["name","==","` +
		strings.Repeat("x", size) + `"]]}]}`)
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// Large messages are read one at a time server-wide: while one client
// holds the slot with half a large message, another client's large
// message waits and a small request is answered; a client that stalls
// with the slot is dropped after the stall limit, and the waiting large
// message is then read and answered.
func TestLargeMessagesShareOneSlot(t *testing.T) {
	srv, _ := newTestServer(t)
	srv.largeStall = 300 * time.Millisecond
	staller := pipeClient(t, srv)
	big := largeSelect(1, 3*LargeMessageThreshold)
	// Half of a large message, then nothing: the staller holds the slot.
	go staller.conn.Write(big[:len(big)/2])
	if !waitUntil(2*time.Second, func() bool { return len(srv.large.slots) == 1 }) {
		t.Fatal("the staller did not take the large-message slot")
	}
	waiter := pipeClient(t, srv)
	go waiter.conn.Write(largeSelect(2, 2*LargeMessageThreshold))
	small := pipeClient(t, srv)
	small.send("list_dbs", 7)
	if m, _ := small.waitFor(0, time.Second, func(m *jsonrpc.Message) bool { return m.IsResponse() }); m == nil {
		t.Fatal("a small request was not answered while the slot was held")
	}
	if m, _ := waiter.waitFor(0, 100*time.Millisecond, func(m *jsonrpc.Message) bool { return m.IsResponse() }); m != nil {
		t.Fatal("a second large message was read while the slot was held")
	}
	// The staller is dropped after the stall limit; the waiter goes on.
	m, _ := waiter.waitFor(0, 5*time.Second, func(m *jsonrpc.Message) bool { return m.IsResponse() })
	if m == nil || !strings.HasPrefix(string(m.Result), `[{"rows":[]}]`) {
		t.Fatalf("the waiting large message got no reply: %+v", m)
	}
	if !waitUntil(time.Second, staller.isClosed) {
		t.Error("the stalled client was not disconnected")
	}
	if !waitUntil(time.Second, func() bool { return len(srv.large.slots) == 0 }) {
		t.Error("the slot was not released")
	}
}

func waitUntil(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

package server

import (
	"fmt"
	"testing"
)

// BenchmarkTransactWithMonitors measures a client's insert round trips
// while ten other sessions monitor the table (five unconditional, sharing
// one encoding, and five conditional).
func BenchmarkTransactWithMonitors(b *testing.B) {
	srv, _ := newTestServer(b)
	for i := 0; i < 10; i++ {
		c := pipeClient(b, srv)
		req := map[string]any{}
		if i%2 == 1 {
			req["where"] = []any{[]any{"count", ">=", 0}}
		}
		var u map[string]any
		c.result(c.call("monitor_cond", "Test", fmt.Sprint(i), map[string]any{"Item": []any{req}}), &u)
	}
	w := pipeClient(b, srv)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w.transactOK("Test", insertItem("bench", i))
	}
}

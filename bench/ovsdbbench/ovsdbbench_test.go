package ovsdbbench

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

func TestParseTransact(t *testing.T) {
	raw := json.RawMessage(`[{}, {"uuid": ["uuid", "0d3e8e4a-0a6c-4a42-9c3c-4d1f1b5c2f6a"]}, {"count": 1}]`)
	res, err := parseTransact(raw, 3)
	if err != nil {
		t.Fatal(err)
	}
	if res[1].UUID[1] != "0d3e8e4a-0a6c-4a42-9c3c-4d1f1b5c2f6a" {
		t.Errorf("uuid = %v", res[1].UUID)
	}
	for _, bad := range []string{
		`[{}, {"error": "constraint violation", "details": "x"}]`,
		`[{}]`,
		`{"not": "a list"}`,
	} {
		if _, err := parseTransact(json.RawMessage(bad), 2); err == nil {
			t.Errorf("parseTransact(%s) succeeded", bad)
		}
	}
}

// The workload alternates add-port and del-port transactions whose wait
// operation expects what the previous one left.
func TestWorkloadAlternates(t *testing.T) {
	w := &workload{root: "r", bridge: "b", bridgePort: "bp"}
	add := w.next()
	if !w.adding || len(add) != 7 { // db name, wait, 2 inserts, update, mutate, comment
		t.Fatalf("first transaction: adding=%v, %d params", w.adding, len(add))
	}
	if err := w.finish(json.RawMessage(`[{}, {"uuid": ["uuid", "i"]}, {"uuid": ["uuid", "p"]}, {"count": 1}, {"count": 1}, {}]`)); err != nil {
		t.Fatal(err)
	}
	if w.added != "p" {
		t.Fatalf("added = %q", w.added)
	}
	del := w.next()
	if w.adding || len(del) != 5 {
		t.Fatalf("second transaction: adding=%v, %d params", w.adding, len(del))
	}
	wait := del[1].(map[string]any)
	rows := wait["rows"].([]any)[0].(map[string]any)["ports"].([]any)[1].([]any)
	if len(rows) != 2 {
		t.Errorf("the del-port wait expects %d ports, want 2 (br0 and p)", len(rows))
	}
}

// Measure against Debian's ovsdb-server: the real thing, when installed.
func TestMeasureDebian(t *testing.T) {
	s := Server{Name: "debian", Binary: DebianServer}
	if ok, why := s.Available(); !ok {
		t.Skip(why)
	}
	res, err := Measure(context.Background(), s, 200*time.Millisecond, 10)
	if err != nil {
		t.Fatal(err)
	}
	if res.TxnPerSecond <= 0 || res.MonitorLatencyUs <= 0 {
		t.Errorf("result %+v", res)
	}
}

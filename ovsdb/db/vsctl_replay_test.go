package db

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestReplayOvsVsctl replays the transactions real ovs-vsctl 3.1 sent to
// Open vSwitch's ovsdb-server (init, add-br, add-port, set, create mirror,
// add-bond, del-port, del-br...; captured from its jsonrpc debug log) and
// requires the same results, mapping the server's random UUIDs to ours as
// they appear.
func TestReplayOvsVsctl(t *testing.T) {
	data, err := os.ReadFile("testdata/ovs-vsctl-transactions.json")
	if err != nil {
		t.Fatal(err)
	}
	var pairs []struct {
		Params []json.RawMessage `json:"params"`
		Result json.RawMessage   `json:"result"`
	}
	if err := json.Unmarshal(data, &pairs); err != nil {
		t.Fatal(err)
	}
	d := New(vswitchSchema(t), nil)
	theirsToOurs := map[string]string{}
	mapUUIDs := func(s string) string {
		return uuidPattern.ReplaceAllStringFunc(s, func(u string) string {
			if o, ok := theirsToOurs[u]; ok {
				return o
			}
			return u
		})
	}
	for i, p := range pairs {
		ops := make([]json.RawMessage, 0, len(p.Params)-1)
		for _, op := range p.Params[1:] {
			ops = append(ops, json.RawMessage(mapUUIDs(string(op))))
		}
		r := d.Transact(ops, TxnEnv{})
		ours, _ := json.Marshal(r.Results)
		var ov, tv any
		json.Unmarshal(ours, &ov)
		json.Unmarshal(p.Result, &tv)
		learnUUIDs(tv, ov, theirsToOurs)
		want := canonical(mapUUIDs(string(p.Result)))
		if got := canonical(string(ours)); got != want {
			t.Fatalf("transaction %d (%s):\n got %s\nwant %s", i, comment(p.Params), got, want)
		}
	}
	checkInvariants(t, d)
	if n := countRows(d, "Bridge"); n != 1 {
		t.Errorf("Bridge rows = %d, want 1 (br1)", n)
	}

	// The final contents match what ovsdb-server wrote to its file
	// (queried with ovsdb-tool: a select of every table, sorted by name).
	final, err := os.ReadFile("testdata/ovs-vsctl-final-state.json")
	if err != nil {
		t.Fatal(err)
	}
	var selects []string
	for _, name := range sortedKeys(d.schema.Tables) {
		selects = append(selects, `{"op":"select","table":"`+name+`","where":[]}`)
	}
	r := transact(t, d, "["+strings.Join(selects, ",")+"]")
	got := sortRows(dropVersions(resultsJSON(t, r)))
	want := sortRows(dropVersions(mapUUIDs(string(final))))
	if !strings.Contains(got, `\"name\":\"br1\"`) {
		t.Fatalf("final state lacks br1: %s", got)
	}
	if got != want {
		t.Fatalf("final state:\n got %s\nwant %s", got, want)
	}
}

// dropVersions removes "_version" members from select results.
func dropVersions(s string) string {
	var v []map[string][]map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return s
	}
	for _, res := range v {
		for _, row := range res["rows"] {
			delete(row, "_version")
		}
	}
	return mustJSON(v)
}

// learnUUIDs pairs UUIDs found at the same place in their and our results.
func learnUUIDs(theirs, ours any, m map[string]string) {
	switch tv := theirs.(type) {
	case string:
		if os, ok := ours.(string); ok && uuidPattern.MatchString(tv) && uuidPattern.MatchString(os) {
			if _, known := m[tv]; !known {
				m[tv] = os
			}
		}
	case []any:
		if ov, ok := ours.([]any); ok && len(ov) == len(tv) {
			for i := range tv {
				learnUUIDs(tv[i], ov[i], m)
			}
		}
	case map[string]any:
		if ov, ok := ours.(map[string]any); ok {
			for k := range tv {
				learnUUIDs(tv[k], ov[k], m)
			}
		}
	}
}

func comment(params []json.RawMessage) string {
	for _, p := range params {
		if strings.Contains(string(p), `"comment"`) {
			var c struct{ Comment string }
			json.Unmarshal(p, &c)
			return c.Comment
		}
	}
	return "?"
}

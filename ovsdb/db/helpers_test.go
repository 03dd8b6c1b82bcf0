package db

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// transact runs a transaction given as a JSON array of operations and
// returns the result.
func transact(t testing.TB, d *Database, ops string) TxnResult {
	t.Helper()
	var raws []json.RawMessage
	if err := json.Unmarshal([]byte(ops), &raws); err != nil {
		t.Fatalf("bad test ops %s: %v", ops, err)
	}
	now := time.Now()
	return d.Transact(raws, TxnEnv{Started: now, Now: now})
}

// resultsJSON encodes a result array.
func resultsJSON(t testing.TB, r TxnResult) string {
	t.Helper()
	b, err := json.Marshal(r.Results)
	if err != nil {
		t.Fatalf("marshal results: %v", err)
	}
	return string(b)
}

// mustSucceed runs ops and fails the test if any result is an error.
func mustSucceed(t testing.TB, d *Database, ops string) TxnResult {
	t.Helper()
	r := transact(t, d, ops)
	for _, x := range r.Results {
		if e, ok := x.(*Error); ok {
			t.Fatalf("transaction %s failed: %v (results %s)", ops, e, resultsJSON(t, r))
		}
	}
	return r
}

// txnError returns the transaction's error object, or nil.
func txnError(r TxnResult) *Error {
	for _, x := range r.Results {
		if e, ok := x.(*Error); ok {
			return e
		}
	}
	return nil
}

// insertedUUID returns the UUID of the i-th result, an insert.
func insertedUUID(t testing.TB, r TxnResult, i int) UUID {
	t.Helper()
	m, ok := r.Results[i].(map[string]any)
	if !ok {
		t.Fatalf("result %d is %T", i, r.Results[i])
	}
	return UUID(m["uuid"].([]any)[1].(string))
}

// countRows counts a table's committed rows.
func countRows(d *Database, table string) int {
	n := 0
	d.View(func(v View) {
		v.Rows(table, func(*Row) bool { n++; return true })
	})
	return n
}

// dump renders the whole database canonically, to compare states.
func dump(d *Database) string {
	var b strings.Builder
	d.View(func(v View) {
		for _, name := range sortedKeys(d.schema.Tables) {
			t := d.schema.Tables[name]
			var rows []string
			v.Rows(name, func(r *Row) bool {
				cols, _ := t.ColumnsByName([]string{"_uuid", "_version"})
				m := t.RowJSON(r, append(cols, t.Columns...))
				j, _ := json.Marshal(m)
				rows = append(rows, string(j))
				return true
			})
			sortStrings(rows)
			b.WriteString(name + ":" + strings.Join(rows, ",") + "\n")
		}
	})
	return b.String()
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// newVswitch returns an empty database with the real vswitch schema and
// one Open_vSwitch row.
func newVswitch(t testing.TB) *Database {
	t.Helper()
	d := New(vswitchSchema(t), nil)
	mustSucceed(t, d, `[{"op":"insert","table":"Open_vSwitch","row":{}}]`)
	return d
}

// addBridge adds a bridge with its internal port and interface, like
// ovs-vsctl add-br.
func addBridge(t testing.TB, d *Database, name string) {
	t.Helper()
	mustSucceed(t, d, `[
	 {"op":"insert","table":"Interface","row":{"name":"`+name+`","type":"internal"},"uuid-name":"i"},
	 {"op":"insert","table":"Port","row":{"name":"`+name+`","interfaces":["named-uuid","i"]},"uuid-name":"p"},
	 {"op":"insert","table":"Bridge","row":{"name":"`+name+`","ports":["named-uuid","p"]},"uuid-name":"b"},
	 {"op":"mutate","table":"Open_vSwitch","where":[],"mutations":[["bridges","insert",["set",[["named-uuid","b"]]]]]}]`)
}

package db

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// checkInvariants recomputes the reference index and the table indexes
// from scratch and compares them with the incrementally maintained ones,
// and checks that no committed strong or weak reference dangles and that
// every non-root row is referenced.
func checkInvariants(t testing.TB, d *Database) {
	t.Helper()
	d.mu.RLock()
	defer d.mu.RUnlock()
	inbound := map[rowKey]map[rowKey]refCount{}
	for _, ts := range d.tables {
		for _, r := range ts.rows {
			src := rowKey{ts, r.UUID}
			refsOf(ts, d.tables, r, func(target rowKey, weak bool) {
				if target.table.rows[target.uuid] == nil {
					t.Errorf("%s row %s refers to missing %s row %s", ts.schema.Name, r.UUID, target.table.schema.Name, target.uuid)
				}
				m := inbound[target]
				if m == nil {
					m = map[rowKey]refCount{}
					inbound[target] = m
				}
				c := m[src]
				if weak {
					c.weak++
				} else {
					c.strong++
				}
				m[src] = c
			})
		}
	}
	if !reflect.DeepEqual(inbound, d.inbound) {
		t.Errorf("reference index out of date:\n got %v\nwant %v", d.inbound, inbound)
	}
	for _, ts := range d.tables {
		if ts.schema.IsRoot {
			continue
		}
		for u := range ts.rows {
			if d.strongRefsTo(rowKey{ts, u}) == 0 {
				t.Errorf("unreferenced non-root %s row %s survived", ts.schema.Name, u)
			}
		}
		for i, idx := range ts.schema.Indexes {
			want := map[string]UUID{}
			for u, r := range ts.rows {
				want[indexKey(r, idx)] = u
			}
			if !reflect.DeepEqual(want, ts.indexes[i]) {
				t.Errorf("%s index %d out of date", ts.schema.Name, i)
			}
		}
	}
}

func TestVswitchGarbageCollection(t *testing.T) {
	d := newVswitch(t)
	addBridge(t, d, "br0")
	addBridge(t, d, "br1")
	checkInvariants(t, d)
	if n := countRows(d, "Interface"); n != 2 {
		t.Fatalf("Interface rows = %d", n)
	}
	// Add a second port to br0 and a mirror selecting both ports weakly.
	mustSucceed(t, d, `[
	 {"op":"insert","table":"Interface","row":{"name":"eth0"},"uuid-name":"i"},
	 {"op":"insert","table":"Port","row":{"name":"eth0","interfaces":["named-uuid","i"]},"uuid-name":"p"},
	 {"op":"mutate","table":"Bridge","where":[["name","==","br0"]],"mutations":[["ports","insert",["named-uuid","p"]]]}]`)
	r := mustSucceed(t, d, `[
	 {"op":"select","table":"Port","where":[],"columns":["_uuid","name"],"sort":["name"]}]`)
	ports := r.Results[0].(map[string]any)["rows"].([]any)
	var portUUIDs []string
	for _, p := range ports {
		portUUIDs = append(portUUIDs, fmt.Sprintf(`["uuid",%q]`, p.(map[string]any)["_uuid"].([]any)[1]))
	}
	mustSucceed(t, d, `[
	 {"op":"insert","table":"Mirror","row":{"name":"m","select_src_port":["set",[`+strings.Join(portUUIDs, ",")+`]]},"uuid-name":"m"},
	 {"op":"mutate","table":"Bridge","where":[["name","==","br0"]],"mutations":[["mirrors","insert",["named-uuid","m"]]]}]`)
	checkInvariants(t, d)

	// Removing eth0 from br0's ports collects the port and its interface
	// and drops the mirror's weak reference to it.
	r = mustSucceed(t, d, `[{"op":"mutate","table":"Bridge","where":[["name","==","br0"]],"mutations":[["ports","delete",`+portUUIDs[2]+`]]}]`)
	if n := countRows(d, "Interface"); n != 2 {
		t.Fatalf("after removing eth0: Interface rows = %d", n)
	}
	if c := r.Commit; c == nil || len(c.Tables["Port"]) != 1 || len(c.Tables["Interface"]) != 1 || len(c.Tables["Mirror"]) != 1 {
		t.Fatalf("commit does not show the collected rows and mirror change: %+v", c)
	}
	r = mustSucceed(t, d, `[{"op":"select","table":"Mirror","where":[],"columns":["select_src_port"]}]`)
	if got := anonymize(resultsJSON(t, r)); got != `[{"rows":[{"select_src_port":["set",[["uuid","<u>"],["uuid","<u>"]]]}]}]` {
		t.Fatalf("mirror after port removal: %s", got)
	}
	checkInvariants(t, d)

	// Removing br0 from Open_vSwitch.bridges collects the bridge, its
	// ports, interfaces and mirror.
	mustSucceed(t, d, `[{"op":"mutate","table":"Open_vSwitch","where":[],"mutations":[["bridges","delete",`+
		`["set",[]]]]},{"op":"select","table":"Bridge","where":[["name","==","br0"]],"columns":["_uuid"]}]`)
	r = mustSucceed(t, d, `[{"op":"select","table":"Bridge","where":[["name","==","br0"]],"columns":["_uuid"]}]`)
	br0 := r.Results[0].(map[string]any)["rows"].([]any)[0].(map[string]any)["_uuid"].([]any)[1].(string)
	mustSucceed(t, d, `[{"op":"mutate","table":"Open_vSwitch","where":[],"mutations":[["bridges","delete",["uuid","`+br0+`"]]]}]`)
	for table, want := range map[string]int{"Bridge": 1, "Port": 1, "Interface": 1, "Mirror": 0, "Open_vSwitch": 1} {
		if n := countRows(d, table); n != want {
			t.Errorf("after deleting br0: %s rows = %d, want %d", table, n, want)
		}
	}
	checkInvariants(t, d)
}

func TestUnreferencedInsertIsCollected(t *testing.T) {
	d := newVswitch(t)
	r := mustSucceed(t, d, `[{"op":"insert","table":"Interface","row":{"name":"lonely"},"uuid-name":"i"},
	  {"op":"insert","table":"Port","row":{"name":"lonely","interfaces":["named-uuid","i"]}}]`)
	if r.Commit != nil || countRows(d, "Port") != 0 || countRows(d, "Interface") != 0 {
		t.Fatalf("unreferenced Port kept (commit %+v)", r.Commit)
	}
}

func TestReferentialIntegrity(t *testing.T) {
	d := newTestDB(t)
	r := mustSucceed(t, d, `[
	 {"op":"insert","table":"Kid","row":{"name":"k"},"uuid-name":"k"},
	 {"op":"insert","table":"Root","row":{"name":"a","kids":["named-uuid","k"]}},
	 {"op":"insert","table":"Root","row":{"name":"b","kids":["named-uuid","k"],"weak":["named-uuid","k"]}}]`)
	kid := insertedUUID(t, r, 0)
	before := dump(d)
	r = transact(t, d, `[{"op":"delete","table":"Kid","where":[]}]`)
	want := `[{"count":1},{"error":"referential integrity violation","details":"cannot delete Kid row ` + string(kid) + ` because of 2 remaining reference(s)"}]`
	if got := resultsJSON(t, r); got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
	if dump(d) != before {
		t.Fatal("failed delete changed the database")
	}
	// Dropping one strong reference keeps the kid; dropping both collects
	// it and removes the weak reference.
	mustSucceed(t, d, `[{"op":"update","table":"Root","where":[["name","==","a"]],"row":{"kids":["set",[]]}}]`)
	if countRows(d, "Kid") != 1 {
		t.Fatal("kid collected while still referenced")
	}
	r = mustSucceed(t, d, `[{"op":"update","table":"Root","where":[["name","==","b"]],"row":{"kids":["set",[]]}},
	  {"op":"select","table":"Root","where":[["name","==","b"]],"columns":["weak"]}]`)
	if countRows(d, "Kid") != 0 {
		t.Fatal("kid not collected")
	}
	// The select inside the transaction still saw the weak reference...
	if got := anonymize(resultsJSON(t, r)); got != `[{"count":1},{"rows":[{"weak":["uuid","<u>"]}]}]` {
		t.Fatalf("in-transaction select: %s", got)
	}
	// ...but the commit removed it.
	r = mustSucceed(t, d, `[{"op":"select","table":"Root","where":[["name","==","b"]],"columns":["weak"]}]`)
	if got := resultsJSON(t, r); got != `[{"rows":[{"weak":["set",[]]}]}]` {
		t.Fatalf("weak ref survived: %s", got)
	}
	checkInvariants(t, d)
}

func TestGarbageChain(t *testing.T) {
	d := newTestDB(t)
	mustSucceed(t, d, `[
	 {"op":"insert","table":"Grand","row":{"n":1},"uuid-name":"g"},
	 {"op":"insert","table":"Kid","row":{"grand":["named-uuid","g"]},"uuid-name":"k"},
	 {"op":"insert","table":"Root","row":{"name":"a","kids":["named-uuid","k"]}}]`)
	if countRows(d, "Grand") != 1 || countRows(d, "Kid") != 1 {
		t.Fatal("chain not stored")
	}
	r := mustSucceed(t, d, `[{"op":"delete","table":"Root","where":[]}]`)
	if countRows(d, "Grand") != 0 || countRows(d, "Kid") != 0 {
		t.Fatal("chain not collected")
	}
	if len(r.Commit.Tables["Grand"]) != 1 || len(r.Commit.Tables["Kid"]) != 1 || len(r.Commit.Tables["Root"]) != 1 {
		t.Fatalf("commit %+v", r.Commit.Tables)
	}
	checkInvariants(t, d)
}

func TestSelfReference(t *testing.T) {
	d := newTestDB(t)
	mustSucceed(t, d, `[{"op":"insert","table":"Root","row":{"name":"me","self":["named-uuid","me"]},"uuid-name":"me"}]`)
	checkInvariants(t, d)
	mustSucceed(t, d, `[{"op":"delete","table":"Root","where":[]}]`)
	if countRows(d, "Root") != 0 {
		t.Fatal("self-referencing row not deleted")
	}
	checkInvariants(t, d)
}

func TestWeakReferenceMinimum(t *testing.T) {
	d := newTestDB(t)
	r := transact(t, d, `[{"op":"insert","table":"Strict","row":{}}]`)
	want := `[{"uuid":["uuid","<u>"]},{"error":"constraint violation","details":"Weak reference column \"w\" in \"Strict\" row <u> (inserted within this transaction) contained all-zeros UUID (probably as the default value for this column) but deleting this value caused a constraint volation because this column is not allowed to be empty."}]`
	if got := anonymize(resultsJSON(t, r)); got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
	mustSucceed(t, d, `[
	 {"op":"insert","table":"Kid","row":{},"uuid-name":"k"},
	 {"op":"insert","table":"Root","row":{"kids":["named-uuid","k"]}},
	 {"op":"insert","table":"Strict","row":{"w":["named-uuid","k"]}}]`)
	r = transact(t, d, `[{"op":"update","table":"Root","where":[],"row":{"kids":["set",[]]}}]`)
	want = `[{"count":1},{"error":"constraint violation","details":"Deletion of 1 weak reference(s) to deleted (or never-existing) rows from column \"w\" in \"Strict\" row <u> caused this column to become empty, but constraints on this column disallow an empty column."}]`
	if got := anonymize(resultsJSON(t, r)); got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
	if countRows(d, "Kid") != 1 {
		t.Fatal("failed transaction collected the kid")
	}
	checkInvariants(t, d)
}

func TestWeakReferenceToMissingRowDropped(t *testing.T) {
	d := newTestDB(t)
	mustSucceed(t, d, `[{"op":"insert","table":"Root","row":{"name":"x","weak":["uuid","11111111-2222-3333-4444-555555555555"]}}]`)
	r := mustSucceed(t, d, `[{"op":"select","table":"Root","where":[],"columns":["weak"]}]`)
	if got := resultsJSON(t, r); got != `[{"rows":[{"weak":["set",[]]}]}]` {
		t.Fatalf("got %s", got)
	}
}

func TestIndexAgainstCommittedRows(t *testing.T) {
	d := newTestDB(t)
	r := mustSucceed(t, d, `[{"op":"insert","table":"Limited","row":{"name":"a","a":1}}]`)
	first := insertedUUID(t, r, 0)
	r = transact(t, d, `[{"op":"insert","table":"Limited","row":{"name":"a","a":2}}]`)
	e := txnError(r)
	if e == nil || e.Name != "constraint violation" || !strings.Contains(e.Details, "row, with UUID "+string(first)+", existed in the database before this transaction and was not modified by the transaction.") {
		t.Fatalf("got %v", e)
	}
	// Renaming the old row away in the same transaction makes room.
	mustSucceed(t, d, `[{"op":"insert","table":"Limited","row":{"name":"a","a":2}},{"op":"update","table":"Limited","where":[["a","==",1]],"row":{"name":"b"}}]`)
	r = transact(t, d, `[{"op":"update","table":"Limited","where":[["name","==","b"]],"row":{"name":"a","a":5}}]`)
	e = txnError(r)
	if e == nil || !strings.Contains(e.Details, "had the following index values before the transaction: b.") {
		t.Fatalf("got %v", e)
	}
	checkInvariants(t, d)
}

// refsOf lists, from scratch, the rows that column values of row refer to,
// by reference strength, leaving out self references as refChanges does.
func refsOf(ts *tableState, tables map[string]*tableState, r *Row, fn func(target rowKey, weak bool)) {
	for _, c := range ts.schema.Columns {
		d := r.Columns[c.Index]
		if c.Type.Key.RefTable != "" {
			target := tables[c.Type.Key.RefTable]
			for _, a := range d.Keys {
				if u := a.(UUID); u != r.UUID || c.Type.Key.RefType == RefWeak && target != ts {
					fn(rowKey{target, u}, c.Type.Key.RefType == RefWeak)
				}
			}
		}
		if c.Type.Value != nil && c.Type.Value.RefTable != "" {
			target := tables[c.Type.Value.RefTable]
			for _, a := range d.Values {
				if u := a.(UUID); u != r.UUID || c.Type.Value.RefType == RefWeak && target != ts {
					fn(rowKey{target, u}, c.Type.Value.RefType == RefWeak)
				}
			}
		}
	}
}

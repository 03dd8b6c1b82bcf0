package db

import (
	"regexp"
	"testing"
)

// setupRows puts two Root rows in a fresh test database.
const setupRows = `[
 {"op":"insert","table":"Root","row":{"name":"r1","i":1,"r":1.5,"iset":["set",[1,2]],"small":["set",[1,2]],"smap":["map",[["a","1"],["b","2"]]],"fixed":"f","opt":7}},
 {"op":"insert","table":"Root","row":{"name":"r2","i":2,"kind":"a"}}]`

// operationCases are run by TestOperations and, against Open vSwitch's
// own server, by TestCompareWithRealOVSDB.
var operationCases = []struct {
	name string
	ops  string
	want string // anonymized result array
}{
	// insert
	{"insert", `[{"op":"insert","table":"Root","row":{"name":"x"}}]`, `[{"uuid":["uuid","<u>"]}]`},
	{"insert explicit uuid", `[{"op":"insert","table":"Root","uuid":"11111111-2222-3333-4444-555555555555","row":{}},
		  {"op":"select","table":"Root","where":[["_uuid","==",["uuid","11111111-2222-3333-4444-555555555555"]]],"columns":["_uuid"]}]`,
		`[{"uuid":["uuid","<u>"]},{"rows":[{"_uuid":["uuid","<u>"]}]}]`},
	{"insert bad uuid", `[{"op":"insert","table":"Root","uuid":"zz","row":{}}]`, `[{"error":"syntax error","details":"bad uuid"}]`},
	{"insert duplicate explicit uuid", `[{"op":"insert","table":"Root","uuid":"11111111-2222-3333-4444-555555555555","row":{}},{"op":"insert","table":"Root","uuid":"11111111-2222-3333-4444-555555555555","row":{}}]`,
		`[{"uuid":["uuid","<u>"]},{"error":"duplicate uuid","details":"This UUID would duplicate a UUID already present within the table or deleted within the same transaction."}]`},
	{"duplicate uuid-name", `[{"op":"insert","table":"Kid","row":{},"uuid-name":"k"},{"op":"insert","table":"Kid","row":{},"uuid-name":"k"},{"op":"comment","comment":"x"}]`,
		`[{"uuid":["uuid","<u>"]},{"error":"duplicate uuid-name","details":"This \"uuid-name\" appeared on an earlier \"insert\" operation."},null]`},
	{"unknown table", `[{"op":"insert","table":"Nope","row":{}}]`, `[{"error":"syntax error","details":"Parsing ovsdb operation 1 of 1 failed: No table named Nope."}]`},
	{"unknown column", `[{"op":"insert","table":"Root","row":{"zz":1}}]`, `[{"error":"unknown column","details":"No column zz in table Root."}]`},
	{"extra member", `[{"op":"comment","comment":"c"},{"op":"insert","table":"Root","row":{},"bogus":1}]`,
		`[{},{"error":"syntax error","details":"Parsing ovsdb operation 2 of 2 failed: Member 'bogus' is present but not allowed here."}]`},
	{"two extra members", `[{"op":"abort","x":1,"y":2}]`, // Open vSwitch names whichever member its hash table yields first

		`[{"error":"syntax error","details":"Parsing ovsdb operation 1 of 1 failed: Member 'x' and 1 other member are present but not allowed here."}]`},
	{"missing op", `[{"table":"Root"}]`, `[{"error":"syntax error","details":"Parsing ovsdb operation 1 of 1 failed: Required 'op' member is missing."}]`},
	{"unknown op", `[{"op":"frob"}]`, `[{"error":"syntax error","details":"Parsing ovsdb operation 1 of 1 failed: No operation \"frob\""}]`},
	{"op not an object", `[3]`, `[{"error":"syntax error","details":"Parsing ovsdb operation 1 of 1 failed: Object expected."}]`},
	{"missing row", `[{"op":"insert","table":"Root"}]`, `[{"error":"syntax error","details":"Parsing ovsdb operation 1 of 1 failed: Required 'row' member is missing."}]`},
	{"type mismatch member", `[{"op":"insert","table":"Root","row":[]}]`, `[{"error":"syntax error","details":"Parsing ovsdb operation 1 of 1 failed: Type mismatch for member 'row'."}]`},
	{"wrong value type", `[{"op":"insert","table":"Root","row":{"i":"one"}}]`, `[{"error":"syntax error","details":"expected integer"}]`},
	{"enum default violates", `[{"op":"insert","table":"Enum","row":{}}]`, `[{"error":"constraint violation","details":"\"\" is not one of the allowed values ([x, y])"}]`},
	{"enum value", `[{"op":"insert","table":"Root","row":{"kind":"c"}}]`, `[{"error":"constraint violation","details":"c is not one of the allowed values ([a, b])"}]`},
	// select
	{"select columns", `[{"op":"select","table":"Root","where":[["i","==",1]],"columns":["name","iset","smap","r","opt"]}]`,
		`[{"rows":[{"iset":["set",[1,2]],"name":"r1","opt":7,"r":1.5,"smap":["map",[["a","1"],["b","2"]]]}]}]`},
	{"select none", `[{"op":"select","table":"Root","where":[["i","==",99]]}]`, `[{"rows":[]}]`},
	{"select sorted", `[{"op":"select","table":"Root","where":[],"columns":["name"],"sort":["i"]}]`, `[{"rows":[{"name":"r1"},{"name":"r2"}]}]`},
	{"select distinct", `[{"op":"select","table":"Root","where":[],"columns":["b"]}]`, `[{"rows":[{"b":false}]}]`},
	{"select all columns has _uuid and _version", `[{"op":"select","table":"Grand","where":[]},{"op":"insert","table":"Limited","row":{"name":"q"},"uuid-name":"q"},{"op":"select","table":"Limited","where":[["_uuid","==",["named-uuid","q"]]]}]`,
		`[{"rows":[]},{"uuid":["uuid","<u>"]},{"rows":[{"_uuid":["uuid","<u>"],"_version":["uuid","<u>"],"a":0,"b":0,"name":"q"}]}]`},
	{"select no columns", `[{"op":"select","table":"Root","where":[],"columns":[]}]`, `[{"rows":[{}]}]`},
	{"select _version", `[{"op":"select","table":"Root","where":[["name","==","r2"]],"columns":["_version","kind"]}]`, `[{"rows":[{"_version":["uuid","<u>"],"kind":"a"}]}]`},
	{"insert ignores _uuid", `[{"op":"insert","table":"Limited","row":{"_uuid":["uuid","11111111-2222-3333-4444-555555555555"],"name":"z"}},{"op":"select","table":"Limited","where":[["_uuid","==",["uuid","11111111-2222-3333-4444-555555555555"]]]}]`, `[{"uuid":["uuid","<u>"]},{"rows":[]}]`},
	{"mutate optional scalar", `[{"op":"mutate","table":"Root","where":[],"mutations":[["opt","+=",1]]},{"op":"select","table":"Root","where":[],"columns":["opt"],"sort":["name"]}]`, `[{"count":2},{"rows":[{"opt":8},{"opt":["set",[]]}]}]`},
	{"wait without timeout on unsatisfiable is blocked, so use != to pass", `[{"op":"wait","table":"Root","where":[["name","==","r1"]],"columns":["name"],"until":"!=","rows":[]}]`, `[{}]`},
	{"where on missing member type", `[{"op":"delete","table":"Root","where":{}}]`, `[{"error":"syntax error","details":"Parsing ovsdb operation 1 of 1 failed: Type mismatch for member 'where'."}]`},
	{"select bad column", `[{"op":"select","table":"Root","where":[],"columns":["zz"]}]`, `[{"error":"syntax error","details":"zz is not a valid column name"}]`},
	{"select repeated column", `[{"op":"select","table":"Root","where":[],"columns":["i","i"]}]`, `[{"error":"syntax error","details":"array of distinct column names expected"}]`},
	{"select missing where", `[{"op":"select","table":"Root"}]`, `[{"error":"syntax error","details":"Parsing ovsdb operation 1 of 1 failed: Required 'where' member is missing."}]`},
	// update
	{"update", `[{"op":"update","table":"Root","where":[["name","==","r1"]],"row":{"i":5}},{"op":"select","table":"Root","where":[["i","==",5]],"columns":["name"]}]`,
		`[{"count":1},{"rows":[{"name":"r1"}]}]`},
	{"update counts unchanged rows", `[{"op":"update","table":"Root","where":[],"row":{"b":false}}]`, `[{"count":2}]`},
	{"update immutable", `[{"op":"update","table":"Root","where":[],"row":{"fixed":"g"}}]`,
		`[{"error":"constraint violation","details":"Cannot update immutable column fixed in table Root."}]`},
	{"update _uuid", `[{"op":"update","table":"Root","where":[],"row":{"_uuid":["uuid","11111111-2222-3333-4444-555555555555"]}}]`,
		`[{"error":"constraint violation","details":"Cannot update immutable column _uuid in table Root."}]`},
	{"update _version", `[{"op":"update","table":"Root","where":[],"row":{"_version":["uuid","11111111-2222-3333-4444-555555555555"]}}]`,
		`[{"error":"constraint violation","details":"Cannot update immutable column _version in table Root."}]`},
	// mutate
	{"mutate add", `[{"op":"mutate","table":"Root","where":[["name","==","r1"]],"mutations":[["i","+=",5],["r","*=",2],["iset","-=",1]]},{"op":"select","table":"Root","where":[["name","==","r1"]],"columns":["i","r","iset"]}]`,
		`[{"count":1},{"rows":[{"i":6,"iset":["set",[0,1]],"r":3}]}]`},
	{"mutate real accepts integer", `[{"op":"mutate","table":"Root","where":[["name","==","r1"]],"mutations":[["r","/=",2],["r","-=",0.25]]},{"op":"select","table":"Root","where":[["name","==","r1"]],"columns":["r"]}]`,
		`[{"count":1},{"rows":[{"r":0.5}]}]`},
	{"mutate modulo", `[{"op":"mutate","table":"Root","where":[["name","==","r2"]],"mutations":[["i","*=",7],["i","%=",4]]},{"op":"select","table":"Root","where":[["name","==","r2"]],"columns":["i"]}]`,
		`[{"count":1},{"rows":[{"i":2}]}]`},
	{"mutate no mutations counts", `[{"op":"mutate","table":"Root","where":[],"mutations":[]}]`, `[{"count":2}]`},
	{"mutate divide by zero", `[{"op":"mutate","table":"Root","where":[],"mutations":[["i","/=",0]]}]`, `[{"error":"domain error","details":"Division by zero."}]`},
	{"mutate real divide by zero", `[{"op":"mutate","table":"Root","where":[],"mutations":[["r","/=",0]]}]`, `[{"error":"domain error","details":"Division by zero."}]`},
	{"mutate overflow", `[{"op":"mutate","table":"Root","where":[],"mutations":[["i","+=",9223372036854775807]]}]`,
		`[{"error":"range error","details":"Result of \"+=\" operation is out of range."}]`},
	{"mutate real overflow", `[{"op":"mutate","table":"Root","where":[["name","==","r1"]],"mutations":[["r","*=",1e308],["r","*=",10]]}]`,
		`[{"error":"range error","details":"Result of \"*=\" operation is out of range."}]`},
	{"mutate range constraint", `[{"op":"mutate","table":"Root","where":[["name","==","r1"]],"mutations":[["small","+=",9]]}]`,
		`[{"error":"constraint violation","details":"11 is not in the valid range 0 to 10 (inclusive)"}]`},
	{"mutate duplicates", `[{"op":"mutate","table":"Root","where":[["name","==","r1"]],"mutations":[["iset","*=",0]]}]`,
		`[{"error":"constraint violation","details":"Result of \"*=\" operation contains duplicates."}]`},
	{"mutate set insert delete", `[{"op":"mutate","table":"Root","where":[["name","==","r1"]],"mutations":[["iset","insert",["set",[2,3,4]]],["iset","delete",1]]},{"op":"select","table":"Root","where":[["name","==","r1"]],"columns":["iset"]}]`,
		`[{"count":1},{"rows":[{"iset":["set",[2,3,4]]}]}]`},
	{"mutate too many", `[{"op":"mutate","table":"Root","where":[["name","==","r1"]],"mutations":[["small","insert",["set",[3,4]]]]}]`,
		`[{"error":"constraint violation","details":"Attempted to store 4 elements in set of up to 2 integers."}]`},
	{"mutate insert arg too big", `[{"op":"mutate","table":"Root","where":[],"mutations":[["small","insert",["set",[3,4,5]]]]}]`,
		`[{"error":"syntax error","details":"set must have 0 to 2 members but 3 are present"}]`},
	{"mutate map insert keeps existing", `[{"op":"mutate","table":"Root","where":[["name","==","r1"]],"mutations":[["smap","insert",["map",[["a","X"],["c","3"]]]]]},{"op":"select","table":"Root","where":[["name","==","r1"]],"columns":["smap"]}]`,
		`[{"count":1},{"rows":[{"smap":["map",[["a","1"],["b","2"],["c","3"]]]}]}]`},
	{"mutate map delete pairs and keys", `[{"op":"mutate","table":"Root","where":[["name","==","r1"]],"mutations":[["smap","delete",["map",[["a","X"],["b","2"]]]]]},{"op":"mutate","table":"Root","where":[["name","==","r1"]],"mutations":[["smap","delete",["set",["a"]]]]},{"op":"select","table":"Root","where":[["name","==","r1"]],"columns":["smap"]}]`,
		`[{"count":1},{"count":1},{"rows":[{"smap":["map",[]]}]}]`},
	{"mutate type mismatch", `[{"op":"mutate","table":"Root","where":[],"mutations":[["name","+=",1]]}]`,
		`[{"error":"syntax error","details":"Type mismatch: \"+=\" operator may not be applied to column name of type string."}]`},
	{"mutate real modulo", `[{"op":"mutate","table":"Root","where":[],"mutations":[["r","%=",1]]}]`,
		`[{"error":"syntax error","details":"Type mismatch: \"%=\" operator may not be applied to column r of type real."}]`},
	{"mutate insert on scalar", `[{"op":"mutate","table":"Root","where":[],"mutations":[["i","insert",1]]}]`,
		`[{"error":"syntax error","details":"Type mismatch: \"insert\" operator may not be applied to column i of type integer."}]`},
	{"mutate map arithmetic", `[{"op":"mutate","table":"Root","where":[],"mutations":[["smap","+=",1]]}]`,
		`[{"error":"syntax error","details":"Type mismatch: \"+=\" operator may not be applied to column smap of type map of (string, string) pairs."}]`},
	{"mutate immutable", `[{"op":"mutate","table":"Root","where":[],"mutations":[["fixed","insert","x"]]}]`,
		`[{"error":"constraint violation","details":"Cannot mutate immutable column fixed in table Root."}]`},
	{"mutate unknown mutator", `[{"op":"mutate","table":"Root","where":[],"mutations":[["i","^=",1]]}]`, `[{"error":"unknown mutator","details":"No mutator named ^=."}]`},
	{"mutate unknown column", `[{"op":"mutate","table":"Root","where":[],"mutations":[["zz","+=",1]]}]`, `[{"error":"unknown column","details":"No column zz in table Root."}]`},
	{"mutate malformed", `[{"op":"mutate","table":"Root","where":[],"mutations":[["i","+="]]}]`, `[{"error":"syntax error","details":"Parse error in mutation."}]`},
	// delete
	{"delete", `[{"op":"delete","table":"Root","where":[["i",">",1]]},{"op":"select","table":"Root","where":[],"columns":["name"]}]`,
		`[{"count":1},{"rows":[{"name":"r1"}]}]`},
	// wait (immediate)
	{"wait satisfied", `[{"op":"wait","table":"Root","where":[["name","==","r1"]],"columns":["i"],"until":"==","rows":[{"i":1}],"timeout":0}]`, `[{}]`},
	{"wait not equal satisfied", `[{"op":"wait","table":"Root","where":[["name","==","r1"]],"columns":["i"],"until":"!=","rows":[{"i":2}],"timeout":0}]`, `[{}]`},
	{"wait timed out", `[{"op":"wait","table":"Root","where":[["name","==","r1"]],"columns":["i"],"until":"==","rows":[{"i":2}],"timeout":0}]`,
		`[{"error":"timed out","details":"\"where\" clause test failed"}]`},
	{"wait row count differs", `[{"op":"wait","table":"Root","where":[],"columns":["b"],"until":"==","rows":[{"b":false},{"b":true}],"timeout":0}]`,
		`[{"error":"timed out","details":"\"where\" clause test failed"}]`},
	{"wait bad until", `[{"op":"wait","table":"Root","where":[],"until":"<","rows":[],"timeout":0}]`, `[{"error":"syntax error","details":"\"until\" must be \"==\" or \"!=\""}]`},
	{"wait negative timeout", `[{"op":"wait","table":"Root","where":[],"until":"==","rows":[],"timeout":-1}]`, `[{"error":"syntax error","details":"timeout must be nonnegative"}]`},
	// commit, abort, comment, assert
	{"commit", `[{"op":"commit","durable":false}]`, `[{}]`},
	{"commit needs durable", `[{"op":"commit"}]`, `[{"error":"syntax error","details":"Parsing ovsdb operation 1 of 1 failed: Required 'durable' member is missing."}]`},
	{"abort", `[{"op":"insert","table":"Root","row":{}},{"op":"abort"},{"op":"comment","comment":"x"}]`,
		`[{"uuid":["uuid","<u>"]},{"error":"aborted","details":"aborted by request"},null]`},
	{"comment", `[{"op":"comment","comment":"hello"}]`, `[{}]`},
	{"assert", `[{"op":"assert","lock":"mylock"}]`, `[{"error":"not owner","details":"Asserted lock mylock not held."}]`},
	{"empty", `[]`, `[]`},
	// commit-time errors come after all results
	{"dangling strong ref", `[{"op":"insert","table":"Root","row":{"kids":["uuid","11111111-2222-3333-4444-555555555555"]}}]`,
		`[{"uuid":["uuid","<u>"]},{"error":"referential integrity violation","details":"Table Root column kids row <u> references nonexistent row <u> in table Kid."}]`},
	{"unknown named uuid", `[{"op":"insert","table":"Root","row":{"kids":["named-uuid","nobody"]}}]`,
		`[{"uuid":["uuid","<u>"]},{"error":"referential integrity violation","details":"Table Root column kids row <u> references nonexistent row <u> in table Kid."}]`},
	{"max rows", `[{"op":"insert","table":"Limited","row":{"name":"a","a":1}},{"op":"insert","table":"Limited","row":{"name":"b","a":2}},{"op":"insert","table":"Limited","row":{"name":"c","a":3}}]`,
		`[{"uuid":["uuid","<u>"]},{"uuid":["uuid","<u>"]},{"uuid":["uuid","<u>"]},{"error":"constraint violation","details":"transaction causes \"Limited\" table to contain 3 rows, greater than the schema-defined limit of 2 row(s)"}]`},
	{"index duplicate", `[{"op":"insert","table":"Limited","row":{"name":"a","a":1}},{"op":"insert","table":"Limited","row":{"name":"a","a":2}}]`,
		`[{"uuid":["uuid","<u>"]},{"uuid":["uuid","<u>"]},{"error":"constraint violation","details":"Transaction causes multiple rows in \"Limited\" table to have identical values (a) for index on column \"name\".  First row, with UUID <u>, was inserted by this transaction.  Second row, with UUID <u>, was inserted by this transaction."}]`},
	{"two column index duplicate", `[{"op":"insert","table":"Limited","row":{"name":"a","a":1,"b":2}},{"op":"insert","table":"Limited","row":{"name":"b","a":1,"b":2}}]`,
		`[{"uuid":["uuid","<u>"]},{"uuid":["uuid","<u>"]},{"error":"constraint violation","details":"Transaction causes multiple rows in \"Limited\" table to have identical values (1 and 2) for index on columns \"a\" and \"b\".  First row, with UUID <u>, was inserted by this transaction.  Second row, with UUID <u>, was inserted by this transaction."}]`},
	{"index swap is fine", `[{"op":"insert","table":"Limited","row":{"name":"a","a":1}},{"op":"update","table":"Limited","where":[["name","==","a"]],"row":{"name":"b"}},{"op":"insert","table":"Limited","row":{"name":"a","a":2}}]`,
		`[{"uuid":["uuid","<u>"]},{"count":1},{"uuid":["uuid","<u>"]}]`},
}

func TestOperations(t *testing.T) {
	for _, tc := range operationCases {
		t.Run(tc.name, func(t *testing.T) {
			d := newTestDB(t)
			mustSucceed(t, d, setupRows)
			before := dump(d)
			r := transact(t, d, tc.ops)
			if got := stripSyntax(anonymize(resultsJSON(t, r))); got != tc.want {
				t.Fatalf("results\n got %s\nwant %s", got, tc.want)
			}
			if txnError(r) != nil {
				if after := dump(d); after != before || r.Commit != nil {
					t.Fatalf("failed transaction changed the database")
				}
			}
		})
	}
}

func TestInsertNamedUUIDs(t *testing.T) {
	d := newTestDB(t)
	// References may precede the insert that names the row.
	r := mustSucceed(t, d, `[
	 {"op":"insert","table":"Root","row":{"name":"p","kids":["set",[["named-uuid","k1"],["named-uuid","k2"]]]}},
	 {"op":"insert","table":"Kid","row":{"name":"one","grand":["named-uuid","g"]},"uuid-name":"k1"},
	 {"op":"insert","table":"Kid","row":{"name":"two"},"uuid-name":"k2"},
	 {"op":"insert","table":"Grand","row":{"n":3},"uuid-name":"g"}]`)
	if r.Commit == nil {
		t.Fatal("no commit")
	}
	k1 := insertedUUID(t, r, 1)
	k2 := insertedUUID(t, r, 2)
	g := insertedUUID(t, r, 3)
	d.View(func(v View) {
		kid := v.Row("Kid", k1)
		if kid == nil || kid.Columns[d.schema.Tables["Kid"].ByName["grand"].Index].Keys[0] != g {
			t.Fatalf("kid row %+v does not reference grand %s", kid, g)
		}
		var root *Row
		v.Rows("Root", func(r *Row) bool { root = r; return false })
		kids := root.Columns[d.schema.Tables["Root"].ByName["kids"].Index]
		if kids.Len() != 2 || !kids.containsElem(k1, nil, false) || !kids.containsElem(k2, nil, false) {
			t.Fatalf("root kids = %v", kids)
		}
	})
	// An explicit "uuid" together with "uuid-name".
	r = mustSucceed(t, d, `[
	 {"op":"insert","table":"Kid","uuid":"AAAAAAAA-2222-3333-4444-555555555555","uuid-name":"k","row":{}},
	 {"op":"mutate","table":"Root","where":[],"mutations":[["kids","insert",["named-uuid","k"]]]}]`)
	if got := insertedUUID(t, r, 0); got != "aaaaaaaa-2222-3333-4444-555555555555" {
		t.Fatalf("explicit uuid = %s", got)
	}
	if countRows(d, "Kid") != 3 {
		t.Fatalf("Kid rows = %d", countRows(d, "Kid"))
	}
}

func TestInsertExplicitUUIDConflicts(t *testing.T) {
	d := newTestDB(t)
	r := mustSucceed(t, d, `[{"op":"insert","table":"Root","row":{}}]`)
	u := insertedUUID(t, r, 0)
	r = transact(t, d, `[{"op":"insert","table":"Root","uuid":"`+string(u)+`","row":{}}]`)
	if e := txnError(r); e == nil || e.Name != "duplicate uuid" {
		t.Fatalf("got %v", e)
	}
	// Deleted in the same transaction still counts, as in Open vSwitch.
	r = transact(t, d, `[{"op":"delete","table":"Root","where":[]},{"op":"insert","table":"Root","uuid":"`+string(u)+`","row":{}}]`)
	if e := txnError(r); e == nil || e.Name != "duplicate uuid" {
		t.Fatalf("got %v", e)
	}
	// The same UUID in another table is fine.
	mustSucceed(t, d, `[{"op":"insert","table":"Limited","uuid":"`+string(u)+`","row":{}}]`)
}

func TestWaitDefaultColumns(t *testing.T) {
	d := newTestDB(t)
	r := mustSucceed(t, d, `[{"op":"insert","table":"Limited","row":{"name":"a"}}]`)
	u := insertedUUID(t, r, 0)
	var version UUID
	d.View(func(v View) { version = v.Row("Limited", u).Version })
	// Without "columns" every column counts, _uuid and _version included.
	ok := `[{"op":"wait","table":"Limited","where":[],"until":"==","timeout":0,"rows":[{"_uuid":["uuid","` + string(u) + `"],"_version":["uuid","` + string(version) + `"],"name":"a"}]}]`
	mustSucceed(t, d, ok)
	r = transact(t, d, `[{"op":"wait","table":"Limited","where":[],"until":"==","timeout":0,"rows":[{"name":"a"}]}]`)
	if e := txnError(r); e == nil || e.Name != "timed out" {
		t.Fatalf("got %v", e)
	}
}

var syntaxMember = regexp.MustCompile(`,"syntax":"(?:[^"\\]|\\.)*"`)

// stripSyntax drops the "syntax" members of errors; the comparison with
// Open vSwitch's server checks them.
func stripSyntax(s string) string { return syntaxMember.ReplaceAllString(s, "") }

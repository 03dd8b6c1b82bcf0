package db

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestConditions(t *testing.T) {
	d := newTestDB(t)
	mustSucceed(t, d, `[
	 {"op":"insert","table":"Root","row":{"name":"a","i":1,"r":0.5,"opt":1,"iset":["set",[1,2]],"smap":["map",[["k","v"]]],"kind":"a"}},
	 {"op":"insert","table":"Root","row":{"name":"b","i":2,"r":1.5,"iset":["set",[2,3]],"smap":["map",[["k","w"],["x","y"]]]}},
	 {"op":"insert","table":"Root","row":{"name":"c","i":3,"r":2.5,"opt":3}}]`)
	cases := []struct {
		where string
		want  string // names of matching rows, sorted
	}{
		{`[]`, "a,b,c"},
		{`[true]`, "a,b,c"},
		{`[false]`, ""},
		{`[["i","<",2]]`, "a"},
		{`[["i","<=",2]]`, "a,b"},
		{`[["i",">",2]]`, "c"},
		{`[["i",">=",2]]`, "b,c"},
		{`[["i","==",2]]`, "b"},
		{`[["i","!=",2]]`, "a,c"},
		{`[["r","<",1]]`, "a"},
		{`[["r",">",1]]`, "b,c"},
		{`[["opt","<",2]]`, "a"},
		{`[["opt",">",0]]`, "a,c"},
		{`[["opt","==",["set",[]]]]`, "b"},
		{`[["opt","!=",["set",[]]]]`, "a,c"},
		{`[["opt","includes",1]]`, "a"},
		{`[["opt","excludes",1]]`, "b,c"},
		{`[["iset","includes",2]]`, "a,b"},
		{`[["iset","includes",["set",[1,2]]]]`, "a"},
		{`[["iset","includes",["set",[]]]]`, "a,b,c"},
		{`[["iset","excludes",["set",[1,3]]]]`, "c"},
		{`[["iset","==",["set",[2,3]]]]`, "b"},
		{`[["iset","!=",["set",[]]]]`, "a,b"},
		{`[["smap","includes",["map",[["k","w"]]]]]`, "b"},
		{`[["smap","includes",["map",[["k","z"]]]]]`, ""},
		{`[["smap","excludes",["map",[["k","v"]]]]]`, "b,c"},
		{`[["smap","==",["map",[]]]]`, "c"},
		{`[["kind","==","a"]]`, "a"},
		{`[["i",">",1],["i","<",3]]`, "b"},
		{`[["name","includes","b"]]`, "b"},
		{`[["name","excludes","b"]]`, "a,c"},
		{`[["_uuid","!=",["uuid","00000000-0000-0000-0000-000000000000"]]]`, "a,b,c"},
		{`[["_version","==",["uuid","00000000-0000-0000-0000-000000000000"]]]`, ""},
	}
	table := d.schema.Tables["Root"]
	for _, c := range cases {
		r := transact(t, d, `[{"op":"select","table":"Root","where":`+c.where+`,"columns":["name"],"sort":["name"]}]`)
		if e := txnError(r); e != nil {
			t.Errorf("where %s: %v", c.where, e)
			continue
		}
		var names []string
		for _, row := range r.Results[0].(map[string]any)["rows"].([]any) {
			names = append(names, row.(map[string]any)["name"].(string))
		}
		if got := strings.Join(names, ","); got != c.want {
			t.Errorf("where %s: got %q, want %q", c.where, got, c.want)
		}
		// ParseCondition agrees with select.
		cond, err := table.ParseCondition(json.RawMessage(c.where))
		if err != nil {
			t.Errorf("ParseCondition(%s): %v", c.where, err)
			continue
		}
		var viaCond []string
		d.View(func(v View) {
			v.Rows("Root", func(r *Row) bool {
				if cond.Match(r) {
					viaCond = append(viaCond, r.Columns[table.ByName["name"].Index].Keys[0].(string))
				}
				return true
			})
		})
		sortStrings(viaCond)
		if got := strings.Join(viaCond, ","); got != c.want {
			t.Errorf("ParseCondition(%s).Match: got %q, want %q", c.where, got, c.want)
		}
	}
}

func TestConditionErrors(t *testing.T) {
	table := newTestDB(t).schema.Tables["Root"]
	cases := []struct{ where, name, details string }{
		{`[["name","<","a"]]`, "syntax error", `Type mismatch: "<" operator may not be applied to column name of type string.`},
		{`[["iset",">",1]]`, "syntax error", `Type mismatch: ">" operator may not be applied to column iset of type set of integers.`},
		{`[["i","~",1]]`, "unknown function", "No function named ~."},
		{`[["zz","==",1]]`, "unknown column", "No column zz in table Root."},
		{`[["i","=="]]`, "syntax error", "Parse error in condition."},
		{`[1]`, "syntax error", "Parse error in condition."},
		{`{}`, "syntax error", "Parse error in condition."},
		{`[["i","==","x"]]`, "syntax error", "expected integer"},
		{`[["kind","==","z"]]`, "constraint violation", "z is not one of the allowed values ([a, b])"},
		{`[["i","==",["set",[]]]]`, "syntax error", "set must have exactly one member but 0 are present"},
		{`[["kids","==",["named-uuid","x"]]]`, "syntax error", `expected ["uuid", <string>]`},
	}
	for _, c := range cases {
		_, err := table.ParseCondition(json.RawMessage(c.where))
		e, ok := err.(*Error)
		if !ok || e.Name != c.name || e.Details != c.details {
			t.Errorf("ParseCondition(%s) = %v, want %s: %s", c.where, err, c.name, c.details)
		}
	}
}

func TestColumnsAndRowJSON(t *testing.T) {
	d := newTestDB(t)
	r := mustSucceed(t, d, `[{"op":"insert","table":"Limited","row":{"name":"q","a":4}}]`)
	u := insertedUUID(t, r, 0)
	table := d.schema.Tables["Limited"]
	cols, err := table.ColumnsByName([]string{"_uuid", "a", "_version"})
	if err != nil {
		t.Fatal(err)
	}
	d.View(func(v View) {
		row := v.Row("Limited", u)
		got, _ := json.Marshal(table.RowJSON(row, cols))
		want := `{"_uuid":["uuid","` + string(u) + `"],"_version":["uuid","` + string(row.Version) + `"],"a":4}`
		if string(got) != want {
			t.Errorf("RowJSON = %s, want %s", got, want)
		}
		if got, _ := json.Marshal(table.RowJSON(row, nil)); string(got) != `{"a":4,"b":0,"name":"q"}` {
			t.Errorf("RowJSON(nil cols) = %s", got)
		}
	})
	if _, err := table.ColumnsByName([]string{"nope"}); err == nil {
		t.Error("unknown column accepted")
	}
	if all, _ := table.ColumnsByName(nil); len(all) != 3 {
		t.Errorf("ColumnsByName(nil) = %v", all)
	}
}

package tests

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"testing"
)

// TestClientGetSchema compares schemas as JSON values: key order and
// spacing are not part of the protocol.
func TestClientGetSchema(t *testing.T) {
	p := startPair(t, clientPath)
	t.Run("_Server.Database.schema", func(t *testing.T) {
		ref, ours := serverSchemaColumn(t, p.ref), serverSchemaColumn(t, p.ours)
		for name, schema := range ref {
			if !reflect.DeepEqual(canonicalSchema(schema), canonicalSchema(ours[name])) {
				t.Errorf("_Server.Database row %s: schema column differs as JSON: %s", name, jsonDifference(schema, ours[name]))
			}
		}
		if len(ours) != len(ref) {
			t.Errorf("_Server.Database rows: debian %d, ours %d", len(ref), len(ours))
		}
	})
	for _, db := range []string{"Open_vSwitch", "_Server"} {
		t.Run(db, func(t *testing.T) {
			ref, ours := p.ref.client(t, nil, "get-schema", db), p.ours.client(t, nil, "get-schema", db)
			if ref.exit != 0 || ours.exit != 0 || ref.stderr != ours.stderr {
				t.Fatalf("get-schema %s:\n%s", db, describeDiff(ref, ours))
			}
			refSchema, oursSchema := mustJSON(t, ref.stdout), mustJSON(t, ours.stdout)
			if !reflect.DeepEqual(refSchema, oursSchema) {
				t.Errorf("get-schema %s: schemas differ as JSON: %s", db, jsonDifference(refSchema, oursSchema))
			}
		})
	}
}

// serverSchemaColumn is _Server.Database's schema column, by database name,
// each parsed as JSON.
func serverSchemaColumn(t *testing.T, s *server) map[string]any {
	t.Helper()
	r := s.client(t, []string{"--format=json"}, "dump", "_Server", "Database", "name", "schema")
	if r.exit != 0 {
		t.Fatalf("%s: dump _Server: %s", s.kind.name, r)
	}
	var table struct{ Data [][]string }
	if err := json.Unmarshal([]byte(r.stdout), &table); err != nil {
		t.Fatalf("%s: dump _Server Database name schema --format=json: %v\n%s", s.kind.name, err, r.stdout)
	}
	schemas := map[string]any{}
	for _, row := range table.Data {
		if len(row) == 2 {
			schemas[row[0]] = mustJSON(t, row[1])
		}
	}
	return schemas
}

// canonicalSchema rewrites a schema's column types into one spelling of
// each meaning (RFC 7047 section 3.2 allows several): an atomic type "uuid"
// becomes {"type":"uuid"}, absent "min"/"max" become 1, enum sets are
// sorted, and "isRoot" is made explicit (a schema with no isRoot anywhere
// has every table a root). Used where a server stores a schema as a string
// it serialised itself (_Server.Database.schema).
func canonicalSchema(v any) any {
	schema, ok := v.(map[string]any)
	if !ok {
		return v
	}
	tables, _ := schema["tables"].(map[string]any)
	anyRoot := false
	for _, t := range tables {
		if _, ok := t.(map[string]any)["isRoot"]; ok {
			anyRoot = true
		}
	}
	for _, t := range tables {
		table := t.(map[string]any)
		if _, ok := table["isRoot"]; !ok {
			table["isRoot"] = !anyRoot
		}
		columns, _ := table["columns"].(map[string]any)
		for _, c := range columns {
			column := c.(map[string]any)
			column["type"] = canonicalType(column["type"])
		}
	}
	return schema
}

func canonicalType(v any) any {
	t, ok := v.(map[string]any)
	if !ok {
		t = map[string]any{"key": v}
	}
	for _, part := range []string{"key", "value"} {
		base, ok := t[part]
		if !ok {
			continue
		}
		b, ok := base.(map[string]any)
		if !ok {
			b = map[string]any{"type": base}
		}
		if enum, ok := b["enum"].([]any); ok && len(enum) == 2 && enum[0] == "set" {
			if members, ok := enum[1].([]any); ok {
				sort.Slice(members, func(i, j int) bool { return fmt.Sprint(members[i]) < fmt.Sprint(members[j]) })
			}
		}
		t[part] = b
	}
	for _, bound := range []string{"min", "max"} {
		if _, ok := t[bound]; !ok {
			t[bound] = float64(1)
		}
	}
	return t
}

// jsonDifference shows where two JSON values differ, one member per line
// with keys sorted.
func jsonDifference(ref, ours any) string {
	a, _ := json.MarshalIndent(ref, "", " ")
	b, _ := json.MarshalIndent(ours, "", " ")
	return firstDifference(string(a), string(b))
}

func mustJSON(t testing.TB, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not JSON (%v): %q", err, s)
	}
	return v
}

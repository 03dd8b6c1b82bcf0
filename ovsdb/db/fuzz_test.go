package db

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
)

// opGen turns fuzz bytes into plausible operations on a schema, so the
// fuzzer spends its time in the engine rather than in the JSON parser.
type opGen struct {
	data   []byte
	schema *Schema
	tables []string
	uuids  map[string][]string // existing row UUIDs per table
	names  []string            // uuid-names used so far
	// fixedUUIDs makes inserts use explicit UUIDs from uuids, so that two
	// databases fed the same operations stay comparable.
	fixedUUIDs bool
}

func (g *opGen) byte() byte {
	if len(g.data) == 0 {
		return 0
	}
	b := g.data[0]
	g.data = g.data[1:]
	return b
}

func (g *opGen) pick(n int) int {
	if n <= 0 {
		return 0
	}
	return int(g.byte()) % n
}

func (g *opGen) atom(b *BaseType) any {
	if len(b.Enum) > 0 && g.pick(8) != 0 {
		return atomJSON(b.Enum[g.pick(len(b.Enum))])
	}
	switch b.Type {
	case TypeInteger:
		return []int64{0, 1, -1, 2, 7, 65279, 65280, math.MaxInt64, math.MinInt64, 4096}[g.pick(10)]
	case TypeReal:
		return []float64{0, 0.5, -1.5, 1e300, 3}[g.pick(5)]
	case TypeBoolean:
		return g.pick(2) == 1
	case TypeString:
		return []string{"", "a", "br0", "eth0", "internal", "system", "x\u00e9y", "secure", "standalone", strings.Repeat("z", 70)}[g.pick(10)]
	default:
		switch g.pick(4) {
		case 0:
			if len(g.names) > 0 {
				return []any{"named-uuid", g.names[g.pick(len(g.names))]}
			}
		case 1:
			return []any{"uuid", string(ZeroUUID)}
		}
		if ids := g.uuids[b.RefTable]; len(ids) > 0 {
			return []any{"uuid", ids[g.pick(len(ids))]}
		}
		return []any{"uuid", "11111111-2222-3333-4444-555555555555"}
	}
}

func (g *opGen) datum(t *ColumnType) any {
	if t.IsScalar() && g.pick(4) != 0 {
		return g.atom(&t.Key)
	}
	n := g.pick(4)
	if g.pick(8) != 0 {
		n = t.Min + g.pick(min(t.Max, 3)-t.Min+1)
	}
	var elems []any
	for i := 0; i < n; i++ {
		if t.IsMap() {
			elems = append(elems, []any{g.atom(&t.Key), g.atom(t.Value)})
		} else {
			elems = append(elems, g.atom(&t.Key))
		}
	}
	if elems == nil {
		elems = []any{}
	}
	if t.IsMap() {
		return []any{"map", elems}
	}
	return []any{"set", elems}
}

func (g *opGen) column(t *Table) *Column {
	if g.pick(10) == 0 {
		return t.Column([]string{"_uuid", "_version"}[g.pick(2)])
	}
	return t.Columns[g.pick(len(t.Columns))]
}

func (g *opGen) row(t *Table) map[string]any {
	row := map[string]any{}
	for i, n := 0, g.pick(4); i < n; i++ {
		c := t.Columns[g.pick(len(t.Columns))]
		row[c.Name] = g.datum(&c.Type)
	}
	return row
}

func (g *opGen) where(t *Table) []any {
	var w []any
	for i, n := 0, g.pick(3); i < n; i++ {
		if g.pick(12) == 0 {
			w = append(w, g.pick(2) == 0)
			continue
		}
		c := g.column(t)
		fns := []string{"==", "!=", "includes", "excludes", "<", "<=", ">", ">="}
		numeric := c.Type.Value == nil && c.Type.Max == 1 && (c.Type.Key.Type == TypeInteger || c.Type.Key.Type == TypeReal)
		fn := fns[g.pick(4)]
		if numeric || g.pick(16) == 0 {
			fn = fns[g.pick(8)]
		}
		w = append(w, []any{c.Name, fn, g.datum(&c.Type)})
	}
	if w == nil {
		w = []any{}
	}
	return w
}

func (g *opGen) op() map[string]any {
	t := g.schema.Tables[g.tables[g.pick(len(g.tables))]]
	switch g.pick(11) {
	case 0, 1, 2:
		op := map[string]any{"op": "insert", "table": t.Name, "row": g.row(t)}
		if ids := g.uuids[t.Name]; g.fixedUUIDs && len(ids) > 0 {
			op["uuid"] = ids[g.pick(len(ids))]
		}
		if g.pick(2) == 0 {
			name := fmt.Sprintf("n%d", g.pick(4))
			g.names = append(g.names, name)
			op["uuid-name"] = name
		}
		return op
	case 3:
		return map[string]any{"op": "select", "table": t.Name, "where": g.where(t)}
	case 4, 5:
		return map[string]any{"op": "update", "table": t.Name, "where": g.where(t), "row": g.row(t)}
	case 6, 7:
		c := g.column(t)
		m := []string{"+=", "-=", "*=", "/=", "%=", "insert", "delete"}[g.pick(7)]
		if g.pick(16) != 0 {
			switch {
			case c.Type.IsScalar() && c.Type.Key.Type == TypeInteger:
				m = []string{"+=", "-=", "*=", "/=", "%="}[g.pick(5)]
			case c.Type.IsScalar() && c.Type.Key.Type == TypeReal:
				m = []string{"+=", "-=", "*=", "/="}[g.pick(4)]
			case !c.Type.IsScalar():
				m = []string{"insert", "delete"}[g.pick(2)]
			}
		}
		var arg any
		if m == "insert" || m == "delete" {
			arg = g.datum(&c.Type)
		} else {
			arg = g.atom(&c.Type.Key)
		}
		return map[string]any{"op": "mutate", "table": t.Name, "where": g.where(t), "mutations": []any{[]any{c.Name, m, arg}}}
	case 8:
		return map[string]any{"op": "delete", "table": t.Name, "where": g.where(t)}
	case 9:
		c := g.column(t)
		return map[string]any{"op": "wait", "table": t.Name, "where": g.where(t), "columns": []any{c.Name},
			"until": []string{"==", "!="}[g.pick(2)], "rows": []any{map[string]any{c.Name: g.datum(&c.Type)}}, "timeout": 0}
	default:
		return []map[string]any{{"op": "comment", "comment": "c"}, {"op": "abort"}, {"op": "commit", "durable": true}, {"op": "assert", "lock": "l"}}[g.pick(4)]
	}
}

// fuzzDB is a vswitch database with a bridge, two ports and a mirror.
func fuzzDB(t testing.TB, s *Schema) *Database {
	d := New(s, nil)
	mustSucceed(t, d, `[{"op":"insert","table":"Open_vSwitch","row":{}}]`)
	addBridge(t, d, "br0")
	mustSucceed(t, d, `[
	 {"op":"insert","table":"Interface","row":{"name":"eth0"},"uuid-name":"i"},
	 {"op":"insert","table":"Port","row":{"name":"eth0","interfaces":["named-uuid","i"]},"uuid-name":"p"},
	 {"op":"insert","table":"Mirror","row":{"name":"m","select_dst_port":["named-uuid","p"]},"uuid-name":"m"},
	 {"op":"mutate","table":"Bridge","where":[],"mutations":[["ports","insert",["named-uuid","p"]],["mirrors","insert",["named-uuid","m"]]]}]`)
	return d
}

func existingUUIDs(d *Database) map[string][]string {
	out := map[string][]string{}
	d.View(func(v View) {
		for name := range d.schema.Tables {
			v.Rows(name, func(r *Row) bool { out[name] = append(out[name], string(r.UUID)); return true })
			sortStrings(out[name])
		}
	})
	return out
}

// FuzzTransact runs generated (or, for input starting with '[', literal)
// transactions against the vswitch schema: the engine must never panic, a
// failed or blocked transaction must leave the database unchanged, and a
// successful one must keep references and indexes consistent.
func FuzzTransact(f *testing.F) {
	f.Add([]byte(`[{"op":"insert","table":"Bridge","row":{"name":"br1"}}]`))
	f.Add([]byte(`[{"op":"delete","table":"Port","where":[]}]`))
	f.Add([]byte(`[{"op":"mutate","table":"Open_vSwitch","where":[],"mutations":[["next_cfg","+=",1]]},{"op":"select","table":"Open_vSwitch","where":[],"columns":["next_cfg"]}]`))
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{6, 3, 1, 5, 0, 2, 9, 9, 1})
	f.Add([]byte{8, 1, 1, 0, 4, 7, 3, 2, 200, 100, 50})
	schema := vswitchSchema(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		d := fuzzDB(t, schema)
		var ops []json.RawMessage
		if len(data) > 0 && data[0] == '[' {
			if json.Unmarshal(data, &ops) != nil {
				return
			}
		} else {
			g := &opGen{data: data, schema: d.schema, tables: sortedKeys(d.schema.Tables), uuids: existingUUIDs(d)}
			for i, n := 0, 1+g.pick(4); i < n; i++ {
				b, err := json.Marshal(g.op())
				if err != nil {
					t.Fatal(err)
				}
				ops = append(ops, b)
			}
		}
		before := dump(d)
		r := d.Transact(ops, TxnEnv{})
		if r.Blocked || txnError(r) != nil {
			if r.Commit != nil {
				t.Fatal("failed transaction has a commit")
			}
			if dump(d) != before {
				t.Fatalf("failed transaction changed the database: %s", resultsJSON(t, r))
			}
			return
		}
		if len(r.Results) != len(ops) {
			t.Fatalf("%d results for %d ops", len(r.Results), len(ops))
		}
		if r.Commit == nil && dump(d) != before {
			t.Fatal("database changed without a commit")
		}
		checkInvariants(t, d)
	})
}

// FuzzParseDatum checks that ParseDatum never panics and that what it
// accepts survives a DatumJSON round trip.
func FuzzParseDatum(f *testing.F) {
	types := []ColumnType{
		{Key: BaseType{Type: TypeInteger, MinInteger: i64(0), MaxInteger: i64(10)}, Min: 0, Max: 3},
		{Key: BaseType{Type: TypeReal}, Min: 1, Max: 1},
		{Key: BaseType{Type: TypeString}, Value: &BaseType{Type: TypeString}, Max: Unlimited},
		{Key: BaseType{Type: TypeUUID, RefTable: "T"}, Max: Unlimited},
		{Key: BaseType{Type: TypeString, Enum: []Atom{"a", "b"}}, Min: 0, Max: 1},
		{Key: BaseType{Type: TypeBoolean}, Value: &BaseType{Type: TypeInteger}, Max: 2},
	}
	for _, s := range []string{`1`, `["set",[1,2]]`, `["map",[["a","b"]]]`, `["uuid","6b29fc40-ca47-1067-b31d-00dd010662da"]`, `"a"`, `1.5`, `["map",[[true,1],[false,2]]]`, `["set",[]]`} {
		for i := range types {
			f.Add(uint8(i), s)
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, s string) {
		typ := &types[int(which)%len(types)]
		d, err := ParseDatum(json.RawMessage(s), typ)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error %T is not *Error", err)
			}
			return
		}
		b, err := json.Marshal(DatumJSON(d, typ))
		if err != nil {
			t.Fatal(err)
		}
		d2, err := ParseDatum(b, typ)
		if err != nil {
			t.Fatalf("re-parse of %s: %v", b, err)
		}
		if typ.Key.Type != TypeReal && !d2.Equal(d) {
			t.Fatalf("round trip %s -> %s changed the value", s, b)
		}
	})
}

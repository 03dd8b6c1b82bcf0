package db

import (
	"os"
	"testing"
)

// vswitchSchema loads the real Open vSwitch schema, skipping when it is not
// installed.
func vswitchSchema(t testing.TB) *Schema {
	t.Helper()
	data, err := os.ReadFile("/usr/share/openvswitch/vswitch.ovsschema")
	if err != nil {
		t.Skipf("vswitch schema not available: %v", err)
	}
	s, err := ParseSchema(data)
	if err != nil {
		t.Fatalf("ParseSchema(vswitch): %v", err)
	}
	return s
}

func TestParseVswitchSchema(t *testing.T) {
	s := vswitchSchema(t)
	if s.Name != "Open_vSwitch" || s.Version == "" || s.Cksum == "" {
		t.Fatalf("name/version/cksum = %q %q %q", s.Name, s.Version, s.Cksum)
	}
	if !s.Tables["Open_vSwitch"].IsRoot || s.Tables["Port"].IsRoot || s.Tables["Bridge"].IsRoot || !s.Tables["QoS"].IsRoot {
		t.Errorf("isRoot wrong")
	}
	if s.Tables["Open_vSwitch"].MaxRows != 1 {
		t.Errorf("maxRows = %d", s.Tables["Open_vSwitch"].MaxRows)
	}
	iface := s.Tables["Interface"]
	if c := iface.ByName["ofport_request"]; c.Type.Key.MinInteger == nil || *c.Type.Key.MaxInteger != 65279 || c.Type.Min != 0 {
		t.Errorf("ofport_request type %+v", c.Type)
	}
	if len(s.Tables["Bridge"].Indexes) != 1 || s.Tables["Bridge"].Indexes[0][0].Name != "name" {
		t.Errorf("Bridge indexes %v", s.Tables["Bridge"].Indexes)
	}
	mirror := s.Tables["Mirror"].ByName["select_src_port"]
	if mirror.Type.Key.RefTable != "Port" || mirror.Type.Key.RefType != RefWeak || mirror.Type.Max != Unlimited {
		t.Errorf("Mirror.select_src_port %+v", mirror.Type)
	}
	if !s.Tables["Bridge"].ByName["datapath_id"].Ephemeral || s.Tables["Bridge"].ByName["name"].Mutable {
		t.Errorf("Bridge.datapath_id should be ephemeral, Bridge.name immutable")
	}
	if len(s.Raw) == 0 {
		t.Error("Raw empty")
	}
}

func TestParseServerSchema(t *testing.T) {
	data, err := os.ReadFile("testdata/_server.ovsschema")
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseSchema(data)
	if err != nil {
		t.Fatal(err)
	}
	db := s.Tables["Database"]
	if db == nil || !db.IsRoot || s.Version != "1.2.0" {
		t.Fatalf("bad _Server schema: %+v", s)
	}
	model := db.ByName["model"]
	if len(model.Type.Key.Enum) != 3 || model.Type.Key.Enum[0] != "clustered" {
		t.Errorf("model enum = %v", model.Type.Key.Enum)
	}
	if c := db.ByName["cid"]; c.Type.Min != 0 || c.Type.Max != 1 || c.Type.Key.Type != TypeUUID {
		t.Errorf("cid type %+v", c.Type)
	}
}

func TestParseSchemaFeatures(t *testing.T) {
	s, err := ParseSchema([]byte(`{"name":"T","version":"1.0.0","tables":{
	  "A":{"columns":{
	     "e1":{"type":{"key":{"type":"integer","enum":3}}},
	     "r":{"type":{"key":{"type":"real","minReal":1,"maxReal":2.5},"min":0,"max":"unlimited"}},
	     "s":{"type":{"key":{"type":"string","minLength":1,"maxLength":5}}},
	     "w":{"type":{"key":{"type":"uuid","refTable":"B","refType":"weak"},"min":0,"max":1},"mutable":false},
	     "m":{"type":{"key":"string","value":{"type":"uuid","refTable":"B"},"min":0,"max":"unlimited"},"mutable":false},
	     "eph":{"type":"integer","ephemeral":true}},
	   "maxRows":5,"indexes":[["s"],["e1","s"]],"isRoot":true},
	  "B":{"columns":{"x":{"type":"integer"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	a := s.Tables["A"]
	if a.MaxRows != 5 || len(a.Indexes) != 2 || len(a.Indexes[1]) != 2 || s.Tables["B"].IsRoot {
		t.Errorf("table attributes wrong: %+v", a)
	}
	if e := a.ByName["e1"].Type.Key.Enum; len(e) != 1 || e[0] != int64(3) {
		t.Errorf("single-atom enum = %v", e)
	}
	if r := a.ByName["r"].Type; *r.Key.MinReal != 1 || *r.Key.MaxReal != 2.5 || r.Max != Unlimited {
		t.Errorf("real type %+v", r)
	}
	if !a.ByName["w"].Mutable {
		t.Error("weak reference column must be forced mutable")
	}
	if a.ByName["m"].Mutable || a.ByName["m"].Type.Value.RefType != RefStrong {
		t.Error("m should be immutable strong map")
	}
	if !a.ByName["eph"].Ephemeral {
		t.Error("ephemeral")
	}
	for i, c := range a.Columns {
		if c.Index != i || a.ByName[c.Name] != c {
			t.Errorf("column %s index %d at %d", c.Name, c.Index, i)
		}
	}
}

func TestParseSchemaErrors(t *testing.T) {
	cases := []struct{ schema, details string }{
		{`[]`, "Parsing database schema failed: Object expected."},
		{`{"tables":{}}`, "Parsing database schema failed: Required 'name' member is missing."},
		{`{"name":"x y","tables":{}}`, "Parsing database schema failed: Type mismatch for member 'name'."},
		{`{"name":"x","tables":{},"bogus":1}`, "Parsing database schema failed: Member 'bogus' is present but not allowed here."},
		{`{"name":"x","version":"1.0","tables":{}}`, `schema version "1.0" not in format x.y.z`},
		{`{"name":"x","tables":{"_T":{"columns":{"a":{"type":"integer"}}}}}`, `names beginning with "_" are reserved`},
		{`{"name":"x","tables":{"T":{"columns":{}}}}`, "table must have at least one column"},
		{`{"name":"x","tables":{"T":{"columns":{"_a":{"type":"integer"}}}}}`, `names beginning with "_" are reserved`},
		{`{"name":"x","tables":{"T":{"columns":{"a":{"type":"int"}}}}}`, `"int" is not an atomic-type`},
		{`{"name":"x","tables":{"T":{"columns":{"a":{"type":{"key":"integer","min":2}}}}}}`, "ovsdb type fails constraint checks"},
		{`{"name":"x","tables":{"T":{"columns":{"a":{"type":{"key":"integer","max":0}}}}}}`, "ovsdb type fails constraint checks"},
		{`{"name":"x","tables":{"T":{"columns":{"a":{"type":{"key":"integer","max":"lots"}}}}}}`, "bad min or max value"},
		{`{"name":"x","tables":{"T":{"columns":{"a":{"type":{"key":{"type":"integer","minInteger":5,"maxInteger":1}}}}}}}`, "minInteger exceeds maxInteger"},
		{`{"name":"x","tables":{"T":{"columns":{"a":{"type":{"key":{"type":"string","minLength":-1}}}}}}}`, "minLength out of valid range 0 to 4294967295"},
		{`{"name":"x","tables":{"T":{"columns":{"a":{"type":{"key":{"type":"uuid","refTable":"U"}}}}}}}`, "column a key refers to undefined table U"},
		{`{"name":"x","tables":{"T":{"columns":{"a":{"type":{"key":{"type":"uuid","refTable":"T","refType":"soft"}}}}}}}`, `refType must be "strong" or "weak" (not "soft")`},
		{`{"name":"x","tables":{"T":{"maxRows":0,"columns":{"a":{"type":"integer"}}}}}`, "maxRows must be at least 1"},
		{`{"name":"x","tables":{"T":{"indexes":[["b"]],"columns":{"a":{"type":"integer"}}}}}`, "b is not a valid column name"},
		{`{"name":"x","tables":{"T":{"indexes":[[]],"columns":{"a":{"type":"integer"}}}}}`, "index must have at least one column"},
		{`{"name":"x","tables":{"T":{"indexes":[["a"]],"columns":{"a":{"type":"integer","ephemeral":true}}}}}`, "ephemeral columns (such as a) may not be indexed"},
		{`{"name":"x","tables":{"T":{"columns":{"a":{"type":{"key":{"type":"integer","enum":["set",["a"]]}}}}}}}`, "expected integer"},
	}
	for _, c := range cases {
		_, err := ParseSchema([]byte(c.schema))
		e, ok := err.(*Error)
		if !ok || e.Name != "syntax error" || e.Details != c.details {
			t.Errorf("ParseSchema(%s) = %v, want syntax error %q", c.schema, err, c.details)
		}
	}
}

package db

import (
	"encoding/json"
	"math"
	"testing"
)

func i64(v int64) *int64     { return &v }
func f64(v float64) *float64 { return &v }
func strType() ColumnType    { return ColumnType{Key: BaseType{Type: TypeString}, Min: 1, Max: 1} }
func intSet(max int) ColumnType {
	return ColumnType{Key: BaseType{Type: TypeInteger}, Min: 0, Max: max}
}

func TestParseDatum(t *testing.T) {
	ssMap := ColumnType{Key: BaseType{Type: TypeString}, Value: &BaseType{Type: TypeString}, Max: Unlimited}
	realT := ColumnType{Key: BaseType{Type: TypeReal}, Min: 1, Max: 1}
	boolT := ColumnType{Key: BaseType{Type: TypeBoolean}, Min: 1, Max: 1}
	uuidSet := ColumnType{Key: BaseType{Type: TypeUUID}, Max: Unlimited}
	enumT := ColumnType{Key: BaseType{Type: TypeString, Enum: []Atom{"a", "b"}}, Min: 1, Max: 1}
	rangeT := ColumnType{Key: BaseType{Type: TypeInteger, MinInteger: i64(1), MaxInteger: i64(10)}, Min: 1, Max: 1}
	minOnly := ColumnType{Key: BaseType{Type: TypeInteger, MinInteger: i64(1)}, Min: 1, Max: 1}
	maxOnly := ColumnType{Key: BaseType{Type: TypeInteger, MaxInteger: i64(1)}, Min: 1, Max: 1}
	realRange := ColumnType{Key: BaseType{Type: TypeReal, MinReal: f64(0.5), MaxReal: f64(1.5)}, Min: 1, Max: 1}
	lenT := ColumnType{Key: BaseType{Type: TypeString, MinLength: i64(2), MaxLength: i64(3)}, Min: 1, Max: 1}
	one := ColumnType{Key: BaseType{Type: TypeInteger}, Min: 1, Max: 1}
	tests := []struct {
		name     string
		typ      ColumnType
		in       string
		wantJSON string // canonical re-encoding
		errName  string
		errText  string
	}{
		{name: "integer", typ: one, in: `42`, wantJSON: `42`},
		{name: "integer as set of one", typ: one, in: `["set",[42]]`, wantJSON: `42`},
		{name: "integer rejects real", typ: one, in: `4.5`, errName: "syntax error", errText: "expected integer"},
		{name: "integer rejects string", typ: one, in: `"4"`, errName: "syntax error", errText: "expected integer"},
		{name: "real accepts integer", typ: realT, in: `3`, wantJSON: `3`},
		{name: "real", typ: realT, in: `0.25`, wantJSON: `0.25`},
		{name: "real printed like %.15g", typ: realT, in: `0.30000000000000004`, wantJSON: `0.3`},
		{name: "boolean", typ: boolT, in: `true`, wantJSON: `true`},
		{name: "boolean rejects 1", typ: boolT, in: `1`, errName: "syntax error", errText: "expected boolean"},
		{name: "set sorted", typ: intSet(Unlimited), in: `["set",[3,1,2]]`, wantJSON: `["set",[1,2,3]]`},
		{name: "empty set", typ: intSet(Unlimited), in: `["set",[]]`, wantJSON: `["set",[]]`},
		{name: "bare atom in set", typ: intSet(Unlimited), in: `7`, wantJSON: `7`},
		{name: "set duplicate", typ: intSet(Unlimited), in: `["set",[1,1]]`, errName: "ovsdb error", errText: "set contains duplicate"},
		{name: "set too big", typ: intSet(2), in: `["set",[1,2,3]]`, errName: "syntax error", errText: "set must have 0 to 2 members but 3 are present"},
		{name: "scalar as empty set", typ: one, in: `["set",[]]`, errName: "syntax error", errText: "set must have exactly one member but 0 are present"},
		{name: "malformed set", typ: intSet(Unlimited), in: `["set",1]`, errName: "syntax error", errText: `expected ["set", <array>]`},
		{name: "map", typ: ssMap, in: `["map",[["b","2"],["a","1"]]]`, wantJSON: `["map",[["a","1"],["b","2"]]]`},
		{name: "empty map", typ: ssMap, in: `["map",[]]`, wantJSON: `["map",[]]`},
		{name: "map duplicate key", typ: ssMap, in: `["map",[["a","1"],["a","2"]]]`, errName: "ovsdb error", errText: "map contains duplicate key"},
		{name: "map needs map", typ: ssMap, in: `"a"`, errName: "syntax error", errText: `expected ["map", <array>]`},
		{name: "map pair", typ: ssMap, in: `["map",[["a"]]]`, errName: "syntax error", errText: "expected 2-element array"},
		{name: "uuid", typ: uuidSet, in: `["uuid","6B29FC40-CA47-1067-B31D-00DD010662DA"]`, wantJSON: `["uuid","6b29fc40-ca47-1067-b31d-00dd010662da"]`},
		{name: "bad uuid", typ: uuidSet, in: `["uuid","nope"]`, errName: "syntax error", errText: `"nope" is not a valid UUID`},
		{name: "named-uuid outside txn", typ: uuidSet, in: `["named-uuid","x"]`, errName: "syntax error", errText: `expected ["uuid", <string>]`},
		{name: "uuid set", typ: uuidSet, in: `["set",[["uuid","00000000-0000-0000-0000-000000000002"],["uuid","00000000-0000-0000-0000-000000000001"]]]`,
			wantJSON: `["set",[["uuid","00000000-0000-0000-0000-000000000001"],["uuid","00000000-0000-0000-0000-000000000002"]]]`},
		{name: "enum ok", typ: enumT, in: `"b"`, wantJSON: `"b"`},
		{name: "enum bad", typ: enumT, in: `"c"`, errName: "constraint violation", errText: "c is not one of the allowed values ([a, b])"},
		{name: "range ok", typ: rangeT, in: `10`, wantJSON: `10`},
		{name: "range low", typ: rangeT, in: `0`, errName: "constraint violation", errText: "0 is not in the valid range 1 to 10 (inclusive)"},
		{name: "min only", typ: minOnly, in: `0`, errName: "constraint violation", errText: "0 is less than minimum allowed value 1"},
		{name: "max only", typ: maxOnly, in: `2`, errName: "constraint violation", errText: "2 is greater than maximum allowed value 1"},
		{name: "real range", typ: realRange, in: `2`, errName: "constraint violation", errText: "2 is not in the valid range 0.5 to 1.5 (inclusive)"},
		{name: "length short", typ: lenT, in: `"a"`, errName: "constraint violation", errText: `"a" length 1 is less than minimum allowed length 2`},
		{name: "length long", typ: lenT, in: `"abcd"`, errName: "constraint violation", errText: `"abcd" length 4 is greater than maximum allowed length 3`},
		{name: "length counts characters", typ: lenT, in: `"äöü"`, wantJSON: `"äöü"`},
		{name: "invalid JSON", typ: one, in: `[`, errName: "syntax error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := ParseDatum(json.RawMessage(tc.in), &tc.typ)
			if tc.errName != "" {
				e, ok := err.(*Error)
				if !ok {
					t.Fatalf("got %v (%T), want error %q", d, err, tc.errName)
				}
				if e.Name != tc.errName || tc.errText != "" && e.Details != tc.errText {
					t.Fatalf("error = %q %q, want %q %q", e.Name, e.Details, tc.errName, tc.errText)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			got, _ := json.Marshal(DatumJSON(d, &tc.typ))
			if string(got) != tc.wantJSON {
				t.Fatalf("DatumJSON = %s, want %s", got, tc.wantJSON)
			}
			if tc.name == "real printed like %.15g" {
				return // lossy, as in Open vSwitch
			}
			d2, err := ParseDatum(got, &tc.typ)
			if err != nil || !d2.Equal(d) {
				t.Fatalf("round trip of %s: %v %v", got, d2, err)
			}
		})
	}
}

func TestErrorJSON(t *testing.T) {
	b, _ := json.Marshal(&Error{Name: "constraint violation", Details: "x"})
	if string(b) != `{"error":"constraint violation","details":"x"}` {
		t.Errorf("got %s", b)
	}
	b, _ = json.Marshal(&Error{Name: "aborted"})
	if string(b) != `{"error":"aborted"}` {
		t.Errorf("got %s", b)
	}
	if (&Error{Name: "a", Details: "b"}).Error() != "a: b" {
		t.Error("Error() text")
	}
}

func TestDefaults(t *testing.T) {
	cases := []struct {
		typ  ColumnType
		want string
	}{
		{ColumnType{Key: BaseType{Type: TypeInteger}, Min: 1, Max: 1}, `0`},
		{ColumnType{Key: BaseType{Type: TypeReal}, Min: 1, Max: 1}, `0`},
		{ColumnType{Key: BaseType{Type: TypeBoolean}, Min: 1, Max: 1}, `false`},
		{ColumnType{Key: BaseType{Type: TypeString}, Min: 1, Max: 1}, `""`},
		{ColumnType{Key: BaseType{Type: TypeUUID}, Min: 1, Max: 1}, `["uuid","00000000-0000-0000-0000-000000000000"]`},
		{ColumnType{Key: BaseType{Type: TypeString, Enum: []Atom{"x"}}, Min: 1, Max: 1}, `""`},
		{ColumnType{Key: BaseType{Type: TypeInteger}, Min: 0, Max: 1}, `["set",[]]`},
		{ColumnType{Key: BaseType{Type: TypeString}, Value: &BaseType{Type: TypeString}, Min: 0, Max: Unlimited}, `["map",[]]`},
	}
	for _, c := range cases {
		b, _ := json.Marshal(DatumJSON(c.typ.Default(), &c.typ))
		if string(b) != c.want {
			t.Errorf("default of %s = %s, want %s", c.typ.English(), b, c.want)
		}
	}
}

func mustDatum(t *testing.T, s string, typ *ColumnType) Datum {
	t.Helper()
	d, err := ParseDatum(json.RawMessage(s), typ)
	if err != nil {
		t.Fatalf("ParseDatum(%s): %v", s, err)
	}
	return d
}

func TestDiffDatum(t *testing.T) {
	set := intSet(Unlimited)
	mp := ColumnType{Key: BaseType{Type: TypeString}, Value: &BaseType{Type: TypeString}, Max: Unlimited}
	one := ColumnType{Key: BaseType{Type: TypeInteger}, Min: 1, Max: 1}
	opt := ColumnType{Key: BaseType{Type: TypeInteger}, Min: 0, Max: 1}
	cases := []struct {
		typ           *ColumnType
		old, new, dif string
	}{
		{&set, `["set",[1,2,3]]`, `["set",[2,3,4]]`, `["set",[1,4]]`},
		{&set, `["set",[]]`, `["set",[5]]`, `5`},
		{&set, `["set",[1]]`, `["set",[1]]`, `["set",[]]`},
		{&mp, `["map",[["a","1"],["b","2"],["c","3"]]]`, `["map",[["b","2"],["c","9"],["d","4"]]]`, `["map",[["a","1"],["c","9"],["d","4"]]]`},
		{&one, `1`, `2`, `2`},
		{&opt, `1`, `["set",[]]`, `["set",[]]`},
		{&opt, `1`, `2`, `2`},
	}
	for _, c := range cases {
		o, n := mustDatum(t, c.old, c.typ), mustDatum(t, c.new, c.typ)
		diff := DiffDatum(o, n, c.typ)
		b, _ := json.Marshal(DatumJSON(diff, c.typ))
		if string(b) != c.dif {
			t.Errorf("DiffDatum(%s, %s) = %s, want %s", c.old, c.new, b, c.dif)
		}
		if back := ApplyDiff(o, diff, c.typ); !back.Equal(n) {
			t.Errorf("ApplyDiff(%s, %s) = %v, want %s", c.old, b, back, c.new)
		}
	}
}

func TestDatumEqual(t *testing.T) {
	set := intSet(Unlimited)
	a := mustDatum(t, `["set",[1,2]]`, &set)
	b := mustDatum(t, `["set",[2,1]]`, &set)
	c := mustDatum(t, `["set",[1,3]]`, &set)
	if !a.Equal(b) || a.Equal(c) || a.Equal(Datum{}) || !(Datum{}).Equal(Datum{Keys: []Atom{}}) {
		t.Error("Equal is wrong")
	}
}

func TestFormatRealLikeC(t *testing.T) {
	for f, want := range map[float64]string{1: "1", 0.1: "0.1", 1e20: "1e+20", 1.5e-7: "1.5e-07", 123456789012345678: "1.23456789012346e+17", math.MaxFloat64: "1.79769313486232e+308"} {
		if got := formatReal(f); got != want {
			t.Errorf("formatReal(%v) = %s, want %s", f, got, want)
		}
	}
}

func TestAppendDatumJSONMatchesDatumJSON(t *testing.T) {
	str := BaseType{Type: TypeString}
	cases := []struct {
		d Datum
		t ColumnType
	}{
		{Datum{Keys: []Atom{int64(-7)}}, ColumnType{Key: BaseType{Type: TypeInteger}, Min: 1, Max: 1}},
		{Datum{Keys: []Atom{1.5e300}}, ColumnType{Key: BaseType{Type: TypeReal}, Min: 1, Max: 1}},
		{Datum{Keys: []Atom{0.1}}, ColumnType{Key: BaseType{Type: TypeReal}, Min: 0, Max: 1}},
		{Datum{Keys: []Atom{true}}, ColumnType{Key: BaseType{Type: TypeBoolean}, Min: 1, Max: 1}},
		{Datum{Keys: []Atom{"<a&b>\u2028\xff\"\\\n"}}, ColumnType{Key: str, Min: 1, Max: 1}},
		{Datum{}, ColumnType{Key: str, Min: 0, Max: Unlimited}},
		{Datum{Keys: []Atom{UUID("2a1d96b1-08fb-4bd7-a258-81beaaadbe3f"), UUID("4ded6e04-1a32-45b3-8951-4f9a61ae7940")}}, ColumnType{Key: BaseType{Type: TypeUUID}, Min: 0, Max: Unlimited}},
		{Datum{Keys: []Atom{UUID("2a1d96b1-08fb-4bd7-a258-81beaaadbe3f")}}, ColumnType{Key: BaseType{Type: TypeUUID}, Min: 0, Max: Unlimited}},
		{Datum{Keys: []Atom{}, Values: []Atom{}}, ColumnType{Key: str, Value: &str, Min: 0, Max: Unlimited}},
		{Datum{Keys: []Atom{"a", "b"}, Values: []Atom{"1", "x<y"}}, ColumnType{Key: str, Value: &str, Min: 0, Max: Unlimited}},
	}
	for _, c := range cases {
		want, err := json.Marshal(DatumJSON(c.d, &c.t))
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendDatumJSON(nil, c.d, &c.t); string(got) != string(want) {
			t.Errorf("AppendDatumJSON(%v) = %s, want %s", c.d, got, want)
		}
	}
}

func TestParseUUID(t *testing.T) {
	for in, want := range map[string]string{
		"2a1d96b1-08fb-4bd7-a258-81beaaadbe3f":  "2a1d96b1-08fb-4bd7-a258-81beaaadbe3f",
		"2A1D96B1-08FB-4BD7-A258-81BEAAADBE3F":  "2a1d96b1-08fb-4bd7-a258-81beaaadbe3f",
		"2a1d96b1-08fb-4bd7-a258-81beaaadbe3g":  "",
		"2a1d96b1-08fb-4bd7-a258x81beaaadbe3f":  "",
		"2a1d96b1-08fb-4bd7-a258-81beaaad-e3f":  "",
		"2a1d96b1008fb-4bd7-a258-81beaaadbe3f":  "",
		"2a1d96b1-08fb-4bd7-a258-81beaaadbe3":   "",
		"2a1d96b1-08fb-4bd7-a258-81beaaadbe3f0": "",
	} {
		got, ok := ParseUUID(in)
		if ok != (want != "") || string(got) != want {
			t.Errorf("ParseUUID(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

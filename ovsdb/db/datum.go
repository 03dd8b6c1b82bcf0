package db

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	"gvs/ovsdb/internal/fastjson"
)

// IsMap reports whether the column type is a map.
func (t *ColumnType) IsMap() bool { return t.Value != nil }

// IsScalar reports whether the type holds exactly one atom and is no map.
func (t *ColumnType) IsScalar() bool { return t.Min == 1 && t.Max == 1 && t.Value == nil }

// isOptionalScalar: an atom or nothing.
func (t *ColumnType) isOptionalScalar() bool { return t.Min == 0 && t.Max == 1 && t.Value == nil }

// isSet: not a map and not a scalar.
func (t *ColumnType) isSet() bool { return t.Value == nil && !t.IsScalar() }

// English describes the type as Open vSwitch's error messages do, e.g.
// "set of up to 2 strings" or "map of (string, string) pairs".
func (t *ColumnType) English() string {
	if t.IsScalar() {
		return t.Key.Type.String()
	}
	s := "set"
	if t.IsMap() {
		s = "map"
	}
	switch {
	case t.Max == Unlimited && t.Min > 0:
		s += fmt.Sprintf(" of %d or more", t.Min)
	case t.Max == Unlimited:
		s += " of"
	case t.Min > 0:
		s += fmt.Sprintf(" of %d to %d", t.Min, t.Max)
	default:
		s += fmt.Sprintf(" of up to %d", t.Max)
	}
	if t.IsMap() {
		return s + fmt.Sprintf(" (%s, %s) pairs", t.Key.Type, t.Value.Type)
	}
	return s + fmt.Sprintf(" %ss", t.Key.Type)
}

func printMax(n int) int64 {
	if n == Unlimited {
		return uint32Max
	}
	return int64(n)
}

// Default returns the type's default value: Min atoms of the key (and
// value) type's default, as ovsdb_datum_init_default does.
func (t *ColumnType) Default() Datum {
	if t.Min == 0 {
		return Datum{}
	}
	d := Datum{Keys: []Atom{defaultAtom(t.Key.Type)}}
	if t.Value != nil {
		d.Values = []Atom{defaultAtom(t.Value.Type)}
	}
	return d
}

// Len is the number of elements (set) or pairs (map).
func (d Datum) Len() int { return len(d.Keys) }

// Equal reports whether two data hold the same elements (and values).
func (d Datum) Equal(o Datum) bool {
	if len(d.Keys) != len(o.Keys) || (d.Values == nil) != (o.Values == nil) && len(d.Keys) > 0 {
		return false
	}
	for i := range d.Keys {
		if compareAtoms(d.Keys[i], o.Keys[i]) != 0 {
			return false
		}
		if d.Values != nil && compareAtoms(d.Values[i], o.Values[i]) != 0 {
			return false
		}
	}
	return true
}

// compareDatums orders data as ovsdb_datum_compare_3way does: by size,
// then element by element.
func compareDatums(a, b Datum) int {
	if len(a.Keys) != len(b.Keys) {
		if len(a.Keys) < len(b.Keys) {
			return -1
		}
		return 1
	}
	for i := range a.Keys {
		if c := compareAtoms(a.Keys[i], b.Keys[i]); c != 0 {
			return c
		}
	}
	if a.Values == nil || b.Values == nil {
		return 0
	}
	for i := range a.Values {
		if c := compareAtoms(a.Values[i], b.Values[i]); c != 0 {
			return c
		}
	}
	return 0
}

// ParseDatum parses a datum in RFC 7047 wire notation and checks it against
// t: atom types, enums, ranges, lengths and set/map sizes. Named UUIDs are
// not allowed outside transactions.
func ParseDatum(raw json.RawMessage, t *ColumnType) (Datum, error) {
	v, err := decodeJSON(raw)
	if err != nil {
		return Datum{}, syntaxError("%s", err)
	}
	d, e := parseDatumValue(v, t, nil)
	if e != nil {
		return Datum{}, e
	}
	return d, nil
}

// parseDatumValue is ParseDatum on a decoded JSON value, resolving named
// UUIDs through st.
func parseDatumValue(v any, t *ColumnType, st symbolTable) (Datum, *Error) {
	isMap := t.IsMap()
	arr, isArr := v.([]any)
	if !isMap && !(isArr && len(arr) > 0 && arr[0] == "set") {
		a, err := parseAtomValue(v, &t.Key, st)
		if err != nil {
			return Datum{}, err
		}
		return Datum{Keys: []Atom{a}}, nil
	}
	class := "set"
	if isMap {
		class = "map"
	}
	innerV, err := unwrapPair(v, class, "array")
	if err != nil {
		return Datum{}, err
	}
	inner := innerV.([]any)
	n := len(inner)
	if n < t.Min || n > t.Max {
		if t.Min == 1 && t.Max == 1 {
			return Datum{}, syntaxError("%s must have exactly one member but %d are present", class, n).at(v)
		}
		return Datum{}, syntaxError("%s must have %d to %d members but %d are present", class, t.Min, printMax(t.Max), n).at(v)
	}
	d := Datum{Keys: make([]Atom, n)}
	if isMap {
		d.Values = make([]Atom, n)
	}
	for i, elem := range inner {
		key := elem
		var value any
		if isMap {
			pair, ok := elem.([]any)
			if !ok || len(pair) != 2 {
				return Datum{}, syntaxError("expected 2-element array").at(elem)
			}
			key, value = pair[0], pair[1]
		}
		if d.Keys[i], err = parseAtomValue(key, &t.Key, st); err != nil {
			return Datum{}, err
		}
		if isMap {
			if d.Values[i], err = parseAtomValue(value, t.Value, st); err != nil {
				return Datum{}, err
			}
		}
	}
	if dup := d.sort(); dup {
		if isMap {
			return Datum{}, &Error{Name: "ovsdb error", Details: "map contains duplicate key"}
		}
		return Datum{}, &Error{Name: "ovsdb error", Details: "set contains duplicate"}
	}
	return d, nil
}

// sort orders the datum by key and reports whether a key repeats.
func (d *Datum) sort() (duplicate bool) {
	if len(d.Keys) < 2 {
		return false
	}
	sort.Sort(datumSorter{d})
	for i := 1; i < len(d.Keys); i++ {
		if compareAtoms(d.Keys[i-1], d.Keys[i]) == 0 {
			return true
		}
	}
	return false
}

type datumSorter struct{ d *Datum }

func (s datumSorter) Len() int           { return len(s.d.Keys) }
func (s datumSorter) Less(i, j int) bool { return compareAtoms(s.d.Keys[i], s.d.Keys[j]) < 0 }
func (s datumSorter) Swap(i, j int) {
	s.d.Keys[i], s.d.Keys[j] = s.d.Keys[j], s.d.Keys[i]
	if s.d.Values != nil {
		s.d.Values[i], s.d.Values[j] = s.d.Values[j], s.d.Values[i]
	}
}

// checkDatum checks every atom of d against t's base type constraints.
func checkDatum(d Datum, t *ColumnType) *Error {
	for _, k := range d.Keys {
		if err := checkAtom(k, &t.Key); err != nil {
			return err
		}
	}
	if t.Value != nil {
		for _, v := range d.Values {
			if err := checkAtom(v, t.Value); err != nil {
				return err
			}
		}
	}
	return nil
}

// DatumJSON returns d in Open vSwitch's canonical wire form, ready for
// encoding/json: a set of exactly one element is the bare atom, other sets
// are ["set",[...]], maps are always ["map",[[k,v],...]], UUIDs
// ["uuid","..."], reals json.Numbers formatted like "%.15g".
func DatumJSON(d Datum, t *ColumnType) any {
	if t.IsMap() {
		pairs := make([]any, len(d.Keys))
		for i := range d.Keys {
			pairs[i] = []any{atomJSON(d.Keys[i]), atomJSON(d.Values[i])}
		}
		return []any{"map", pairs}
	}
	if len(d.Keys) == 1 {
		return atomJSON(d.Keys[0])
	}
	elems := make([]any, len(d.Keys))
	for i, k := range d.Keys {
		elems[i] = atomJSON(k)
	}
	return []any{"set", elems}
}

// datumString renders a datum as ovsdb_datum_to_string does, for error
// messages.
func datumString(d Datum, t *ColumnType) string {
	s := ""
	bracket := t.Max > 1 || len(d.Keys) == 0
	if bracket {
		if t.IsMap() {
			s = "{"
		} else {
			s = "["
		}
	}
	for i, k := range d.Keys {
		if i > 0 {
			s += ", "
		}
		s += atomString(k)
		if t.IsMap() {
			s += "=" + atomString(d.Values[i])
		}
	}
	if bracket {
		if t.IsMap() {
			s += "}"
		} else {
			s += "]"
		}
	}
	return s
}

// AppendDatumJSON appends the encoding of DatumJSON(d, t) as json.Marshal
// would write it, without building the intermediate value.
func AppendDatumJSON(dst []byte, d Datum, t *ColumnType) []byte {
	if t.IsMap() {
		dst = append(dst, `["map",[`...)
		for i := range d.Keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, '[')
			dst = appendAtomJSON(dst, d.Keys[i])
			dst = append(dst, ',')
			dst = appendAtomJSON(dst, d.Values[i])
			dst = append(dst, ']')
		}
		return append(dst, "]]"...)
	}
	if len(d.Keys) == 1 {
		return appendAtomJSON(dst, d.Keys[0])
	}
	dst = append(dst, `["set",[`...)
	for i, k := range d.Keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendAtomJSON(dst, k)
	}
	return append(dst, "]]"...)
}

// appendAtomJSON appends the encoding of atomJSON(a).
func appendAtomJSON(dst []byte, a Atom) []byte {
	switch a := a.(type) {
	case int64:
		return strconv.AppendInt(dst, a, 10)
	case float64:
		return strconv.AppendFloat(dst, a, 'g', 15, 64)
	case bool:
		return strconv.AppendBool(dst, a)
	case string:
		return fastjson.AppendString(dst, a)
	case UUID:
		dst = append(dst, `["uuid",`...)
		dst = fastjson.AppendString(dst, string(a))
		return append(dst, ']')
	}
	b, _ := fastjson.Marshal(a)
	return append(dst, b...)
}

package db

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// uint32Max is Open vSwitch's UINT_MAX, which it prints for "unlimited".
const uint32Max = 4294967295

// ZeroUUID is the all-zeros UUID, the default value of a uuid atom.
const ZeroUUID UUID = "00000000-0000-0000-0000-000000000000"

// NewUUID returns a random (version 4) UUID.
func NewUUID() UUID {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:36], b[10:16])
	return UUID(s[:])
}

// hexDigit classifies bytes: 1 a lower-case hex digit or decimal digit, 2
// an upper-case one, 0 anything else.
var hexDigit = func() (t [256]uint8) {
	for c := '0'; c <= '9'; c++ {
		t[c] = 1
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = 1
		t[c-'a'+'A'] = 2
	}
	return t
}()

// ParseUUID parses the 8-4-4-4-12 hex form (either case) and returns it in
// canonical lower case.
func ParseUUID(s string) (UUID, bool) {
	if len(s) != 36 {
		return "", false
	}
	if s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return "", false
	}
	upper := false
	for i := 0; i < 36; i++ {
		switch hexDigit[s[i]] {
		case 0:
			if i != 8 && i != 13 && i != 18 && i != 23 {
				return "", false
			}
		case 2:
			upper = true
		}
	}
	if upper {
		s = strings.ToLower(s)
	}
	return UUID(s), true
}

// String returns the atomic type's RFC 7047 name.
func (t AtomicType) String() string {
	switch t {
	case TypeInteger:
		return "integer"
	case TypeReal:
		return "real"
	case TypeBoolean:
		return "boolean"
	case TypeString:
		return "string"
	case TypeUUID:
		return "uuid"
	}
	return "void"
}

func atomicTypeFromString(s string) (AtomicType, bool) {
	for t := TypeInteger; t <= TypeUUID; t++ {
		if t.String() == s {
			return t, true
		}
	}
	return 0, false
}

// defaultAtom is Open vSwitch's default atom: 0, 0.0, false, "" or the
// all-zeros UUID.
func defaultAtom(t AtomicType) Atom {
	switch t {
	case TypeInteger:
		return int64(0)
	case TypeReal:
		return float64(0)
	case TypeBoolean:
		return false
	case TypeString:
		return ""
	default:
		return ZeroUUID
	}
}

// compareAtoms orders two atoms of the same type. UUIDs compare as their
// canonical strings, which matches Open vSwitch's word-wise comparison.
func compareAtoms(a, b Atom) int {
	switch a := a.(type) {
	case int64:
		b := b.(int64)
		switch {
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	case float64:
		b := b.(float64)
		switch {
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	case bool:
		b := b.(bool)
		switch {
		case a == b:
			return 0
		case !a:
			return -1
		}
		return 1
	case string:
		return strings.Compare(a, b.(string))
	case UUID:
		return strings.Compare(string(a), string(b.(UUID)))
	}
	panic(fmt.Sprintf("db: not an atom: %T", a))
}

// symbol is a "named-uuid" of one transaction.
type symbol struct {
	uuid    UUID
	created bool // an insert with this "uuid-name" ran
}

// symbolTable maps "uuid-name"s to UUIDs for one transaction; nil outside
// transactions, where named UUIDs are not allowed.
type symbolTable map[string]*symbol

func (st symbolTable) lookup(name string) *symbol {
	s := st[name]
	if s == nil {
		s = &symbol{uuid: NewUUID()}
		st[name] = s
	}
	return s
}

// parseAtomValue parses a JSON value as an atom of base's type and checks
// base's constraints.
func parseAtomValue(v any, base *BaseType, st symbolTable) (Atom, *Error) {
	a, err := parseAtomUnchecked(v, base.Type, st)
	if err != nil {
		return nil, err
	}
	if err := checkAtom(a, base); err != nil {
		return nil, err
	}
	return a, nil
}

func parseAtomUnchecked(v any, t AtomicType, st symbolTable) (Atom, *Error) {
	switch t {
	case TypeInteger:
		if i, ok := jsonInteger(v); ok {
			return i, nil
		}
	case TypeReal:
		if f, ok := jsonReal(v); ok && !math.IsInf(f, 0) {
			return f, nil
		}
	case TypeBoolean:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case TypeString:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case TypeUUID:
		return parseUUIDAtom(v, st)
	}
	return nil, syntaxError("expected %s", t).at(v)
}

func syntaxError(format string, args ...any) *Error {
	return errorf("syntax error", format, args...)
}

// unwrapPair checks for a 2-element array [name, <value>] whose value has
// the given JSON type name.
func unwrapPair(v any, name, valueType string) (any, *Error) {
	arr, ok := v.([]any)
	if ok && len(arr) == 2 {
		if s, ok := arr[0].(string); ok && s == name {
			if jsonTypeName(arr[1]) == valueType ||
				valueType == "array" && isArray(arr[1]) {
				return arr[1], nil
			}
		}
	}
	return nil, syntaxError("expected [\"%s\", <%s>]", name, valueType).at(v)
}

func isArray(v any) bool {
	_, ok := v.([]any)
	return ok
}

func parseUUIDAtom(v any, st symbolTable) (Atom, *Error) {
	inner, err := unwrapPair(v, "uuid", "string")
	if err == nil {
		s := inner.(string)
		u, ok := ParseUUID(s)
		if !ok {
			return nil, syntaxError("\"%s\" is not a valid UUID", s).at(v)
		}
		return u, nil
	}
	if st != nil {
		if name, err1 := unwrapPair(v, "named-uuid", "string"); err1 == nil {
			if !isID(name.(string)) {
				return nil, syntaxError("named-uuid string is not a valid <id>").at(v)
			}
			return st.lookup(name.(string)).uuid, nil
		}
	}
	return nil, err
}

// checkAtom checks base's enum, range and length constraints; references
// are checked at commit time.
func checkAtom(a Atom, base *BaseType) *Error {
	if base.Enum != nil {
		if _, found := searchAtoms(base.Enum, a); !found {
			valid := make([]string, len(base.Enum))
			for i, e := range base.Enum {
				valid[i] = atomString(e)
			}
			return errorf("constraint violation", "%s is not one of the allowed values ([%s])",
				atomString(a), strings.Join(valid, ", "))
		}
		return nil
	}
	switch base.Type {
	case TypeInteger:
		x := a.(int64)
		lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
		if base.MinInteger != nil {
			lo = *base.MinInteger
		}
		if base.MaxInteger != nil {
			hi = *base.MaxInteger
		}
		switch {
		case x >= lo && x <= hi:
			return nil
		case lo != math.MinInt64 && hi != math.MaxInt64:
			return errorf("constraint violation", "%d is not in the valid range %d to %d (inclusive)", x, lo, hi)
		case lo != math.MinInt64:
			return errorf("constraint violation", "%d is less than minimum allowed value %d", x, lo)
		default:
			return errorf("constraint violation", "%d is greater than maximum allowed value %d", x, hi)
		}
	case TypeReal:
		x := a.(float64)
		lo, hi := -math.MaxFloat64, math.MaxFloat64
		if base.MinReal != nil {
			lo = *base.MinReal
		}
		if base.MaxReal != nil {
			hi = *base.MaxReal
		}
		switch {
		case x >= lo && x <= hi:
			return nil
		case lo != -math.MaxFloat64 && hi != math.MaxFloat64:
			return errorf("constraint violation", "%s is not in the valid range %s to %s (inclusive)",
				formatReal(x), formatReal(lo), formatReal(hi))
		case lo != -math.MaxFloat64:
			return errorf("constraint violation", "%s is less than minimum allowed value %s", formatReal(x), formatReal(lo))
		default:
			return errorf("constraint violation", "%s is greater than maximum allowed value %s", formatReal(x), formatReal(hi))
		}
	case TypeString:
		s := a.(string)
		if !utf8.ValidString(s) {
			return errorf("constraint violation", "not a valid UTF-8 string: invalid UTF-8 sequence")
		}
		n := int64(utf8.RuneCountInString(s))
		if base.MinLength != nil && n < *base.MinLength {
			return errorf("constraint violation", "\"%s\" length %d is less than minimum allowed length %d", s, n, *base.MinLength)
		}
		if base.MaxLength != nil && n > *base.MaxLength {
			return errorf("constraint violation", "\"%s\" length %d is greater than maximum allowed length %d", s, n, *base.MaxLength)
		}
	}
	return nil
}

// formatReal formats like C's "%.15g", as Open vSwitch writes reals.
func formatReal(f float64) string {
	return strconv.FormatFloat(f, 'g', 15, 64)
}

// atomString renders an atom the way ovsdb_atom_to_string does (used in
// error messages): strings are quoted only when they need to be.
func atomString(a Atom) string {
	switch a := a.(type) {
	case int64:
		return strconv.FormatInt(a, 10)
	case float64:
		return formatReal(a)
	case bool:
		return strconv.FormatBool(a)
	case string:
		if stringNeedsQuotes(a) {
			b, _ := json.Marshal(a)
			return string(b)
		}
		return a
	case UUID:
		return string(a)
	}
	return fmt.Sprint(a)
}

func stringNeedsQuotes(s string) bool {
	if s == "" {
		return true
	}
	c := s[0]
	if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_') {
		return true
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return true
		}
	}
	if s == "true" || s == "false" {
		return true
	}
	_, isUUID := ParseUUID(s)
	return isUUID
}

// atomJSON returns an atom in RFC 7047 wire form, ready for encoding/json.
// Reals are json.Numbers formatted like Open vSwitch ("%.15g").
func atomJSON(a Atom) any {
	switch a := a.(type) {
	case float64:
		return json.Number(formatReal(a))
	case UUID:
		return []any{"uuid", string(a)}
	}
	return a
}

// searchAtoms finds a in the sorted slice atoms.
func searchAtoms(atoms []Atom, a Atom) (int, bool) {
	lo, hi := 0, len(atoms)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if compareAtoms(atoms[m], a) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(atoms) && compareAtoms(atoms[lo], a) == 0
}

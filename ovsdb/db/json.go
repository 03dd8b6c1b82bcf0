package db

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gvs/ovsdb/internal/fastjson"
)

// The engine works on generic JSON values as encoding/json decodes them with
// UseNumber: nil, bool, json.Number, string, []any and map[string]any. That
// keeps the integer/real distinction OVSDB needs.

// decodeJSON decodes one JSON value, keeping numbers as json.Number.
func decodeJSON(raw []byte) (any, error) {
	var d fastjson.Decoder
	return decodeJSONWith(&d, raw)
}

// decodeJSONWith is decodeJSON reusing d's scratch space.
func decodeJSONWith(d *fastjson.Decoder, raw []byte) (any, error) {
	if v, ok := d.Decode(raw); ok {
		return v, nil
	}
	// Bad input: encoding/json words the error.
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after JSON value")
	}
	return v, nil
}

// jsonInteger reports whether v is a JSON number without fraction or
// exponent that fits in an int64, as Open vSwitch's JSON parser classifies
// integers.
func jsonInteger(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok || strings.ContainsAny(string(n), ".eE") {
		return 0, false
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	return i, err == nil
}

// jsonReal returns the value of any JSON number.
func jsonReal(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil && !math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// jsonTypeName names a JSON value's type the way Open vSwitch does in
// error messages.
func jsonTypeName(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		if v {
			return "true"
		}
		return "false"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case json.Number:
		if _, ok := jsonInteger(v); ok {
			return "integer"
		}
		return "real"
	case string:
		return "string"
	}
	return "<invalid>"
}

// isID reports whether s is an RFC 7047 <id>: a letter or underscore
// followed by letters, digits and underscores.
func isID(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alpha := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
		if !alpha && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// memberTypes is a set of acceptable JSON types for a member of an object
// being parsed, as in Open vSwitch's ovsdb-parser.
type memberTypes uint

const (
	opNull memberTypes = 1 << iota
	opFalse
	opTrue
	opObject
	opArray
	opInteger
	opReal
	opString
	opID       // a string that is a valid <id>
	opOptional // the member may be absent

	opBoolean = opFalse | opTrue
	opNumber  = opInteger | opReal
	opAny     = opNull | opBoolean | opObject | opArray | opNumber | opString
)

func (t memberTypes) accepts(v any) bool {
	switch v := v.(type) {
	case nil:
		return t&opNull != 0
	case bool:
		if v {
			return t&opTrue != 0
		}
		return t&opFalse != 0
	case map[string]any:
		return t&opObject != 0
	case []any:
		return t&opArray != 0
	case json.Number:
		if _, ok := jsonInteger(v); ok {
			return t&opInteger != 0
		}
		return t&opReal != 0
	case string:
		return t&opString != 0 || t&opID != 0 && isID(v)
	}
	return false
}

// objectParser pulls members out of a JSON object and reports the first
// problem as a "syntax error" worded like Open vSwitch's.
type objectParser struct {
	name string
	// opIndex and opCount name the parser "ovsdb operation I of N" when
	// name is empty: worded only when there is an error to report.
	opIndex, opCount int
	obj              map[string]any
	used             []string // members asked for; few, so a slice
	usedBuf          [8]string
	err              *Error
}

func newObjectParser(v any, name string) *objectParser {
	p := &objectParser{name: name}
	p.init(v)
	return p
}

func (p *objectParser) init(v any) {
	p.used = p.usedBuf[:0]
	obj, ok := v.(map[string]any)
	if !ok {
		p.raise("Object expected.")
		return
	}
	p.obj = obj
}

func (p *objectParser) raise(format string, args ...any) {
	if p.err == nil {
		name := p.name
		if name == "" {
			name = fmt.Sprintf("ovsdb operation %d of %d", p.opIndex, p.opCount)
		}
		p.err = errorf("syntax error", "Parsing %s failed: %s", name, fmt.Sprintf(format, args...))
		if p.obj != nil {
			p.err.Syntax = ovsJSON(p.obj)
		}
	}
}

// member returns the named member, or nil (raising an error unless it is
// optional and absent).
func (p *objectParser) member(name string, types memberTypes) any {
	if p.obj == nil {
		return nil
	}
	v, ok := p.obj[name]
	if !ok {
		if types&opOptional == 0 {
			p.raise("Required '%s' member is missing.", name)
		}
		return nil
	}
	if !types.accepts(v) {
		p.raise("Type mismatch for member '%s'.", name)
		return nil
	}
	p.used = append(p.used, name)
	return v
}

// finish reports members that were present but not asked for, then returns
// the parser's error, if any.
func (p *objectParser) finish() *Error {
	if p.err != nil || p.obj == nil {
		return p.err
	}
	var unused []string
	for name := range p.obj {
		if !slices.Contains(p.used, name) {
			unused = append(unused, name)
		}
	}
	switch n := len(unused); {
	case n == 1:
		p.raise("Member '%s' is present but not allowed here.", unused[0])
	case n > 1:
		sort.Strings(unused)
		plural := ""
		if n > 2 {
			plural = "s"
		}
		p.raise("Member '%s' and %d other member%s are present but not allowed here.", unused[0], n-1, plural)
	}
	return p.err
}

// englishList joins items as "a", "a and b", "a, b, and c".
func englishList(items []string) string {
	var b strings.Builder
	for i, s := range items {
		switch {
		case i == 0:
		case i < len(items)-1:
			b.WriteString(", ")
		case len(items) > 2:
			b.WriteString(", and ")
		default:
			b.WriteString(" and ")
		}
		b.WriteString(s)
	}
	return b.String()
}

package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"gvs/ovsdb/internal/fastjson"
)

// ovsdbError is Open vSwitch's <error> object: "error" names the kind of
// failure (clients match on it), "details" is for humans and "syntax", when
// present, is the offending JSON, compact and with sorted keys.
type ovsdbError struct {
	Name    string `json:"error"`
	Details string `json:"details,omitempty"`
	Syntax  string `json:"syntax,omitempty"`
}

func (e *ovsdbError) Error() string { return e.Name + ": " + e.Details }

// syntaxError mirrors ovsdb_syntax_error(): tag defaults to "syntax error";
// a nil syntax leaves the "syntax" member out.
func syntaxError(syntax json.RawMessage, tag, format string, args ...any) *ovsdbError {
	if tag == "" {
		tag = "syntax error"
	}
	e := &ovsdbError{Name: tag, Details: fmt.Sprintf(format, args...)}
	if syntax != nil {
		e.Syntax = canonicalJSON(syntax)
	}
	return e
}

// canonicalJSON re-encodes raw compactly with object keys sorted, the way
// Open vSwitch prints JSON with JSSF_SORT. Invalid JSON is returned as is.
func canonicalJSON(raw json.RawMessage) string {
	if v, ok := fastjson.Decode(raw); ok {
		if b, err := fastjson.Marshal(v); err == nil {
			return string(b)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return string(raw)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return string(raw)
	}
	return string(b)
}

// decodeArray splits a JSON array into its elements; ok is false when raw is
// not an array.
func decodeArray(raw json.RawMessage) ([]json.RawMessage, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' {
		return nil, false
	}
	elems, ok := fastjson.SplitArray(raw)
	if !ok {
		return nil, false
	}
	out := make([]json.RawMessage, len(elems))
	for i, e := range elems {
		out[i] = e
	}
	return out, true
}

// decodeObject returns a JSON object's members; ok is false when raw is not
// an object.
func decodeObject(raw json.RawMessage) (map[string]json.RawMessage, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	split, ok := fastjson.SplitObject(raw)
	if !ok {
		return nil, false
	}
	members := make(map[string]json.RawMessage, len(split))
	for k, v := range split {
		members[k] = v
	}
	return members, true
}

// decodeString returns a JSON string's value; ok is false for other types.
func decodeString(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	v, _ := fastjson.Decode(raw)
	s, ok := v.(string)
	return s, ok
}

// jsonKind classifies a JSON value by its first byte.
func jsonKind(raw json.RawMessage) byte {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return 0
	}
	switch c := raw[0]; c {
	case '{', '[', '"', 'n':
		return c
	case 't', 'f':
		return 'b'
	default:
		return '0'
	}
}

// objectParser mirrors Open vSwitch's ovsdb_parser: members are fetched by
// name and type, the first problem is kept, and finish reports members that
// were present but not used.
type objectParser struct {
	raw     json.RawMessage
	name    string
	members map[string]json.RawMessage
	used    map[string]bool
	err     *ovsdbError
}

func newObjectParser(raw json.RawMessage, name string) *objectParser {
	p := &objectParser{raw: raw, name: name, used: map[string]bool{}}
	members, ok := decodeObject(raw)
	if !ok {
		p.raise("Object expected.")
		return p
	}
	p.members = members
	return p
}

func (p *objectParser) raise(format string, args ...any) {
	if p.err == nil {
		var syntax json.RawMessage
		if p.members != nil {
			syntax = p.raw
		}
		p.err = syntaxError(syntax, "", "Parsing %s failed: %s", p.name, fmt.Sprintf(format, args...))
	}
}

// member returns an optional member whose JSON kind (see jsonKind) is kind.
func (p *objectParser) member(name string, kind byte) json.RawMessage {
	if p.members == nil {
		return nil
	}
	v, ok := p.members[name]
	if !ok {
		return nil
	}
	if jsonKind(v) != kind {
		p.raise("Type mismatch for member '%s'.", name)
		return nil
	}
	p.used[name] = true
	return v
}

func (p *objectParser) finish() *ovsdbError {
	if p.err == nil && p.members != nil {
		var unused []string
		for name := range p.members {
			if !p.used[name] {
				unused = append(unused, name)
			}
		}
		sort.Strings(unused)
		switch n := len(unused); {
		case n == 1:
			p.raise("Member '%s' is present but not allowed here.", unused[0])
		case n > 1:
			plural := ""
			if n > 2 {
				plural = "s"
			}
			p.raise("Member '%s' and %d other member%s are present but not allowed here.", unused[0], n-1, plural)
		}
	}
	return p.err
}

// isID reports whether s is an OVSDB <id>: a letter or underscore followed by
// letters, digits and underscores.
func isID(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		letter := c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

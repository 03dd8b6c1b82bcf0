package fastjson

import (
	"encoding/json"
	"unicode/utf8"
)

// maxDepth is encoding/json's nesting limit: deeper input is left to it,
// so that it reports its own error.
const maxDepth = 10000

// Decode parses data, exactly one JSON value with optional surrounding
// whitespace, into the tree json.Decoder.UseNumber gives. ok is false for
// anything encoding/json would reject.
func Decode(data []byte) (v any, ok bool) {
	var d Decoder
	return d.Decode(data)
}

// Decoder is Decode with scratch space kept from one call to the next, for
// decoding many values (a transaction's operations) with fewer
// allocations. A Decoder is used by one goroutine at a time.
type Decoder struct{ p parser }

// Decode is the package's Decode.
func (d *Decoder) Decode(data []byte) (v any, ok bool) {
	p := &d.p
	p.data, p.i = data, 0
	defer func() {
		clear(p.stack) // what a failed decode left; the rest was cleared as it was popped
		clear(p.keys)
		p.stack, p.keys, p.data = p.stack[:0], p.keys[:0], nil
	}()
	p.space()
	if v, ok = p.value(0); !ok {
		return nil, false
	}
	p.space()
	if p.i != len(p.data) {
		return nil, false
	}
	return v, true
}

// SplitArray returns the elements of a JSON array, each the bytes of the
// value without surrounding whitespace, as json.Unmarshal into
// []json.RawMessage would (but aliasing data). ok is false when data is
// not exactly one valid array.
func SplitArray(data []byte) (elems [][]byte, ok bool) {
	p := parser{data: data}
	p.space()
	if !p.consume('[') {
		return nil, false
	}
	elems = [][]byte{}
	p.space()
	if p.consume(']') {
		return elems, p.end()
	}
	for {
		p.space()
		start := p.i
		if !p.skip(1) {
			return nil, false
		}
		elems = append(elems, data[start:p.i:p.i])
		p.space()
		if p.consume(']') {
			return elems, p.end()
		}
		if !p.consume(',') {
			return nil, false
		}
	}
}

// SplitObject returns the members of a JSON object as json.Unmarshal into
// map[string]json.RawMessage would (a repeated name keeps its last value),
// aliasing data. ok is false when data is not exactly one valid object.
func SplitObject(data []byte) (members map[string][]byte, ok bool) {
	p := parser{data: data}
	p.space()
	if !p.consume('{') {
		return nil, false
	}
	members = map[string][]byte{}
	p.space()
	if p.consume('}') {
		return members, p.end()
	}
	for {
		p.space()
		key, ok := p.str()
		if !ok {
			return nil, false
		}
		p.space()
		if !p.consume(':') {
			return nil, false
		}
		p.space()
		start := p.i
		if !p.skip(1) {
			return nil, false
		}
		members[key] = data[start:p.i:p.i]
		p.space()
		if p.consume('}') {
			return members, p.end()
		}
		if !p.consume(',') {
			return nil, false
		}
	}
}

type parser struct {
	data []byte
	i    int
	// stack holds the elements of the arrays and objects being decoded,
	// keys the member names of the objects.
	stack []any
	keys  []string
}

func (p *parser) end() bool {
	p.space()
	return p.i == len(p.data)
}

func (p *parser) space() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) consume(c byte) bool {
	if p.i < len(p.data) && p.data[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *parser) literal(word string) bool {
	if len(p.data)-p.i >= len(word) && string(p.data[p.i:p.i+len(word)]) == word {
		p.i += len(word)
		return true
	}
	return false
}

func (p *parser) value(depth int) (any, bool) {
	if p.i >= len(p.data) {
		return nil, false
	}
	switch c := p.data[p.i]; {
	case c == '{':
		if depth >= maxDepth {
			return nil, false
		}
		p.i++
		p.space()
		if p.consume('}') {
			return map[string]any{}, true
		}
		// Members gather on the scratch stacks so that the map is made at
		// its final size.
		base, keyBase := len(p.stack), len(p.keys)
		for {
			p.space()
			key, ok := p.str()
			if !ok {
				return nil, false
			}
			p.space()
			if !p.consume(':') {
				return nil, false
			}
			p.space()
			v, ok := p.value(depth + 1)
			if !ok {
				return nil, false
			}
			p.stack = append(p.stack, v)
			p.keys = append(p.keys, key)
			p.space()
			if p.consume('}') {
				values, keys := p.stack[base:], p.keys[keyBase:]
				obj := make(map[string]any, len(keys))
				for i, k := range keys {
					obj[k] = values[i]
				}
				clear(values)
				clear(keys)
				p.stack, p.keys = p.stack[:base], p.keys[:keyBase]
				return obj, true
			}
			if !p.consume(',') {
				return nil, false
			}
		}
	case c == '[':
		if depth >= maxDepth {
			return nil, false
		}
		p.i++
		p.space()
		if p.consume(']') {
			return []any{}, true
		}
		base := len(p.stack)
		for {
			p.space()
			v, ok := p.value(depth + 1)
			if !ok {
				return nil, false
			}
			p.stack = append(p.stack, v)
			p.space()
			if p.consume(']') {
				arr := make([]any, len(p.stack)-base)
				copy(arr, p.stack[base:])
				clear(p.stack[base:])
				p.stack = p.stack[:base]
				return arr, true
			}
			if !p.consume(',') {
				return nil, false
			}
		}
	case c == '"':
		if end, plain, ok := p.stringEnd(); ok && plain {
			if w, ok := boxedWords[string(p.data[p.i+1:end-1])]; ok {
				p.i = end
				return w, true
			}
		}
		return p.str()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		start := p.i
		if !p.number() {
			return nil, false
		}
		return json.Number(p.data[start:p.i]), true
	}
	return nil, false
}

// skip validates and steps over one value.
func (p *parser) skip(depth int) bool {
	if p.i >= len(p.data) {
		return false
	}
	switch c := p.data[p.i]; {
	case c == '{':
		if depth >= maxDepth {
			return false
		}
		p.i++
		p.space()
		if p.consume('}') {
			return true
		}
		for {
			p.space()
			if !p.skipString() {
				return false
			}
			p.space()
			if !p.consume(':') {
				return false
			}
			p.space()
			if !p.skip(depth + 1) {
				return false
			}
			p.space()
			if p.consume('}') {
				return true
			}
			if !p.consume(',') {
				return false
			}
		}
	case c == '[':
		if depth >= maxDepth {
			return false
		}
		p.i++
		p.space()
		if p.consume(']') {
			return true
		}
		for {
			p.space()
			if !p.skip(depth + 1) {
				return false
			}
			p.space()
			if p.consume(']') {
				return true
			}
			if !p.consume(',') {
				return false
			}
		}
	case c == '"':
		return p.skipString()
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	return false
}

// number steps over a number in RFC 8259 syntax.
func (p *parser) number() bool {
	d := p.data
	i := p.i
	if i < len(d) && d[i] == '-' {
		i++
	}
	if i >= len(d) {
		return false
	}
	if d[i] == '0' {
		i++
	} else if d[i] >= '1' && d[i] <= '9' {
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	} else {
		return false
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return false
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return false
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	p.i = i
	return true
}

// stringEnd returns the index just after the closing quote of the string
// starting at p.i, and whether it is plain: printable ASCII without
// escapes, so that its bytes are its value.
func (p *parser) stringEnd() (end int, plain, ok bool) {
	d := p.data
	if p.i >= len(d) || d[p.i] != '"' {
		return 0, false, false
	}
	plain = true
	for i := p.i + 1; i < len(d); i++ {
		switch c := d[i]; {
		case c == '"':
			return i + 1, plain, true
		case c == '\\':
			plain = false
			i++ // the escaped byte cannot end the string
		case c < 0x20:
			return 0, false, false
		case c >= utf8.RuneSelf:
			plain = false
		}
	}
	return 0, false, false
}

func (p *parser) skipString() bool {
	end, plain, ok := p.stringEnd()
	if !ok {
		return false
	}
	if !plain {
		if _, ok := unquote(p.data[p.i:end]); !ok {
			return false
		}
	}
	p.i = end
	return true
}

func (p *parser) str() (string, bool) {
	end, plain, ok := p.stringEnd()
	if !ok {
		return "", false
	}
	var s string
	if plain {
		body := p.data[p.i+1 : end-1]
		if w, ok := words[string(body)]; ok {
			s = w
		} else {
			s = string(body)
		}
	} else if s, ok = unquote(p.data[p.i:end]); !ok {
		return "", false
	}
	p.i = end
	return s, true
}

// unquote decodes a string with escapes or non-ASCII bytes exactly as
// encoding/json does (invalid UTF-8 and lone surrogates become U+FFFD).
func unquote(quoted []byte) (string, bool) {
	body := quoted[1 : len(quoted)-1]
	escaped := false
	for _, c := range body {
		if c == '\\' {
			escaped = true
			break
		}
	}
	if !escaped && utf8.Valid(body) {
		return string(body), true
	}
	var s string
	if err := json.Unmarshal(quoted, &s); err != nil {
		return "", false
	}
	return s, true
}

// words are the member names and keywords OVSDB messages repeat, decoded
// without allocating a string each time.
var words = func() map[string]string {
	m := map[string]string{}
	for _, w := range wordList {
		m[w] = w
	}
	return m
}()

// boxedWords are words already converted to interface values.
var boxedWords = func() map[string]any {
	m := map[string]any{}
	for _, w := range wordList {
		m[w] = w
	}
	return m
}()

var wordList = []string{
	"op", "table", "where", "columns", "rows", "row", "until", "timeout", "uuid", "uuid-name",
	"named-uuid", "set", "map", "mutations", "comment", "lock", "durable", "sort",
	"insert", "select", "update", "mutate", "delete", "wait", "commit", "abort", "assert",
	"==", "!=", "<", "<=", ">", ">=", "includes", "excludes", "+=", "-=", "*=", "/=", "%=",
	"_uuid", "_version", "method", "params", "id", "result", "error", "details",
	"initial", "modify", "select", "where", "Open_vSwitch", "Bridge", "Port", "Interface",
	"name", "ports", "interfaces", "bridges", "type", "internal", "next_cfg", "cur_cfg",
	"other_config", "external_ids", "options", "ofport", "ofport_request", "transact",
	"monitor", "monitor_cond", "monitor_cond_since", "echo", "_Server", "Database",
}

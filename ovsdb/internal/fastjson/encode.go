package fastjson

import (
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"
)

const hex = "0123456789abcdef"

// AppendString appends s as a JSON string, escaped as json.Marshal
// escapes it.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// Appender is a value that appends its own JSON encoding, already in
// json.Marshal's form; AppendValue writes it without checking.
type Appender interface {
	AppendJSON(dst []byte) []byte
}

// AppendValue appends v as json.Marshal would encode it. The generic tree
// types, int, int64, Appender values, and slices and maps of them are
// encoded here; anything else is handed to json.Marshal.
func AppendValue(dst []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		return strconv.AppendBool(dst, v), nil
	case string:
		return AppendString(dst, v), nil
	case json.Number:
		if v == "" {
			return append(dst, '0'), nil
		}
		if p := (parser{data: []byte(v)}); !p.number() || p.i != len(v) {
			return marshal(dst, v)
		}
		return append(dst, v...), nil
	case int:
		return strconv.AppendInt(dst, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(dst, v, 10), nil
	case Appender:
		return v.AppendJSON(dst), nil
	case []any:
		if v == nil {
			return append(dst, "null"...), nil
		}
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = AppendValue(dst, e); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case map[string]any:
		if v == nil {
			return append(dst, "null"...), nil
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendString(dst, k)
			dst = append(dst, ':')
			var err error
			if dst, err = AppendValue(dst, v[k]); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	}
	return marshal(dst, v)
}

func marshal(dst []byte, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// Marshal is AppendValue to a new slice.
func Marshal(v any) ([]byte, error) { return AppendValue(nil, v) }

// AppendCompact appends the JSON value raw as json.Marshal writes a
// json.RawMessage: without insignificant whitespace, with <, >, &, U+2028
// and U+2029 in strings escaped. Invalid input is an error.
func AppendCompact(dst []byte, raw []byte) ([]byte, error) {
	p := parser{data: raw}
	p.space()
	start := p.i
	if !p.skip(1) || !p.end() {
		return marshal(dst, json.RawMessage(raw))
	}
	inString := false
	for i := start; i < len(raw); i++ {
		c := raw[i]
		if inString {
			switch {
			case c == '\\':
				dst = append(dst, c, raw[i+1])
				i++
				continue
			case c == '"':
				inString = false
			case c == '<' || c == '>' || c == '&':
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
				continue
			case c == 0xE2 && i+2 < len(raw) && raw[i+1] == 0x80 && raw[i+2]&^1 == 0xA8:
				// U+2028, U+2029
				dst = append(dst, '\\', 'u', '2', '0', '2', hex[raw[i+2]&0xF])
				i += 2
				continue
			}
			dst = append(dst, c)
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '"':
			inString = true
		}
		dst = append(dst, c)
	}
	return dst, nil
}

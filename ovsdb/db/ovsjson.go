package db

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
)

// ovsJSON serialises a decoded JSON value the way Open vSwitch's
// json_to_string(json, JSSF_SORT) does: compact, object members sorted,
// integers in decimal, reals as "%.15g", strings escaping only '"', '\\'
// and control characters.
func ovsJSON(v any) string {
	var b strings.Builder
	writeOVSJSON(&b, v)
	return b.String()
}

func writeOVSJSON(b *strings.Builder, v any) {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case json.Number:
		if i, ok := jsonInteger(v); ok {
			b.WriteString(strconv.FormatInt(i, 10))
		} else if f, ok := jsonReal(v); ok {
			b.WriteString(formatReal(f))
		} else {
			b.WriteString(string(v))
		}
	case string:
		writeOVSString(b, v)
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			writeOVSJSON(b, e)
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeOVSString(b, k)
			b.WriteByte(':')
			writeOVSJSON(b, v[k])
		}
		b.WriteByte('}')
	default:
		j, _ := json.Marshal(v)
		b.Write(j)
	}
}

func writeOVSString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			b.WriteString(`\"`)
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\b':
			b.WriteString(`\b`)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\f':
			b.WriteString(`\f`)
		case c == '\r':
			b.WriteString(`\r`)
		case c < ' ':
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[c>>4])
			b.WriteByte("0123456789abcdef"[c&15])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
}

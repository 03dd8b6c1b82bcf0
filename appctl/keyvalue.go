package appctl

import (
	"iter"
	"strings"
)

// keyValue is one "key=value" of an Open vSwitch argument.
type keyValue struct{ key, value string }

// keyValues splits s as ofputil_parse_key_value does: fields separated
// by commas or white space, each "key=value", "key:value" or a bare key
// (empty value).
func keyValues(s string) iter.Seq[keyValue] {
	return func(yield func(keyValue) bool) {
		for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
			kv := keyValue{key: f}
			if i := strings.IndexAny(f, "=:"); i >= 0 {
				kv.key, kv.value = f[:i], f[i+1:]
			}
			if !yield(kv) {
				return
			}
		}
	}
}

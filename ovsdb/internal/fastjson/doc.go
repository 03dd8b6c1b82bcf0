// Package fastjson decodes and encodes the generic JSON values OVSDB works
// on (nil, bool, json.Number, string, []any, map[string]any) without
// reflection, producing exactly what encoding/json produces: Decode gives
// the tree json.Decoder with UseNumber gives, AppendValue the bytes
// json.Marshal gives (compact, object keys sorted, HTML characters, U+2028,
// U+2029 and invalid UTF-8 escaped as encoding/json escapes them).
//
// Contract: the functions are pure and safe for concurrent use. Decode and
// the Split functions report only ok=false on bad input, never a message:
// callers fall back to encoding/json when they need its error text, so
// errors stay worded as before. Split results alias the input.
package fastjson

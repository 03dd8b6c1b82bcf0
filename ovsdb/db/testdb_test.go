package db

import (
	"regexp"
	"testing"
)

// testSchema exercises every feature with small tables.
const testSchema = `{"name":"T","version":"1.0.0","tables":{
 "Root":{"isRoot":true,"columns":{
   "name":{"type":"string"},
   "i":{"type":"integer"},
   "r":{"type":"real"},
   "b":{"type":"boolean"},
   "opt":{"type":{"key":"integer","min":0,"max":1}},
   "iset":{"type":{"key":"integer","min":0,"max":"unlimited"}},
   "rset":{"type":{"key":"real","min":0,"max":"unlimited"}},
   "small":{"type":{"key":{"type":"integer","minInteger":0,"maxInteger":10},"min":0,"max":2}},
   "smap":{"type":{"key":"string","value":"string","min":0,"max":"unlimited"}},
   "kind":{"type":{"key":{"type":"string","enum":["set",["a","b"]]},"min":0,"max":1}},
   "fixed":{"type":"string","mutable":false},
   "kids":{"type":{"key":{"type":"uuid","refTable":"Kid"},"min":0,"max":"unlimited"}},
   "weak":{"type":{"key":{"type":"uuid","refTable":"Kid","refType":"weak"},"min":0,"max":"unlimited"}},
   "self":{"type":{"key":{"type":"uuid","refTable":"Root"},"min":0,"max":1}}}},
 "Kid":{"columns":{
   "name":{"type":"string"},
   "grand":{"type":{"key":{"type":"uuid","refTable":"Grand"},"min":0,"max":1}}}},
 "Grand":{"columns":{"n":{"type":"integer"}}},
 "Limited":{"isRoot":true,"maxRows":2,"indexes":[["name"],["a","b"]],"columns":{
   "name":{"type":"string"},"a":{"type":"integer"},"b":{"type":"integer"}}},
 "Strict":{"isRoot":true,"columns":{
   "w":{"type":{"key":{"type":"uuid","refTable":"Kid","refType":"weak"},"min":1,"max":"unlimited"}}}},
 "Enum":{"isRoot":true,"columns":{
   "e":{"type":{"key":{"type":"string","enum":["set",["x","y"]]}}}}}
}}`

func newTestDB(t testing.TB) *Database {
	t.Helper()
	s, err := ParseSchema([]byte(testSchema))
	if err != nil {
		t.Fatalf("test schema: %v", err)
	}
	return New(s, nil)
}

var uuidPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// anonymize replaces every UUID with <u> so results can be compared.
func anonymize(s string) string { return uuidPattern.ReplaceAllString(s, "<u>") }

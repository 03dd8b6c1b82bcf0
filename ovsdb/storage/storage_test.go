package storage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"gvs/ovsdb/db"
)

// richSchema exercises what records must carry: strong references with
// garbage collection, weak references, maps, bounded sets, optional
// scalars, an index and an ephemeral column.
const richSchema = `{"name":"rich","version":"1.0.0","cksum":"12345 678","tables":{
 "Root":{"isRoot":true,"columns":{
   "name":{"type":"string"},
   "kids":{"type":{"key":{"type":"uuid","refTable":"Kid"},"min":0,"max":"unlimited"}},
   "tags":{"type":{"key":"string","value":"string","min":0,"max":"unlimited"}},
   "nums":{"type":{"key":"integer","min":0,"max":4}},
   "opt":{"type":{"key":"integer","min":0,"max":1}},
   "weak":{"type":{"key":{"type":"uuid","refTable":"Other","refType":"weak"},"min":0,"max":"unlimited"}},
   "real":{"type":"real"},
   "flag":{"type":"boolean"},
   "eph":{"type":"string","ephemeral":true}}},
 "Kid":{"columns":{"n":{"type":"integer"}}},
 "Other":{"isRoot":true,"columns":{"name":{"type":"string"}},"indexes":[["name"]]}}}`

func create(t testing.TB, schema string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rich.db")
	if err := Create(path, []byte(schema)); err != nil {
		t.Fatal(err)
	}
	return path
}

func open(t testing.TB, path string, opts Options) *Storage {
	t.Helper()
	s, err := Open(path, quietLogger(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func transact(t testing.TB, d *db.Database, ops string) []any {
	t.Helper()
	var raw []json.RawMessage
	if err := json.Unmarshal([]byte(ops), &raw); err != nil {
		t.Fatalf("bad test transaction %s: %v", ops, err)
	}
	r := d.Transact(raw, db.TxnEnv{})
	for _, res := range r.Results {
		if e, ok := res.(*db.Error); ok && e != nil {
			t.Fatalf("transaction %s failed: %v", ops, e)
		}
	}
	return r.Results
}

// dump renders every row's persistent columns, sorted, for comparisons.
func dump(d *db.Database) string {
	var lines []string
	d.View(func(v db.View) {
		for name, table := range d.Schema().Tables {
			v.Rows(name, func(r *db.Row) bool {
				var cols []*db.Column
				for _, c := range table.Columns {
					if !c.Ephemeral {
						cols = append(cols, c)
					}
				}
				b, _ := json.Marshal(table.RowJSON(r, cols))
				lines = append(lines, name+" "+string(r.UUID)+" "+string(b))
				return true
			})
		}
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// randomWorkload commits n random transactions touching every kind of
// column and change, so that replaying the records must reproduce the
// state exactly.
func randomWorkload(t testing.TB, d *db.Database, rng *rand.Rand, n int) {
	for i := 0; i < n; i++ {
		var roots, others []string
		d.View(func(v db.View) {
			v.Rows("Root", func(r *db.Row) bool { roots = append(roots, string(r.UUID)); return true })
			v.Rows("Other", func(r *db.Row) bool { others = append(others, string(r.UUID)); return true })
		})
		sort.Strings(roots)
		sort.Strings(others)
		var op string
		switch k := rng.Intn(12); {
		case k <= 2 || len(roots) == 0:
			op = fmt.Sprintf(`[{"op":"insert","table":"Kid","row":{"n":%d},"uuid-name":"k"},
				{"op":"insert","table":"Root","row":{"name":"r%d","kids":["set",[["named-uuid","k"]]],"tags":["map",[["a","%d"]]],"eph":"x","real":%d.5}}]`, i, i, i, i)
		case k == 3:
			op = fmt.Sprintf(`[{"op":"insert","table":"Other","row":{"name":"o%d"}}]`, i)
		case k == 4 && len(others) > 0:
			op = fmt.Sprintf(`[{"op":"mutate","table":"Root","where":[["_uuid","==",["uuid","%s"]]],"mutations":[["weak","insert",["set",[["uuid","%s"]]]]]}]`,
				roots[rng.Intn(len(roots))], others[rng.Intn(len(others))])
		case k == 5 && len(others) > 0:
			op = fmt.Sprintf(`[{"op":"delete","table":"Other","where":[["_uuid","==",["uuid","%s"]]]}]`, others[rng.Intn(len(others))])
		case k == 6:
			op = fmt.Sprintf(`[{"op":"mutate","table":"Root","where":[["_uuid","==",["uuid","%s"]]],"mutations":[["tags","insert",["map",[["k%d","v"]]]],["tags","delete",["set",["a"]]]]}]`,
				roots[rng.Intn(len(roots))], rng.Intn(5))
		case k == 7:
			op = fmt.Sprintf(`[{"op":"update","table":"Root","where":[["_uuid","==",["uuid","%s"]]],"row":{"nums":["set",[%d,%d]],"opt":["set",[%d]],"flag":%v,"eph":"y"}}]`,
				roots[rng.Intn(len(roots))], rng.Intn(3), 3+rng.Intn(3), rng.Intn(2), rng.Intn(2) == 0)
		case k == 8:
			op = fmt.Sprintf(`[{"op":"update","table":"Root","where":[["_uuid","==",["uuid","%s"]]],"row":{"kids":["set",[]],"opt":["set",[]]}}]`,
				roots[rng.Intn(len(roots))])
		case k == 9:
			op = fmt.Sprintf(`[{"op":"delete","table":"Root","where":[["_uuid","==",["uuid","%s"]]]}]`, roots[rng.Intn(len(roots))])
		default:
			op = fmt.Sprintf(`[{"op":"update","table":"Root","where":[["_uuid","==",["uuid","%s"]]],"row":{"eph":"only ephemeral %d"}}]`,
				roots[rng.Intn(len(roots))], i)
		}
		transact(t, d, op)
	}
}

func TestCommitsSurviveReopen(t *testing.T) {
	t.Run("diffs", func(t *testing.T) { testCommitsSurviveReopen(t, Options{}) })
	t.Run("full values", func(t *testing.T) { testCommitsSurviveReopen(t, Options{NoColumnDiff: true}) })
}

func testCommitsSurviveReopen(t *testing.T, opts Options) {
	path := create(t, richSchema)
	s := open(t, path, opts)
	randomWorkload(t, s.Database(), rand.New(rand.NewSource(1)), 300)
	want := dump(s.Database())
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, path, opts)
	if got := dump(s.Database()); got != want {
		t.Fatalf("after reopen:\n%s\nwant:\n%s", got, want)
	}
	// Compaction keeps the same contents, and commits after it too.
	if err := s.Compact(); err != nil {
		t.Fatal(err)
	}
	randomWorkload(t, s.Database(), rand.New(rand.NewSource(2)), 50)
	want = dump(s.Database())
	s.Close()
	s = open(t, path, Options{})
	defer s.Close()
	if got := dump(s.Database()); got != want {
		t.Fatalf("after compaction and reopen:\n%s\nwant:\n%s", got, want)
	}
}

// checkCompactRecords requires every record body to be compact JSON (the
// records are written without re-compacting them) with the annotations.
func checkCompactRecords(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, _, err := ReadRecords(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs[1:] {
		var compact bytes.Buffer
		if err := json.Compact(&compact, r.Body); err != nil || compact.String() != string(r.Body) {
			t.Fatalf("record at %d is not compact JSON: %v %s", r.Offset, err, r.Body)
		}
		if !strings.Contains(string(r.Body), `"_date":`) {
			t.Fatalf("record at %d has no _date: %s", r.Offset, r.Body)
		}
	}
}

func TestEphemeralOnlyChangesWriteNothing(t *testing.T) {
	path := create(t, richSchema)
	s := open(t, path, Options{})
	defer s.Close()
	transact(t, s.Database(), `[{"op":"insert","table":"Root","row":{"name":"a"}}]`)
	size := s.log.Size()
	transact(t, s.Database(), `[{"op":"update","table":"Root","where":[],"row":{"eph":"changed"}}]`)
	if s.log.Size() != size {
		t.Fatalf("an ephemeral-only change wrote %d bytes", s.log.Size()-size)
	}
}

// A commit whose record cannot be written fails with an I/O error and
// changes nothing.
func TestWriteFailureFailsTheTransaction(t *testing.T) {
	path := create(t, richSchema)
	s := open(t, path, Options{})
	defer s.Close()
	transact(t, s.Database(), `[{"op":"insert","table":"Root","row":{"name":"kept"}}]`)
	before := dump(s.Database())
	readOnly, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	good := s.log.file
	s.log.file = readOnly
	s.mu.Unlock()
	r := s.Database().Transact([]json.RawMessage{json.RawMessage(`{"op":"insert","table":"Root","row":{"name":"lost"}}`)}, db.TxnEnv{})
	out, _ := json.Marshal(r.Results)
	if r.Commit != nil || !strings.Contains(string(out), `"error":"I/O error"`) {
		t.Fatalf("result %s, commit %v: want an I/O error", out, r.Commit)
	}
	if got := dump(s.Database()); got != before {
		t.Fatalf("a failed write changed the database:\n%s", got)
	}
	s.mu.Lock()
	s.log.file = good
	readOnly.Close()
	s.mu.Unlock()
	transact(t, s.Database(), `[{"op":"insert","table":"Root","row":{"name":"after"}}]`)
}

// Compactions running while other goroutines commit lose nothing: the
// records committed between the snapshot and the swap are carried over.
func TestCompactionDuringCommits(t *testing.T) {
	path := create(t, richSchema)
	s := open(t, path, Options{})
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 150; i++ {
				transact(t, s.Database(), fmt.Sprintf(`[{"op":"insert","table":"Other","row":{"name":"w%d-%d"}}]`, w, i))
			}
		}(w)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 20; i++ {
			if err := s.Compact(); err != nil {
				t.Error(err)
			}
		}
	}()
	wg.Wait()
	<-done
	want := dump(s.Database())
	s.Close()
	s = open(t, path, Options{})
	defer s.Close()
	if got := dump(s.Database()); got != want {
		t.Fatalf("rows lost across compactions: got %d lines, want %d", strings.Count(got, "\n"), strings.Count(want, "\n"))
	}
}

func TestAutomaticCompaction(t *testing.T) {
	path := create(t, richSchema)
	s := open(t, path, Options{CompactMinSize: 20 << 10, CompactGrowth: 2, CompactInterval: time.Nanosecond})
	for i := 0; i < 400; i++ {
		transact(t, s.Database(), fmt.Sprintf(`[{"op":"insert","table":"Other","row":{"name":"%d"}}]`, i))
		transact(t, s.Database(), fmt.Sprintf(`[{"op":"delete","table":"Other","where":[["name","==","%d"]]}]`, i))
	}
	want := dump(s.Database())
	s.Close() // waits for a running compaction
	f, _ := os.Open(path)
	recs, _, _ := ReadRecords(f)
	f.Close()
	if len(recs) < 2 || !strings.Contains(string(recs[1].Body), `"_comment":"compacting database online"`) {
		t.Fatalf("never compacted: %d records", len(recs))
	}
	s = open(t, path, Options{})
	defer s.Close()
	if got := dump(s.Database()); got != want {
		t.Fatalf("after automatic compactions:\n%s\nwant:\n%s", got, want)
	}
}

func TestSecondStorageIsRefused(t *testing.T) {
	path := create(t, richSchema)
	s := open(t, path, Options{})
	defer s.Close()
	if _, err := Open(path, quietLogger(), Options{}); err == nil || !strings.Contains(err.Error(), "lock") {
		t.Fatalf("second Open: %v, want a lock error", err)
	}
}

func TestClosedStorageRefusesCommits(t *testing.T) {
	path := create(t, richSchema)
	s := open(t, path, Options{})
	s.Close()
	r := s.Database().Transact([]json.RawMessage{json.RawMessage(`{"op":"insert","table":"Other","row":{"name":"x"}}`)}, db.TxnEnv{})
	if r.Commit != nil {
		t.Fatal("a closed storage accepted a commit")
	}
}

// An undecodable record ends the replay: it and what follows are dropped
// with a warning, the rest is kept.
func TestUndecodableRecordIsTruncated(t *testing.T) {
	path := create(t, richSchema)
	s := open(t, path, Options{})
	transact(t, s.Database(), `[{"op":"insert","table":"Other","row":{"name":"kept"}}]`)
	s.Close()
	l, _, err := OpenLog(path, quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	good := l.Size()
	l.Append([]byte(`{"NoSuchTable":{}}`), true)
	l.Append([]byte(`{"Other":{"5e4b8a5c-2f6b-4a5a-9a63-000000000001":{"name":"after"}}}`), true)
	l.Close()
	s = open(t, path, Options{})
	defer s.Close()
	if got := dump(s.Database()); !strings.Contains(got, `"kept"`) || strings.Contains(got, `"after"`) {
		t.Fatalf("contents %s", got)
	}
	if st, _ := os.Stat(path); st.Size() != good {
		t.Fatalf("file is %d bytes, want %d", st.Size(), good)
	}
	if copies, _ := filepath.Glob(path + ".dropped-*"); len(copies) != 1 {
		t.Fatalf("no copy of the dropped records: %v", copies)
	}
}

func TestConvert(t *testing.T) {
	path := create(t, richSchema)
	s := open(t, path, Options{})
	transact(t, s.Database(), `[{"op":"insert","table":"Root","row":{"name":"r","opt":["set",[3]],"tags":["map",[["a","b"]]]}},
		{"op":"insert","table":"Other","row":{"name":"o"}}]`)
	s.Close()
	// Version 2 drops table Other and column tags, widens opt to a set,
	// and adds a column.
	var v map[string]any
	json.Unmarshal([]byte(richSchema), &v)
	v["version"] = "2.0.0"
	tables := v["tables"].(map[string]any)
	delete(tables, "Other")
	root := tables["Root"].(map[string]any)["columns"].(map[string]any)
	delete(root, "tags")
	delete(root, "weak")
	root["opt"] = map[string]any{"type": map[string]any{"key": "integer", "min": 0, "max": "unlimited"}}
	root["added"] = map[string]any{"type": "string"}
	raw, _ := json.Marshal(v)
	newSchema, err := db.ParseSchema(raw)
	if err != nil {
		t.Fatal(err)
	}
	s = open(t, path, Options{Schema: newSchema, ConvertComment: "test upgrade"})
	got := dump(s.Database())
	s.Close()
	if !strings.Contains(got, `"opt":3`) || strings.Contains(got, "tags") || strings.Contains(got, "Other") || !strings.Contains(got, `"added":""`) {
		t.Fatalf("converted contents: %s", got)
	}
	back, err := ReadSchema(path)
	if err != nil || back.Version != "2.0.0" {
		t.Fatalf("file schema after conversion: %v %v", back, err)
	}
	if matches, _ := filepath.Glob(path + ".backup1.0.0-12345"); len(matches) != 1 {
		t.Fatalf("no backup of the original file")
	}
	// Opening again with the same schema converts nothing.
	s = open(t, path, Options{Schema: newSchema})
	defer s.Close()
	if dump(s.Database()) != got {
		t.Fatal("reopen changed the contents")
	}
}

func TestSchemasEqualIgnoresFormatting(t *testing.T) {
	a, _ := db.ParseSchema([]byte(richSchema))
	var v any
	json.Unmarshal([]byte(richSchema), &v)
	raw, _ := json.MarshalIndent(v, "", "    ")
	b, _ := db.ParseSchema(raw)
	if !SchemasEqual(a, b) {
		t.Fatal("same schema, other formatting: not equal")
	}
	v.(map[string]any)["version"] = "1.0.1"
	raw, _ = json.Marshal(v)
	c, _ := db.ParseSchema(raw)
	if SchemasEqual(a, c) {
		t.Fatal("different versions compare equal")
	}
}

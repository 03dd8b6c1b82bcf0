package storage

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"gvs/ovsdb/db"
)

// richV2 is richSchema version 2: table Other and columns tags and weak
// gone, opt widened to a set, a column added.
func richV2(t *testing.T, name string) *db.Schema {
	t.Helper()
	var v map[string]any
	json.Unmarshal([]byte(richSchema), &v)
	v["name"] = name
	v["version"] = "2.0.0"
	tables := v["tables"].(map[string]any)
	delete(tables, "Other")
	root := tables["Root"].(map[string]any)["columns"].(map[string]any)
	delete(root, "tags")
	delete(root, "weak")
	root["opt"] = map[string]any{"type": map[string]any{"key": "integer", "min": 0, "max": "unlimited"}}
	root["added"] = map[string]any{"type": "string"}
	raw, _ := json.Marshal(v)
	s, err := db.ParseSchema(raw)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Storage.Convert, the online conversion: the file holds the new schema
// and the converted data, later commits go to the converted database and
// reach the file, the old database's commits fail.
func TestStorageConvertWhileOpen(t *testing.T) {
	path := create(t, richSchema)
	s := open(t, path, Options{})
	defer s.Close()
	old := s.Database()
	transact(t, old, `[{"op":"insert","table":"Root","row":{"name":"r","opt":["set",[3]],"tags":["map",[["a","b"]]]}},
		{"op":"insert","table":"Other","row":{"name":"o"}}]`)

	if _, err := s.Convert(richV2(t, "other"), "x"); err == nil {
		t.Fatal("conversion to a schema of another name succeeded")
	}
	if back, err := ReadSchema(path); err != nil || back.Version != "1.0.0" {
		t.Fatalf("failed conversion changed the file: %v %v", back, err)
	}

	converted, err := s.Convert(richV2(t, "rich"), "converted by test")
	if err != nil {
		t.Fatal(err)
	}
	if s.Database() != converted || converted.Schema().Version != "2.0.0" {
		t.Fatal("Database() is not the converted database")
	}
	got := dump(converted)
	if !strings.Contains(got, `"opt":3`) || strings.Contains(got, "tags") || strings.Contains(got, "Other") || !strings.Contains(got, `"added":""`) {
		t.Fatalf("converted contents: %s", got)
	}
	records := fileRecords(t, path)
	if len(records) != 2 || !strings.Contains(string(records[1].Body), `"_comment":"converted by test"`) {
		t.Fatalf("file after conversion: %d records, second %s", len(records), records[1].Body)
	}

	res := old.Transact([]json.RawMessage{json.RawMessage(`{"op":"insert","table":"Root","row":{"name":"late"}}`)}, db.TxnEnv{})
	if e, ok := res.Results[len(res.Results)-1].(*db.Error); !ok || e.Name != "I/O error" {
		t.Fatalf("commit to the replaced database: %v", res.Results)
	}
	transact(t, converted, `[{"op":"insert","table":"Root","row":{"name":"after","added":"yes"}}]`)

	loaded, err := Load(path, quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	if dump(loaded) != dump(converted) || strings.Contains(dump(loaded), "late") {
		t.Fatalf("file holds\n%s\nwant\n%s", dump(loaded), dump(converted))
	}
}

// A conversion the data do not survive changes nothing.
func TestStorageConvertFailureKeepsDatabase(t *testing.T) {
	path := create(t, richSchema)
	s := open(t, path, Options{})
	defer s.Close()
	old := s.Database()
	transact(t, old, `[{"op":"insert","table":"Root","row":{"name":"r","nums":["set",[1,2,3]]}}]`)
	before, _ := os.ReadFile(path)
	var v map[string]any
	json.Unmarshal([]byte(richSchema), &v)
	root := v["tables"].(map[string]any)["Root"].(map[string]any)["columns"].(map[string]any)
	root["nums"] = map[string]any{"type": map[string]any{"key": "integer", "min": 0, "max": 2}}
	raw, _ := json.Marshal(v)
	narrow, err := db.ParseSchema(raw)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Convert(narrow, "x"); err == nil {
		t.Fatal("a set of 3 converted into a set of at most 2")
	}
	after, _ := os.ReadFile(path)
	if string(before) != string(after) || s.Database() != old {
		t.Fatal("failed conversion changed the file or the database")
	}
	transact(t, old, `[{"op":"insert","table":"Root","row":{"name":"still"}}]`)
}

func fileRecords(t *testing.T, path string) []Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	records, _, err := ReadRecords(f)
	if err != nil {
		t.Fatal(err)
	}
	return records
}

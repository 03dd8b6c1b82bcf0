package storage

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

const testSchema = `{"name":"t","version":"1.0.0","tables":{"T":{"columns":{"n":{"type":"integer"}}}}}`

func newLog(t *testing.T, bodies ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "test.db")
	var raws []json.RawMessage
	for _, b := range bodies {
		raws = append(raws, json.RawMessage(b))
	}
	if err := CreateLog(path, raws); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestAppendAndReopen(t *testing.T) {
	path := newLog(t, testSchema)
	l, recs, err := OpenLog(path, quietLogger())
	if err != nil || len(recs) != 1 {
		t.Fatalf("open: %v, %d records", err, len(recs))
	}
	for i := 0; i < 3; i++ {
		if err := l.Append([]byte(`{"T":{"00000000-0000-0000-0000-00000000000`+string(rune('1'+i))+`":{"n":1}}}`), i == 2); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	l, recs, err = OpenLog(path, quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if len(recs) != 4 {
		t.Fatalf("got %d records, want 4", len(recs))
	}
	if !strings.Contains(string(recs[3].Body), "00000000-0000-0000-0000-000000000003") {
		t.Fatalf("last record %s", recs[3].Body)
	}
}

func TestTornAndCorruptTailsAreTruncated(t *testing.T) {
	cases := map[string]func([]byte) []byte{
		"truncated body":   func(b []byte) []byte { return b[:len(b)-5] },
		"truncated header": func(b []byte) []byte { return append(b, []byte("OVSDB JSON 12")...) },
		"bit flip": func(b []byte) []byte {
			b = append([]byte(nil), b...)
			b[len(b)-3] ^= 0x04
			return b
		},
		"garbage": func(b []byte) []byte { return append(b, []byte("\x00\x00\x00garbage\n")...) },
	}
	for name, damage := range cases {
		t.Run(name, func(t *testing.T) {
			path := newLog(t, testSchema, `{"T":{"00000000-0000-0000-0000-000000000001":{"n":1}}}`)
			l, _, err := OpenLog(path, quietLogger())
			if err != nil {
				t.Fatal(err)
			}
			goodSize := l.Size()
			if err := l.Append([]byte(`{"T":{"00000000-0000-0000-0000-000000000002":{"n":2}}}`), true); err != nil {
				t.Fatal(err)
			}
			l.Close()
			data, _ := os.ReadFile(path)
			if name == "truncated header" || name == "garbage" {
				goodSize = int64(len(data))
			}
			if err := os.WriteFile(path, damage(data), 0o640); err != nil {
				t.Fatal(err)
			}
			l, recs, err := OpenLog(path, quietLogger())
			if err != nil {
				t.Fatalf("refused to open a damaged log: %v", err)
			}
			defer l.Close()
			wantRecs := 2
			if goodSize == int64(len(data)) {
				wantRecs = 3
			}
			if len(recs) != wantRecs {
				t.Fatalf("kept %d records, want %d", len(recs), wantRecs)
			}
			st, _ := os.Stat(path)
			if st.Size() != goodSize {
				t.Fatalf("file is %d bytes after open, want %d (tail truncated)", st.Size(), goodSize)
			}
			// Appending after truncation yields a clean log.
			if err := l.Append([]byte(`{"T":{}}`), true); err != nil {
				t.Fatal(err)
			}
			f, _ := os.Open(path)
			defer f.Close()
			if _, _, err := ReadRecords(f); err != nil {
				t.Fatalf("log not clean after append: %v", err)
			}
		})
	}
}

func TestSecondOpenIsRefused(t *testing.T) {
	path := newLog(t, testSchema)
	l, _, err := OpenLog(path, quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, _, err := OpenLog(path, quietLogger()); err == nil || !strings.Contains(err.Error(), "lock") {
		t.Fatalf("second open: %v, want a lock error", err)
	}
}

func TestReplaceIsAtomicAndAppendable(t *testing.T) {
	path := newLog(t, testSchema, `{"T":{}}`, `{"T":{}}`)
	l, _, err := OpenLog(path, quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Replace([]json.RawMessage{json.RawMessage(testSchema), json.RawMessage(`{"T":{"00000000-0000-0000-0000-000000000009":{"n":9}}}`)}); err != nil {
		t.Fatal(err)
	}
	if err := l.Append([]byte(`{"T":{}}`), true); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Fatalf("temporary file left behind: %v", err)
	}
	l, recs, err := OpenLog(path, quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if len(recs) != 3 || !strings.Contains(string(recs[1].Body), "000000000009") {
		t.Fatalf("records after replace: %v", recs)
	}
}

// Open vSwitch's own tool must read what we write, and we must read what it
// writes.
func TestInteroperatesWithOvsdbTool(t *testing.T) {
	tool, err := exec.LookPath("ovsdb-tool")
	if err != nil {
		t.Skip("ovsdb-tool not installed")
	}
	dir := t.TempDir()
	schemaPath := filepath.Join(dir, "t.ovsschema")
	os.WriteFile(schemaPath, []byte(testSchema), 0o644)
	theirs := filepath.Join(dir, "theirs.db")
	if out, err := exec.Command(tool, "create", theirs, schemaPath).CombinedOutput(); err != nil {
		t.Fatalf("ovsdb-tool create: %v %s", err, out)
	}
	txn := `["t",{"op":"insert","table":"T","row":{"n":42}}]`
	if out, err := exec.Command(tool, "transact", theirs, txn).CombinedOutput(); err != nil {
		t.Fatalf("ovsdb-tool transact: %v %s", err, out)
	}
	l, recs, err := OpenLog(theirs, quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || !strings.Contains(string(recs[1].Body), `"n":42`) {
		t.Fatalf("records of ovsdb-tool's file: %v", recs)
	}
	if err := l.Append([]byte(`{"T":{"4e4b8a5c-2f6b-4a5a-9a63-000000000001":{"n":7}},"_date":1700000000000,"_comment":"gvs"}`), true); err != nil {
		t.Fatal(err)
	}
	l.Close()
	out, err := exec.Command(tool, "show-log", "-m", theirs).CombinedOutput()
	if err != nil {
		t.Fatalf("ovsdb-tool show-log on our append: %v %s", err, out)
	}
	if !strings.Contains(string(out), `"gvs"`) {
		t.Fatalf("show-log does not show our record:\n%s", out)
	}
	out, err = exec.Command(tool, "query", theirs, `["t",{"op":"select","table":"T","where":[],"columns":["n"]}]`).CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte(`{"n":7}`)) || !bytes.Contains(out, []byte(`{"n":42}`)) {
		t.Fatalf("ovsdb-tool query: %v %s", err, out)
	}
}

func FuzzReadRecords(f *testing.F) {
	rec, _ := EncodeRecord([]byte(testSchema))
	f.Add(rec)
	f.Add(append(rec, []byte("OVSDB JSON 3 0000000000000000000000000000000000000000\n{}\n")...))
	f.Add([]byte("OVSDB CLUSTER 2 00\n{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, valid, _ := ReadRecords(bytes.NewReader(data))
		if valid > int64(len(data)) {
			t.Fatalf("valid offset %d past end %d", valid, len(data))
		}
		// The valid prefix must read back as exactly the same records, cleanly.
		again, v2, err := ReadRecords(bytes.NewReader(data[:valid]))
		if err != nil || v2 != valid || len(again) != len(recs) {
			t.Fatalf("prefix re-read: %v %d/%d %d/%d", err, v2, valid, len(again), len(recs))
		}
	})
}

// Damage before the last record drops the records after it too (as Open
// vSwitch does), but a copy of them is kept beside the file.
func TestDamageInTheMiddleKeepsACopy(t *testing.T) {
	path := newLog(t, testSchema, `{"T":{"00000000-0000-0000-0000-000000000001":{"n":1}}}`,
		`{"T":{"00000000-0000-0000-0000-000000000002":{"n":2}}}`, `{"T":{"00000000-0000-0000-0000-000000000003":{"n":3}}}`)
	data, _ := os.ReadFile(path)
	second := bytes.Index(data, []byte(`{"T":{"00000000-0000-0000-0000-000000000002"`))
	data[second+10] ^= 1
	os.WriteFile(path, data, 0o640)
	l, recs, err := OpenLog(path, quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if len(recs) != 2 {
		t.Fatalf("kept %d records, want 2", len(recs))
	}
	copies, _ := filepath.Glob(path + ".dropped-*")
	if len(copies) != 1 {
		t.Fatalf("no copy of the dropped records: %v", copies)
	}
	saved, _ := os.ReadFile(copies[0])
	if !bytes.Contains(saved, []byte(`"n":3`)) {
		t.Fatalf("copy lacks the last record: %q", saved)
	}
}

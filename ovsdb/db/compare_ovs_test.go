package db

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// realOVSDB runs Open vSwitch's own ovsdb-server on a private socket with
// the given schema, for comparing behaviour. Skips unless
// GVS_COMPARE_OVSDB=1 and the binaries are installed.
type realOVSDB struct {
	dir, sock string
	cmd       *exec.Cmd
}

func startRealOVSDB(t *testing.T, schema string) *realOVSDB {
	t.Helper()
	if os.Getenv("GVS_COMPARE_OVSDB") != "1" {
		t.Skip("set GVS_COMPARE_OVSDB=1 to compare with the real ovsdb-server")
	}
	if _, err := exec.LookPath("ovsdb-server"); err != nil {
		t.Skip("ovsdb-server not installed")
	}
	dir := t.TempDir()
	schemaFile := filepath.Join(dir, "s.ovsschema")
	if err := os.WriteFile(schemaFile, []byte(schema), 0o644); err != nil {
		t.Fatal(err)
	}
	dbFile := filepath.Join(dir, "db")
	if out, err := exec.Command("ovsdb-tool", "create", dbFile, schemaFile).CombinedOutput(); err != nil {
		t.Fatalf("ovsdb-tool create: %v %s", err, out)
	}
	r := &realOVSDB{dir: dir, sock: filepath.Join(dir, "sock")}
	r.cmd = exec.Command("ovsdb-server", "--remote=punix:"+r.sock, "--unixctl="+filepath.Join(dir, "ctl"),
		"--no-chdir", "--log-file="+filepath.Join(dir, "log"), dbFile)
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.cmd.Process.Kill(); r.cmd.Wait() })
	for i := 0; i < 100; i++ {
		if _, err := os.Stat(r.sock); err == nil {
			return r
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("ovsdb-server did not start")
	return nil
}

func (r *realOVSDB) transact(t *testing.T, dbName, ops string) string {
	t.Helper()
	var list []json.RawMessage
	if err := json.Unmarshal([]byte(ops), &list); err != nil {
		t.Fatal(err)
	}
	params := append([]json.RawMessage{json.RawMessage(`"` + dbName + `"`)}, list...)
	b, _ := json.Marshal(params)
	out, err := exec.Command("ovsdb-client", "transact", "unix:"+r.sock, string(b)).CombinedOutput()
	if err != nil && len(out) == 0 {
		t.Fatalf("ovsdb-client: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// normalize re-encodes JSON canonically (sorted keys), hides UUIDs and
// drops the "syntax" member of errors, an Open vSwitch extension we omit.
func normalize(s string) string { return anonymize(canonical(s)) }

// canonical re-encodes JSON with sorted keys, without "syntax" members.
func canonical(s string) string { return canonicalWith(s, false) }

// canonicalWith re-encodes JSON with sorted keys, keeping the "syntax"
// members of errors if asked to.
func canonicalWith(s string, keepSyntax bool) string {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return s
	}
	if arr, ok := v.([]any); ok {
		for _, e := range arr {
			if m, ok := e.(map[string]any); ok && !keepSyntax {
				delete(m, "syntax")
			}
		}
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return strings.TrimSpace(b.String())
}

func TestCompareWithRealOVSDB(t *testing.T) {
	r := startRealOVSDB(t, testSchema)
	for _, tc := range operationCases {
		if tc.name == "two extra members" {
			continue // Open vSwitch names whichever member its hash table yields first
		}
		// A fresh database per case: delete everything, then set up.
		r.transact(t, "T", `[{"op":"delete","table":"Root","where":[]},{"op":"delete","table":"Limited","where":[]},{"op":"delete","table":"Strict","where":[]},{"op":"delete","table":"Enum","where":[]}]`)
		r.transact(t, "T", setupRows)
		theirs := anonymize(canonicalWith(r.transact(t, "T", tc.ops), true))
		d := newTestDB(t)
		mustSucceed(t, d, setupRows)
		ours := anonymize(canonicalWith(resultsJSON(t, transact(t, d, tc.ops)), true))
		if ours != theirs {
			t.Errorf("%s:\n ovsdb-server %s\n ours         %s", tc.name, theirs, ours)
		}
	}
}

// sortRows orders the "rows" of select results, whose order Open vSwitch
// leaves to its hash tables.
func sortRows(s string) string {
	var v []any
	if json.Unmarshal([]byte(s), &v) != nil {
		return s
	}
	for _, e := range v {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		rows, ok := m["rows"].([]any)
		if !ok {
			continue
		}
		keyed := make([]string, len(rows))
		for i, r := range rows {
			keyed[i] = canonical(mustJSON(r))
		}
		sortStrings(keyed)
		m["rows"] = keyed
	}
	return canonicalWith(mustJSON(v), true)
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestDifferentialRandom runs the same generated transactions against our
// engine and Open vSwitch's ovsdb-server and compares every result.
func TestDifferentialRandom(t *testing.T) {
	data, err := os.ReadFile("/usr/share/openvswitch/vswitch.ovsschema")
	if err != nil {
		t.Skip("no vswitch schema")
	}
	differential(t, string(data), "Open_vSwitch", `[{"op":"insert","table":"Open_vSwitch","uuid":"00000000-0000-0000-0000-0000000000aa","row":{"bridges":["uuid","00000000-0000-0000-0000-000000000001"]}},
	 {"op":"insert","table":"Bridge","uuid":"00000000-0000-0000-0000-000000000001","row":{"name":"br0","ports":["set",[["uuid","00000000-0000-0000-0000-000000000002"],["uuid","00000000-0000-0000-0000-000000000003"]]],"mirrors":["uuid","00000000-0000-0000-0000-000000000006"]}},
	 {"op":"insert","table":"Port","uuid":"00000000-0000-0000-0000-000000000002","row":{"name":"br0","interfaces":["uuid","00000000-0000-0000-0000-000000000004"]}},
	 {"op":"insert","table":"Port","uuid":"00000000-0000-0000-0000-000000000003","row":{"name":"eth0","interfaces":["uuid","00000000-0000-0000-0000-000000000005"]}},
	 {"op":"insert","table":"Interface","uuid":"00000000-0000-0000-0000-000000000004","row":{"name":"br0","type":"internal"}},
	 {"op":"insert","table":"Interface","uuid":"00000000-0000-0000-0000-000000000005","row":{"name":"eth0"}},
	 {"op":"insert","table":"Mirror","uuid":"00000000-0000-0000-0000-000000000006","row":{"name":"m","select_src_port":["uuid","00000000-0000-0000-0000-000000000003"]}}]`)
}

// TestDifferentialRandomTestSchema does the same with the test schema's
// references, weak references, maxRows and indexes.
func TestDifferentialRandomTestSchema(t *testing.T) {
	differential(t, testSchema, "T", `[
	 {"op":"insert","table":"Grand","uuid":"00000000-0000-0000-0000-000000000001","row":{"n":1}},
	 {"op":"insert","table":"Kid","uuid":"00000000-0000-0000-0000-000000000002","row":{"name":"k","grand":["uuid","00000000-0000-0000-0000-000000000001"]}},
	 {"op":"insert","table":"Kid","uuid":"00000000-0000-0000-0000-000000000003","row":{"name":"l"}},
	 {"op":"insert","table":"Root","uuid":"00000000-0000-0000-0000-000000000004","row":{"name":"a","kids":["set",[["uuid","00000000-0000-0000-0000-000000000002"],["uuid","00000000-0000-0000-0000-000000000003"]]],"weak":["uuid","00000000-0000-0000-0000-000000000003"]}},
	 {"op":"insert","table":"Strict","uuid":"00000000-0000-0000-0000-000000000005","row":{"w":["uuid","00000000-0000-0000-0000-000000000002"]}},
	 {"op":"insert","table":"Limited","uuid":"00000000-0000-0000-0000-000000000006","row":{"name":"a","a":1,"b":2}}]`)
}

func differential(t *testing.T, schemaText, dbName, seed string) {
	r := startRealOVSDB(t, schemaText)
	schema, err := ParseSchema([]byte(schemaText))
	if err != nil {
		t.Fatal(err)
	}
	d := New(schema, nil)
	ours := anonymizeKeepFixed(resultsJSON(t, transact(t, d, seed)))
	theirs := anonymizeKeepFixed(r.transact(t, dbName, seed))
	if canonical(ours) != canonical(theirs) {
		t.Fatalf("seed: ours %s theirs %s", ours, theirs)
	}
	pool := map[string][]string{}
	for i := 1; i <= 12; i++ {
		u := fmt.Sprintf("00000000-0000-0000-0000-%012x", i)
		for name := range schema.Tables {
			pool[name] = append(pool[name], u)
		}
	}
	seedN, _ := strconv.Atoi(os.Getenv("GVS_COMPARE_SEED"))
	rng := rand.New(rand.NewSource(int64(seedN)))
	n := 300
	if v, err := strconv.Atoi(os.Getenv("GVS_COMPARE_N")); err == nil {
		n = v
	}
	mismatches := 0
	for i := 0; i < n && mismatches < 15; i++ {
		buf := make([]byte, 64)
		rng.Read(buf)
		g := &opGen{data: buf, schema: schema, tables: sortedKeys(schema.Tables), uuids: pool, fixedUUIDs: true}
		var ops []string
		for j, m := 0, 1+g.pick(3); j < m; j++ {
			ops = append(ops, mustJSON(g.op()))
		}
		txn := "[" + strings.Join(ops, ",") + "]"
		ours := sortRows(anonymizeKeepFixed(canonicalWith(resultsJSON(t, transact(t, d, txn)), true)))
		theirs := sortRows(anonymizeKeepFixed(canonicalWith(r.transact(t, dbName, txn), true)))
		if ours != theirs && sameButErrorDetails(ours, theirs) {
			// Which of several errors Open vSwitch reports depends on its
			// hash tables' iteration order.
			t.Logf("order-dependent error: %s\n ours   %s\n theirs %s", txn, ours, theirs)
		} else if ours != theirs {
			mismatches++
			t.Errorf("transaction %s\n ours   %s\n theirs %s", txn, ours, theirs)
		}
	}
	checkInvariants(t, d)
}

var randomUUID = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// anonymizeKeepFixed hides random UUIDs but keeps the fixed test ones
// (00000000-0000-0000-0000-...).
func anonymizeKeepFixed(s string) string {
	return randomUUID.ReplaceAllStringFunc(s, func(u string) string {
		if strings.HasPrefix(u, "00000000-0000-0000-0000-") {
			return u
		}
		return "<u>"
	})
}

// sameButErrorDetails reports whether two result arrays differ only in
// which error they report at the same position: with several errors in one
// transaction, Open vSwitch reports the one its hash tables yield first.
func sameButErrorDetails(a, b string) bool {
	var x, y []any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil || len(x) != len(y) {
		return false
	}
	for i := range x {
		mx, ok1 := x[i].(map[string]any)
		my, ok2 := y[i].(map[string]any)
		if ok1 && ok2 && mx["error"] != nil && my["error"] != nil &&
			(mx["error"] != my["error"] || mx["details"] != my["details"]) {
			continue
		}
		if mustJSON(x[i]) != mustJSON(y[i]) {
			return false
		}
	}
	return true
}

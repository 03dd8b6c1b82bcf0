package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// populate gives both servers the same small configuration.
func populate(t *testing.T, p pair) {
	t.Helper()
	for _, s := range p.both() {
		r := s.vsctl(t, "--no-wait", "init",
			"--", "add-br", "br0",
			"--", "add-port", "br0", "p1", "tag=10",
			"--", "add-bond", "br0", "bond0", "b1", "b2",
			"--", "add-br", "br1",
			"--", "set", "Bridge", "br1", "other_config:k=v", "external_ids:owner=test")
		if r.exit != 0 {
			t.Fatalf("%s: populate: %s", s.kind.name, r)
		}
	}
}

// clientCase is one ovsdb-client invocation compared between servers.
type clientCase struct {
	name    string
	opts    []string // options before the command
	command string
	args    []string // after the SERVER argument
	// unordered: rows come in an order decided by JSON object key order or
	// hashing, not by anything a client may rely on (normalisation 5).
	unordered bool
}

func TestClientCommands(t *testing.T) {
	p := startPair(t, clientPath, vsctlPath)
	populate(t, p)
	cases := []clientCase{
		{name: "list-dbs", command: "list-dbs"},
		{name: "get-schema-version", command: "get-schema-version", args: []string{"Open_vSwitch"}},
		{name: "get-schema-cksum", command: "get-schema-cksum", args: []string{"Open_vSwitch"}},
		{name: "get-schema-version-_Server", command: "get-schema-version", args: []string{"_Server"}},
		{name: "get-schema-nosuch", command: "get-schema", args: []string{"Nosuch"}},
		{name: "list-tables", command: "list-tables", args: []string{"Open_vSwitch"}, unordered: true},
		{name: "list-tables-_Server", command: "list-tables", args: []string{"_Server"}, unordered: true},
		{name: "list-columns-Bridge", command: "list-columns", args: []string{"Open_vSwitch", "Bridge"}, unordered: true},
		{name: "list-columns-nosuch", command: "list-columns", args: []string{"Open_vSwitch", "Nosuch"}},
		{name: "dump-all", command: "dump", args: []string{"Open_vSwitch"}},
		{name: "dump-table-columns", command: "dump", args: []string{"Open_vSwitch", "Bridge", "name", "other_config", "external_ids", "ports"}},
		{name: "dump-json", opts: []string{"--format=json"}, command: "dump", args: []string{"Open_vSwitch", "Port", "_uuid", "name", "tag", "interfaces"}},
		{name: "dump-bare", opts: []string{"--bare"}, command: "dump", args: []string{"Open_vSwitch", "Interface", "name"}},
		// The schema column is compared as JSON by TestClientGetSchema.
		{name: "dump-_Server", command: "dump", args: []string{"_Server", "Database", "name", "model", "connected", "leader", "cid", "sid", "index"}},
		{name: "dump-nosuch-column", command: "dump", args: []string{"Open_vSwitch", "Bridge", "nosuch"}},
		{name: "query", command: "query", args: []string{`["Open_vSwitch",{"op":"select","table":"Bridge","where":[["name","==","br1"]],"columns":["name","other_config"]}]`}},
	}
	nref, nours := newNormalizer(p.ref), newNormalizer(p.ours)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ref := p.ref.client(t, c.opts, c.command, c.args...)
			ours := p.ours.client(t, c.opts, c.command, c.args...)
			if c.unordered {
				ref.stdout, ours.stdout = sortRecords(ref.stdout, "table"), sortRecords(ours.stdout, "table")
			}
			if c.command == "query" {
				ref.stdout, ours.stdout = sortResultRows(ref.stdout), sortResultRows(ours.stdout)
			}
			compareResults(t, "ovsdb-client "+c.command+" "+strings.Join(c.args, " "), nref.result(ref), nours.result(ours))
		})
	}
}

// TestClientWait covers ovsdb-client wait, which watches the _Server
// database.
func TestClientWait(t *testing.T) {
	p := startPair(t, clientPath)
	for _, args := range [][]string{
		{"Open_vSwitch", "connected"},
		{"Open_vSwitch", "added"},
	} {
		ref, ours := p.ref.client(t, nil, "wait", args...), p.ours.client(t, nil, "wait", args...)
		compareResults(t, "ovsdb-client wait "+strings.Join(args, " "), newNormalizer(p.ref).result(ref), newNormalizer(p.ours).result(ours))
	}
	// A database that never appears: both must still be waiting when the
	// client's --timeout fires (SIGALRM, 142).
	for _, s := range p.both() {
		r := s.run(t, "", clientPath, "--timeout=1", "wait", s.remote, "Nosuch", "added")
		if r.exit != 142 {
			t.Errorf("%s: ovsdb-client --timeout=1 wait Nosuch added: exit %d, want 142\n%s", s.kind.name, r.exit, r)
		}
	}
}

// TestClientConvert converts the live database to a schema with one more
// column, as an upgrade does (needs-conversion, then convert).
func TestClientConvert(t *testing.T) {
	p := startPair(t, clientPath, vsctlPath)
	populate(t, p)
	var schema map[string]any
	if err := json.Unmarshal([]byte(mustRead(t, vswitchSchema)), &schema); err != nil {
		t.Fatal(err)
	}
	schema["version"] = "8.3.2"
	bridge := schema["tables"].(map[string]any)["Bridge"].(map[string]any)
	bridge["columns"].(map[string]any)["gvs_test"] = map[string]any{"type": map[string]any{"key": "string", "min": 0, "max": "unlimited"}}
	newSchema := filepath.Join(t.TempDir(), "new.ovsschema")
	b, _ := json.Marshal(schema)
	if err := os.WriteFile(newSchema, b, 0o644); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name, command string
		args          []string
	}{
		{"needs-conversion-same", "needs-conversion", []string{vswitchSchema}},
		{"needs-conversion-new", "needs-conversion", []string{newSchema}},
		{"convert", "convert", []string{newSchema}},
		{"version-after", "get-schema-version", []string{"Open_vSwitch"}},
		{"dump-after", "dump", []string{"Open_vSwitch", "Bridge", "name", "other_config", "gvs_test"}},
		{"needs-conversion-after", "needs-conversion", []string{newSchema}},
	}
	nref, nours := newNormalizer(p.ref), newNormalizer(p.ours)
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			ref, ours := p.ref.client(t, nil, st.command, st.args...), p.ours.client(t, nil, st.command, st.args...)
			compareResults(t, "ovsdb-client "+st.command, nref.result(ref), nours.result(ours))
		})
	}
}

func mustRead(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

package ovsdbd

import (
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"gvs/cmd/internal/daemon"
	"gvs/cmd/internal/daemontest"
	"gvs/ovsdb/storage"
)

// TestMain lets the test binary run as a minimal ovsdb-server built on Run:
// arguments DBFILE SOCKET [COMPACT-MIN-SIZE].
func TestMain(m *testing.M) {
	daemontest.MaybeRunMain(serveForTest)
	os.Exit(m.Run())
}

func serveForTest() {
	program := daemon.Program{Name: "ovsdb-server", Binary: "gvs-ovsdb-server"}
	dirs := daemon.DirsFromEnv(os.Getenv)
	d, err := daemon.Start(program, dirs, &daemon.Options{NoChdir: true, Unixctl: "none"})
	if err != nil {
		daemon.Fatal(program, "%v", err)
	}
	cfg := Config{DBFiles: []string{os.Args[1]}, Remotes: []string{"punix:" + os.Args[2]}, Commands: true}
	if len(os.Args) > 3 {
		size, err := strconv.ParseInt(os.Args[3], 10, 64)
		if err != nil {
			d.Fatal(err)
		}
		cfg.CompactMinSize = size
	}
	if err := Run(d, cfg); err != nil {
		d.Fatal(err)
	}
}

const convertSchemaV1 = `{"name":"Conv","version":"1.0.0","tables":{
 "Item":{"isRoot":true,"columns":{"name":{"type":"string"},"old":{"type":"integer"}}},
 "Gone":{"isRoot":true,"columns":{"x":{"type":"integer"}}}}}`

// convertSchemaV2 drops table Gone and column old, and adds column added.
const convertSchemaV2 = `{"name":"Conv","version":"2.0.0","tables":{
 "Item":{"isRoot":true,"columns":{"name":{"type":"string"},"added":{"type":{"key":"string","min":0,"max":"unlimited"}}}}}}`

// startServer runs the daemon on dbFile and waits until it serves.
func startServer(t *testing.T, e *daemontest.Env, dbFile string, extra ...string) (sock string, stop func()) {
	t.Helper()
	sock = e.Path("db.sock")
	os.Remove(sock)
	cmd := e.Command(append([]string{dbFile, sock}, extra...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}
	t.Cleanup(func() {
		if !stopped {
			cmd.Process.Kill()
			cmd.Wait()
		}
		if t.Failed() {
			t.Logf("server stderr:\n%s", stderr.String())
		}
	})
	daemontest.WaitFor(t, "the server's socket", func() bool { return daemontest.Exists(sock) })
	return sock, stop
}

func tool(t *testing.T, path string, args ...string) string {
	t.Helper()
	if strings.HasSuffix(path, "ovsdb-client") {
		args = append([]string{"--timeout=10"}, args...)
	}
	out, err := exec.Command(path, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", path, args, err, out)
	}
	return string(out)
}

// The "convert" method rewrites the file: after ovsdb-client convert the
// server serves the new schema, Open vSwitch's ovsdb-tool reads the new
// schema and the converted data from the file, and a restarted server
// serves them.
func TestConvertRewritesTheFile(t *testing.T) {
	const client, ovsdbTool = "/usr/bin/ovsdb-client", "/usr/bin/ovsdb-tool"
	for _, p := range []string{client, ovsdbTool} {
		if _, err := os.Stat(p); err != nil {
			t.Skip(p + " not installed")
		}
	}
	e := daemontest.NewEnv(t)
	dbFile := e.Path("conv.db")
	if err := storage.Create(dbFile, []byte(convertSchemaV1)); err != nil {
		t.Fatal(err)
	}
	newSchema := e.Path("v2.ovsschema")
	if err := os.WriteFile(newSchema, []byte(convertSchemaV2), 0o644); err != nil {
		t.Fatal(err)
	}
	sock, stop := startServer(t, e, dbFile)
	remote := "unix:" + sock
	tool(t, client, "transact", remote, `["Conv",{"op":"insert","table":"Item","row":{"name":"kept","old":7}},{"op":"insert","table":"Gone","row":{"x":1}}]`)

	if out := tool(t, client, "needs-conversion", remote, newSchema); out != "yes\n" {
		t.Fatalf("needs-conversion before: %q", out)
	}
	tool(t, client, "convert", remote, newSchema)
	if out := tool(t, client, "needs-conversion", remote, newSchema); out != "no\n" {
		t.Fatalf("needs-conversion after: %q", out)
	}
	if out := tool(t, client, "get-schema-version", remote, "Conv"); out != "2.0.0\n" {
		t.Fatalf("served version after convert: %q", out)
	}
	// The file was rewritten before the reply: read it while the server runs.
	if out := tool(t, ovsdbTool, "db-version", dbFile); out != "2.0.0\n" {
		t.Fatalf("file version after convert: %q", out)
	}
	if out := tool(t, ovsdbTool, "show-log", dbFile); !strings.Contains(out, `"converted by ovsdb-server"`) {
		t.Fatalf("show-log after convert:\n%s", out)
	}
	// Commits after the conversion reach the file too.
	tool(t, client, "transact", remote, `["Conv",{"op":"insert","table":"Item","row":{"name":"later","added":"a"}}]`)
	stop()

	sock, stop = startServer(t, e, dbFile)
	defer stop()
	remote = "unix:" + sock
	if out := tool(t, client, "get-schema-version", remote, "Conv"); out != "2.0.0\n" {
		t.Fatalf("version after restart: %q", out)
	}
	out := tool(t, client, "--format=json", "dump", remote, "Conv", "Item", "name", "added")
	var table struct {
		Data     [][]any  `json:"data"`
		Headings []string `json:"headings"`
	}
	if err := json.Unmarshal([]byte(out), &table); err != nil {
		t.Fatalf("dump: %v\n%s", err, out)
	}
	col := map[string]int{}
	for i, h := range table.Headings {
		col[h] = i
	}
	got := map[string]string{}
	for _, row := range table.Data {
		name, _ := row[col["name"]].(string)
		b, _ := json.Marshal(row[col["added"]])
		got[name] = string(b)
	}
	if len(got) != 2 || got["kept"] != `["set",[]]` || got["later"] != `"a"` {
		t.Fatalf("rows after restart: %s", out)
	}
	if out := tool(t, client, "list-tables", remote, "Conv"); strings.Contains(out, "Gone") {
		t.Fatalf("dropped table still served:\n%s", out)
	}
}

package main

import (
	"encoding/json"
	"strings"
	"syscall"
	"testing"

	"gvs/cmd/internal/daemontest"
	"gvs/ovsdb/db"
	"gvs/ovsdb/storage"
	"gvs/schema"
)

// TestUpgradesConfDB starts gvs-vswitchd on a conf.db made with an older
// Open_vSwitch schema holding a bridge: the file must be converted to the
// embedded schema with the bridge kept, a backup of the original left
// beside it as ovs-ctl names it.
func TestUpgradesConfDB(t *testing.T) {
	e := daemontest.NewEnv(t)
	var v map[string]any
	if err := json.Unmarshal(schema.VSwitch(), &v); err != nil {
		t.Fatal(err)
	}
	v["version"] = "8.2.0"
	v["cksum"] = "123 456"
	bridge := v["tables"].(map[string]any)["Bridge"].(map[string]any)["columns"].(map[string]any)
	delete(bridge, "datapath_version")
	bridge["retired"] = map[string]any{"type": "string"}
	old, _ := json.Marshal(v)
	path := e.Path("conf.db")
	if err := storage.Create(path, old); err != nil {
		t.Fatal(err)
	}
	s, err := storage.Open(path, nil, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := s.Database().Transact([]json.RawMessage{
		json.RawMessage(`{"op":"insert","table":"Bridge","row":{"name":"br0","retired":"x"},"uuid-name":"b"}`),
		json.RawMessage(`{"op":"insert","table":"Open_vSwitch","row":{"bridges":["named-uuid","b"]}}`)}, db.TxnEnv{})
	if r.Commit == nil {
		t.Fatalf("setup transaction failed: %v", r.Results)
	}
	s.Close()

	cmd := e.Command()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	daemontest.WaitFor(t, "db.sock", func() bool { return daemontest.Exists(e.Path("db.sock")) })
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()

	after, err := storage.ReadSchema(path)
	if err != nil || after.Version != "8.3.1" {
		t.Fatalf("schema after start: %v %v", after, err)
	}
	d, err := storage.Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(d.Transact([]json.RawMessage{json.RawMessage(`{"op":"select","table":"Bridge","where":[],"columns":["name"]}`)}, db.TxnEnv{}).Results)
	if !strings.Contains(string(out), `"br0"`) {
		t.Fatalf("bridge lost in conversion: %s", out)
	}
	if !daemontest.Exists(path + ".backup8.2.0-123") {
		t.Fatal("no backup conf.db.backup8.2.0-123")
	}
}

package dbfile

import (
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gvs/schema"
)

const ovsdbTool = "/usr/bin/ovsdb-tool"

func needTool(t *testing.T) {
	if _, err := os.Stat(ovsdbTool); err != nil {
		t.Skip("ovsdb-tool not installed")
	}
}

func tool(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(ovsdbTool, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("ovsdb-tool %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func schemaName(t *testing.T, raw []byte) (name, version string) {
	var s struct{ Name, Version string }
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	return s.Name, s.Version
}

func TestReadsOvsdbToolFile(t *testing.T) {
	needTool(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "conf.db")
	schemaFile := filepath.Join(dir, "vswitch.ovsschema")
	os.WriteFile(schemaFile, schema.VSwitch(), 0o644)
	tool(t, "create", db, schemaFile)
	raw, hasData, err := ReadSchema(db)
	if err != nil {
		t.Fatal(err)
	}
	if hasData {
		t.Error("fresh file reported as holding data")
	}
	if name, version := schemaName(t, raw); name != "Open_vSwitch" || version != "8.3.1" {
		t.Errorf("got %s %s", name, version)
	}

	tool(t, "transact", db, `["Open_vSwitch",{"op":"insert","table":"Open_vSwitch","row":{}}]`)
	if _, hasData, err = ReadSchema(db); err != nil || !hasData {
		t.Errorf("after a transaction: hasData %v, err %v", hasData, err)
	}
}

func TestCreateIsReadableByOvsdbTool(t *testing.T) {
	needTool(t)
	db := filepath.Join(t.TempDir(), "conf.db")
	if err := Create(db, schema.VSwitch()); err != nil {
		t.Fatal(err)
	}
	if got := tool(t, "db-name", db); got != "Open_vSwitch" {
		t.Errorf("db-name: %s", got)
	}
	if got := tool(t, "db-version", db); got != "8.3.1" {
		t.Errorf("db-version: %s", got)
	}
	if got := tool(t, "db-cksum", db); got != "3012963480 26720" {
		t.Errorf("db-cksum: %s", got)
	}
	// And ovsdb-tool can write to it.
	tool(t, "transact", db, `["Open_vSwitch",{"op":"insert","table":"Open_vSwitch","row":{}}]`)
	if err := Create(db, schema.VSwitch()); !errors.Is(err, os.ErrExist) {
		t.Errorf("Create over an existing file: %v", err)
	}
}

func TestRejectsCorruptFiles(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.db")
	if err := Create(good, []byte(`{"name":"x","version":"1.0.0","tables":{}}`)); err != nil {
		t.Fatal(err)
	}
	content, _ := os.ReadFile(good)
	cases := map[string]string{
		"empty":     "",
		"garbage":   "hello\n",
		"clustered": "CLUSTER 1 2\n{}\n",
		"checksum":  strings.Replace(string(content), `"x"`, `"y"`, 1),
		"truncated": string(content[:len(content)-10]),
		"length":    "OVSDB JSON 99999999999 0000\n",
	}
	for name, text := range cases {
		path := filepath.Join(dir, name)
		os.WriteFile(path, []byte(text), 0o644)
		if _, _, err := ReadSchema(path); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, _, err := ReadSchema(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func FuzzReadSchema(f *testing.F) {
	f.Add([]byte("OVSDB JSON 3 " + sha1Hex("{}\n") + "\n{}\n"))
	f.Add([]byte("OVSDB JSON 2 0\n{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "db")
		os.WriteFile(path, data, 0o644)
		raw, _, err := ReadSchema(path)
		if err == nil && len(raw) > len(data) {
			t.Fatalf("record longer than the file")
		}
	})
}

func sha1Hex(s string) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestSeedIsValid(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	os.WriteFile(path, []byte("OVSDB JSON 3 "+sha1Hex("{}\n")+"\n{}\n"), 0o644)
	if raw, more, err := ReadSchema(path); err != nil || more || string(raw) != "{}" {
		t.Fatalf("got %q %v %v", raw, more, err)
	}
}

package schema

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/ovn-kubernetes/libovsdb/modelgen"
	"github.com/ovn-kubernetes/libovsdb/ovsdb"
)

const installedSchema = "/usr/share/openvswitch/vswitch.ovsschema"

// TestMatchesInstalledOpenVSwitch compares our copy with the schema of the
// Open vSwitch installed on this machine, by meaning rather than bytes.
func TestMatchesInstalledOpenVSwitch(t *testing.T) {
	installed, err := os.ReadFile(installedSchema)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("%s not installed", installedSchema)
	}
	if err != nil {
		t.Fatal(err)
	}
	var ours, theirs map[string]any
	if err := json.Unmarshal(VSwitch(), &ours); err != nil {
		t.Fatalf("our schema: %v", err)
	}
	if err := json.Unmarshal(installed, &theirs); err != nil {
		t.Fatalf("installed schema: %v", err)
	}
	for _, key := range []string{"name", "version"} {
		if ours[key] != theirs[key] {
			t.Errorf("%s: ours %v, installed %v", key, ours[key], theirs[key])
		}
	}
	ourTables, _ := ours["tables"].(map[string]any)
	theirTables, _ := theirs["tables"].(map[string]any)
	if len(ourTables) == 0 || len(ourTables) != len(theirTables) {
		t.Fatalf("table count: ours %d, installed %d", len(ourTables), len(theirTables))
	}
	for name, theirTable := range theirTables {
		ourTable, ok := ourTables[name]
		if !ok {
			t.Errorf("table %s missing", name)
			continue
		}
		// Whole-table deep equality covers columns, their types, isRoot,
		// maxRows and indexes alike.
		if !reflect.DeepEqual(ourTable, theirTable) {
			t.Errorf("table %s differs from the installed schema", name)
		}
	}
}

func TestParsesWithLibovsdb(t *testing.T) {
	var s ovsdb.DatabaseSchema
	if err := json.Unmarshal(VSwitch(), &s); err != nil {
		t.Fatal(err)
	}
	if s.Name != "Open_vSwitch" || s.Version != "8.3.1" {
		t.Fatalf("got %s %s", s.Name, s.Version)
	}
	for _, table := range []string{"Open_vSwitch", "Bridge", "Port", "Interface", "Controller", "Flow_Table"} {
		if _, ok := s.Tables[table]; !ok {
			t.Errorf("table %s missing", table)
		}
	}
	if !s.Tables["Open_vSwitch"].IsRoot {
		t.Errorf("Open_vSwitch table should be a root table")
	}
	if idx := s.Tables["Bridge"].Indexes; len(idx) != 1 || len(idx[0]) != 1 || idx[0][0] != "name" {
		t.Errorf("Bridge indexes: got %v, want [[name]]", idx)
	}
}

func TestVSwitchReturnsACopy(t *testing.T) {
	a := VSwitch()
	a[0] = 'X'
	if VSwitch()[0] != '{' {
		t.Fatal("VSwitch shares its backing array with callers")
	}
}

// TestGeneratedModelsUpToDate renders the models the way `go generate` does
// and compares them with the committed files in vswitchd/.
func TestGeneratedModelsUpToDate(t *testing.T) {
	var s ovsdb.DatabaseSchema
	if err := json.Unmarshal(VSwitch(), &s); err != nil {
		t.Fatal(err)
	}
	gen, err := modelgen.NewGenerator()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{}
	for name, table := range s.Tables {
		args := modelgen.GetTableTemplateData("vswitchd", name, &table)
		src, err := gen.Format(modelgen.NewTableTemplate(), args)
		if err != nil {
			t.Fatalf("table %s: %v", name, err)
		}
		want[modelgen.FileName(name)] = src
	}
	src, err := gen.Format(modelgen.NewDBTemplate(), modelgen.GetDBTemplateData("vswitchd", s))
	if err != nil {
		t.Fatal(err)
	}
	want["model.go"] = src

	files, err := filepath.Glob(filepath.Join("vswitchd", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(want) {
		t.Errorf("vswitchd/ has %d files, modelgen makes %d: run `make generate`", len(files), len(want))
	}
	for name, src := range want {
		got, err := os.ReadFile(filepath.Join("vswitchd", name))
		if err != nil {
			t.Errorf("%v: run `make generate`", err)
			continue
		}
		if string(got) != string(src) {
			t.Errorf("vswitchd/%s is stale: run `make generate`", name)
		}
	}
}

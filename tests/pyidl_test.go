package tests

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// TestPythonIDL runs testdata/idl_check.py (the Python IDL from
// python3-openvswitch: initial sync, inserts through Transaction,
// commit_block, a verify conflict, an index error, updates seen by a
// second Idl, conditional monitoring changed with monitor_cond_change in a
// third) against both servers and compares the transcripts.
func TestPythonIDL(t *testing.T) {
	requireTools(t, systemPython)
	if out, err := exec.Command(systemPython, "-c", "import ovs.db.idl").CombinedOutput(); err != nil {
		t.Skipf("%s cannot import ovs (install python3-openvswitch): %v\n%s", systemPython, err, out)
	}
	p := startPair(t)
	script, err := filepath.Abs(filepath.Join("testdata", "idl_check.py"))
	if err != nil {
		t.Fatal(err)
	}
	var res [2]result
	for i, s := range p.both() {
		res[i] = newNormalizer(s).result(s.run(t, "", systemPython, script, s.remote, vswitchSchema))
	}
	if res[0].exit != 0 {
		t.Fatalf("the IDL script fails against Debian's server (a test bug):\n%s", res[0])
	}
	compareResults(t, "idl_check.py", res[0], res[1])
}

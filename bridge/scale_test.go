package bridge_test

import (
	"fmt"
	"testing"
	"time"
)

// TestManyPorts adds 500 ports in one ovs-vsctl transaction and reports
// how long ovs-vsctl (waiting for cur_cfg) took, then deletes them.
func TestManyPorts(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	e := newEnv(t)
	e.startReconciler()
	args := []string{"add-br", "br0"}
	for i := range 500 {
		name := fmt.Sprintf("s%d", i)
		e.dp.AddDevice(name)
		args = append(args, "--", "add-port", "br0", name)
	}
	start := time.Now()
	e.vsctl(args...)
	t.Logf("500 ports applied and reported in %v", time.Since(start))
	if n := len(e.dp.Ports()); n != 501 {
		t.Fatalf("%d ports in the datapath", n)
	}
	if got := e.get("Interface", "s499", "ofport"); got == "-1" || got == "[]" {
		t.Fatalf("s499 ofport = %s", got)
	}
	start = time.Now()
	e.vsctl("del-br", "br0")
	t.Logf("deleted in %v", time.Since(start))
	if n := len(e.dp.Ports()); n != 0 {
		t.Fatalf("%d ports left", n)
	}
}

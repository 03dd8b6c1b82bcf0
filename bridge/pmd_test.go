package bridge_test

import (
	"slices"
	"testing"
	"time"
)

// TestPMDChangeKeepsPorts: pmd-cpu-mask, pmd-maxsleep and pmd-rxq-assign
// reach the datapath without removing or re-adding a port or bridge.
func TestPMDChangeKeepsPorts(t *testing.T) {
	e := newEnv(t)
	e.startReconciler()
	e.dp.AddDevice("p1")
	e.dp.AddDevice("p2")
	e.vsctl("add-br", "br0", "--", "add-port", "br0", "p1", "--", "add-port", "br0", "p2")
	if got := e.dp.Ports(); !slices.Equal(got, []string{"br0", "p1", "p2"}) {
		t.Fatalf("ports = %v", got)
	}
	counts := func() [4]int {
		return [4]int{e.dp.CallCount("AddPort "), e.dp.CallCount("DelPort "), e.dp.CallCount("AddBridge "), e.dp.CallCount("DelBridge ")}
	}
	before := counts()
	configs := e.dp.CallCount("SetConfig ")

	e.vsctl("set", "Open_vSwitch", ".", "other_config:pmd-cpu-mask=0x6")
	if cfg, _ := e.dp.Config(); cfg.PMDCPUMask != "6" {
		t.Fatalf("pmd-cpu-mask = %q", cfg.PMDCPUMask)
	}
	e.vsctl("set", "Open_vSwitch", ".", "other_config:pmd-maxsleep=200", "other_config:pmd-rxq-assign=group")
	if cfg, _ := e.dp.Config(); cfg.PMDMaxSleep != 200*time.Microsecond || cfg.RxqAssign != "group" || cfg.PMDCPUMask != "6" {
		t.Fatalf("config = %+v", cfg)
	}
	e.vsctl("remove", "Open_vSwitch", ".", "other_config", "pmd-cpu-mask")
	if cfg, _ := e.dp.Config(); cfg.PMDCPUMask != "" {
		t.Fatalf("pmd-cpu-mask after removal = %q", cfg.PMDCPUMask)
	}
	if got := e.dp.CallCount("SetConfig ") - configs; got != 3 {
		t.Fatalf("%d SetConfig calls for 3 changes: %q", got, e.dp.Calls())
	}
	if after := counts(); after != before {
		t.Fatalf("AddPort/DelPort/AddBridge/DelBridge calls went from %v to %v: %q", before, after, e.dp.Calls())
	}
	if got := e.dp.Ports(); !slices.Equal(got, []string{"br0", "p1", "p2"}) {
		t.Fatalf("ports after PMD changes = %v", got)
	}
	for name, want := range map[string]string{"br0": "65534", "p1": "1", "p2": "2"} {
		if got := e.get("Interface", name, "ofport"); got != want {
			t.Errorf("%s ofport = %s, want %s", name, got, want)
		}
	}
}

package dpadapter

import (
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"gvs/bridge"
	"gvs/netdev"
)

// TestSetConfigKeepsPorts: a PMD change with ports present is applied to
// the running datapath; the ports (and their devices) stay.
func TestSetConfigKeepsPorts(t *testing.T) {
	needRoot(t)
	d := New(Config{PMDs: 1})
	defer d.Close()
	if err := d.SetConfig(bridge.DatapathConfig{}); err != nil {
		t.Fatal(err)
	}
	if err := d.AddBridge("gvbpc0", bridge.BridgeConfig{}); err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"gvbpc0", "gvbpc1"} {
		mac := net.HardwareAddr{0x02, 0x11, 0x22, 0x33, 0x44, byte(i)}
		if err := d.AddPort(bridge.PortSpec{Bridge: "gvbpc0", Name: name, Type: "internal", MAC: mac}); err != nil {
			t.Fatal(err)
		}
	}
	dp := d.dp
	devs := map[string]any{}
	for name, p := range d.ports {
		devs[name] = p.dev
	}
	mask, n := "1", 1
	if runtime.NumCPU() >= 2 {
		mask, n = "3", 2
	}
	cfg := bridge.DatapathConfig{PMDCPUMask: mask, PMDMaxSleep: 300 * time.Microsecond, RxqAssign: "group"}
	if err := d.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if d.dp != dp {
		t.Fatal("SetConfig replaced the datapath")
	}
	pc := dp.PMDConfig()
	if dp.NumPMDs() != n || pc.MaxSleep != cfg.PMDMaxSleep || pc.RxqAssign != "group" {
		t.Fatalf("%d PMDs, config %+v", dp.NumPMDs(), pc)
	}
	if ports := dp.Ports(); len(ports) != 2 {
		t.Fatalf("datapath ports %+v", ports)
	}
	for name, dev := range devs {
		if p := d.ports[name]; p == nil || any(p.dev) != dev {
			t.Fatalf("port %s reopened or gone", name)
		}
		if _, err := d.PortState(name); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}

	// A mask dpif refuses: reported, PMDs unpinned, ports still there.
	err := d.SetConfig(bridge.DatapathConfig{PMDCPUMask: "zz", RxqAssign: "roundrobin"})
	if err == nil || !strings.Contains(err.Error(), "PMD threads are not pinned") {
		t.Fatalf("bad mask: %v", err)
	}
	if pc := dp.PMDConfig(); pc.CPUMask != "" || pc.RxqAssign != "roundrobin" || d.dp != dp || len(dp.Ports()) != 2 {
		t.Fatalf("after a bad mask: %+v", pc)
	}
	for _, s := range dp.PMDStats() {
		if s.CPU != -1 {
			t.Fatalf("PMD %d pinned to %d after a bad mask", s.PMD, s.CPU)
		}
	}
}

// TestSetConfigBudgetOnly: a new gvs-rx-ring-budget is applied to the
// budget every system port reserves from, without a PMD switch-over.
func TestSetConfigBudgetOnly(t *testing.T) {
	needRoot(t)
	d := New(Config{PMDs: 1})
	defer d.Close()
	cfg := bridge.DatapathConfig{PMDMaxSleep: 300 * time.Microsecond}
	if err := d.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	dp := d.dp
	time.Sleep(20 * time.Millisecond) // the PMD iterates
	retired := dp.RetiredPMDStats().Iterations
	cfg.RxRingBudget = 96 << 20
	if err := d.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if d.rings.Limit() != 96<<20 {
		t.Fatalf("budget %d after SetConfig, want %d", d.rings.Limit(), 96<<20)
	}
	if d.dp != dp || dp.RetiredPMDStats().Iterations != retired {
		t.Fatalf("a budget change replaced the PMDs (retired iterations %d -> %d)", retired, dp.RetiredPMDStats().Iterations)
	}
	cfg.RxRingBudget = 0
	if err := d.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if d.rings.Limit() != netdev.DefaultRxRingBudget() {
		t.Fatalf("budget %d after unsetting, want the default %d", d.rings.Limit(), netdev.DefaultRxRingBudget())
	}
	// A PMD change still switches over.
	cfg.PMDMaxSleep = 400 * time.Microsecond
	if err := d.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if dp.PMDConfig().MaxSleep != cfg.PMDMaxSleep {
		t.Fatalf("PMD change not applied: %+v", dp.PMDConfig())
	}
}

package main

import (
	"strings"
	"testing"

	"gvs/bench/report"
	"gvs/bench/setups"
)

// Every figure id is unique and every target refers to a figure and
// setups that a full session measures.
func TestPlanCoversTargets(t *testing.T) {
	for _, quick := range []bool{false, true} {
		ids := map[string]bool{}
		for _, tst := range newConfig(quick, 0).plan() {
			for _, f := range tst.figures {
				if ids[f.ID] {
					t.Errorf("quick=%v: figure %s twice", quick, f.ID)
				}
				ids[f.ID] = true
			}
		}
		names := map[string]bool{}
		for _, s := range setups.All(setups.Env{}) {
			names[s.Name()] = true
		}
		for _, tg := range report.DatapathTargets() {
			if !ids[tg.Figure] {
				t.Errorf("quick=%v: target %q uses figure %s, not in the plan", quick, tg.Text, tg.Figure)
			}
			if !names[tg.Setup] || (tg.Ref != "" && !names[tg.Ref]) {
				t.Errorf("target %q names an unknown setup", tg.Text)
			}
		}
	}
}

func TestConfigRuns(t *testing.T) {
	if c := newConfig(false, 1); c.runs < 3 {
		t.Errorf("a full session runs %d times, want at least 3", c.runs)
	}
	if c := newConfig(true, 0); c.runs != 1 {
		t.Errorf("a quick session runs %d times, want 1", c.runs)
	}
}

func TestSelectSetups(t *testing.T) {
	all := setups.All(setups.Env{})
	got, err := selectSetups(all, "ovs-afxdp,direct,ovs-afxdp")
	if err != nil || len(got) != 2 || got[0].Name() != "direct" || got[1].Name() != "ovs-afxdp" {
		t.Errorf("selectSetups = %v, %v; want direct, ovs-afxdp in the session's order", got, err)
	}
	if got, err := selectSetups(all, ""); err != nil || len(got) != len(all) {
		t.Error("no filter should select every setup")
	}
	if _, err := selectSetups(all, "direct,bridge"); err == nil || !strings.Contains(err.Error(), `unknown setup "bridge"`) || !strings.Contains(err.Error(), "linux-bridge") {
		t.Errorf("an unknown name: error %v, want one naming it and the known setups", err)
	}
}

// The full session measures what the benchmark issue asks for: TCP with 1
// and 4 streams, UDP of both sizes at 1, 2 and 4 Gbit/s and unlimited,
// each with its loss split between the switch and the receiving socket,
// and CPU per Gbit.
func TestFullPlanFigures(t *testing.T) {
	ids := map[string]bool{}
	for _, tst := range newConfig(false, 0).plan() {
		for _, f := range tst.figures {
			ids[f.ID] = true
		}
	}
	want := []string{"tcp-1", "tcp-4", "tcp-1-cpu", "tcp-4-cpu", "udp-1400-max-cpu", "ping", "rr-udp", "rr-tcp", "flows-20k-loss", "flows-max"}
	for _, size := range []string{"8k", "1400"} {
		for _, rate := range []string{"1g", "2g", "4g", "max"} {
			id := "udp-" + size + "-" + rate
			want = append(want, id, id+"-loss", id+"-rcvloss")
		}
	}
	for _, id := range want {
		if !ids[id] {
			t.Errorf("full plan lacks figure %s", id)
		}
	}
}

func TestParts(t *testing.T) {
	o, err := parseOptions([]string{"-only", "scale", "-scale-ports", "50"})
	if err != nil || !o.parts["scale"] || o.parts["datapath"] || o.parts["ovsdb"] {
		t.Fatalf("-only scale: %v, %v", o.parts, err)
	}
	c, err := scaleConfig(o)
	if err != nil || c.Ports != 50 || c.Bulk != 50 || c.Runs != 3 || c.RSSLimit <= 0 {
		t.Errorf("-scale-ports 50: %+v, %v", c, err)
	}
	o, err = parseOptions([]string{"-no-ovsdb"})
	if err != nil || !o.parts["datapath"] || !o.parts["scale"] || o.parts["ovsdb"] {
		t.Errorf("default parts with -no-ovsdb: %v, %v", o.parts, err)
	}
	if _, err := parseOptions([]string{"-only", "datapath,bogus"}); err == nil {
		t.Error("an unknown part was accepted")
	}
	o, _ = parseOptions([]string{"-quick", "-scale-bulk", "500"})
	if _, err := scaleConfig(o); err == nil {
		t.Error("-scale-bulk above -scale-ports was accepted")
	}
}

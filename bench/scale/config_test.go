package scale

import (
	"strings"
	"testing"

	"gvs/bench/report"
)

// Every figure id is unique, and every target names figures this
// configuration produces, for the full, quick and odd shapes.
func TestFiguresCoverTargets(t *testing.T) {
	for _, c := range []Config{DefaultConfig(false), DefaultConfig(true), {Ports: 20, Bulk: 20, Runs: 1}, {Ports: 5, Bulk: 2, Runs: 1}} {
		ids := map[string]bool{}
		for _, f := range c.Figures() {
			if ids[f.ID] {
				t.Errorf("%d ports: figure %s twice", c.Ports, f.ID)
			}
			ids[f.ID] = true
		}
		for _, tg := range c.Targets() {
			for _, id := range []string{tg.Figure, tg.RefFigure, tg.Plus} {
				if id != "" && !ids[id] {
					t.Errorf("%d ports: target %q uses figure %s, not produced", c.Ports, tg.Text, id)
				}
			}
			if tg.Setup != GVSName || (tg.Ref != "" && tg.Ref != OVSName) {
				t.Errorf("target %q compares %s with %s", tg.Text, tg.Setup, tg.Ref)
			}
		}
	}
	full := DefaultConfig(false)
	if full.Ports != 1000 || full.Bulk != 200 || full.Validate() != nil || DefaultConfig(true).Validate() != nil {
		t.Errorf("defaults: %+v", full)
	}
	var flat report.Target
	for _, tg := range full.Targets() {
		if strings.Contains(tg.Text, "add-port") && tg.RefFigure != "" && !strings.Contains(tg.Text, "own share") {
			flat = tg
		}
	}
	if flat.Figure != FigAddAt(1000) || flat.RefFigure != FigAddAt(10) || flat.Factor != 1.5 || !flat.AtMost {
		t.Errorf("the flat-latency target is %+v", flat)
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []Config{{Ports: 0, Bulk: 1, Runs: 1}, {Ports: 10, Bulk: 11, Runs: 1}, {Ports: 10, Bulk: 0, Runs: 1}, {Ports: 10, Bulk: 5, Runs: 0}} {
		if c.Validate() == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

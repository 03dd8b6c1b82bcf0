package main

import (
	"testing"
	"time"

	"gvs/bench/probe"
	"gvs/bench/report"
	"gvs/bench/setups"
	"gvs/bench/topo"
)

// Every OpenFlow target names a figure the OpenFlow plan (or the flow
// table test) yields and setups the part runs.
func TestOpenFlowPlanCoversTargets(t *testing.T) {
	for _, quick := range []bool{false, true} {
		ids := map[string]bool{}
		for _, tst := range openFlowPlan(newConfig(quick, 0)) {
			for _, f := range tst.figures {
				if ids[f.ID] {
					t.Errorf("quick=%v: figure %s twice", quick, f.ID)
				}
				ids[f.ID] = true
			}
		}
		names := map[string]bool{}
		for _, s := range setups.OpenFlowSetups(setups.Env{}) {
			names[s.Name()] = true
		}
		for _, tg := range report.OpenFlowTargets() {
			if !ids[tg.Figure] {
				t.Errorf("quick=%v: target %q uses figure %s, not in the plan", quick, tg.Text, tg.Figure)
			}
			if !names[tg.Setup] || !names[tg.Ref] {
				t.Errorf("target %q names a setup the part does not run", tg.Text)
			}
		}
	}
	ids := map[string]bool{}
	for _, f := range flowTableFigures(100) {
		ids[f.ID] = true
	}
	names := map[string]bool{}
	for _, s := range setups.FlowTableSwitches(setups.Env{}) {
		names[s.Name()] = true
	}
	for _, tg := range report.FlowTableTargets(100) {
		if !ids[tg.Figure] || !names[tg.Setup] || !names[tg.Ref] {
			t.Errorf("flow table target %q: unknown figure or setup", tg.Text)
		}
	}
}

// A prefixed test renames its figures and the values it yields alike.
func TestPrefixed(t *testing.T) {
	base := test{id: "x", figures: []report.Figure{{ID: "x"}, {ID: "x-cpu"}},
		run: func(*runner) (map[string]float64, error) { return map[string]float64{"x": 1, "x-cpu": 2}, nil }}
	p := prefixed(base, "of-")
	if p.id != "of-x" || p.figures[0].ID != "of-x" || p.figures[1].ID != "of-x-cpu" || base.figures[0].ID != "x" {
		t.Errorf("ids: %s %v (base %v)", p.id, p.figures, base.figures)
	}
	vals, err := p.run(nil)
	if err != nil || vals["of-x"] != 1 || vals["of-x-cpu"] != 2 || len(vals) != 2 {
		t.Errorf("values: %v %v", vals, err)
	}
}

func TestWithoutOpenFlowNames(t *testing.T) {
	of := setups.OpenFlowSetups(setups.Env{})
	for _, c := range []struct{ in, want string }{
		{"gvs-system,gvs-system-ovn", "gvs-system"},
		{"gvs-system-ovn,ovs-netdev-tso-bigbuf-ovn", noSetup},
		{"direct,ovs-netdev", "direct,ovs-netdev"},
	} {
		if got := withoutNames(c.in, of); got != c.want {
			t.Errorf("withoutNames(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	all := setups.All(setups.Env{})
	if got, err := selectSetups(all, noSetup); err != nil || len(got) != 0 {
		t.Errorf("noSetup selects %d setups, %v", len(got), err)
	}
}

func TestParsePartsOpenFlow(t *testing.T) {
	parts, err := parseParts("openflow")
	if err != nil || !parts["openflow"] || parts["datapath"] {
		t.Errorf("got %v, %v", parts, err)
	}
	if all, _ := parseParts(""); !all["openflow"] {
		t.Error("the default session leaves out openflow")
	}
}

// The processes of one sender walk disjoint flows; the rate is split
// exactly; the next measurement starts after every flow used.
func TestFlowJobs(t *testing.T) {
	senders := topo.New().Senders[:2]
	jobs := flowJobs(senders, 2, 1003, time.Second, 500)
	if len(jobs) != 4 {
		t.Fatalf("%d jobs", len(jobs))
	}
	total := 0
	for _, j := range jobs {
		total += j.rate
	}
	if total != 1003 {
		t.Errorf("shares add up to %d", total)
	}
	for _, pair := range [][2]int{{0, 1}, {2, 3}} {
		a, b := jobs[pair[0]], jobs[pair[1]]
		if a.sender.NS != b.sender.NS || a.first+a.rate > b.first {
			t.Errorf("jobs %v and %v of one sender overlap", a, b)
		}
	}
	results := []probe.FlowSendResult{{Sent: jobs[0].rate}, {Sent: jobs[1].rate}, {Sent: jobs[2].rate}, {Sent: jobs[3].rate}}
	if next := nextFlowIndex(jobs, results); next != jobs[1].first+jobs[1].rate {
		t.Errorf("next index %d", next)
	}
}

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"gvs/bench/measure"
	"gvs/bench/openflow"
	"gvs/bench/report"
	"gvs/bench/setups"
)

// The OpenFlow part (-only openflow): TCP and new flows through the OVN
// two-port pipeline and through NORMAL, for gvs and the best-tuned Open
// vSwitch; then 100,000 flows loaded with ovs-ofctl add-flows, plain and
// as one bundle, into each switch with no traffic, with the switch's RSS
// before and after.

// openFlowBudget bounds the traffic half of the OpenFlow part: no new run
// of the setups starts after it.
const openFlowBudget = 12 * time.Minute

// openFlowSenderProcs is how many sender processes the client runs in the
// OpenFlow part's new-flow test: one process of the probe tops out near
// the rates at which the switches start to lose.
const openFlowSenderProcs = 2

// defaultTableFlows is the size of the flow tables loaded.
const defaultTableFlows = 100000

// openFlowPlan is the traffic tests of the OpenFlow part: TCP with 1 and 4
// streams, and new flows from the client alone (the only sender the OVN
// pipeline has a logical port for), under IDs prefixed "of-".
func openFlowPlan(c config) []test {
	var tests []test
	for _, streams := range c.tcpStreams {
		tests = append(tests, prefixed(tcpTest(c, streams), "of-"))
	}
	if len(c.tcpStreams) == 1 {
		tests = append(tests, prefixed(tcpTest(c, 4), "of-"))
	}
	return append(tests, prefixed(flowTest(c, 1), "of-"))
}

// runOpenFlowTraffic measures the OpenFlow setups, interleaved run by run,
// into a section of its own.
func (r *runner) runOpenFlowTraffic(all []setups.Setup) *report.Section {
	r.sec = &report.Section{Title: "OpenFlow: the OVN two-port pipeline vs NORMAL"}
	r.deadline = time.Now().Add(openFlowBudget)
	r.maxSenders, r.procsPerSender = 1, openFlowSenderProcs
	defer func() { r.maxSenders, r.procsPerSender = 0, 0 }()
	r.runDatapath(all, openFlowPlan(r.cfg))
	return r.sec
}

// flowTableFigures are the figures of the flow-table test.
func flowTableFigures(n int) []report.Figure {
	add := fmt.Sprintf("ovs-ofctl add-flows, %d flows", n)
	bundle := fmt.Sprintf("ovs-ofctl --bundle add-flows, %d flows", n)
	return []report.Figure{
		{ID: "ft-add-time", Test: add, Label: "wall time", Unit: "s"},
		{ID: "ft-add-rss", Test: add, Label: "RSS after", Unit: "MB"},
		{ID: "ft-add-perrule", Test: add, Label: "RSS growth per rule", Unit: "bytes"},
		{ID: "ft-bundle-time", Test: bundle, Label: "wall time", Unit: "s"},
		{ID: "ft-bundle-rss", Test: bundle, Label: "RSS after", Unit: "MB"},
		{ID: "ft-bundle-perrule", Test: bundle, Label: "RSS growth per rule", Unit: "bytes"},
		{ID: "ft-rss-empty", Test: "one empty OpenFlow bridge", Label: "RSS", Unit: "MB"},
	}
}

// runFlowTables loads a generated table of n flows into each switch, a
// fresh switch for every load, plain and as a bundle, runs times with the
// switches interleaved; ns is where the switches run (no traffic).
func (r *runner) runFlowTables(switches []setups.FlowTableSwitch, ns string, n, runs int) *report.Section {
	sec := &report.Section{Title: fmt.Sprintf("OpenFlow: loading %d flows with ovs-ofctl", n), Figures: flowTableFigures(n)}
	skipped := map[string]string{}
	failed := map[string]string{}
	measured := map[string]bool{}
	defer func() {
		for _, s := range switches {
			info := report.SetupInfo{Name: s.Name(), Kind: s.Kind(), Description: s.Description(), Status: report.StatusMeasured}
			switch {
			case skipped[s.Name()] != "":
				info.Status, info.Reason = report.StatusSkipped, skipped[s.Name()]
			case !measured[s.Name()] && failed[s.Name()] != "":
				info.Status, info.Reason = report.StatusFailed, failed[s.Name()]
			case !measured[s.Name()]:
				info.Status, info.Reason = report.StatusSkipped, "not run (interrupted)"
			}
			sec.Setups = append(sec.Setups, info)
		}
		sec.Summarize()
	}()
	for _, s := range switches {
		if ok, why := s.Available(); !ok {
			skipped[s.Name()] = why
		}
	}
	dir, err := os.MkdirTemp("", "gvs-bench-flows")
	if err != nil {
		r.prog.logf("flow tables: %v", err)
		return sec
	}
	defer os.RemoveAll(dir)
	var buf bytes.Buffer
	if err := openflow.Generate(&buf, n); err != nil {
		r.prog.logf("flow tables: %v", err)
		return sec
	}
	file := filepath.Join(dir, "flows")
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		r.prog.logf("flow tables: %v", err)
		return sec
	}
	for run := 1; run <= runs && r.ctx.Err() == nil; run++ {
		for _, mode := range []string{"add", "bundle"} {
			for _, s := range switches {
				if skipped[s.Name()] != "" || r.ctx.Err() != nil {
					continue
				}
				r.prog.setStage(run, s.Name(), "flow table "+mode)
				vals, err := loadFlowTable(r.ctx, s, ns, file, n, mode == "bundle")
				if reason, ok := setups.IsSkip(err); ok {
					skipped[s.Name()] = reason
					r.prog.logf("%s: skipped: %s", s.Name(), reason)
					continue
				}
				if err != nil {
					failed[s.Name()] = err.Error()
					r.prog.logf("%s: flow table %s: %v", s.Name(), mode, err)
					sec.AddError("ft-"+mode+"-time", s.Name(), err.Error())
					continue
				}
				measured[s.Name()] = true
				for id, v := range vals {
					sec.Add(id, s.Name(), report.Sample{Run: run, Value: v})
				}
			}
		}
	}
	return sec
}

// loadSettle is how long a switch sits with its empty bridge before its
// RSS is read, and after loading before the RSS is read again.
const loadSettle = time.Second

// loadFlowTable starts s with an empty OpenFlow bridge, loads file (n
// flows) with one ovs-ofctl add-flows (--bundle when bundle), checks that
// the switch holds n flows, and stops it.
func loadFlowTable(ctx context.Context, s setups.FlowTableSwitch, ns, file string, n int, bundle bool) (map[string]float64, error) {
	defer s.Stop()
	if err := s.StartOpenFlowBridge(ctx, ns); err != nil {
		return nil, err
	}
	time.Sleep(loadSettle)
	before, err := measure.RSSBytes(s.PIDs())
	if err != nil {
		return nil, err
	}
	var opts []string
	mode := "add"
	if bundle {
		opts, mode = []string{"--bundle"}, "bundle"
	}
	start := time.Now()
	if _, err := s.OfctlWith(ctx, opts, "add-flows", file); err != nil {
		if s.Kind() == setups.KindGVS {
			return nil, setups.Skip("gvs-vswitchd does not take the flows yet: %v", err)
		}
		return nil, err
	}
	elapsed := time.Since(start).Seconds()
	out, err := s.OfctlWith(ctx, nil, "dump-aggregate")
	if err != nil {
		return nil, err
	}
	count, err := openflow.ParseFlowCount(out)
	if err != nil {
		return nil, err
	}
	if count != n {
		return nil, fmt.Errorf("the switch holds %d flows after loading %d", count, n)
	}
	time.Sleep(loadSettle)
	after, err := measure.RSSBytes(s.PIDs())
	if err != nil {
		return nil, err
	}
	return map[string]float64{
		"ft-" + mode + "-time":    elapsed,
		"ft-" + mode + "-rss":     float64(after) / 1e6,
		"ft-" + mode + "-perrule": openflow.MemoryPerRule(before, after, n),
		"ft-rss-empty":            float64(before) / 1e6,
	}, nil
}

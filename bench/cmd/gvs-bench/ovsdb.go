package main

import (
	"path/filepath"

	"gvs/bench/ovsdbbench"
	"gvs/bench/report"
)

// runOVSDB measures Debian's ovsdb-server and gvs-ovsdb-server, each run
// on a fresh database, interleaved.
func (r *runner) runOVSDB(binDir string) {
	servers := []ovsdbbench.Server{
		{Name: "debian-ovsdb-server", Binary: ovsdbbench.DebianServer},
		{Name: "gvs-ovsdb-server", Binary: filepath.Join(binDir, "gvs-ovsdb-server")},
	}
	r.sec.Figures = []report.Figure{
		{ID: "ovsdb-txn", Test: "ovs-vsctl-like add/del-port transactions, back to back", Label: "rate", Unit: "transactions/s", Higher: true},
		{ID: "ovsdb-monitor", Test: "Monitor update after a transaction", Label: "median latency", Unit: "µs"},
	}
	available := make([]bool, len(servers))
	failures := make([]string, len(servers))
	for i, s := range servers {
		ok, why := s.Available()
		available[i] = ok
		info := report.SetupInfo{Name: s.Name, Kind: "server", Description: describeBinary(s.Binary, binDir) + ", fresh database from ovsdb-tool create, unix socket", Status: report.StatusMeasured}
		if !ok {
			info.Status, info.Reason = report.StatusSkipped, why
		}
		r.sec.Setups = append(r.sec.Setups, info)
	}
	for run := 1; run <= r.cfg.runs && r.ctx.Err() == nil; run++ {
		for i, s := range servers {
			if !available[i] || r.ctx.Err() != nil {
				continue
			}
			r.prog.setStage(run, s.Name, "ovsdb")
			res, err := ovsdbbench.Measure(r.ctx, s, r.cfg.dbDuration, r.cfg.dbUpdates)
			if err != nil {
				failures[i] = err.Error()
				r.prog.logf("%s: %v", s.Name, err)
				continue
			}
			r.sec.Add("ovsdb-txn", s.Name, report.Sample{Run: run, Value: res.TxnPerSecond})
			r.sec.Add("ovsdb-monitor", s.Name, report.Sample{Run: run, Value: res.MonitorLatencyUs})
		}
	}
	r.sec.Summarize()
	for i := range servers {
		if _, ok := r.sec.Value("ovsdb-txn", servers[i].Name); !ok && available[i] && failures[i] != "" {
			r.sec.Setups[i].Status, r.sec.Setups[i].Reason = report.StatusFailed, failures[i]
		}
	}
}

// describeBinary names gvs's own binaries relative to the repository
// (bin/...), so the page does not carry this machine's paths.
func describeBinary(path, binDir string) string {
	if filepath.Dir(path) == binDir {
		return filepath.Join("bin", filepath.Base(path))
	}
	return path
}

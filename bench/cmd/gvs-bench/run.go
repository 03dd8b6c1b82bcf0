package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"gvs/bench/measure"
	"gvs/bench/report"
	"gvs/bench/setups"
	"gvs/bench/topo"
)

// startLimit bounds a setup's start, ping check included.
const startLimit = 60 * time.Second

// runner measures one setup at a time on the session's topology.
type runner struct {
	ctx      context.Context
	self     string
	topo     *topo.Topo
	cfg      config
	sec      *report.Section
	prog     *progress
	busyCPU  float64       // CPUs used by other processes that make a run "busy"
	deadline time.Time     // no new setup run starts after it
	perTest  time.Duration // average planned duration of a test
	repeat   bool          // repeat busy runs at all (not with -quick)

	setup     setups.Setup // the setup being measured
	flowIndex int          // next new-flow index, so flows never repeat
	// maxSenders limits the new-flow test's senders (0: all);
	// procsPerSender is how many sender processes each runs (0: one).
	maxSenders, procsPerSender int
}

// setupState is what the session learned about one setup.
type setupState struct {
	setup     setups.Setup
	skipped   string
	succeeded int
	lastErr   error
}

// runDatapath measures every available setup, interleaved run by run.
func (r *runner) runDatapath(all []setups.Setup, tests []test) {
	r.prog.done = 0
	for _, t := range tests {
		r.sec.Figures = append(r.sec.Figures, t.figures...)
	}
	states := make([]*setupState, len(all))
	active := 0
	for i, s := range all {
		states[i] = &setupState{setup: s}
		if ok, why := s.Available(); !ok {
			states[i].skipped = why
		} else {
			active++
		}
	}
	var perRun time.Duration
	for _, t := range tests {
		perRun += t.cost
	}
	r.prog.total = r.cfg.runs * active * len(tests)
	r.prog.estimate = time.Duration(r.cfg.runs*active) * (perRun + 3*time.Second)
	r.perTest = perRun / time.Duration(max(1, len(tests)))
	outOfTime := false
	for run := 1; run <= r.cfg.runs && r.ctx.Err() == nil && !outOfTime; run++ {
		for _, st := range states {
			if st.skipped != "" || r.ctx.Err() != nil {
				continue
			}
			if run > 1 && time.Now().After(r.deadline) {
				r.prog.logf("time budget spent: run %d stops before %s", run, st.setup.Name())
				outOfTime = true
				break
			}
			r.measureSetup(st, run, tests)
		}
	}
	for _, st := range states {
		info := report.SetupInfo{Name: st.setup.Name(), Kind: st.setup.Kind(), Description: st.setup.Description(), Status: report.StatusMeasured}
		switch {
		case st.skipped != "":
			info.Status, info.Reason = report.StatusSkipped, st.skipped
		case st.succeeded == 0 && st.lastErr != nil:
			info.Status, info.Reason = report.StatusFailed, st.lastErr.Error()
		case st.succeeded == 0:
			info.Status, info.Reason = report.StatusSkipped, "not run (interrupted or out of time)"
		}
		r.sec.Setups = append(r.sec.Setups, info)
	}
	r.sec.Summarize()
}

func (r *runner) measureSetup(st *setupState, run int, tests []test) {
	s := st.setup
	r.setup = s
	r.prog.setStage(run, s.Name(), "start")
	ctx, cancel := context.WithTimeout(r.ctx, startLimit)
	err := s.Start(ctx, r.topo)
	cancel()
	defer func() {
		if err := s.Stop(); err != nil {
			r.prog.logf("%s: stop: %v", s.Name(), err)
		}
	}()
	if err != nil {
		if reason, ok := setups.IsSkip(err); ok {
			st.skipped = reason
			r.prog.total -= (r.cfg.runs - run) * len(tests) // not tried again
			r.prog.logf("%s: skipped: %s", s.Name(), reason)
		} else {
			st.lastErr = err
			r.prog.logf("%s: run %d: start failed: %v", s.Name(), run, err)
		}
		r.prog.done += len(tests)
		return
	}
	st.succeeded++
	for _, t := range tests {
		if r.ctx.Err() != nil {
			return
		}
		r.prog.setStage(run, s.Name(), t.id)
		r.measureTest(t, run)
		r.prog.done++
	}
}

// measureTest runs one test, repeating it once when the machine was busy
// with other work meanwhile (if the time budget allows).
func (r *runner) measureTest(t test, run int) {
	self := os.Getpid()
	for attempt := 0; ; attempt++ {
		before := measure.TakeSnapshot()
		start := time.Now()
		vals, err := t.run(r)
		elapsed := time.Since(start).Seconds()
		outside := measure.OutsideCPU(before, measure.TakeSnapshot(), self) / max(elapsed, 0.001)
		busy := outside > r.busyCPU
		if err != nil {
			if r.ctx.Err() == nil {
				r.prog.logf("%s: %s: %v", r.setup.Name(), t.id, err)
				r.sec.AddError(t.figures[0].ID, r.setup.Name(), err.Error())
			}
			return
		}
		if busy && r.repeat && attempt == 0 && !t.noRepeat && r.canRepeat(t) {
			r.prog.note(fmt.Sprintf("busy (%.2f CPUs from elsewhere): repeating", outside))
			continue
		}
		for _, f := range t.figures {
			if v, ok := vals[f.ID]; ok {
				r.sec.Add(f.ID, r.setup.Name(), report.Sample{Run: run, Value: v, Busy: busy, OutsideCPU: round2(outside), Repeated: attempt > 0})
			}
		}
		return
	}
}

func round2(v float64) float64 { return float64(int(v*100+0.5)) / 100 }

// canRepeat reports whether repeating t still leaves time for every test
// not run yet before the deadline.
func (r *runner) canRepeat(t test) bool {
	perTest := r.perTest
	if r.prog.done > 0 {
		// What tests really took so far, set-up time included.
		perTest = max(perTest, time.Since(r.prog.start)/time.Duration(r.prog.done))
	}
	remaining := time.Duration(r.prog.total-r.prog.done) * perTest
	return time.Now().Add(remaining + t.cost).Before(r.deadline)
}

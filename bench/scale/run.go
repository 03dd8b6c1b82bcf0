package scale

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"gvs/bench/measure"
	"gvs/bench/report"
	"gvs/bench/setups"
)

// PortNamer names the test's ports (topo.Ports does).
type PortNamer interface {
	Port(i int) string
}

// Limits of the steps; generous, since a slow switch is a result, not an
// error, up to these.
const (
	startLimit       = 2 * time.Minute
	vsctlTimeout     = "--timeout=300" // ovs-vsctl's own wait for cur_cfg
	bulkCheckLimit   = time.Minute
	restartLimit     = 5 * time.Minute
	silenceWait      = time.Second
	rssCheckInterval = 20  // calls between two looks at the switch's RSS
	progressEvery    = 250 // calls between two progress lines of a sweep
)

// Runner runs the scale test on one topology. Fill the exported fields,
// then call Run once.
type Runner struct {
	Ctx      context.Context
	Cfg      Config
	SwitchNS string    // namespace the switches run in, holding the ports
	Sink     string    // the sink's port, on the bridge from the start
	Ports    PortNamer // the test's ports, 0..Cfg.Ports-1
	Check    Checker
	// BusyCPU is the CPU use of processes outside the benchmark that
	// flags a measurement as taken on a busy machine.
	BusyCPU float64
	Logf    func(format string, args ...any)
	Stage   func(run int, setup, step string)

	sec      *report.Section
	failures map[string]int  // ports failing a forwarding check, per setup
	checked  map[string]bool // setups that ran at least one check
	addLines []report.Line
	delLines []report.Line
}

// Run measures every available switch and returns the section and the
// latency curves.
func (r *Runner) Run(switches []setups.ScaleSwitch) (*report.Section, []report.Curve) {
	r.sec = &report.Section{Title: "Scale", Figures: r.Cfg.Figures()}
	r.failures, r.checked = map[string]int{}, map[string]bool{}
	if r.Logf == nil {
		r.Logf = func(string, ...any) {}
	}
	if r.Stage == nil {
		r.Stage = func(int, string, string) {}
	}
	var active []setups.ScaleSwitch
	lastErr := map[string]string{}
	for _, s := range switches {
		info := report.SetupInfo{Name: s.Name(), Kind: s.Kind(), Description: s.Description(), Status: report.StatusMeasured}
		if ok, why := s.Available(); !ok {
			info.Status, info.Reason = report.StatusSkipped, why
		} else {
			active = append(active, s)
		}
		r.sec.Setups = append(r.sec.Setups, info)
	}
	note := func(s setups.ScaleSwitch, err error) {
		if err != nil && r.Ctx.Err() == nil {
			r.Logf("%s: scale: %v", s.Name(), err)
			lastErr[s.Name()] = err.Error()
		}
	}
	for _, s := range active {
		if r.Ctx.Err() == nil {
			note(s, r.sweep(s))
		}
	}
	for run := 1; run <= r.Cfg.Runs; run++ {
		for _, s := range active {
			if r.Ctx.Err() == nil {
				note(s, r.bulk(s, run))
			}
		}
	}
	for _, s := range active {
		if r.checked[s.Name()] {
			r.sec.Add(FigNotForward, s.Name(), report.Sample{Run: 1, Value: float64(r.failures[s.Name()])})
		}
	}
	r.sec.Summarize()
	for i, si := range r.sec.Setups {
		if si.Status == report.StatusMeasured && !r.hasAnyValue(si.Name) {
			r.sec.Setups[i].Status, r.sec.Setups[i].Reason = report.StatusFailed, lastErr[si.Name]
			if r.Ctx.Err() != nil && lastErr[si.Name] == "" {
				r.sec.Setups[i].Status, r.sec.Setups[i].Reason = report.StatusSkipped, "not run (interrupted)"
			}
		}
	}
	marks := make([]float64, 0, 4)
	for _, m := range Marks(r.Cfg.Ports) {
		marks = append(marks, float64(m))
	}
	var curves []report.Curve
	if len(r.addLines) > 0 {
		curves = append(curves, report.Curve{ID: CurveAdd, Title: "ovs-vsctl add-port, one call each (waiting for cur_cfg)",
			XLabel: "ports on the bridge before the call", YLabel: "latency (ms)", Marks: marks, Lines: r.addLines})
	}
	if len(r.delLines) > 0 {
		curves = append(curves, report.Curve{ID: CurveDel, Title: "ovs-vsctl del-port, one call each (waiting for cur_cfg)",
			XLabel: "ports on the bridge before the call", YLabel: "latency (ms)", Marks: marks, Lines: r.delLines})
	}
	return r.sec, curves
}

func (r *Runner) hasAnyValue(setup string) bool {
	for _, f := range r.sec.Figures {
		if _, ok := r.sec.Value(f.ID, setup); ok {
			return true
		}
	}
	return false
}

// start starts s with an empty bridge (the sink only) and returns a stop
// function that logs a failing stop.
func (r *Runner) start(s setups.ScaleSwitch) (func(), error) {
	stop := func() {
		if err := s.Stop(); err != nil {
			r.Logf("%s: stop: %v", s.Name(), err)
		}
	}
	ctx, cancel := context.WithTimeout(r.Ctx, startLimit)
	defer cancel()
	if err := s.StartBridge(ctx, r.SwitchNS, []string{r.Sink}); err != nil {
		stop()
		return nil, fmt.Errorf("start: %w", err)
	}
	return stop, nil
}

// busyMeter tells whether other processes loaded the machine meanwhile.
type busyMeter struct {
	before measure.Snapshot
	start  time.Time
}

func newBusyMeter() busyMeter { return busyMeter{measure.TakeSnapshot(), time.Now()} }

// outside returns the CPUs used by processes outside the benchmark since
// the meter started.
func (b busyMeter) outside() float64 {
	return measure.OutsideCPU(b.before, measure.TakeSnapshot(), os.Getpid()) / max(time.Since(b.start).Seconds(), 0.001)
}

func (r *Runner) record(fig, setup string, run int, v, outside float64) {
	r.sec.Add(fig, setup, report.Sample{Run: run, Value: v, Busy: outside > r.BusyCPU, OutsideCPU: float64(int(outside*100+0.5)) / 100})
}

// forwarding checks ports [0, n) and counts the ones that did not forward.
func (r *Runner) forwarding(name string, n int, limit time.Duration) error {
	r.checked[name] = true
	res, err := r.Check.Forwarding(r.Ctx, 0, n, limit)
	if err != nil {
		r.failures[name] += n
		return err
	}
	if res.MissingCount > 0 {
		r.failures[name] += res.MissingCount
		return fmt.Errorf("%d of %d ports did not forward within %v (first: %v)", res.MissingCount, n, limit, res.Missing)
	}
	return nil
}

// silence checks that none of ports [0, n), just removed, forwards.
func (r *Runner) silence(name string, n int) error {
	r.checked[name] = true
	res, err := r.Check.Silence(r.Ctx, 0, n, silenceWait)
	if err != nil {
		r.failures[name] += n
		return err
	}
	if res.Seen > 0 {
		r.failures[name] += res.Seen
		return fmt.Errorf("%d of %d removed ports still forwarded", res.Seen, n)
	}
	return nil
}

// sweep adds Cfg.Ports ports one call each, measures memory and idle CPU,
// and removes them one call each.
func (r *Runner) sweep(s setups.ScaleSwitch) (err error) {
	name, n := s.Name(), r.Cfg.Ports
	r.Stage(1, name, "start")
	stop, err := r.start(s)
	if err != nil {
		return err
	}
	defer stop()
	meter := newBusyMeter()
	var add []Call
	defer func() {
		if len(add) > 0 {
			r.addLines = append(r.addLines, report.Line{Setup: name, Kind: s.Kind(), Points: Points(add), Smooth: Smooth(add, reached(add, CurveXs(n, Marks(n)), true))})
		}
	}()
	var sweepErr error
	dbAt := map[int]float64{}
	probeDB := func(at int) {
		if v, err := r.dbAlone(s); err == nil {
			dbAt[at] = v
		} else {
			r.Logf("%s: ovs-vsctl --no-wait probe at %d ports: %v", name, at, err)
		}
	}
	for i := range n {
		if i > 0 && slices.Contains(Marks(n), i) {
			probeDB(i)
		}
		if i%50 == 0 {
			r.Stage(1, name, fmt.Sprintf("add-port %d/%d", i, n))
		}
		t0 := time.Now()
		_, err := s.Vsctl(r.Ctx, vsctlTimeout, "add-port", "br0", r.Ports.Port(i))
		took := time.Since(t0)
		if err != nil {
			sweepErr = fmt.Errorf("add-port with %d ports: %w", i, err)
			break
		}
		add = append(add, Call{Ports: i, Took: took})
		if (i+1)%progressEvery == 0 && i+1 < n {
			r.Logf("%s: %d of %d ports added one call each (%.1f s so far)", name, i+1, n, totalSeconds(add))
		}
		if (i+1)%rssCheckInterval == 0 && r.Cfg.RSSLimit > 0 {
			if rss, err := measure.RSSBytes(s.Processes()); err == nil && rss > r.Cfg.RSSLimit {
				sweepErr = fmt.Errorf("stopped at %d ports: RSS %d MB is past the limit of %d MB", i+1, rss>>20, r.Cfg.RSSLimit>>20)
				break
			}
		}
	}
	if sweepErr == nil {
		probeDB(n)
	}
	// The port counts reached are reported even when the sweep stopped
	// early; the rest of it is not run.
	outside := meter.outside()
	for _, m := range reached(add, Marks(n), true) {
		v, _ := WindowMedian(add, m, WindowWidth)
		r.record(FigAddAt(m), name, 1, v, outside)
		if db, ok := dbAt[m]; ok {
			r.record(FigDBAt(m), name, 1, db, outside)
			r.record(FigOwnAt(m), name, 1, max(v-db, 0), outside)
		}
	}
	if sweepErr != nil {
		r.sec.AddError(FigAddTotal, name, sweepErr.Error())
		return sweepErr
	}
	r.record(FigAddTotal, name, 1, totalSeconds(add), outside)

	r.Stage(1, name, fmt.Sprintf("forwarding on %d ports", n))
	if err := r.forwarding(name, n, 30*time.Second+time.Duration(n)*30*time.Millisecond); err != nil {
		r.sec.AddError(FigNotForward, name, "after adding one by one: "+err.Error())
		r.Logf("%s: after adding %d ports one by one: %v", name, n, err)
	}

	r.Stage(1, name, fmt.Sprintf("idle with %d ports", n))
	if err := sleep(r.Ctx, r.Cfg.Settle); err != nil {
		return err
	}
	if err := r.measureIdle(s, name); err != nil {
		return err
	}

	meter = newBusyMeter()
	var del []Call
	defer func() {
		if len(del) > 0 {
			r.delLines = append(r.delLines, report.Line{Setup: name, Kind: s.Kind(), Points: Points(del), Smooth: Smooth(del, reached(del, CurveXs(n, Marks(n)), false))})
		}
	}()
	for i := n - 1; i >= 0; i-- {
		if (n-1-i)%50 == 0 {
			r.Stage(1, name, fmt.Sprintf("del-port %d/%d", n-1-i, n))
		}
		t0 := time.Now()
		_, err := s.Vsctl(r.Ctx, vsctlTimeout, "del-port", "br0", r.Ports.Port(i))
		took := time.Since(t0)
		if err != nil {
			sweepErr = fmt.Errorf("del-port with %d ports: %w", i+1, err)
			break
		}
		del = append(del, Call{Ports: i + 1, Took: took})
		if len(del)%progressEvery == 0 && i > 0 {
			r.Logf("%s: %d of %d ports removed one call each (%.1f s so far)", name, len(del), n, totalSeconds(del))
		}
	}
	outside = meter.outside()
	for _, m := range reached(del, Marks(n), false) {
		v, _ := WindowMedian(del, m, WindowWidth)
		r.record(FigDelAt(m), name, 1, v, outside)
	}
	if sweepErr != nil {
		r.sec.AddError(FigDelTotal, name, sweepErr.Error())
		return sweepErr
	}
	r.record(FigDelTotal, name, 1, totalSeconds(del), outside)
	if err := r.silence(name, n); err != nil {
		r.sec.AddError(FigNotForward, name, "after removing one by one: "+err.Error())
		r.Logf("%s: after removing %d ports one by one: %v", name, n, err)
	}
	return nil
}

// dbProbeCalls is how many calls make one ovs-vsctl-and-database probe.
const dbProbeCalls = 5

// dbAlone returns the median latency, in milliseconds, of dbProbeCalls
// `ovs-vsctl --no-wait --may-exist add-port` calls naming the first port,
// which is on the bridge: ovs-vsctl reads the whole database as for any
// add-port, finds nothing to change and does not wait for the switch. It
// is what any switch's add-port costs at this size before the switch
// itself does anything.
func (r *Runner) dbAlone(s setups.ScaleSwitch) (float64, error) {
	ms := make([]float64, 0, dbProbeCalls)
	for range dbProbeCalls {
		t0 := time.Now()
		if _, err := s.Vsctl(r.Ctx, vsctlTimeout, "--no-wait", "--may-exist", "add-port", "br0", r.Ports.Port(0)); err != nil {
			return 0, err
		}
		ms = append(ms, float64(time.Since(t0))/float64(time.Millisecond))
	}
	return measure.Summarize(ms).Median, nil
}

// measureIdle records the RSS of the switch's processes, its ring memory
// (when memory/show reports one) and its CPU use over Cfg.IdleWindow.
func (r *Runner) measureIdle(s setups.ScaleSwitch, name string) error {
	pids := s.Processes()
	meter := newBusyMeter()
	// Per-thread schedstat, to the nanosecond: an idle switch uses too
	// little for /proc/PID/stat's 10 ms ticks over a short window.
	cpuSeconds := func() float64 {
		if v, ok := measure.ThreadCPUSeconds(pids); ok {
			return v
		}
		return measure.CPUSeconds(pids)
	}
	cpu0 := cpuSeconds()
	t0 := time.Now()
	if err := sleep(r.Ctx, r.Cfg.IdleWindow); err != nil {
		return err
	}
	cpu := (cpuSeconds() - cpu0) / time.Since(t0).Seconds() * 100
	outside := meter.outside()
	r.record(FigIdleCPU, name, 1, cpu, outside)
	rss, err := measure.RSSBytes(pids)
	if err != nil {
		r.sec.AddError(FigRSS, name, err.Error())
	} else {
		r.record(FigRSS, name, 1, float64(rss)/1e6, outside)
	}
	if out, err := s.Appctl(r.Ctx, "memory/show"); err == nil {
		if b, key, ok := RingBytes(ParseMemoryShow(out)); ok {
			r.record(FigRing, name, 1, float64(b)/1e6, outside)
			r.Logf("%s: ring memory from memory/show %s: %.1f MB", name, key, float64(b)/1e6)
		}
	}
	return nil
}

// bulk adds Cfg.Bulk ports in one transaction, restarts the switch and
// removes them in one transaction.
func (r *Runner) bulk(s setups.ScaleSwitch, run int) error {
	name, n := s.Name(), r.Cfg.Bulk
	r.Stage(run, name, "start")
	stop, err := r.start(s)
	if err != nil {
		return err
	}
	defer stop()
	args := []string{vsctlTimeout}
	for i := range n {
		args = append(args, "--", "add-port", "br0", r.Ports.Port(i))
	}
	r.Stage(run, name, fmt.Sprintf("%d ports in one transaction", n))
	meter := newBusyMeter()
	t0 := time.Now()
	if _, err := s.Vsctl(r.Ctx, args...); err != nil {
		r.sec.AddError(FigBulkAdd, name, err.Error())
		return fmt.Errorf("%d ports in one transaction: %w", n, err)
	}
	r.record(FigBulkAdd, name, run, time.Since(t0).Seconds(), meter.outside())
	if err := r.forwarding(name, n, bulkCheckLimit); err != nil {
		r.sec.AddError(FigNotForward, name, "after adding in one transaction: "+err.Error())
		r.Logf("%s: after adding %d ports in one transaction: %v", name, n, err)
	}

	if r.Cfg.Restart {
		r.Stage(run, name, fmt.Sprintf("restart with %d ports", n))
		if err := r.restart(s, name, run, n); err != nil {
			r.sec.AddError(FigOutage, name, err.Error())
			return fmt.Errorf("restart: %w", err)
		}
	}

	args = []string{vsctlTimeout}
	for i := range n {
		args = append(args, "--", "del-port", "br0", r.Ports.Port(i))
	}
	r.Stage(run, name, fmt.Sprintf("%d ports removed in one transaction", n))
	meter = newBusyMeter()
	t0 = time.Now()
	if _, err := s.Vsctl(r.Ctx, args...); err != nil {
		r.sec.AddError(FigBulkDel, name, err.Error())
		return fmt.Errorf("%d ports removed in one transaction: %w", n, err)
	}
	r.record(FigBulkDel, name, run, time.Since(t0).Seconds(), meter.outside())
	if err := r.silence(name, n); err != nil {
		r.sec.AddError(FigNotForward, name, "after removing in one transaction: "+err.Error())
		r.Logf("%s: after removing %d ports in one transaction: %v", name, n, err)
	}
	return nil
}

// restart restarts the switch and waits until all n ports forward again.
func (r *Runner) restart(s setups.ScaleSwitch, name string, run, n int) error {
	meter := newBusyMeter()
	rt, err := s.Restart(r.Ctx)
	if err != nil {
		return err
	}
	r.checked[name] = true
	res, err := r.Check.Forwarding(r.Ctx, 0, n, restartLimit)
	if err != nil {
		r.failures[name] += n
		return err
	}
	if res.AllSeenUnixNano == 0 {
		r.failures[name] += res.MissingCount
		return fmt.Errorf("%d of %d ports not forwarding %v after the restart (first: %v)", res.MissingCount, n, restartLimit, res.Missing)
	}
	allSeen := time.Unix(0, res.AllSeenUnixNano)
	outside := meter.outside()
	r.record(FigOutage, name, run, allSeen.Sub(rt.Asked).Seconds(), outside)
	r.record(FigExit, name, run, rt.Exited.Sub(rt.Asked).Seconds(), outside)
	r.record(FigForward, name, run, allSeen.Sub(rt.Started).Seconds(), outside)
	return nil
}

// reached returns the marks a sweep got to: adding, those with at least
// that many calls made; removing, those it got down to.
func reached(calls []Call, marks []int, adding bool) []int {
	var out []int
	for _, m := range marks {
		if adding && len(calls) >= m {
			out = append(out, m)
		}
		if !adding && len(calls) > 0 && calls[len(calls)-1].Ports <= m && calls[0].Ports >= m {
			out = append(out, m)
		}
	}
	return out
}

func totalSeconds(calls []Call) float64 {
	var d time.Duration
	for _, c := range calls {
		d += c.Took
	}
	return d.Seconds()
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return errors.New("interrupted")
	case <-t.C:
		return nil
	}
}

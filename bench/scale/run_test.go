package scale

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"gvs/bench/probe"
	"gvs/bench/report"
	"gvs/bench/setups"
)

// fakeSwitch keeps the bridge's ports as ovs-vsctl would leave them.
type fakeSwitch struct {
	name, kind string
	startErr   error
	running    bool
	ports      map[string]bool
	restarts   int
	vsctlCalls int
}

var _ setups.ScaleSwitch = (*fakeSwitch)(nil)

func (f *fakeSwitch) Name() string              { return f.name }
func (f *fakeSwitch) Kind() string              { return f.kind }
func (f *fakeSwitch) Description() string       { return "fake " + f.name }
func (f *fakeSwitch) Available() (bool, string) { return true, "" }
func (f *fakeSwitch) Processes() []int          { return []int{os.Getpid()} }

func (f *fakeSwitch) StartBridge(_ context.Context, ns string, ports []string) error {
	if f.startErr != nil {
		return f.startErr
	}
	f.running, f.ports = true, map[string]bool{}
	for _, p := range ports {
		f.ports[p] = true
	}
	return nil
}

// Vsctl understands the two commands the runner sends, chained with --.
func (f *fakeSwitch) Vsctl(_ context.Context, args ...string) (string, error) {
	f.vsctlCalls++
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "add-port", "del-port":
			if i+2 >= len(args) || args[i+1] != "br0" {
				return "", errors.New("bad command")
			}
			if args[i] == "add-port" {
				f.ports[args[i+2]] = true
			} else if !f.ports[args[i+2]] {
				return "", errors.New("no port named " + args[i+2])
			} else {
				delete(f.ports, args[i+2])
			}
			i += 2
		}
	}
	return "", nil
}

func (f *fakeSwitch) Appctl(_ context.Context, args ...string) (string, error) {
	if f.kind == "gvs" && len(args) == 1 && args[0] == "memory/show" {
		return "ports:12 rx-ring-kB:1000\n", nil
	}
	return "ports:12\n", nil
}

func (f *fakeSwitch) Restart(context.Context) (setups.RestartTimes, error) {
	f.restarts++
	now := time.Now()
	return setups.RestartTimes{Asked: now.Add(-2 * time.Second), Exited: now.Add(-time.Second), Started: now}, nil
}

func (f *fakeSwitch) Stop() error { f.running, f.ports = false, nil; return nil }

// fakeChecker sees a port's frame when the running switch has the port,
// except ports listed as broken.
type fakeChecker struct {
	sw     map[string]*fakeSwitch // the switches; the running one forwards
	broken map[int]bool
}

func (c *fakeChecker) running() *fakeSwitch {
	for _, s := range c.sw {
		if s.running {
			return s
		}
	}
	return nil
}

func (c *fakeChecker) result(from, count int) probe.L2CheckResult {
	res := probe.L2CheckResult{Ports: count}
	s := c.running()
	for i := from; i < from+count; i++ {
		if s != nil && s.ports["p"+strconv.Itoa(i)] && !c.broken[i] {
			res.Seen++
		} else {
			res.MissingCount++
			res.Missing = append(res.Missing, i)
		}
	}
	if res.MissingCount == 0 {
		res.AllSeenUnixNano = time.Now().UnixNano()
	}
	return res
}

func (c *fakeChecker) Forwarding(_ context.Context, from, count int, _ time.Duration) (probe.L2CheckResult, error) {
	return c.result(from, count), nil
}

func (c *fakeChecker) Silence(_ context.Context, from, count int, _ time.Duration) (probe.L2CheckResult, error) {
	return c.result(from, count), nil
}

type names struct{}

func (names) Port(i int) string { return "p" + strconv.Itoa(i) }

func newTestRunner(cfg Config, check Checker) *Runner {
	return &Runner{Ctx: context.Background(), Cfg: cfg, SwitchNS: "ns", Sink: "psink", Ports: names{}, Check: check, BusyCPU: 1e9}
}

func value(t *testing.T, sec *report.Section, fig, setup string) float64 {
	t.Helper()
	v, ok := sec.Value(fig, setup)
	if !ok {
		t.Fatalf("no %s for %s", fig, setup)
	}
	return v.Median
}

func TestRunnerMeasuresEveryStep(t *testing.T) {
	ovs := &fakeSwitch{name: OVSName, kind: "ovs"}
	gvs := &fakeSwitch{name: GVSName, kind: "gvs"}
	cfg := Config{Ports: 12, Bulk: 5, Runs: 2, Settle: time.Millisecond, IdleWindow: 10 * time.Millisecond, Restart: true}
	sec, curves := newTestRunner(cfg, &fakeChecker{sw: map[string]*fakeSwitch{"o": ovs, "g": gvs}}).Run([]setups.ScaleSwitch{ovs, gvs})
	for _, s := range []*fakeSwitch{ovs, gvs} {
		// 12 adds + 12 dels, two probes of ovs-vsctl and the database
		// alone (at 10 and 12 ports), then per run one add and one del
		// transaction.
		if s.vsctlCalls != 24+2*dbProbeCalls+2*2 || s.restarts != 2 || s.running {
			t.Errorf("%s: %d ovs-vsctl calls, %d restarts, running %v", s.name, s.vsctlCalls, s.restarts, s.running)
		}
		for _, fig := range []string{FigAddAt(10), FigAddAt(12), FigDBAt(10), FigDBAt(12), FigOwnAt(10), FigOwnAt(12), FigDelAt(10), FigDelAt(12), FigAddTotal, FigDelTotal, FigRSS, FigIdleCPU, FigBulkAdd, FigBulkDel, FigOutage, FigExit, FigForward} {
			value(t, sec, fig, s.name)
		}
		if got := value(t, sec, FigNotForward, s.name); got != 0 {
			t.Errorf("%s: %v ports failed a check", s.name, got)
		}
		if got := value(t, sec, FigOutage, s.name); got < 2 || got > 3 {
			t.Errorf("%s: outage %v s, want about 2 (asked 2 s before the last port forwarded)", s.name, got)
		}
	}
	if got := value(t, sec, FigRing, GVSName); got != 1000*1024/1e6 {
		t.Errorf("ring memory = %v MB", got)
	}
	if _, ok := sec.Value(FigRing, OVSName); ok {
		t.Error("ring memory for a switch whose memory/show has none")
	}
	for _, ser := range sec.Series {
		if ser.Figure == FigBulkAdd && len(ser.Samples) != 2 {
			t.Errorf("%s: %d one-transaction samples, want one per run", ser.Setup, len(ser.Samples))
		}
	}
	if len(curves) != 2 || len(curves[0].Lines) != 2 || len(curves[0].Lines[1].Points) != 12 || len(curves[0].Lines[1].Smooth) != 12 {
		t.Fatalf("curves: %+v", curves)
	}
	if p := curves[1].Lines[0].Points; p[0].X != 12 || p[11].X != 1 {
		t.Errorf("del curve runs from %v to %v ports, want 12 to 1", p[0].X, p[11].X)
	}
	res := sec.Evaluate(cfg.Targets())
	if len(res) == 0 {
		t.Fatal("no targets")
	}
	for _, r := range res {
		if r.Status == report.TargetNotMeasured {
			t.Errorf("target %q not measured: %s", r.Text, r.Measured)
		}
	}
}

func TestRunnerCountsPortsThatDoNotForward(t *testing.T) {
	gvs := &fakeSwitch{name: GVSName, kind: "gvs"}
	broken := &fakeSwitch{name: OVSName, kind: "ovs", startErr: errors.New("ovsdb-server exited")}
	cfg := Config{Ports: 6, Bulk: 4, Runs: 1, Settle: time.Millisecond, IdleWindow: time.Millisecond, Restart: true}
	var logged []string
	r := newTestRunner(cfg, &fakeChecker{sw: map[string]*fakeSwitch{"g": gvs}, broken: map[int]bool{3: true}})
	r.Logf = func(format string, args ...any) { logged = append(logged, format) }
	sec, _ := r.Run([]setups.ScaleSwitch{broken, gvs})
	// Port 3 fails the sweep's check and the one-transaction check; the
	// restart then never sees every port, which ends the round.
	if got := value(t, sec, FigNotForward, GVSName); got != 3 {
		t.Errorf("ports failing checks = %v, want 3", got)
	}
	if _, ok := sec.Value(FigOutage, GVSName); ok {
		t.Error("an outage recorded although a port never came back")
	}
	si, _ := sec.Setup(OVSName)
	if si.Status != report.StatusFailed || !strings.Contains(si.Reason, "ovsdb-server exited") {
		t.Errorf("a switch that did not start: %+v", si)
	}
	if len(logged) == 0 {
		t.Error("failures were not logged")
	}
}

// A switch growing past the RSS limit stops its sweep: the port counts
// reached are reported, the rest of the sweep is not run.
func TestRunnerStopsASweepPastTheRSSLimit(t *testing.T) {
	gvs := &fakeSwitch{name: GVSName, kind: "gvs"}
	cfg := Config{Ports: 30, Bulk: 2, Runs: 1, Settle: time.Millisecond, IdleWindow: time.Millisecond, RSSLimit: 1}
	var logged []string
	r := newTestRunner(cfg, &fakeChecker{sw: map[string]*fakeSwitch{"g": gvs}})
	r.Logf = func(format string, args ...any) { logged = append(logged, fmt.Sprintf(format, args...)) }
	sec, curves := r.Run([]setups.ScaleSwitch{gvs})
	value(t, sec, FigAddAt(10), GVSName)
	for _, fig := range []string{FigAddAt(30), FigAddTotal, FigRSS, FigDelAt(10)} {
		if _, ok := sec.Value(fig, GVSName); ok {
			t.Errorf("%s recorded after the sweep stopped", fig)
		}
	}
	if len(curves) != 1 || len(curves[0].Lines[0].Points) != rssCheckInterval {
		t.Errorf("curves after a stop at %d ports: %+v", rssCheckInterval, curves)
	}
	if !strings.Contains(strings.Join(logged, "\n"), "past the limit") {
		t.Errorf("the stop was not logged: %q", logged)
	}
	// The one-transaction round still ran.
	value(t, sec, FigBulkAdd, GVSName)
}

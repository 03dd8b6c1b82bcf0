package scale

import (
	"fmt"
	"time"

	"gvs/bench/report"
)

// Setup names the targets compare (those of setups.ScaleSwitches).
const (
	GVSName = "gvs-system"
	OVSName = "ovs-netdev"
)

// Config is the shape of one scale test.
type Config struct {
	Ports      int           // N: ports of the one-at-a-time sweep
	Bulk       int           // B: ports of the one-transaction and restart steps
	Runs       int           // rounds of the bulk and restart steps
	Settle     time.Duration // wait after the sweep's last add before measuring
	IdleWindow time.Duration // idle CPU is measured over this
	Restart    bool          // measure the restart outage
	// RSSLimit stops a sweep whose switch grows past it (bytes; 0: no
	// limit): a switch with megabytes per port must not take the machine.
	RSSLimit int64
}

// DefaultConfig is the full test (1,000 ports, 200 in one transaction,
// three rounds), or with quick a short one for development (100 ports,
// one round).
func DefaultConfig(quick bool) Config {
	if quick {
		return Config{Ports: 100, Bulk: 100, Runs: 1, Settle: 3 * time.Second, IdleWindow: 5 * time.Second, Restart: true}
	}
	return Config{Ports: 1000, Bulk: 200, Runs: 3, Settle: 10 * time.Second, IdleWindow: 30 * time.Second, Restart: true}
}

// Validate reports a configuration the test cannot run.
func (c Config) Validate() error {
	switch {
	case c.Ports < 1:
		return fmt.Errorf("scale: %d ports: need at least 1", c.Ports)
	case c.Bulk < 1 || c.Bulk > c.Ports:
		return fmt.Errorf("scale: %d ports in one transaction: need 1 to %d (the sweep's ports)", c.Bulk, c.Ports)
	case c.Runs < 1:
		return fmt.Errorf("scale: %d runs: need at least 1", c.Runs)
	}
	return nil
}

// Figure ids.
const (
	FigAddTotal   = "scale-add-total"
	FigDelTotal   = "scale-del-total"
	FigRSS        = "scale-rss"
	FigRing       = "scale-ring"
	FigIdleCPU    = "scale-idle-cpu"
	FigBulkAdd    = "scale-bulk-add"
	FigBulkDel    = "scale-bulk-del"
	FigOutage     = "scale-restart-outage"
	FigExit       = "scale-restart-exit"
	FigForward    = "scale-restart-forward"
	FigNotForward = "scale-forwarding-failures"
	CurveAdd      = "scale-add-curve"
	CurveDel      = "scale-del-curve"
)

// FigAddAt is the id of the add-port latency at m existing ports.
func FigAddAt(m int) string { return fmt.Sprintf("scale-add-at-%d", m) }

// FigDBAt is the id of ovs-vsctl's and the database's own latency at m
// ports: `ovs-vsctl --no-wait --may-exist add-port` of a port already
// there (the same whole-database read by ovs-vsctl, no change, no wait
// for the switch).
func FigDBAt(m int) string { return fmt.Sprintf("scale-db-at-%d", m) }

// FigOwnAt is the id of the switch's own share of add-port at m ports:
// FigAddAt minus FigDBAt.
func FigOwnAt(m int) string { return fmt.Sprintf("scale-own-at-%d", m) }

// FigDelAt is the id of the del-port latency at m existing ports.
func FigDelAt(m int) string { return fmt.Sprintf("scale-del-at-%d", m) }

// Figures are the scale test's figures, in table order.
func (c Config) Figures() []report.Figure {
	var figs []report.Figure
	for _, m := range Marks(c.Ports) {
		figs = append(figs, report.Figure{ID: FigAddAt(m), Test: fmt.Sprintf("ovs-vsctl add-port, one call each, at %d ports", m),
			Label: fmt.Sprintf("latency (median of %d calls)", WindowWidth), Unit: "ms"})
	}
	for _, m := range Marks(c.Ports) {
		figs = append(figs, report.Figure{ID: FigDBAt(m), Test: fmt.Sprintf("ovs-vsctl and the database alone (--no-wait --may-exist add-port of an existing port), at %d ports", m),
			Label: fmt.Sprintf("latency (median of %d calls)", dbProbeCalls), Unit: "ms"})
	}
	for _, m := range Marks(c.Ports) {
		figs = append(figs, report.Figure{ID: FigOwnAt(m), Test: fmt.Sprintf("the switch's own share of add-port (add-port minus ovs-vsctl and the database alone), at %d ports", m),
			Label: "latency", Unit: "ms"})
	}
	for _, m := range Marks(c.Ports) {
		figs = append(figs, report.Figure{ID: FigDelAt(m), Test: fmt.Sprintf("ovs-vsctl del-port, one call each, at %d ports", m),
			Label: fmt.Sprintf("latency (median of %d calls)", WindowWidth), Unit: "ms"})
	}
	return append(figs,
		report.Figure{ID: FigAddTotal, Test: fmt.Sprintf("%d ports added one call each", c.Ports), Label: "total time", Unit: "s"},
		report.Figure{ID: FigDelTotal, Test: fmt.Sprintf("%d ports removed one call each", c.Ports), Label: "total time", Unit: "s"},
		report.Figure{ID: FigRSS, Test: fmt.Sprintf("%d idle ports", c.Ports), Label: "RSS of the switch's processes", Unit: "MB"},
		report.Figure{ID: FigRing, Test: fmt.Sprintf("%d idle ports", c.Ports), Label: "receive-ring memory in use (memory/show)", Unit: "MB"},
		report.Figure{ID: FigIdleCPU, Test: fmt.Sprintf("%d idle ports, over %v", c.Ports, c.IdleWindow), Label: "CPU of the switch's processes", Unit: "% of a core"},
		report.Figure{ID: FigBulkAdd, Test: fmt.Sprintf("%d ports added in one transaction", c.Bulk), Label: "until ovs-vsctl returns (cur_cfg)", Unit: "s"},
		report.Figure{ID: FigBulkDel, Test: fmt.Sprintf("%d ports removed in one transaction", c.Bulk), Label: "until ovs-vsctl returns (cur_cfg)", Unit: "s"},
		report.Figure{ID: FigOutage, Test: fmt.Sprintf("Restart with %d ports", c.Bulk), Label: "outage: ovs-appctl exit to every port forwarding", Unit: "s"},
		report.Figure{ID: FigExit, Test: fmt.Sprintf("Restart with %d ports", c.Bulk), Label: "of which until the process exited", Unit: "s"},
		report.Figure{ID: FigForward, Test: fmt.Sprintf("Restart with %d ports", c.Bulk), Label: "of which from start to every port forwarding", Unit: "s"},
		report.Figure{ID: FigNotForward, Test: "Forwarding checked on every port after each step", Label: "ports failing a check (all steps)", Unit: "ports"},
	)
}

// Targets are the acceptance targets of the scale issue, at the largest
// port count this configuration reaches.
func (c Config) Targets() []report.Target {
	marks := Marks(c.Ports)
	last := marks[len(marks)-1]
	targets := []report.Target{}
	if len(marks) > 1 && marks[0] == 10 {
		targets = append(targets,
			report.Target{Text: fmt.Sprintf("gvs add-port (one ovs-vsctl call) at %d ports within 1.5x of at 10 ports", last),
				Figure: FigAddAt(last), Setup: GVSName, RefFigure: FigAddAt(10), RefText: "at 10 ports", Factor: 1.5, AtMost: true},
			report.Target{Text: fmt.Sprintf("gvs del-port (one ovs-vsctl call) at %d ports within 1.5x of at 10 ports", last),
				Figure: FigDelAt(last), Setup: GVSName, RefFigure: FigDelAt(10), RefText: "at 10 ports", Factor: 1.5, AtMost: true},
			report.Target{Text: fmt.Sprintf("gvs's own share of add-port (without ovs-vsctl's and the database's) at %d ports within 1.5x of at 10 ports", last),
				Figure: FigOwnAt(last), Setup: GVSName, RefFigure: FigOwnAt(10), RefText: "at 10 ports", Factor: 1.5, AtMost: true})
	}
	return append(targets,
		report.Target{Text: fmt.Sprintf("gvs add-port at %d ports <= Open vSwitch's", last), Figure: FigAddAt(last), Setup: GVSName, Ref: OVSName, Factor: 1, AtMost: true},
		report.Target{Text: fmt.Sprintf("gvs del-port at %d ports <= Open vSwitch's", last), Figure: FigDelAt(last), Setup: GVSName, Ref: OVSName, Factor: 1, AtMost: true},
		report.Target{Text: fmt.Sprintf("RSS with %d ports <= 2x Open vSwitch's plus the ring memory gvs has in use", c.Ports), Figure: FigRSS, Setup: GVSName, Ref: OVSName, Factor: 2, AtMost: true, Plus: FigRing},
		report.Target{Text: fmt.Sprintf("Idle CPU with %d ports <= 2x Open vSwitch's", c.Ports), Figure: FigIdleCPU, Setup: GVSName, Ref: OVSName, Factor: 2, AtMost: true},
		report.Target{Text: fmt.Sprintf("%d ports added in one transaction <= 1.0x Open vSwitch's time", c.Bulk), Figure: FigBulkAdd, Setup: GVSName, Ref: OVSName, Factor: 1, AtMost: true},
		report.Target{Text: fmt.Sprintf("%d ports removed in one transaction <= 1.0x Open vSwitch's time", c.Bulk), Figure: FigBulkDel, Setup: GVSName, Ref: OVSName, Factor: 1, AtMost: true},
		report.Target{Text: fmt.Sprintf("Restart outage with %d ports <= Open vSwitch's", c.Bulk), Figure: FigOutage, Setup: GVSName, Ref: OVSName, Factor: 1, AtMost: true},
		report.Target{Text: "Every gvs port forwards after each step (and removed ones stop)", Figure: FigNotForward, Setup: GVSName, Bound: 0, AtMost: true},
	)
}

package setups

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"gvs/bench/topo"
)

// ScaleSwitch is a switch the scale test starts with an empty bridge in a
// namespace of its own and then drives port by port with the real
// ovs-vsctl and ovs-appctl, as a user would.
type ScaleSwitch interface {
	Name() string
	Kind() string
	Description() string
	Available() (bool, string)
	// StartBridge starts the switch (ovs-vswitchd in namespace ns; a
	// separate database server in the root namespace) with bridge br0 of
	// the netdev datapath holding ports. It does not check forwarding.
	StartBridge(ctx context.Context, ns string, ports []string) error
	// Vsctl runs ovs-vsctl against the switch's database with args; it is
	// bounded by ctx only, so callers pass ovs-vsctl's own --timeout.
	Vsctl(ctx context.Context, args ...string) (string, error)
	// Appctl runs ovs-appctl against ovs-vswitchd's control socket.
	Appctl(ctx context.Context, args ...string) (string, error)
	// Restart asks ovs-vswitchd to exit (`ovs-appctl exit`), waits for the
	// process to end and starts it again the same way; the database server
	// of Open vSwitch stays up. It returns as soon as the new process is
	// started, with when each step happened.
	Restart(ctx context.Context) (RestartTimes, error)
	// Processes are all of the switch's processes (Open vSwitch:
	// ovs-vswitchd and ovsdb-server), for memory and CPU.
	Processes() []int
	// Stop stops every process and removes the private directory; safe
	// after a failed StartBridge and more than once.
	Stop() error
}

// RestartTimes are the moments of one Restart.
type RestartTimes struct {
	Asked   time.Time // before `ovs-appctl exit` ran
	Exited  time.Time // the old process was gone
	Started time.Time // the new process was started
}

// ScaleSwitches returns the switches the scale test compares, in the
// order it interleaves them: Open vSwitch's netdev datapath with defaults
// and gvs with defaults.
func ScaleSwitches(env Env) []ScaleSwitch {
	return []ScaleSwitch{
		&OVS{Env: env, Opt: OVSOptions{Name: OVSDefaultName,
			Description: "Open vSwitch 3.1 netdev datapath (ovs-vswitchd and its own ovsdb-server), defaults"}},
		&GVS{Env: env, Opt: GVSOptions{Name: "gvs-system",
			Description: "gvs-vswitchd (embedded database), system ports, defaults"}},
	}
}

var (
	_ ScaleSwitch = (*OVS)(nil)
	_ ScaleSwitch = (*GVS)(nil)
)

// scaleCommandLimit bounds one ovs-vsctl or ovs-appctl call of the scale
// test (ovs-vsctl's own --timeout is the intended bound).
const scaleCommandLimit = 10 * time.Minute

// exitLimit bounds the wait for ovs-vswitchd to end after `exit`.
const exitLimit = 2 * time.Minute

func (o *OVS) StartBridge(ctx context.Context, ns string, ports []string) error {
	if err := o.startDaemons(ctx, ns, ns+"o"); err != nil {
		return err
	}
	if _, err := o.Vsctl(ctx, bridgeWithPorts(ports)...); err != nil {
		return fmt.Errorf("%w (log: %s)", err, tail(filepath.Join(o.dir, "ovs-vswitchd.log"), 3))
	}
	return nil
}

func (g *GVS) StartBridge(ctx context.Context, ns string, ports []string) error {
	if err := g.startSwitch(ctx, ns, ns+"g"); err != nil {
		return err
	}
	if _, err := g.Vsctl(ctx, bridgeWithPorts(ports)...); err != nil {
		if !g.vswitchd.running() {
			return fmt.Errorf("gvs-vswitchd exited: %s", tail(filepath.Join(g.dir, "gvs-vswitchd.out"), 3))
		}
		return err
	}
	return nil
}

func bridgeWithPorts(ports []string) []string {
	args := []string{"--timeout=60", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=netdev"}
	for _, p := range ports {
		args = append(args, "--", "add-port", "br0", p)
	}
	return args
}

func (s *switchProc) Vsctl(ctx context.Context, args ...string) (string, error) {
	argv := append([]string{ovsVsctl, "--db=unix:" + filepath.Join(s.dir, "db.sock")}, args...)
	out, err := topo.RunFor(ctx, scaleCommandLimit, "", argv...)
	return strings.TrimSpace(out), err
}

func (s *switchProc) Appctl(ctx context.Context, args ...string) (string, error) {
	argv := append([]string{ovsAppctl, "-t", filepath.Join(s.dir, "ovs-vswitchd.ctl")}, args...)
	out, err := topo.RunFor(ctx, scaleCommandLimit, "", argv...)
	return strings.TrimSpace(out), err
}

func (s *switchProc) Restart(ctx context.Context) (RestartTimes, error) {
	var rt RestartTimes
	if s.vswitchd == nil {
		return rt, fmt.Errorf("not started")
	}
	rt.Asked = time.Now()
	// A daemon may close the control connection before its reply gets
	// out: what counts is that it exits.
	_, appctlErr := s.Appctl(ctx, "exit")
	limit := exitLimit
	if appctlErr != nil {
		limit = 10 * time.Second
	}
	if !s.vswitchd.wait(limit) {
		return rt, fmt.Errorf("%s still runs %v after ovs-appctl exit (%v)", s.vswitchd.name, limit, appctlErr)
	}
	rt.Exited = time.Now()
	d, err := s.vswitchd.again()
	if err != nil {
		return rt, err
	}
	rt.Started = time.Now()
	s.vswitchd = d
	return rt, nil
}

func (o *OVS) Processes() []int {
	var pids []int
	for _, d := range []*daemon{o.vswitchd, o.db} {
		if d != nil {
			pids = append(pids, d.pid)
		}
	}
	return pids
}

func (g *GVS) Processes() []int { return g.PIDs() }

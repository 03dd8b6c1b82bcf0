package main

import (
	"fmt"
	"slices"
	"strings"

	"gvs/bench/report"
	"gvs/bench/scale"
	"gvs/bench/setups"
	"gvs/bench/topo"
	"gvs/netdev"
)

// scaleConfig is the scale test's shape: -quick's or the full one, with
// the -scale-* flags over it, and a memory guard of a third of the
// machine's memory.
func scaleConfig(o options) (scale.Config, error) {
	c := scale.DefaultConfig(o.quick)
	if o.scalePorts > 0 {
		c.Ports = o.scalePorts
		c.Bulk = min(c.Bulk, c.Ports)
	}
	if o.scaleBulk > 0 {
		c.Bulk = o.scaleBulk
	}
	if o.scaleRuns > 0 {
		c.Runs = o.scaleRuns
	}
	if o.scaleIdle > 0 {
		c.IdleWindow = o.scaleIdle
	}
	if total, err := netdev.MemTotal(); err == nil {
		c.RSSLimit = total / 3
	}
	return c, c.Validate()
}

// runScale creates the scale test's ports, runs it for Open vSwitch and
// gvs and removes the ports, also on failure and interrupt.
func (r *runner) runScale(cfg scale.Config, switches []setups.ScaleSwitch) (*report.Section, []report.Curve) {
	ports := topo.NewPorts(cfg.Ports)
	defer func() {
		r.prog.setStage(1, "scale", "removing the ports")
		if err := ports.Destroy(); err != nil {
			r.prog.logf("scale: cleanup: %v", err)
		}
	}()
	r.prog.setStage(1, "scale", fmt.Sprintf("creating %d veth pairs", cfg.Ports+1))
	if err := ports.Create(r.ctx); err != nil {
		r.prog.logf("scale: %v", err)
		sec := &report.Section{Title: "Scale", Figures: cfg.Figures()}
		for _, s := range switches {
			sec.Setups = append(sec.Setups, report.SetupInfo{Name: s.Name(), Kind: s.Kind(), Description: s.Description(),
				Status: report.StatusFailed, Reason: "creating the ports: " + err.Error()})
		}
		return sec, nil
	}
	sr := scale.Runner{Ctx: r.ctx, Cfg: cfg, SwitchNS: ports.Switch, Sink: topo.SinkPort, Ports: ports,
		Check:   scale.ProbeChecker{Self: r.self, Ports: ports},
		BusyCPU: r.busyCPU, Logf: r.prog.logf, Stage: r.prog.setStage}
	return sr.Run(switches)
}

// scaleSwitches are the scale test's switches, only those named by
// -setups when it is given (ovs-netdev, gvs-system).
func scaleSwitches(env setups.Env, only string) []setups.ScaleSwitch {
	all := setups.ScaleSwitches(env)
	if only == "" {
		return all
	}
	var out []setups.ScaleSwitch
	for _, s := range all {
		if slices.Contains(strings.Split(only, ","), s.Name()) {
			out = append(out, s)
		}
	}
	return out
}

// scaleLegend explains the scale figures; it goes with every result that
// has them.
func scaleLegend(c scale.Config) string {
	return fmt.Sprintf("Scale: %d veth pairs, outer ends in the switch's namespace, peers in one host namespace, no IP addresses, IPv6 off; "+
		"each switch starts with one bridge (netdev datapath) holding only a sink port (not counted in the port counts). Per-change latency: wall time of one `ovs-vsctl add-port`/`del-port` "+
		"(waiting for cur_cfg, so until the switch applied it; ovs-vsctl's own start included), at each port count the median of the %d calls made nearest to it. "+
		"Forwarding check: from every port's peer one frame (EtherType 0x88b5) to the sink's MAC, which the sink announces by broadcast first, re-sent for ports not seen every 50 ms; "+
		"removed ports must forward nothing within 1 s. RSS and CPU: all of the switch's processes (Open vSwitch: ovs-vswitchd and ovsdb-server), "+
		"%v after the last add, CPU (every thread's time on CPU from schedstat) over %v. Restart: `ovs-appctl exit`, wait for the process to end, start it again the same way "+
		"(Open vSwitch's ovsdb-server keeps running), outage until the last port's frame arrives. The sweep runs once per switch, "+
		"the one-transaction and restart steps %d time(s), the switches interleaved.", c.Ports, scale.WindowWidth, c.Settle, c.IdleWindow, c.Runs)
}

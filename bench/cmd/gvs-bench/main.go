// Command gvs-bench measures gvs beside the switches a user would pick
// instead (a direct veth pair, the Linux bridge, Debian's Open vSwitch in
// several configurations), in one session on this machine, and writes the
// results as a terminal table, JSON, CSV, Markdown and SVG plots.
//
//	gvs-bench [-quick] [-runs N] [-out DIR] [-bin DIR] [-setups a,b] [-no-ovsdb]
//	          [-only datapath,openflow,conntrack,ovsdb,scale] [-scale-ports N] [-scale-bulk N] [-scale-runs N]
//	          [-ovn-flows FILE] [-flow-table N]
//
// The OpenFlow part runs gvs and the best-tuned Open vSwitch with NORMAL
// and with the OVN two-port pipeline (tests/testdata/ovn-two-port.flows,
// rewritten for the hosts' MACs) for TCP and new flows, then loads a
// generated table of 100,000 flows with ovs-ofctl add-flows, plain and as
// one bundle, into each switch on an idle bridge (wall time, RSS). A gvs
// that serves no OpenFlow yet is reported as skipped.
//
// The conntrack part runs gvs and the best-tuned Open vSwitch with the
// classic ct firewall and with the same forwarding without ct: TCP, TCP
// connections per second and memory per tracked connection. A gvs that
// cannot load or forward the flows yet is reported as skipped.
//
// The scale part (package bench/scale) runs last: Open vSwitch and gvs with
// 1,000 ports (100 with -quick) added and removed one ovs-vsctl call each,
// memory and idle CPU, 200 ports in one transaction and a restart.
//
// It needs root (network namespaces), iperf3 and, for the Open vSwitch
// setups, openvswitch-switch (`make bench` installs both). Everything it
// creates carries the prefix gb<pid> and is removed on exit, on error and
// on Ctrl-C; net.core.rmem_max/wmem_max, raised for the UDP tests' socket
// buffers, are restored the same way. Sub-commands starting with "_" are
// its own probes, run inside the namespaces.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"gvs/bench/probe"
	"gvs/bench/report"
	"gvs/bench/setups"
	"gvs/bench/topo"
)

func main() {
	if len(os.Args) > 1 && probe.IsCommand(os.Args[1]) {
		os.Exit(probe.Main(os.Args[1:]))
	}
	os.Exit(benchMain(os.Args[1:]))
}

type options struct {
	quick    bool
	runs     int
	out      string
	binDir   string
	only     string
	noOVSDB  bool
	busyCPU  float64
	maxTime  time.Duration
	startCmd string
	parts    map[string]bool // datapath, openflow, ovsdb, scale

	ovnFlows  string // the saved OVN pipeline's .flows file
	tableSize int    // flows of the flow-table test

	scalePorts, scaleBulk, scaleRuns int
	scaleIdle                        time.Duration
}

// benchParts are the parts -only chooses from, in the order they run.
var benchParts = []string{"datapath", "openflow", "conntrack", "ovsdb", "scale"}

func parseParts(only string) (map[string]bool, error) {
	parts := map[string]bool{}
	if only == "" {
		for _, p := range benchParts {
			parts[p] = true
		}
		return parts, nil
	}
	for _, p := range strings.Split(only, ",") {
		if !slices.Contains(benchParts, p) {
			return nil, fmt.Errorf("unknown part %q for -only (known: %s)", p, strings.Join(benchParts, ", "))
		}
		parts[p] = true
	}
	return parts, nil
}

func parseOptions(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("gvs-bench", flag.ContinueOnError)
	fs.BoolVar(&o.quick, "quick", false, "one run of fewer, shorter tests (development)")
	fs.IntVar(&o.runs, "runs", 0, "runs per figure (default 3; 1 with -quick)")
	fs.StringVar(&o.out, "out", "bench-results", "results directory (a timestamped directory is created inside)")
	fs.StringVar(&o.binDir, "bin", "bin", "directory holding gvs-vswitchd and gvs-ovsdb-server")
	fs.StringVar(&o.only, "setups", "", "comma-separated setups to run (default: all but the extra ones, such as ovs-netdev-offloads); the scale part runs those of ovs-netdev and gvs-system named")
	fs.BoolVar(&o.noOVSDB, "no-ovsdb", false, "skip the OVSDB comparison")
	fs.Float64Var(&o.busyCPU, "busy-cpu", 0.3, "CPUs used by other processes during a test that make it \"busy\"")
	fs.DurationVar(&o.maxTime, "max-time", 0, "time budget of the datapath part (default 18m30s; 150s with -quick)")
	only := fs.String("only", "", "comma-separated parts to run: datapath, openflow, conntrack, ovsdb, scale (default: all)")
	fs.StringVar(&o.ovnFlows, "ovn-flows", "tests/testdata/ovn-two-port.flows", "the OVN pipeline of the OpenFlow part (.ports and .tlv beside it)")
	fs.IntVar(&o.tableSize, "flow-table", defaultTableFlows, "flows of the OpenFlow part's add-flows and bundle test")
	fs.IntVar(&o.scalePorts, "scale-ports", 0, "ports of the scale test's one-at-a-time sweep (default 1000; 100 with -quick)")
	fs.IntVar(&o.scaleBulk, "scale-bulk", 0, "ports of the scale test's one-transaction and restart steps (default 200, at most -scale-ports)")
	fs.IntVar(&o.scaleRuns, "scale-runs", 0, "rounds of the scale test's one-transaction and restart steps (default 3; 1 with -quick)")
	fs.DurationVar(&o.scaleIdle, "scale-idle", 0, "window of the scale test's idle CPU (default 30s; 5s with -quick)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	var err error
	if o.parts, err = parseParts(*only); err != nil {
		fmt.Fprintln(fs.Output(), "gvs-bench:", err)
		return o, err
	}
	if o.noOVSDB {
		delete(o.parts, "ovsdb")
	}
	if o.maxTime == 0 {
		o.maxTime = 18*time.Minute + 30*time.Second
		if o.quick {
			o.maxTime = 150 * time.Second
		}
	}
	o.startCmd = "gvs-bench " + strings.Join(args, " ")
	return o, nil
}

func benchMain(args []string) int {
	o, err := parseOptions(args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return 2
	}
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "gvs-bench: needs root (network namespaces, veth pairs)")
		return 1
	}
	for _, tool := range []string{"ip", "iperf3"} {
		if _, err := exec.LookPath(tool); err != nil {
			fmt.Fprintf(os.Stderr, "gvs-bench: %s is missing (make deps installs it)\n", tool)
			return 1
		}
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gvs-bench:", err)
		return 1
	}
	binDir, _ := filepath.Abs(o.binDir)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	prog := newProgress(os.Stderr)
	if removed := topo.RemoveStale(ctx); len(removed) > 0 {
		prog.logf("removed namespaces left by an earlier run: %s", strings.Join(removed, " "))
	}
	// The receiving iperf3's -w is capped by the global maxima: raise them
	// (only them; sockets asking for nothing keep the defaults) for the
	// session, and put them back on every way out, Ctrl-C included.
	restoreMax, err := setups.RaiseSocketBufferMax(UDPWindow)
	defer func() {
		if err := restoreMax(); err != nil {
			fmt.Fprintln(os.Stderr, "gvs-bench: restoring net.core.rmem_max/wmem_max:", err)
		}
	}()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gvs-bench: raising net.core.rmem_max/wmem_max:", err)
		return 1
	}
	scaleCfg, err := scaleConfig(o)
	if err != nil && o.parts["scale"] {
		fmt.Fprintln(os.Stderr, "gvs-bench:", err)
		return 2
	}
	t := topo.New()
	defer func() {
		if err := t.Destroy(); err != nil {
			fmt.Fprintln(os.Stderr, "gvs-bench: cleanup:", err)
		}
	}()
	if o.parts["datapath"] || o.parts["openflow"] || o.parts["conntrack"] {
		if err := t.Create(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "gvs-bench:", err)
			return 1
		}
	}

	cfg := newConfig(o.quick, o.runs)
	started := time.Now()
	ovnFlows, _ := filepath.Abs(o.ovnFlows)
	env := setups.Env{Self: self, BinDir: binDir, ForwardWait: 10 * time.Second, OVN: setups.OVNFiles{Flows: ovnFlows}}
	all := setups.All(env)
	if o.only != "" {
		// Names of the OpenFlow part's own setups (…-ovn) choose there.
		only := withoutSetups(o.only, setups.ConntrackSetups(env))
		if all, err = selectSetups(append(all, setups.Extra(env)...), withoutNames(only, setups.OpenFlowSetups(env))); err != nil {
			fmt.Fprintln(os.Stderr, "gvs-bench:", err)
			return 2
		}
	}
	r := &runner{ctx: ctx, self: self, topo: t, cfg: cfg, prog: prog, busyCPU: o.busyCPU,
		// The last setup run and the OVSDB comparison fit after it.
		deadline: started.Add(o.maxTime - min(75*time.Second, o.maxTime/5)),
		repeat:   !o.quick,
		sec:      &report.Section{Title: "Datapath"}}
	results := &report.Results{Command: o.startCmd, Quick: o.quick, Runs: cfg.runs, Started: started,
		Machine: describeMachine()}
	if o.parts["datapath"] {
		r.runDatapath(all, cfg.plan())
		results.Datapath = r.sec
		results.Targets = results.Datapath.Evaluate(report.DatapathTargets())
	}
	if o.parts["openflow"] && ctx.Err() == nil {
		ofSetups := setups.OpenFlowSetups(env)
		if o.only != "" {
			ofSetups = onlyNamed(ofSetups, o.only)
		}
		if len(ofSetups) > 0 {
			results.OpenFlow = r.runOpenFlowTraffic(ofSetups)
			results.OpenFlowTargets = results.OpenFlow.Evaluate(report.OpenFlowTargets())
		}
		if ctx.Err() == nil {
			results.FlowTables = r.runFlowTables(setups.FlowTableSwitches(env), t.Switch, o.tableSize, min(cfg.runs, 3))
			results.OpenFlowTargets = append(results.OpenFlowTargets, results.FlowTables.Evaluate(report.FlowTableTargets(o.tableSize))...)
		}
	}
	if o.parts["conntrack"] && ctx.Err() == nil {
		ctSetups := setups.ConntrackSetups(env)
		if o.only != "" {
			ctSetups = onlyNamed(ctSetups, o.only)
		}
		if len(ctSetups) > 0 {
			results.Conntrack = r.runConntrack(ctSetups)
			results.ConntrackTargets = results.Conntrack.Evaluate(report.ConntrackTargets())
			results.Notes = append(results.Notes, conntrackLegend(cfg))
		}
	}
	if o.parts["ovsdb"] && ctx.Err() == nil {
		r.sec = &report.Section{Title: "OVSDB"}
		r.runOVSDB(binDir)
		results.OVSDB = r.sec
	}
	if o.parts["scale"] && ctx.Err() == nil {
		results.Scale, results.Curves = r.runScale(scaleCfg, scaleSwitches(env, o.only))
		results.ScaleTargets = results.Scale.Evaluate(scaleCfg.Targets())
	}
	results.Finished = time.Now()
	if ctx.Err() != nil {
		results.Notes = append(results.Notes, "interrupted: partial results")
	}
	results.Notes = append(results.Notes,
		fmt.Sprintf("busy: more than %.2f CPUs used by processes outside the benchmark during a test", o.busyCPU))
	if results.Datapath != nil {
		results.Notes = append(results.Notes, legend...)
	}
	if results.Scale != nil {
		results.Notes = append(results.Notes, scaleLegend(scaleCfg))
	}
	if results.OpenFlow != nil || results.FlowTables != nil {
		results.Notes = append(results.Notes, openFlowLegend(o.tableSize))
	}
	prog.clear()
	status := finish(results, o.out)
	if ctx.Err() != nil && status == 0 {
		status = 130
	}
	return status
}

// legend explains how the figures are computed; it goes with every result.
var legend = []string{
	fmt.Sprintf("UDP tests: iperf3 with -w %d MiB (socket buffers of both ends; net.core.rmem_max/wmem_max raised to at least that for the session, defaults untouched, restored at exit). "+
		"Total loss = 1 - received/sent bytes as iperf3 counts them (its own lost_percent under-reports). "+
		"\"Loss in the receiving socket\" = datagrams that reached the receiving host's UDP layer but not the receiving iperf3, times the datagram size, over the bytes sent: "+
		"from the receiver namespace's /proc/net/snmp read before and after the test, Udp InErrors (full socket buffer: RcvbufErrors; bad checksums) plus datagrams still queued when iperf3 stopped "+
		"(Ip InDelivers - Tcp InSegs - Icmp InMsgs - Udp InDatagrams - Udp NoPorts - Udp InErrors). "+
		"\"Loss in the switch\" = total loss - loss in the receiving socket: everything lost between the two hosts' UDP layers, in the switch and the veths around it "+
		"(for direct, which has no switch, what the veth pair itself loses). The two add up to the total loss.", UDPWindow>>20),
	fmt.Sprintf("New-flow test: %d senders at once (the client and %d more namespaces, each with its own veth, MAC and switch port; for direct, each with its own veth pair to the server) send one 64-byte UDP datagram per new 5-tuple (source port walking 60,000 ports, 8 destination ports), the rate split evenly; "+
		"rates are tried in rising order, stopping at the first with loss; loss excludes the receiving host's own drops, as for UDP.", topo.FlowSenders, topo.FlowSenders-1),
	"CPU: the switch process's user+system time (all threads) per Gbit delivered; kernel setups (direct, linux-bridge) have no process of their own, so \"-\". \"Whole machine's CPU\": every CPU's busy time (/proc/stat: all but idle, iowait and steal) per Gbit, hosts and kernel included: what moving the bytes costs with each setup.",
}

func finish(results *report.Results, out string) int {
	refs := report.References{Direct: setups.DirectName, OVSDefault: setups.OVSDefaultName, OVSKind: setups.KindOVS}
	for _, sec := range results.Sections() {
		fmt.Println()
		sec.WriteText(os.Stdout)
	}
	fmt.Println()
	for _, tr := range slices.Concat(results.Targets, results.ScaleTargets, results.OpenFlowTargets, results.ConntrackTargets) {
		fmt.Printf("target %-13s %s: %s\n", "["+tr.Status+"]", tr.Text, tr.Measured)
	}
	dir := filepath.Join(out, results.Started.UTC().Format("20060102-150405"))
	written, err := report.WriteFiles(dir, results, refs)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gvs-bench:", err)
		return 1
	}
	latest := filepath.Join(out, "latest")
	os.Remove(latest)
	os.Symlink(filepath.Base(dir), latest)
	fmt.Printf("\nresults: %s (%d files; Markdown: %s)\n", dir, len(written), filepath.Join(dir, "results.md"))
	return 0
}

func selectSetups(all []setups.Setup, only string) ([]setups.Setup, error) {
	if only == "" {
		return all, nil
	}
	if only == noSetup {
		return nil, nil
	}
	var out []setups.Setup
	for _, name := range strings.Split(only, ",") {
		i := slices.IndexFunc(all, func(s setups.Setup) bool { return s.Name() == name })
		if i < 0 {
			known := make([]string, len(all))
			for j, s := range all {
				known[j] = s.Name()
			}
			return nil, fmt.Errorf("unknown setup %q (known: %s)", name, strings.Join(known, ", "))
		}
		if !slices.Contains(out, all[i]) {
			out = append(out, all[i])
		}
	}
	// Run them in the session's usual order, whatever the order asked.
	slices.SortStableFunc(out, func(a, b setups.Setup) int {
		return slices.Index(all, a) - slices.Index(all, b)
	})
	return out, nil
}

// onlyNamed keeps the setups named in only (comma-separated); names of
// other parts' setups are ignored.
func onlyNamed(all []setups.Setup, only string) []setups.Setup {
	var out []setups.Setup
	for _, s := range all {
		if slices.Contains(strings.Split(only, ","), s.Name()) {
			out = append(out, s)
		}
	}
	return out
}

// openFlowLegend explains the OpenFlow part's figures.
func openFlowLegend(tableFlows int) string {
	return fmt.Sprintf("OpenFlow part: \"-ovn\" setups run the pipeline OVN 23.03 installs for one logical switch with two ports (tests/testdata/ovn-two-port.flows, 141 flows in 44 tables; "+
		"its MACs and IPv4 addresses replaced by the client's and server's, whose ports get ofport_request 1 and 2), on a bridge with fail-mode=secure and protocols=OpenFlow15, loaded with `ovs-ofctl -O OpenFlow15 add-tlv-map` and `add-flows`; "+
		"the others switch with NORMAL. The extra flow senders have no logical port, so the new-flow test of this part sends from the client alone (%d sender processes, disjoint flows), for every setup; "+
		"rates double from 10,000/s, stopping at the first with loss or when the sender falls more than 10%% short of the rate offered. "+
		"Flow tables: %d generated flows (30%% in_port+dl_dst exact matches setting metadata, 60%% ip+metadata+nw_dst /32 routes with set_field/dec_ttl/resubmit, the rest next hops with output, two drops) "+
		"loaded with one `ovs-ofctl -O OpenFlow15 add-flows` (and with `--bundle`) into a freshly started switch whose bridge has no ports; wall time of the ovs-ofctl call, flow count checked with dump-aggregate; "+
		"RSS of the switch daemon alone (ovs-vswitchd, or gvs-vswitchd with its embedded database) 1 s before and 1 s after; growth per rule = (after - before) / flows.", openFlowSenderProcs, tableFlows)
}

// withoutNames drops from a comma-separated -setups list the OpenFlow
// part's own setups (those of other named …-ovn); when nothing is left it
// returns noSetup, which selects none rather than all.
func withoutNames(only string, other []setups.Setup) string {
	var keep []string
	for _, name := range strings.Split(only, ",") {
		if !slices.ContainsFunc(other, func(s setups.Setup) bool { return s.Name() == name && strings.HasSuffix(name, "-ovn") }) {
			keep = append(keep, name)
		}
	}
	if len(keep) == 0 {
		return noSetup
	}
	return strings.Join(keep, ",")
}

// noSetup is a -setups value that selects no setup.
const noSetup = ","

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"gvs/bench/conntrack"
	"gvs/bench/measure"
	"gvs/bench/probe"
	"gvs/bench/report"
	"gvs/bench/setups"
	"gvs/bench/topo"
)

// The conntrack part (-only conntrack): TCP, TCP connections per second
// and memory per tracked connection through the classic ct firewall
// (bench/conntrack.FirewallFlows) and through the same forwarding
// without ct, for gvs and the best-tuned Open vSwitch.

// conntrackBudget bounds the conntrack part: no new run of the setups
// starts after it.
const conntrackBudget = 10 * time.Minute

// connSenderProcs is how many _conn-client processes the client runs at
// once, each with connParallel connections in flight.
const (
	connSenderProcs = 4
	connParallel    = 4
)

// connsHeld is how many connections the memory test holds open.
func connsHeld(c config) int {
	if c.quick {
		return 2000
	}
	return 10000
}

func connSeconds(c config) time.Duration {
	if c.quick {
		return 2 * time.Second
	}
	return 3 * time.Second
}

// conntrackPlan is the tests of the conntrack part, under IDs prefixed
// "ct-".
func conntrackPlan(c config) []test {
	return []test{
		prefixed(tcpTest(c, 1), "ct-"),
		prefixed(tcpTest(c, 4), "ct-"),
		// Memory before the rate test, whose connections would leave
		// the tracker's memory grown already.
		connMemoryTest(c),
		connRateTest(c),
	}
}

// runConntrack measures the conntrack setups, interleaved run by run, into
// a section of its own.
func (r *runner) runConntrack(all []setups.Setup) *report.Section {
	r.sec = &report.Section{Title: "Conntrack: a stateful firewall through ct"}
	r.deadline = time.Now().Add(conntrackBudget)
	r.runDatapath(all, conntrackPlan(r.cfg))
	return r.sec
}

func connRateTest(c config) test {
	name := fmt.Sprintf("TCP connections (connect, server closes, close) from %d processes, %d in flight each", connSenderProcs, connParallel)
	figs := []report.Figure{
		{ID: "ct-conns", Test: name, Label: "rate", Unit: "connections/s", Higher: true},
		{ID: "ct-conns-fail", Test: name, Label: "failed or timed out", Unit: "connections"},
		{ID: "ct-conns-cpu", Test: name, Label: "switch CPU", Unit: "CPU µs/connection"},
	}
	d := connSeconds(c)
	return test{id: "ct-conns", figures: figs, cost: d + 3*time.Second,
		run: func(r *runner) (map[string]float64, error) { return r.connRate(d) }}
}

// connRate runs connSenderProcs _conn-client processes in the client's
// namespace against a _conn-server in the server's for d.
func (r *runner) connRate(d time.Duration) (map[string]float64, error) {
	srv, err := r.startServer(r.topo.Server, "_conn-server", "-addr", topo.ServerIP)
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	// The memory test's connections close just before: let their
	// teardown through the switch first.
	time.Sleep(memSettle)
	pids := r.setup.PIDs()
	cpuBefore := measure.CPUSeconds(pids)
	results := make([]probe.ConnClientResult, connSenderProcs)
	errs := make([]error, connSenderProcs)
	var wg sync.WaitGroup
	for i := range connSenderProcs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = r.probeJSON(r.topo.Client, d+15*time.Second, &results[i], "_conn-client", "-dst", topo.ServerIP,
				"-duration", d.String(), "-parallel", fmt.Sprint(connParallel))
		}()
	}
	wg.Wait()
	cpu := measure.CPUSeconds(pids) - cpuBefore
	var rate, conns, failed float64
	for i, res := range results {
		if errs[i] != nil {
			return nil, errs[i]
		}
		rate += res.PerSecond
		conns += float64(res.Connections)
		failed += float64(res.Failures)
	}
	if conns == 0 {
		return nil, fmt.Errorf("no connection completed (%v failed)", failed)
	}
	vals := map[string]float64{"ct-conns": rate, "ct-conns-fail": failed}
	if len(pids) > 0 {
		vals["ct-conns-cpu"] = cpu / conns * 1e6
	}
	return vals, nil
}

func connMemoryTest(c config) test {
	n := connsHeld(c)
	name := fmt.Sprintf("%d TCP connections held open through the ct firewall", n)
	figs := []report.Figure{
		{ID: "ct-mem-perconn", Test: name, Label: "switch RSS growth per connection", Unit: "bytes"},
		{ID: "ct-mem-heap-perconn", Test: name, Label: "Go heap growth per connection (gvs's memory/show go-heap-kB)", Unit: "bytes"},
		{ID: "ct-mem-tracked", Test: name, Label: "connections in dpctl/dump-conntrack", Unit: "connections", Higher: true},
	}
	// Not repeated on a busy machine: the first attempt's connections
	// would still be in the tracker (closing) and in its memory.
	return test{id: "ct-mem", figures: figs, cost: 8 * time.Second, noRepeat: true,
		run: func(r *runner) (map[string]float64, error) { return r.connMemory(n) }}
}

// memSettle is how long the switch sits before each RSS reading.
const memSettle = time.Second

// connMemory opens n connections from the client and holds them, reads
// the switch's RSS before and after, and checks with
// dpctl/dump-conntrack that its tracker holds them. Setups whose flows do
// not track connections yield nothing.
func (r *runner) connMemory(n int) (map[string]float64, error) {
	cs, ok := r.setup.(setups.ConntrackSwitch)
	if !ok || !cs.TracksConnections() {
		return nil, nil
	}
	srv, err := r.startServer(r.topo.Server, "_conn-server", "-addr", topo.ServerIP)
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	pids := r.setup.PIDs()
	time.Sleep(memSettle)
	before, err := measure.RSSBytes(pids)
	if err != nil {
		return nil, err
	}
	heapBefore, heapOK := r.goHeapKB(cs)
	hold, res, err := r.startHold(n)
	if err != nil {
		return nil, err
	}
	defer func() {
		hold.stop()
		r.drainConnections(cs)
	}()
	if res.Established < n*95/100 {
		return nil, fmt.Errorf("only %d of %d connections established", res.Established, n)
	}
	time.Sleep(memSettle)
	after, err := measure.RSSBytes(pids)
	if err != nil {
		return nil, err
	}
	heapAfter, heapAfterOK := r.goHeapKB(cs)
	ctx, cancel := context.WithTimeout(r.ctx, 30*time.Second)
	dump, err := cs.Appctl(ctx, "dpctl/dump-conntrack")
	cancel()
	if err != nil {
		return nil, fmt.Errorf("dpctl/dump-conntrack: %v", err)
	}
	tracked := conntrack.CountConnections(dump, probe.ConnPortHold)
	if tracked < res.Established*95/100 {
		return nil, fmt.Errorf("the switch's tracker holds %d of the %d connections open", tracked, res.Established)
	}
	vals := map[string]float64{
		"ct-mem-perconn": conntrack.BytesPerConnection(uint64(before), uint64(after), res.Established),
		"ct-mem-tracked": float64(tracked),
	}
	if heapOK && heapAfterOK {
		vals["ct-mem-heap-perconn"] = conntrack.BytesPerConnection(heapBefore*1024, heapAfter*1024, res.Established)
	}
	return vals, nil
}

// goHeapKB is gvs-vswitchd's own account of its Go heap (memory/show's
// go-heap-kB): RSS says little of a Go heap's growth while the runtime
// still has room it took earlier. Open vSwitch has no such figure.
func (r *runner) goHeapKB(cs setups.ConntrackSwitch) (uint64, bool) {
	if r.setup.Kind() != setups.KindGVS {
		return 0, false
	}
	ctx, cancel := context.WithTimeout(r.ctx, 10*time.Second)
	defer cancel()
	out, err := cs.Appctl(ctx, "memory/show")
	if err != nil {
		return 0, false
	}
	return conntrack.MemoryShowValue(out, "go-heap-kB")
}

// drainWait bounds the wait for the memory test's connections to leave
// the established state in the switch's tracker.
const drainWait = 20 * time.Second

// drainConnections waits until the switch's tracker holds no established
// connection to the memory test's port: tearing 10,000 connections down
// at once is a storm of its own, which must not fall into the next
// test. It gives up quietly after drainWait (the next test then shows
// what the switch does).
func (r *runner) drainConnections(cs setups.ConntrackSwitch) {
	deadline := time.Now().Add(drainWait)
	for time.Now().Before(deadline) && r.ctx.Err() == nil {
		ctx, cancel := context.WithTimeout(r.ctx, 10*time.Second)
		dump, err := cs.Appctl(ctx, "dpctl/dump-conntrack")
		cancel()
		if err != nil || conntrack.CountConnections(dump, probe.ConnPortHold) == 0 {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	r.prog.logf("%s: connections of the memory test still established after %v", r.setup.Name(), drainWait)
}

// startHold starts _conn-hold in the client's namespace and waits for its
// report that the connections are up; stop closes them.
func (r *runner) startHold(n int) (*server, probe.ConnHoldResult, error) {
	var res probe.ConnHoldResult
	cmd := topo.Command(r.ctx, r.topo.Client, r.self, "_conn-hold", "-dst", topo.ServerIP, "-n", fmt.Sprint(n))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, res, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, res, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, res, err
	}
	s := &server{cmd: cmd, stdin: stdin, stdout: bufio.NewReader(out)}
	line := make(chan string, 1)
	go func() {
		l, _ := s.stdout.ReadString('\n')
		line <- l
	}()
	select {
	case l := <-line:
		if err := json.Unmarshal([]byte(l), &res); err != nil {
			s.kill()
			return nil, res, fmt.Errorf("_conn-hold: %q: %v %s", l, err, strings.TrimSpace(stderr.String()))
		}
	case <-time.After(60 * time.Second):
		s.kill()
		return nil, res, fmt.Errorf("_conn-hold: connections not up after 60 s")
	}
	return s, res, nil
}

// conntrackLegend explains the conntrack part's figures.
func conntrackLegend(c config) string {
	return fmt.Sprintf("Conntrack part: \"-ct\" setups load the classic stateful firewall (table 0: ip -> ct(table=1), arp -> NORMAL; table 1: +trk+new from the client -> ct(commit),output to the server; +trk+est -> output to the other port; the rest dropped), "+
		"\"-noct\" setups the same forwarding without ct, on a bridge of the client's and server's ports only with fail-mode=secure and protocols=OpenFlow15, loaded with `ovs-ofctl -O OpenFlow15 add-flows`. "+
		"TCP: iperf3 as in the datapath part. Connections per second: %d processes in the client's namespace, each with %d connections in flight, each connection a TCP connect to the server, "+
		"which closes it at once, the client waiting for that close and closing its end, for %v; the rate is the sum of the processes' completed connections per second. "+
		"Memory: %d connections opened from the client and held; the switch daemon's RSS 1 s before and 1 s after they are up, growth over connections (for gvs also the growth of its Go heap as its memory/show reports it, go-heap-kB: RSS misses what the Go runtime had already taken); "+
		"the connections are counted in the switch's own `ovs-appctl dpctl/dump-conntrack` (the figure is refused when it holds fewer than 95%% of them).",
		connSenderProcs, connParallel, connSeconds(c), connsHeld(c))
}

// withoutSetups drops from a comma-separated -setups list the names of
// drop (the conntrack part's own setups, which the datapath part does not
// know); when nothing is left it returns noSetup.
func withoutSetups(only string, drop []setups.Setup) string {
	if only == "" {
		return ""
	}
	var keep []string
	for _, name := range strings.Split(only, ",") {
		if !slices.ContainsFunc(drop, func(s setups.Setup) bool { return s.Name() == name }) {
			keep = append(keep, name)
		}
	}
	if len(keep) == 0 {
		return noSetup
	}
	return strings.Join(keep, ",")
}

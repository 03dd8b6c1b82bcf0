package appctl

import (
	"maps"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"gvs/dpif"
	"gvs/metrics/source/sourcetest"
)

func TestDatapathCommandsWithRealAppctl(t *testing.T) {
	e := newEnv(t)
	show := e.ok(t, "dpif/show")
	want := "netdev@ovs-netdev: hit:0 missed:0\n  br0:\n    br0 65534/3: (tap)\n    p1 1/1: (system)\n    p2 2/2: (system)\n"
	if show != want {
		t.Fatalf("dpif/show before traffic:\n%s\nwant:\n%s", show, want)
	}
	e.traffic(t, 20)
	show = e.ok(t, "dpif/show")
	if hit, missed := number(t, show, "hit:"), number(t, show, "missed:"); hit+missed != 40 || missed == 0 {
		t.Errorf("dpif/show after 40 packets: hit %d missed %d\n%s", hit, missed, show)
	}

	dps := e.ok(t, "dpctl/show", "-s")
	if !strings.HasPrefix(dps, "netdev@ovs-netdev:\n  lookups: hit:") || !strings.Contains(dps, "  port 1: p1\n") ||
		!strings.Contains(dps, "  port 3: br0 (tap)\n") || number(t, dps, "RX packets:") != 40 {
		t.Errorf("dpctl/show -s:\n%s", dps)
	}
	if got := e.ok(t, "dpctl/show", "netdev@ovs-netdev"); !strings.HasPrefix(got, "netdev@ovs-netdev:\n") {
		t.Errorf("dpctl/show netdev@ovs-netdev:\n%s", got)
	}

	// Learning a destination deletes the flood flow towards it; if one
	// direction's frames were all handled before the other side was
	// learned, that direction has no flow left. One more frame each way,
	// with both addresses now learned, installs both unicast flows; as in
	// Open vSwitch, the frame whose upcall installs a flow is not counted
	// in it (packets:0, used:never), so a second frame each way goes
	// through each flow.
	e.traffic(t, 1)
	e.traffic(t, 1)
	flows := e.ok(t, "dpctl/dump-flows")
	lines := strings.Split(strings.TrimSpace(flows), "\n")
	// How many packets went through the current flows depends on how
	// the first packets of each direction interleaved (a flood flow, and
	// its counts, are replaced once the destination is learned): at
	// least the last frame each way, at most all 2*(20+2) sent.
	through := number(t, flows, "packets:")
	if len(lines) != 2 || through < 2 || through > 44 {
		t.Fatalf("dpctl/dump-flows after learning (2 flows, 2-44 packets through them):\n%s", flows)
	}
	for _, l := range lines {
		if !regexp.MustCompile(`^recirc_id\(0\),in_port\([12]\),packet_type\(ns=0,id=0\),eth\(src=02:00:00:00:00:0[12],dst=02:00:00:00:00:0[12]\).*, packets:\d+, bytes:\d+, used:[0-9.]+s, actions:[12]$`).MatchString(l) {
			t.Errorf("flow line %q", l)
		}
	}
	if got := e.ok(t, "dpctl/dump-flows", "-m", "netdev@ovs-netdev", "type=all"); stripUsed(got) != stripUsed(flows) {
		t.Errorf("dump-flows with dp and type=all differs:\n%s", got)
	}
	if got := e.ok(t, "dpctl/dump-flows", "type=offloaded"); got != "" {
		t.Errorf("offloaded flows: %q", got)
	}
	e.traffic(t, 5)
	if n := number(t, e.ok(t, "dpctl/dump-flows"), "packets:"); n != through+10 {
		t.Errorf("flow packets after 10 more: %d, want %d", n, through+10)
	}
	e.fails(t, "ovs-vswitchd: datapath not found (Invalid argument)\n", "dpctl/dump-flows", "nosuchdp")
	e.fails(t, "Unrecognized option --bogus\n", "dpctl/dump-flows", "--bogus")
	e.fails(t, "ovs-vswitchd: deleting flows listed in a file (Operation not supported)\n", "dpctl/del-flows", "flows.txt")

	if got := e.ok(t, "dpctl/del-flows"); got != "" {
		t.Errorf("del-flows replied %q", got)
	}
	if got := e.ok(t, "dpctl/dump-flows"); got != "" {
		t.Errorf("flows after del-flows:\n%s", got)
	}
	if n := e.sw.DP.NumFlows(); n != 0 {
		t.Errorf("datapath has %d flows after del-flows", n)
	}
}

func TestPMDCommandsWithRealAppctl(t *testing.T) {
	e := newEnv(t)
	e.traffic(t, 20)
	stats := e.ok(t, "dpif-netdev/pmd-stats-show")
	if strings.Count(stats, "pmd thread pmd_id ") != 2 || number(t, stats, "packets received:") != 40 {
		t.Fatalf("pmd-stats-show:\n%s", stats)
	}
	for _, label := range []string{"emc hits:", "megaflow hits:", "miss with success upcall:", "miss with failed upcall:"} {
		number(t, stats, label)
	}
	if hits, miss := number(t, stats, "emc hits:")+number(t, stats, "megaflow hits:"), number(t, stats, "miss with success upcall:"); hits+miss != 40 {
		t.Errorf("hits %d + misses %d != 40", hits, miss)
	}
	// One megaflow mask: every megaflow hit probed one subtable.
	if mf := number(t, stats, "megaflow hits:"); mf > 0 && !strings.Contains(stats, "  avg. subtable lookups per megaflow hit: 1.00\n") {
		t.Errorf("%d megaflow hits in the only subtable, lookups per hit not 1.00:\n%s", mf, stats)
	}
	if !regexp.MustCompile(`processing ns: \d+ \(\d+\.\d\d%\)`).MatchString(stats) {
		t.Errorf("no processing time:\n%s", stats)
	}
	one := e.ok(t, "dpif-netdev/pmd-stats-show", "-pmd", "1")
	if strings.Count(one, "pmd thread") != 1 || !strings.HasPrefix(one, "pmd thread pmd_id 1 (not pinned):\n") {
		t.Errorf("-pmd 1:\n%s", one)
	}
	e.traffic(t, 10)
	if n := number(t, e.ok(t, "dpif-netdev/pmd-stats-show"), "packets received:"); n != 60 {
		t.Errorf("packets received after 20 more: %d, want 60", n)
	}

	if got := e.ok(t, "dpif-netdev/pmd-stats-clear"); got != "" {
		t.Errorf("pmd-stats-clear replied %q", got)
	}
	if n := number(t, e.ok(t, "dpif-netdev/pmd-stats-show"), "packets received:"); n != 0 {
		t.Errorf("packets received after clear: %d", n)
	}
	e.traffic(t, 3)
	if n := number(t, e.ok(t, "dpif-netdev/pmd-stats-show", "netdev@ovs-netdev"), "packets received:"); n != 6 {
		t.Errorf("packets received after clear and 6 more: %d", n)
	}
	// Clearing is the command's view only: the datapath's counters, which
	// metrics export, keep counting.
	var total uint64
	for _, p := range e.sw.DP.PMDStats() {
		total += p.Packets
	}
	if total != 66 {
		t.Errorf("datapath PMD packets %d, want 66", total)
	}
	e.fails(t, "please specify an existing datapath\n", "dpif-netdev/pmd-stats-show", "system@ovs-system")

	rxq := e.ok(t, "dpif-netdev/pmd-rxq-show")
	if !strings.HasPrefix(rxq, "Displaying last 60 seconds pmd usage %\npmd thread pmd_id 0 (not pinned):\n  isolated : false\n") {
		t.Errorf("pmd-rxq-show:\n%s", rxq)
	}
	for _, q := range []string{"p1                queue-id:  0", "p1                queue-id:  1", "p2                queue-id:  0", "p2                queue-id:  1", "br0               queue-id:  0"} {
		re := regexp.MustCompile(`(?m)^  port: ` + regexp.QuoteMeta(q) + ` \(enabled\)   pmd usage: +\d+ %$`)
		if len(re.FindAllString(rxq, -1)) != 1 {
			t.Errorf("queue %q not listed once with a usage figure:\n%s", q, rxq)
		}
	}
	if got := e.ok(t, "dpif-netdev/pmd-rxq-show", "-secs", "7"); !strings.HasPrefix(got, "Displaying last 7 seconds") {
		t.Errorf("-secs 7:\n%s", got)
	}
}

// TestPMDRxqRebalanceWithRealAppctl: traffic only on queue 0 of p1 and
// p2, which PortAdd put on the same PMD (queues go round-robin: p1/0 ->
// 0, p1/1 -> 1, p2/0 -> 0, p2/1 -> 1, br0/0 -> 0). The cycles algorithm
// puts the two loaded queues on different PMDs, which takes exactly two
// moves; pmd-rxq-show then shows the new assignment.
func TestPMDRxqRebalanceWithRealAppctl(t *testing.T) {
	e := newEnv(t)
	before := assignment(t, e.ok(t, "dpif-netdev/pmd-rxq-show"))
	if before["p1/0"] != before["p2/0"] || before["p1/1"] == before["p1/0"] {
		t.Fatalf("initial assignment %v", before)
	}
	e.trafficOn(t, 200, func(int) int { return 0 })
	reb := e.ok(t, "dpif-netdev/pmd-rxq-rebalance")
	if !strings.HasPrefix(reb, "pmd rxq rebalance requested.\n") {
		t.Fatalf("pmd-rxq-rebalance:\n%s", reb)
	}
	moveLine := regexp.MustCompile(`^  port: (\S+) +queue-id: +(\d+)  pmd (\d+) -> pmd (\d+)  \(usage +\d+ %, cycles\)$`)
	moves := strings.Split(strings.TrimSuffix(strings.TrimPrefix(reb, "pmd rxq rebalance requested.\n"), "\n"), "\n")
	if len(moves) != 2 {
		t.Fatalf("want 2 moves:\n%s", reb)
	}
	want := maps.Clone(before)
	for _, l := range moves {
		m := moveLine.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("move line %q", l)
		}
		q := m[1] + "/" + m[2]
		if from, _ := strconv.Atoi(m[3]); before[q] != from {
			t.Errorf("%s moved from pmd %d, was on %d", q, from, before[q])
		}
		want[q], _ = strconv.Atoi(m[4])
	}
	after := assignment(t, e.ok(t, "dpif-netdev/pmd-rxq-show"))
	if !maps.Equal(after, want) {
		t.Errorf("assignment after rebalance %v, want %v", after, want)
	}
	if after["p1/0"] == after["p2/0"] {
		t.Errorf("loaded queues still share a PMD: %v", after)
	}
	// The queues still forward from their new PMDs.
	e.trafficOn(t, 20, func(i int) int { return i % 2 })
}

// TestPMDRxqUsageWindowWithRealAppctl: with 250 ms sampling intervals
// (a 3 s window), a second of traffic on p1 queue 0 shows in the whole
// window's usage, and not in "-secs 1" (4 intervals) once two seconds
// have passed without traffic.
func TestPMDRxqUsageWindowWithRealAppctl(t *testing.T) {
	e := newEnvConfig(t, dpif.Config{PMDs: 2, RxqInterval: 250 * time.Millisecond, RevalidateInterval: 20 * time.Millisecond})
	e.trafficOn(t, 4, func(int) int { return 0 }) // learn both MACs
	frame := sourcetest.Frame(sourcetest.MAC(2), sourcetest.MAC(1))
	for end := time.Now().Add(time.Second); time.Now().Before(end); {
		for range 256 {
			e.devs[0].Inject(0, frame)
		}
		e.devs[1].TakeSent()
		runtime.Gosched()
	}
	time.Sleep(2 * time.Second)
	usage := func(show string) int {
		m := regexp.MustCompile(`(?m)^  port: p1                queue-id:  0 \(enabled\)   pmd usage: +(\d+) %$`).FindStringSubmatch(show)
		if m == nil {
			t.Fatalf("no usage for p1 queue 0:\n%s", show)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	whole := e.ok(t, "dpif-netdev/pmd-rxq-show")
	recent := e.ok(t, "dpif-netdev/pmd-rxq-show", "-secs", "1")
	if !strings.HasPrefix(recent, "Displaying last 1 seconds pmd usage %\n") {
		t.Errorf("-secs 1 header:\n%s", recent)
	}
	if u := usage(whole); u < 1 {
		t.Errorf("p1 queue 0 usage over the window %d %%, want > 0 after a second of traffic:\n%s", u, whole)
	}
	if u := usage(recent); u != 0 {
		t.Errorf("p1 queue 0 usage over the last second %d %%, want 0 (no traffic):\n%s", u, recent)
	}
	// A queue that received nothing shows 0 %, not NOT AVAIL: measured.
	if !regexp.MustCompile(`(?m)^  port: p2                queue-id:  1 \(enabled\)   pmd usage:  0 %$`).MatchString(whole) {
		t.Errorf("idle queue p2/1:\n%s", whole)
	}
}

var (
	rxqPMDLine   = regexp.MustCompile(`^pmd thread pmd_id (\d+) \(not pinned\):$`)
	rxqQueueLine = regexp.MustCompile(`^  port: (\S+) +queue-id: +(\d+) \(enabled\)   pmd usage: +\d+ %$`)
)

// assignment parses pmd-rxq-show into "port/queue" -> PMD index.
func assignment(t *testing.T, show string) map[string]int {
	t.Helper()
	out, pmd := map[string]int{}, -1
	for _, l := range strings.Split(show, "\n") {
		if m := rxqPMDLine.FindStringSubmatch(l); m != nil {
			pmd, _ = strconv.Atoi(m[1])
		} else if m := rxqQueueLine.FindStringSubmatch(l); m != nil {
			out[m[1]+"/"+m[2]] = pmd
		}
	}
	if len(out) != 5 {
		t.Fatalf("pmd-rxq-show lists %d queues, want 5:\n%s", len(out), show)
	}
	return out
}

var usedField = regexp.MustCompile(`used:[0-9.]+s`)

func stripUsed(s string) string { return usedField.ReplaceAllString(s, "used:") }

func TestBridgeCommandsWithRealAppctl(t *testing.T) {
	e := newEnv(t)
	if got := e.ok(t, "fdb/show", "br0"); got != " port  VLAN  MAC                Age\n" {
		t.Errorf("empty fdb/show: %q", got)
	}
	e.traffic(t, 10)
	fdb := e.ok(t, "fdb/show", "br0")
	if !regexp.MustCompile(`(?m)^    1     0  02:00:00:00:00:01    \d$`).MatchString(fdb) ||
		!regexp.MustCompile(`(?m)^    2     0  02:00:00:00:00:02    \d$`).MatchString(fdb) {
		t.Errorf("fdb/show:\n%s", fdb)
	}
	st := e.ok(t, "fdb/stats-show", "br0")
	if !strings.Contains(st, "Current/maximum MAC entries in the table: 2/8192\n") || number(t, st, "learned MAC entries     :") != 2 {
		t.Errorf("fdb/stats-show:\n%s", st)
	}
	e.fails(t, "no such bridge\n", "fdb/show", "br9")
	e.fails(t, "no such bridge\n", "fdb/flush", "br9")

	// The default flow's counters are the datapath flows' statistics,
	// which the revalidator credits to it every half second.
	dumpFlows := regexp.MustCompile(`^duration=\d+s, n_packets=20, n_bytes=1200, priority=0,actions=NORMAL\n$`)
	dump := e.eventuallyOK(t, dumpFlows.MatchString, "bridge/dump-flows", "br0")
	if !dumpFlows.MatchString(dump) {
		t.Errorf("bridge/dump-flows:\n%s", dump)
	}
	e.traffic(t, 5)
	dump = e.eventuallyOK(t, func(s string) bool { return strings.Contains(s, "n_packets=30,") }, "bridge/dump-flows", "br0")
	if n := number(t, dump, "n_packets="); n != 30 {
		t.Errorf("n_packets after 10 more: %d", n)
	}
	if got := e.ok(t, "bridge/dump-flows", "--offload-stats", "br0"); !strings.Contains(got, "n_offload_packets=0, n_offload_bytes=0, priority=0") {
		t.Errorf("--offload-stats: %s", got)
	}
	e.fails(t, "Unknown bridge\n", "bridge/dump-flows", "br9")
	// ofproto/list: one bridge name a line, as ofproto_unixctl_list.
	if got := e.ok(t, "ofproto/list"); got != "br0\n" {
		t.Errorf("ofproto/list: %q", got)
	}

	if got := e.ok(t, "fdb/flush", "br0"); got != "table successfully flushed\n" {
		t.Errorf("fdb/flush: %q", got)
	}
	if got := e.ok(t, "fdb/show", "br0"); got != " port  VLAN  MAC                Age\n" {
		t.Errorf("fdb/show after flush: %q", got)
	}
	e.traffic(t, 1)
	// The revalidator learns from the datapath flows' statistics too:
	// let it take this traffic's before the flush, so that nothing
	// learned before the flush comes back after it.
	e.sw.SW.Handler().Revalidate()
	if got := e.ok(t, "fdb/flush"); got != "table successfully flushed\n" {
		t.Errorf("fdb/flush (all): %q", got)
	}
	if n := e.sw.SW.Bridge("br0").MACStats().Entries; n != 0 {
		t.Errorf("%d MAC entries after fdb/flush", n)
	}
}

func TestProcessCommandsWithRealAppctl(t *testing.T) {
	e := newEnv(t)
	mem := e.ok(t, "memory/show")
	if !regexp.MustCompile(`^bridges:1 flows:0 go-heap-kB:\d+ goroutines:\d+ mac-entries:0 pmds:2 ports:3 rxqs:5\n$`).MatchString(mem) {
		t.Errorf("memory/show: %q", mem)
	}
	e.traffic(t, 10)
	if mem := e.ok(t, "memory/show"); number(t, mem, "flows:") != uint64(e.sw.DP.NumFlows()) || number(t, mem, "flows:") == 0 ||
		!strings.Contains(mem, " mac-entries:2 ") {
		t.Errorf("memory/show after traffic: %q", mem)
	}

	cov := e.ok(t, "coverage/show")
	if !regexp.MustCompile(`^Event coverage, avg rate over last: \d+ seconds, last minute, last hour,  hash=[0-9a-f]{8}:\n`).MatchString(cov) ||
		!regexp.MustCompile(`\n\d+ events never hit\n$`).MatchString(cov) {
		t.Errorf("coverage/show:\n%s", cov)
	}
	line := regexp.MustCompile(`(?m)^netdev_received +\d+\.\d/sec +\d+\.\d{3}/sec +\d+\.\d{4}/sec   total: 20$`)
	if !line.MatchString(cov) {
		t.Errorf("no netdev_received line with total 20:\n%s", cov)
	}
	e.traffic(t, 5)
	cov = e.ok(t, "coverage/show")
	if !regexp.MustCompile(`(?m)^netdev_received .* total: 30$`).MatchString(cov) {
		t.Errorf("netdev_received total after 10 more:\n%s", cov)
	}
	e.ok(t, "dpctl/del-flows")
	if !regexp.MustCompile(`(?m)^dpif_flow_flush .* total: 1$`).MatchString(e.ok(t, "coverage/show")) {
		t.Error("dpif_flow_flush not counted")
	}

	sb := e.ok(t, "gvs/sock-buf-show")
	if !strings.HasPrefix(sb, "bridge  port  type    requested  rcvbuf  sndbuf  kernel_rx_drops  tx_drops\n") ||
		!regexp.MustCompile(`(?m)^br0     p1    system  default    -       -       0                0$`).MatchString(sb) {
		t.Errorf("gvs/sock-buf-show:\n%s", sb)
	}
	e.fails(t, "no such bridge\n", "gvs/sock-buf-show", "br9")

	list := e.ok(t, "list-commands")
	for _, c := range []string{"dpif/show", "dpctl/dump-flows", "dpctl/del-flows", "dpif-netdev/pmd-stats-show",
		"dpif-netdev/pmd-stats-clear", "dpif-netdev/pmd-rxq-show", "dpif-netdev/pmd-rxq-rebalance", "fdb/show",
		"fdb/flush", "bridge/dump-flows", "memory/show", "coverage/show", "gvs/sock-buf-show"} {
		if !strings.Contains(list, "\n  "+c+" ") {
			t.Errorf("list-commands lacks %s", c)
		}
	}
	e.fails(t, "\"bogus/cmd\" is not a valid command (use \"list-commands\" to see a list of valid commands)\n", "bogus/cmd")
}

// TestNoDatapathYet: before the first bridge the switch has no datapath;
// commands say so the way Open vSwitch does without one.
func TestNoDatapathYet(t *testing.T) {
	needAppctl(t)
	e := &env{sw: nil}
	e.serveSwitch(t, emptySwitch{})
	if got := e.ok(t, "dpif/show"); got != "" {
		t.Errorf("dpif/show: %q", got)
	}
	e.fails(t, "ovs-vswitchd: no datapaths exist\novs-vswitchd: datapath not found (Invalid argument)\n", "dpctl/dump-flows")
	e.fails(t, "please specify an existing datapath\n", "dpif-netdev/pmd-stats-show")
	e.fails(t, "please specify an existing datapath\n", "dpif-netdev/pmd-rxq-rebalance")
	e.fails(t, "no such bridge\n", "fdb/show", "br0")
	if got := e.ok(t, "fdb/flush"); got != "table successfully flushed\n" {
		t.Errorf("fdb/flush: %q", got)
	}
	if got := e.ok(t, "memory/show"); !strings.HasPrefix(got, "go-heap-kB:") {
		t.Errorf("memory/show: %q", got)
	}
	e.ok(t, "coverage/show")
}

// TestOfprotoTrace: ofproto/trace through the default flow (NORMAL) with
// a learned destination, in the bridge flow and odp flow forms.
func TestOfprotoTrace(t *testing.T) {
	e := newEnv(t)
	e.traffic(t, 2) // learns 02:..:01 on port 1 and 02:..:02 on port 2
	flow := "in_port=1,dl_src=02:00:00:00:00:01,dl_dst=02:00:00:00:00:02,dl_type=0x0800"
	out := e.ok(t, "ofproto/trace", "br0", flow)
	for _, want := range []string{
		"Flow: ip,in_port=1,vlan_tci=0x0000,dl_src=02:00:00:00:00:01,dl_dst=02:00:00:00:00:02,nw_src=0.0.0.0,",
		"bridge(\"br0\")",
		" 0. priority 0\n",
		"    NORMAL\n",
		"Final flow: unchanged",
		"Datapath actions: 2",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("ofproto/trace lacks %q:\n%s", want, out)
		}
	}
	odp := e.ok(t, "ofproto/trace", "in_port(1),eth(src=02:00:00:00:00:01,dst=02:00:00:00:00:02),eth_type(0x0800)")
	if !strings.Contains(odp, "Datapath actions: 2") {
		t.Errorf("odp form:\n%s", odp)
	}
	e.fails(t, "br9: unknown bridge\n", "ofproto/trace", "br9", flow)
}

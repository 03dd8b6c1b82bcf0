package bridge

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAppctlDuringTraffic drives every ovs-appctl command of
// gvs-vswitchd with the real ovs-appctl, against the daemon's control
// socket, while iperf3 pushes TCP through the switch, and checks that the
// figures each command reports move between two calls (or are reset and
// grow again where the command resets them). "exit" comes last and must
// stop the daemon cleanly.
func TestAppctlDuringTraffic(t *testing.T) {
	requireEnv(t, iperfPath, appctlPath)
	s := newSwitchd(t, modes[0])
	br := "gvbeabr"
	h1 := newHost(t, "gvbe-gvbea1", "gvbea1", "198.18.30.1")
	h2 := newHost(t, "gvbe-gvbea2", "gvbea2", "198.18.30.2")
	s.vsctl("add-br", br)
	s.vsctl("add-port", br, h1.Port)
	s.vsctl("add-port", br, h2.Port)
	h3 := newQuietHost(t, "gvbe-gvbea3", "gvbea3", "198.18.30.3")
	s.vsctl("add-port", br, h3.Port)
	mustPing(t, h1, h2)
	a := &appctlClient{t: t, s: s, target: s.ctlSocket()}
	mac1, mac2, mac3 := h1.peerMAC(t), h2.peerMAC(t), h3.peerMAC(t)
	of1, of2, of3 := s.get("Interface", h1.Port, "ofport"), s.get("Interface", h2.Port, "ofport"), s.get("Interface", h3.Port, "ofport")
	ofport := map[*host]string{h1: of1, h2: of2}

	// Bulk TCP from h2 to h1 (ACKs flow back), until the test is done.
	traffic := startTraffic(t, h1, h2, 60*time.Second)
	eventually(t, "iperf3 traffic through the switch", func() bool {
		return traffic.running() && a.dpctlPort(h2.Port).rx > 10000
	})

	t.Run("list-commands", func(t *testing.T) {
		a := a.with(t)
		out := a.run("list-commands")
		if !strings.HasPrefix(out, "The available commands are:\n") {
			t.Errorf("list-commands:\n%s", out)
		}
		for _, cmd := range []string{
			"list-commands", "version", "exit", "vlog/list", "vlog/set", "memory/show", "coverage/show",
			"dpif/show", "dpctl/show", "dpctl/dump-flows", "dpctl/del-flows", "dpif-netdev/pmd-stats-show",
			"dpif-netdev/pmd-stats-clear", "dpif-netdev/pmd-rxq-show", "dpif-netdev/pmd-rxq-rebalance",
			"fdb/show", "fdb/flush", "fdb/stats-show", "bridge/dump-flows", "gvs/sock-buf-show",
		} {
			if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(cmd) + `( |$)`).MatchString(out) {
				t.Errorf("list-commands lacks %s:\n%s", cmd, out)
			}
		}
	})

	t.Run("version", func(t *testing.T) {
		a := a.with(t)
		if out := a.run("version"); !regexp.MustCompile(`^gvs-vswitchd \(gvs\) \d+\.\d+\.\d+\n$`).MatchString(out) {
			t.Errorf("version = %q", out)
		}
	})

	t.Run("vlog", func(t *testing.T) {
		a := a.with(t)
		level := func() string {
			out := a.run("vlog/list")
			f := strings.Fields(lastLine(out))
			if !strings.HasPrefix(out, "                 console    syslog    file\n") || len(f) != 4 {
				t.Fatalf("vlog/list:\n%s", out)
			}
			return f[3] // the file column of the last module
		}
		if got := level(); got != "INFO" {
			t.Errorf("file level at start = %s, want INFO", got)
		}
		a.run("vlog/set", "file:dbg")
		if got := level(); got != "DBG" {
			t.Errorf("file level after vlog/set file:dbg = %s", got)
		}
		a.run("vlog/set", "file:info")
		if got := level(); got != "INFO" {
			t.Errorf("file level after vlog/set file:info = %s", got)
		}
		if out, code := a.runErr("vlog/set", "file:no.such"); code != 2 || !strings.Contains(out, `"no.such"`) {
			t.Errorf("vlog/set file:no.such: exit %d\n%s", code, out)
		}
	})

	t.Run("memory-show", func(t *testing.T) {
		a := a.with(t)
		m := a.memory()
		for key, min := range map[string]int{"bridges": 1, "ports": 3, "flows": 1, "pmds": 1, "mac-entries": 2, "rxqs": 3, "goroutines": 1, "go-heap-kB": 1} {
			if m[key] < min {
				t.Errorf("memory/show %s = %d, want >= %d (%v)", key, m[key], min, m)
			}
		}
	})

	t.Run("coverage-show", func(t *testing.T) {
		a := a.with(t)
		before := a.coverage()
		eventually(t, "coverage/show totals to grow", func() bool {
			after := a.coverage()
			return after["netdev_received"] > before["netdev_received"] && after["netdev_sent"] > before["netdev_sent"] &&
				after["dpif_netdev_emc_hit"] > before["dpif_netdev_emc_hit"]
		})
		if c := a.coverage(); c["dpif_netdev_miss"] == 0 || c["dpif_netdev_upcall"] == 0 || c["mac_learning_learned"] < 2 {
			t.Errorf("coverage/show lacks the misses and learning of the first packets: %v", c)
		}
	})

	t.Run("dpif-show", func(t *testing.T) {
		a := a.with(t)
		re := regexp.MustCompile(`^netdev@ovs-netdev: hit:(\d+) missed:(\d+)\n  ` + br + `:\n`)
		hits := func() int {
			out := a.run("dpif/show")
			m := re.FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("dpif/show:\n%s", out)
			}
			for _, p := range []*host{h1, h2} {
				want := fmt.Sprintf("    %s %s/", p.Port, ofport[p])
				if !strings.Contains(out, want) {
					t.Errorf("dpif/show lacks %q:\n%s", want, out)
				}
			}
			return atoi(t, m[1])
		}
		before := hits()
		eventually(t, "dpif/show hits to grow", func() bool { return hits() > before })
		t.Logf("dpif/show hit: %d -> %d", before, hits())
	})

	t.Run("dpctl-show", func(t *testing.T) {
		a := a.with(t)
		b1, b2 := a.dpctlPort(h1.Port), a.dpctlPort(h2.Port)
		eventually(t, "dpctl/show -s counters to grow", func() bool {
			c1, c2 := a.dpctlPort(h1.Port), a.dpctlPort(h2.Port)
			return c2.rx > b2.rx && c2.rxBytes > b2.rxBytes && c1.tx > b1.tx && c1.txBytes > b1.txBytes && c1.rx > b1.rx
		})
		t.Logf("dpctl/show -s %s RX packets: %d -> %d", h2.Port, b2.rx, a.dpctlPort(h2.Port).rx)
		// The bulk direction: h2's frames are full-size segments.
		if c := a.dpctlPort(h2.Port); c.rxBytes < 1000*c.rx/2 {
			t.Errorf("%s received %d bytes in %d packets: not iperf3's bulk stream", h2.Port, c.rxBytes, c.rx)
		}
	})

	t.Run("bridge-dump-flows", func(t *testing.T) {
		a := a.with(t)
		re := regexp.MustCompile(`^duration=\d+s, n_packets=(\d+), n_bytes=(\d+), priority=0,actions=NORMAL\n$`)
		packets := func() int {
			out := a.run("bridge/dump-flows", br)
			m := re.FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("bridge/dump-flows:\n%s", out)
			}
			return atoi(t, m[1])
		}
		before := packets()
		eventually(t, "bridge/dump-flows n_packets to grow", func() bool { return packets() > before })
		t.Logf("bridge/dump-flows n_packets: %d -> %d", before, packets())
		if out, code := a.runErr("bridge/dump-flows", "gvbeanone"); code != 2 || !strings.HasPrefix(out, "Unknown bridge\n") {
			t.Errorf("bridge/dump-flows of a missing bridge: exit %d\n%s", code, out)
		}
	})

	t.Run("dpctl-flows", func(t *testing.T) {
		a := a.with(t)
		bulk := func() (int, bool) { return a.flowPackets(mac2, mac1) }
		eventually(t, "the bulk megaflow to carry packets", func() bool { n, ok := bulk(); return ok && n > 1000 })
		before, _ := bulk()
		misses := a.pmdTotals()["miss with success upcall"]
		flushes := a.coverage()["dpif_flow_flush"]
		if out := a.run("dpctl/del-flows"); out != "" {
			t.Errorf("dpctl/del-flows said %q", out)
		}
		// The flow is gone (or re-created by the next packet with fresh
		// counters), then comes back and counts again.
		if n, ok := bulk(); ok && n >= before {
			t.Errorf("after del-flows the bulk flow still has %d packets (had %d)", n, before)
		}
		eventually(t, "the bulk flow to be installed again and carry packets", func() bool { n, ok := bulk(); return ok && n > 100 })
		again, _ := bulk()
		t.Logf("bulk megaflow packets: %d before dpctl/del-flows, %d after it was installed again", before, again)
		if got := a.pmdTotals()["miss with success upcall"]; got <= misses {
			t.Errorf("no upcall after del-flows: misses %d -> %d", misses, got)
		}
		if got := a.coverage()["dpif_flow_flush"]; got != flushes+1 {
			t.Errorf("coverage dpif_flow_flush %d -> %d, want one more", flushes, got)
		}
		if out := a.run("dpctl/dump-flows", "type=offloaded"); out != "" {
			t.Errorf("dpctl/dump-flows type=offloaded (gvs offloads nothing):\n%s", out)
		}
	})

	t.Run("pmd-stats", func(t *testing.T) {
		a := a.with(t)
		before := a.pmdTotals()
		if before["packets received"] < 10000 || before["emc hits"] == 0 || before["megaflow hits"]+before["emc hits"] == 0 {
			t.Fatalf("pmd-stats-show before clear: %v", before)
		}
		shown := a.run("dpif-netdev/pmd-stats-show")
		if out := a.run("dpif-netdev/pmd-stats-clear"); out != "" {
			t.Errorf("pmd-stats-clear said %q", out)
		}
		cleared := a.pmdTotals()
		if cleared["packets received"] >= before["packets received"] || cleared["emc hits"] >= before["emc hits"] {
			t.Errorf("pmd-stats-clear did not reset: before %v, after %v", before, cleared)
		}
		t.Logf("pmd-stats-show packets received: %d, after pmd-stats-clear %d", before["packets received"], cleared["packets received"])
		eventually(t, "PMD counters to grow after the clear", func() bool {
			now := a.pmdTotals()
			return now["packets received"] > cleared["packets received"]+1000 && now["emc hits"] > cleared["emc hits"] &&
				now["processing ns"] > 0
		})
		// Before the clear there were megaflow hits; each probed at least
		// the first subtable.
		if m := regexp.MustCompile(`(?m)^  avg\. subtable lookups per megaflow hit: (\d+\.\d\d)$`).FindStringSubmatch(shown); m == nil {
			t.Errorf("pmd-stats-show lacks the subtable lookups line:\n%s", shown)
		} else if v, _ := strconv.ParseFloat(m[1], 64); before["megaflow hits"] > 0 && v < 1 {
			t.Errorf("avg. subtable lookups per megaflow hit %s with %d megaflow hits", m[1], before["megaflow hits"])
		}
		if out, code := a.runErr("dpif-netdev/pmd-stats-show", "nosuchdp"); code != 2 || !strings.HasPrefix(out, "please specify an existing datapath\n") {
			t.Errorf("pmd-stats-show nosuchdp: exit %d\n%s", code, out)
		}
	})

	t.Run("pmd-rxq", func(t *testing.T) {
		a := a.with(t)
		re := regexp.MustCompile(`(?m)^  port: (\S+) +queue-id: +(\d+) \(enabled\) +pmd usage: +(\d+) %$`)
		usage := func() map[string]int {
			out := a.run("dpif-netdev/pmd-rxq-show")
			if !strings.HasPrefix(out, "Displaying last 60 seconds pmd usage %\npmd thread ") {
				t.Fatalf("pmd-rxq-show:\n%s", out)
			}
			u := map[string]int{}
			for _, m := range re.FindAllStringSubmatch(out, -1) {
				u[m[1]] += atoi(t, m[3])
			}
			for _, p := range []string{h1.Port, h2.Port, br} {
				if _, ok := u[p]; !ok {
					t.Fatalf("pmd-rxq-show lacks port %s:\n%s", p, out)
				}
			}
			return u
		}
		eventually(t, "pmd-rxq-show to measure the bulk port's queue busy", func() bool { return usage()[h2.Port] > 0 })
		t.Logf("pmd-rxq-show usage: %v", usage())
		out := a.run("dpif-netdev/pmd-rxq-rebalance")
		if !strings.HasPrefix(out, "pmd rxq rebalance requested.\n") {
			t.Errorf("pmd-rxq-rebalance:\n%s", out)
		}
		if out, code := a.runErr("dpif-netdev/pmd-rxq-rebalance", "nosuchdp"); code != 2 || !strings.HasPrefix(out, "please specify an existing datapath\n") {
			t.Errorf("pmd-rxq-rebalance nosuchdp: exit %d\n%s", code, out)
		}
		// Traffic still flows after the queues were reassigned.
		b := a.dpctlPort(h2.Port)
		eventually(t, "traffic after the rebalance", func() bool { return a.dpctlPort(h2.Port).rx > b.rx })
	})

	t.Run("fdb", func(t *testing.T) {
		a := a.with(t)
		// h3 pings once and then stays quiet: its address is in the
		// table before the flush and must not be afterwards, while the
		// running traffic makes h1 and h2 learned again.
		mustPing(t, h3, h1)
		eventually(t, "fdb/show to list the three hosts on their ports", func() bool {
			f := a.fdb(br)
			return f[mac1] == of1 && f[mac2] == of2 && f[mac3] == of3
		})
		flushes := a.coverage()["fdb_flush"]
		if out := a.run("fdb/flush", br); out != "table successfully flushed\n" {
			t.Errorf("fdb/flush said %q", out)
		}
		eventually(t, "learning to refill the table after fdb/flush", func() bool {
			f := a.fdb(br)
			return f[mac1] == of1 && f[mac2] == of2
		})
		if f := a.fdb(br); f[mac3] != "" {
			t.Errorf("%s's MAC %s survived fdb/flush: %v", h3.Peer, mac3, f)
		}
		// The flush revalidated the flows; as in Open vSwitch, the
		// revalidator relearns from the traffic the flows carry, so
		// learning comes back with or without upcalls.
		if got := a.coverage()["fdb_flush"]; got != flushes+1 {
			t.Errorf("coverage fdb_flush %d -> %d, want one more", flushes, got)
		}
		if out, code := a.runErr("fdb/show", "gvbeanone"); code != 2 || !strings.HasPrefix(out, "no such bridge\n") {
			t.Errorf("fdb/show of a missing bridge: exit %d\n%s", code, out)
		}
	})

	t.Run("sock-buf-show", func(t *testing.T) {
		a := a.with(t)
		rows := a.sockBufs()
		for _, p := range []string{h1.Port, h2.Port} {
			if r := rows[p]; r["requested"] != "default" || atoi(t, r["rcvbuf"]) <= 0 || r["kernel_rx_drops"] == "" {
				t.Errorf("gvs/sock-buf-show row of %s: %v", p, r)
			}
		}
		if out, err := s.vsctlErr("set", "Open_vSwitch", ".", "other_config:userspace-sock-buf-size=4194304"); err != nil {
			t.Fatalf("ovs-vsctl: %v\n%s", err, out)
		}
		eventually(t, "gvs/sock-buf-show to show the new buffers", func() bool {
			r := a.sockBufs()[h2.Port]
			return r["requested"] == "4194304" && atoi(t, r["rcvbuf"]) >= 4194304
		})
		t.Logf("gvs/sock-buf-show %s: %v -> %v", h2.Port, rows[h2.Port], a.sockBufs()[h2.Port])
		b := a.dpctlPort(h2.Port)
		eventually(t, "traffic with the new buffers", func() bool { return a.dpctlPort(h2.Port).rx > b.rx })
	})

	t.Run("unknown-command", func(t *testing.T) {
		a := a.with(t)
		out, code := a.runErr("gvs/no-such-command")
		want := `"gvs/no-such-command" is not a valid command (use "list-commands" to see a list of valid commands)` + "\n" +
			"ovs-appctl: " + a.target + ": server returned an error\n"
		if code != 2 || out != want {
			t.Errorf("unknown command: exit %d\n%s\nwant exit 2\n%s", code, out, want)
		}
	})

	if !traffic.running() {
		t.Errorf("iperf3 stopped before the commands were done: %v", traffic.stop())
	}
	traffic.stop()

	// AF_XDP ports export the kernel's XDP_STATISTICS: in
	// Interface.statistics, as Open vSwitch writes afxdp custom
	// statistics, and as gvs_interface_xdp_drops_total by reason.
	t.Run("afxdp-statistics", func(t *testing.T) {
		a := a.with(t)
		if out, err := s.vsctlErr("set", "Open_vSwitch", ".", "other_config:stats-update-interval=500", "--",
			"set", "Interface", h1.Port, "type=afxdp", "options:xdp-mode=generic", "--",
			"set", "Interface", h2.Port, "type=afxdp", "options:xdp-mode=generic"); err != nil {
			t.Fatalf("ovs-vsctl: %v\n%s", err, out)
		}
		mustPing(t, h1, h2)
		if out := a.run("dpif/show"); !strings.Contains(out, "    "+h1.Port+" "+of1+"/") || !strings.Contains(out, "(afxdp)") {
			t.Errorf("dpif/show after the switch to afxdp:\n%s", out)
		}
		eventually(t, "Interface statistics to carry the XDP counters", func() bool {
			out, err := s.vsctlErr("--no-wait", "get", "Interface", h1.Port, "statistics")
			return err == nil && strings.Contains(out, "xsk_rx_ring_full=") && strings.Contains(out, "xsk_rx_fill_ring_empty_descs=")
		})
		body := scrapeMetrics(t, s)
		for _, reason := range []string{"rx_dropped", "rx_ring_full", "fill_ring_empty", "rx_invalid_descs", "tx_invalid_descs"} {
			series := `gvs_interface_xdp_drops_total{bridge="` + br + `",interface="` + h1.Port + `",port="` + h1.Port + `",reason="` + reason + `",type="afxdp"} `
			if !strings.Contains(body, series) {
				t.Errorf("metrics lack %s", series)
			}
		}
		if strings.Contains(body, `gvs_interface_xdp_drops_total{bridge="`+br+`",interface="`+h3.Port+`"`) {
			t.Errorf("the system port %s has XDP drop series", h3.Port)
		}
	})

	t.Run("exit", func(t *testing.T) {
		a := a.with(t)
		pid := s.pid()
		// --cleanup: a plain exit leaves the bridge's tap device in the
		// kernel, as ovs-vswitchd's does (cmd/gvs-vswitchd
		// TestExitKeepsTapsCleanupRemovesThem).
		if out := a.run("exit", "--cleanup"); out != "" {
			t.Errorf("exit said %q", out)
		}
		eventually(t, "gvs-vswitchd to exit", func() bool { return syscall.Kill(pid, 0) != nil })
		for _, f := range []string{s.pidfile(), a.target} {
			if _, err := os.Stat(f); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s left behind after exit: %v", f, err)
			}
		}
		if _, err := os.Stat("/sys/class/net/" + br); err == nil {
			t.Errorf("bridge port %s left behind after exit --cleanup", br)
		}
		log, _ := os.ReadFile(filepath.Join(s.dir, "ovs-vswitchd.log"))
		if strings.Contains(string(log), "panic") {
			t.Errorf("ovs-vswitchd.log reports a panic:\n%s", log)
		}
	})
}

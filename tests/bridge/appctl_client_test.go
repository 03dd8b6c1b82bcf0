package bridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// newQuietHost is newHost with IPv6 off in the namespace, so the host
// sends nothing (no router solicitations) unless the test makes it.
func newQuietHost(t *testing.T, ns, port, ip string) *host {
	t.Helper()
	h := newHostWithoutVeth(t, ns, port, ip)
	for _, key := range []string{"net.ipv6.conf.all.disable_ipv6", "net.ipv6.conf.default.disable_ipv6"} {
		run(t, ipPath, "netns", "exec", ns, "sysctl", "-qw", key+"=1")
	}
	h.createVeth(t)
	return h
}

// scrapeMetrics fetches the daemon's Prometheus metrics as text.
func scrapeMetrics(t *testing.T, s *switchd) string {
	t.Helper()
	resp, err := http.Get(s.metricsURL())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// pid reads the running daemon's pidfile.
func (s *switchd) pid() int {
	s.t.Helper()
	b, err := os.ReadFile(s.pidfile())
	if err != nil {
		s.t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		s.t.Fatal(err)
	}
	return pid
}

// ctlSocket is the running daemon's control socket, named after its pid
// as ovs-vswitchd's is.
func (s *switchd) ctlSocket() string {
	s.t.Helper()
	path := filepath.Join(s.dir, fmt.Sprintf("ovs-vswitchd.%d.ctl", s.pid()))
	if _, err := os.Stat(path); err != nil {
		s.t.Fatal(err)
	}
	return path
}

// traffic is an iperf3 client and server running in the background.
type traffic struct {
	cancel context.CancelFunc
	done   chan error
	err    error
}

// startTraffic runs an iperf3 TCP stream from client to server for at
// most d; stop (also run at cleanup) ends it early.
func startTraffic(t *testing.T, server, client *host, d time.Duration) *traffic {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d+10*time.Second)
	srv := exec.CommandContext(ctx, ipPath, "netns", "exec", server.NS, iperfPath, "-s", "-1", "-B", server.IP)
	if err := srv.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	tr := &traffic{cancel: cancel, done: make(chan error, 1)}
	go func() {
		var err error
		for range 50 { // until the server listens
			cl := exec.CommandContext(ctx, ipPath, "netns", "exec", client.NS, iperfPath, "-c", server.IP,
				"--connect-timeout", "2000", "-t", strconv.Itoa(int(d/time.Second)))
			var out []byte
			out, err = cl.CombinedOutput()
			if err == nil || !strings.Contains(string(out), "Connection refused") {
				if err != nil {
					err = fmt.Errorf("iperf3 client: %v\n%s", err, out)
				}
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		srv.Wait()
		tr.done <- err
	}()
	t.Cleanup(func() { tr.stop() })
	return tr
}

// running reports whether the client is still sending.
func (tr *traffic) running() bool {
	if tr.done == nil {
		return false
	}
	select {
	case err := <-tr.done:
		tr.err, tr.done = err, nil
		return false
	default:
		return true
	}
}

// stop ends the traffic and returns the client's error, if it failed
// before being stopped.
func (tr *traffic) stop() error {
	if tr.running() {
		tr.cancel()
		<-tr.done
		tr.done = nil
	}
	tr.cancel()
	return tr.err
}

// appctlClient runs the real ovs-appctl against one control socket.
type appctlClient struct {
	t      *testing.T
	s      *switchd
	target string
}

// with returns a client reporting to t (a subtest's).
func (a *appctlClient) with(t *testing.T) *appctlClient {
	c := *a
	c.t = t
	return &c
}

// run runs a command that must succeed and returns its output.
func (a *appctlClient) run(args ...string) string {
	a.t.Helper()
	out, code := a.runErr(args...)
	if code != 0 {
		a.t.Fatalf("ovs-appctl -t %s %s: exit %d\n%s", a.target, strings.Join(args, " "), code, out)
	}
	return out
}

// runErr runs a command and returns its combined output and exit status.
func (a *appctlClient) runErr(args ...string) (string, int) {
	a.t.Helper()
	cmd := exec.Command(appctlPath, append([]string{"--timeout=10", "-t", a.target}, args...)...)
	cmd.Env = a.s.env()
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(out), exit.ExitCode()
	}
	if err != nil {
		a.t.Fatalf("ovs-appctl %s: %v", strings.Join(args, " "), err)
	}
	return string(out), 0
}

// portCounters are one port's figures in dpctl/show -s.
type portCounters struct{ rx, tx, rxBytes, txBytes int }

func (a *appctlClient) dpctlPort(name string) portCounters {
	a.t.Helper()
	out := a.run("dpctl/show", "-s")
	re := regexp.MustCompile(`(?m)^  port \d+: ` + regexp.QuoteMeta(name) + `( \(\w+\))?\n` +
		`    RX packets:(\d+) errors:\d+ dropped:\d+ overruns:\? frame:\?\n` +
		`    TX packets:(\d+) errors:\d+ dropped:\d+ aborted:\? carrier:\?\n` +
		`    collisions:\?\n` +
		`    RX bytes:(\d+)  TX bytes:(\d+)$`)
	m := re.FindStringSubmatch(out)
	if m == nil {
		a.t.Fatalf("dpctl/show -s has no counters for %s:\n%s", name, out)
	}
	return portCounters{rx: atoi(a.t, m[2]), tx: atoi(a.t, m[3]), rxBytes: atoi(a.t, m[4]), txBytes: atoi(a.t, m[5])}
}

// memory parses memory/show's "name:count" pairs.
func (a *appctlClient) memory() map[string]int {
	a.t.Helper()
	out := a.run("memory/show")
	m := map[string]int{}
	for _, f := range strings.Fields(out) {
		k, v, ok := strings.Cut(f, ":")
		if !ok {
			a.t.Fatalf("memory/show: %q in\n%s", f, out)
		}
		m[k] = atoi(a.t, v)
	}
	return m
}

// coverage parses the event totals of coverage/show.
func (a *appctlClient) coverage() map[string]int {
	a.t.Helper()
	out := a.run("coverage/show")
	if !strings.HasPrefix(out, "Event coverage, avg rate over last: 5 seconds, last minute, last hour,  hash=") {
		a.t.Fatalf("coverage/show:\n%s", out)
	}
	re := regexp.MustCompile(`(?m)^(\w+) +[\d.]+/sec +[\d.]+/sec +[\d.]+/sec +total: (\d+)$`)
	m := map[string]int{}
	for _, l := range re.FindAllStringSubmatch(out, -1) {
		m[l[1]] = atoi(a.t, l[2])
	}
	return m
}

// pmdTotals sums pmd-stats-show's counters over the PMDs.
func (a *appctlClient) pmdTotals() map[string]int {
	a.t.Helper()
	out := a.run("dpif-netdev/pmd-stats-show")
	re := regexp.MustCompile(`(?m)^  ([a-z. ]+): (\d+)( \([\d.]+%\))?$`)
	m := map[string]int{}
	for _, l := range re.FindAllStringSubmatch(out, -1) {
		m[l[1]] += atoi(a.t, l[2])
	}
	if _, ok := m["packets received"]; !ok {
		a.t.Fatalf("pmd-stats-show:\n%s", out)
	}
	return m
}

// flowPackets returns the packets of the megaflow from src to dst MAC.
func (a *appctlClient) flowPackets(src, dst string) (int, bool) {
	a.t.Helper()
	out := a.run("dpctl/dump-flows")
	// Open vSwitch's netdev datapath format: recirc_id(0),in_port(N),
	// packet_type(...),eth(src=..,dst=..),... (the megaflow's other fields
	// follow when translation consulted them).
	re := regexp.MustCompile(`(?m)^recirc_id\(0\),in_port\(\d+\),packet_type\(ns=0,id=0\),eth\(src=` + src + `,dst=` + dst + `\).*, packets:(\d+), bytes:\d+, used:`)
	m := re.FindStringSubmatch(out)
	if m == nil {
		return 0, false
	}
	return atoi(a.t, m[1]), true
}

// fdb maps each MAC in fdb/show to its port column.
func (a *appctlClient) fdb(br string) map[string]string {
	a.t.Helper()
	out := a.run("fdb/show", br)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if lines[0] != " port  VLAN  MAC                Age" {
		a.t.Fatalf("fdb/show %s:\n%s", br, out)
	}
	m := map[string]string{}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) != 4 {
			a.t.Fatalf("fdb/show %s line %q", br, l)
		}
		m[f[2]] = f[0]
	}
	return m
}

// fdbLearned is fdb/stats-show's learned total.
func (a *appctlClient) fdbLearned(br string) int {
	a.t.Helper()
	out := a.run("fdb/stats-show", br)
	m := regexp.MustCompile(`(?m)^  Total number of learned MAC entries +: (\d+)$`).FindStringSubmatch(out)
	if m == nil {
		a.t.Fatalf("fdb/stats-show %s:\n%s", br, out)
	}
	return atoi(a.t, m[1])
}

// sockBufs parses gvs/sock-buf-show into rows by port, keyed by header.
func (a *appctlClient) sockBufs() map[string]map[string]string {
	a.t.Helper()
	out := a.run("gvs/sock-buf-show")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	head := strings.Fields(lines[0])
	want := []string{"bridge", "port", "type", "requested", "rcvbuf", "sndbuf", "kernel_rx_drops", "tx_drops"}
	if strings.Join(head, " ") != strings.Join(want, " ") {
		a.t.Fatalf("gvs/sock-buf-show header %q, want %q", lines[0], want)
	}
	rows := map[string]map[string]string{}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) != len(head) {
			a.t.Fatalf("gvs/sock-buf-show line %q", l)
		}
		r := map[string]string{}
		for i, h := range head {
			r[h] = f[i]
		}
		rows[r["port"]] = r
	}
	return rows
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return n
}

func lastLine(s string) string {
	s = strings.TrimSuffix(s, "\n")
	return s[strings.LastIndex(s, "\n")+1:]
}

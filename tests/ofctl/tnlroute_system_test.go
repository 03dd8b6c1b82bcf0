package ofctl

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// routeNetns creates a network namespace for one test, with a veth pair
// inside (tnlrt0 198.18.7.1/24 and 2001:2:7::1/64; tnlrt1 198.19.7.1/24),
// no automatic link-local addresses (both switches must see the same
// routes whenever they read), and routes of each kind Open vSwitch 3.1
// reads or skips: a gateway route, an IPv6 one, one in another table, a
// blackhole and an unreachable one. Deleted at cleanup, also on failure.
func routeNetns(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root for a network namespace")
	}
	name := fmt.Sprintf("tnlrtof%d", os.Getpid())
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", append([]string{"-n", name}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("ip -n %s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
	}
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", name).Run() })
	ip("link", "add", "tnlrt0", "type", "veth", "peer", "name", "tnlrt1")
	for _, dev := range []string{"tnlrt0", "tnlrt1"} {
		ip("link", "set", dev, "addrgenmode", "none")
		ip("link", "set", dev, "up")
	}
	ip("link", "set", "lo", "up")
	ip("addr", "add", "198.18.7.1/24", "dev", "tnlrt0")
	ip("addr", "add", "2001:2:7::1/64", "dev", "tnlrt0", "nodad")
	ip("addr", "add", "198.19.7.1/24", "dev", "tnlrt1")
	ip("route", "add", "198.18.8.0/24", "via", "198.18.7.254")
	ip("route", "add", "default", "via", "198.19.7.254")
	ip("-6", "route", "add", "2001:2:8::/64", "via", "2001:2:7::fe")
	ip("route", "add", "198.18.100.0/24", "via", "198.18.7.253", "table", "100")
	ip("route", "add", "blackhole", "198.18.200.0/24")
	ip("route", "add", "unreachable", "198.18.201.0/24")
	return name
}

// startSwitchNetns is startSwitch with the daemon inside namespace ns and
// reading the kernel's routes (no --disable-system-route). The database
// server stays outside: the tools reach both over unix sockets.
func startSwitchNetns(tb testing.TB, k kind, ns string) *vswitch {
	tb.Helper()
	dir, err := os.MkdirTemp("", "gof")
	if err != nil {
		tb.Fatal(err)
	}
	s := &vswitch{kind: k, dir: dir, db: "unix:" + filepath.Join(dir, "db.sock")}
	tb.Cleanup(func() {
		s.stop(tb)
		if tb.Failed() {
			s.dumpLogs(tb)
		}
		os.RemoveAll(dir)
	})
	ipPath, err := exec.LookPath("ip")
	if err != nil {
		tb.Skip("needs ip(8)")
	}
	flags := []string{"--enable-dummy", "--disable-system",
		"--pidfile=" + filepath.Join(dir, "ovs-vswitchd.pid"), "--log-file=" + filepath.Join(dir, "ovs-vswitchd.log")}
	if k.gvs {
		s.launch(tb, "gvs-vswitchd", ipPath, append([]string{"netns", "exec", ns, suite.gvsBinary}, flags...)...)
		s.waitSocket(tb, filepath.Join(dir, "db.sock"))
		s.mustRun(tb, vsctlPath, "--db="+s.db, "--timeout=10", "--no-wait", "init")
	} else {
		if out, err := exec.Command(toolPath, "create", filepath.Join(dir, "conf.db"), vswitchSchema).CombinedOutput(); err != nil {
			tb.Fatalf("ovsdb-tool create: %v\n%s", err, out)
		}
		s.launch(tb, "ovsdb-server", debianServer, filepath.Join(dir, "conf.db"), "--remote=punix:"+filepath.Join(dir, "db.sock"),
			"--unixctl="+filepath.Join(dir, "ovsdb-server.ctl"), "--pidfile="+filepath.Join(dir, "ovsdb-server.pid"),
			"--log-file="+filepath.Join(dir, "ovsdb-server.log"))
		s.waitSocket(tb, filepath.Join(dir, "db.sock"))
		s.mustRun(tb, vsctlPath, "--db="+s.db, "--timeout=10", "--no-wait", "init")
		s.launch(tb, "ovs-vswitchd", ipPath, append([]string{"netns", "exec", ns, debianVswitchd, s.db}, flags...)...)
	}
	s.waitControl(tb)
	s.mustRun(tb, vsctlPath, "--db="+s.db, "--timeout=10", "--", "add-br", "br0", "--", "set", "bridge", "br0", "datapath-type=dummy")
	return s
}

// waitBoth waits until line's output on both sides satisfies cond (the
// switches read the kernel's changes asynchronously).
func (p pair) waitBoth(t *testing.T, line string, cond func(string) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, s := range []*vswitch{p.ref, p.sut} {
		for {
			out := s.sh(t, line).stdout
			if cond(out) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %q never satisfied the condition; last output:\n%s", s.kind.name, line, out)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// TestSystemRoutesAgainstDebian runs both switches in one namespace,
// reading its routes, and compares the route table they learn (every
// table, local routes, IPv6; blackhole and unreachable routes left out),
// lookups, user routes over kernel devices, and the table after the
// kernel's routes change.
func TestSystemRoutesAgainstDebian(t *testing.T) {
	ns := routeNetns(t)
	ref, sut := sides(t)
	p := pair{ref: startSwitchNetns(t, ref, ns), sut: startSwitchNetns(t, sut, ns)}
	hasRoute := func(s string) func(string) bool { return func(out string) bool { return strings.Contains(out, s) } }
	p.waitBoth(t, "ovs-appctl ovs/route/show", hasRoute("198.18.8.0/24"))
	p.compare(t,
		"sort:ovs-appctl ovs/route/show",
		"ovs-appctl ovs/route/lookup 198.18.8.1",
		"ovs-appctl ovs/route/lookup 198.18.7.1",
		"ovs-appctl ovs/route/lookup 198.18.7.99",
		"ovs-appctl ovs/route/lookup 203.0.113.1",
		"ovs-appctl ovs/route/lookup 198.18.100.1",
		"ovs-appctl ovs/route/lookup 198.18.200.1",
		"ovs-appctl ovs/route/lookup 2001:2:8::1",
		"ovs-appctl ovs/route/lookup 2001:2:7::1",
		"ovs-appctl ovs/route/lookup 127.0.0.1",
		"ovs-appctl ovs/route/lookup ::1",
		"ovs-appctl ovs/route/add 198.18.50.0/24 tnlrt0 198.18.7.250",
		"ovs-appctl ovs/route/add 198.18.8.0/24 tnlrt1 198.19.7.250",
		"ovs-appctl ovs/route/add 2001:2:50::/64 tnlrt0 2001:2:7::50 pkt_mark=9",
		"ovs-appctl ovs/route/lookup 198.18.8.1",
		"sort:ovs-appctl ovs/route/show",
	)
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", append([]string{"-n", ns}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("route", "del", "198.18.8.0/24")
	run("-6", "route", "add", "2001:2:9::/64", "via", "2001:2:7::fe")
	run("addr", "add", "198.18.7.2/24", "dev", "tnlrt0")
	p.waitBoth(t, "ovs-appctl ovs/route/show", func(out string) bool {
		return strings.Contains(out, "2001:2:9::/64") && strings.Contains(out, "198.18.7.2/32") && !strings.Contains(out, "Cached: 198.18.8.0/24")
	})
	p.compare(t,
		"sort:ovs-appctl ovs/route/show",
		"ovs-appctl ovs/route/lookup 198.18.8.1",
		"ovs-appctl ovs/route/lookup 2001:2:9::1",
	)
}

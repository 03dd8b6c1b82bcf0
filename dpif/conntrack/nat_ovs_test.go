package conntrack

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ntRefDatapath starts Debian's ovs-vswitchd with a dummy (userspace)
// datapath in a temporary directory, talking over unix sockets only, and
// returns a function running ovs-appctl against it. Both daemons are
// killed by pid when the test ends.
func ntRefDatapath(t *testing.T) func(args ...string) string {
	t.Helper()
	for _, bin := range []string{"ovs-vswitchd", "ovsdb-server", "ovsdb-tool", "ovs-appctl", "ovs-vsctl"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s not installed", bin)
		}
	}
	const schema = "/usr/share/openvswitch/vswitch.ovsschema"
	if _, err := os.Stat(schema); err != nil {
		t.Skip("no vswitch schema")
	}
	dir, err := os.MkdirTemp("", "gvsnat") // short: unix socket paths are limited
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "OVS_RUNDIR="+dir, "OVS_LOGDIR="+dir, "OVS_DBDIR="+dir, "OVS_SYSCONFDIR="+dir)
	run := func(name string, args ...string) {
		cmd := exec.Command(name, args...)
		cmd.Env, cmd.Dir = env, dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
	}
	stop := func(pidfile string) {
		if b, err := os.ReadFile(filepath.Join(dir, pidfile)); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				if p, err := os.FindProcess(pid); err == nil {
					p.Kill()
				}
			}
		}
	}
	t.Cleanup(func() {
		stop("ovs-vswitchd.pid")
		stop("ovsdb-server.pid")
		time.Sleep(50 * time.Millisecond)
		os.RemoveAll(dir)
	})
	run("ovsdb-tool", "create", "conf.db", schema)
	run("ovsdb-server", "--detach", "--no-chdir", "--pidfile="+dir+"/ovsdb-server.pid", "--log-file="+dir+"/ovsdb.log",
		"--remote=punix:"+dir+"/db.sock", "conf.db")
	run("ovs-vswitchd", "--enable-dummy=override", "--disable-system", "--disable-system-route", "--detach", "--no-chdir",
		"--pidfile="+dir+"/ovs-vswitchd.pid", "--log-file="+dir+"/vswitchd.log", "unix:"+dir+"/db.sock")
	run("ovs-vsctl", "--db=unix:"+dir+"/db.sock", "--timeout=10", "init")
	b, err := os.ReadFile(filepath.Join(dir, "ovs-vswitchd.pid"))
	if err != nil {
		t.Fatal(err)
	}
	ctl := filepath.Join(dir, "ovs-vswitchd."+strings.TrimSpace(string(b))+".ctl")
	appctl := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("ovs-appctl", append([]string{"-t", ctl}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("ovs-appctl %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	appctl("dpctl/add-dp", "dummy@ref")
	return appctl
}

// TestNATStringMatchesOpenVSwitch: a ct action with each nat clause, added
// to Open vSwitch's userspace datapath in the form NAT.String prints, is
// printed back by its dpctl/dump-flows exactly so.
func TestNATStringMatchesOpenVSwitch(t *testing.T) {
	if testing.Short() {
		t.Skip("starts ovs-vswitchd")
	}
	appctl := ntRefDatapath(t)
	const key = "in_port(1),eth_type(0x0800),ipv4(src=198.18.0.1,frag=no)"
	for _, n := range []NAT{
		{Kind: NATApply},
		{Kind: NATSrc},
		// Not {Kind: NATDst, Random: true}: OVS's action parser drops
		// flags without an address (its printer, which String follows,
		// prints them: TestNATString has it).
		{Kind: NATSrc, AddrMin: ntAddr("198.18.0.10")},
		{Kind: NATSrc, AddrMin: ntAddr("198.18.0.10"), AddrMax: ntAddr("198.18.0.20"), PortMin: 1024, PortMax: 65535, Random: true},
		{Kind: NATDst, AddrMin: ntAddr("198.18.5.1"), PortMin: 8080},
		{Kind: NATDst, AddrMin: ntAddr("198.18.5.1"), AddrMax: ntAddr("198.18.5.3"), Persistent: true, Hash: true},
		{Kind: NATSrc, AddrMin: ntAddr("2001:2::10"), AddrMax: ntAddr("2001:2::20")},
		{Kind: NATDst, AddrMin: ntAddr("2001:2::10"), AddrMax: ntAddr("2001:2::20"), PortMin: 80, PortMax: 81, Persistent: true, Random: true},
		{Kind: NATDst, AddrMin: ntAddr("2001:2::10"), PortMin: 80},
	} {
		action := "ct(commit,zone=3," + n.String() + ")"
		appctl("dpctl/del-flows", "dummy@ref")
		appctl("dpctl/add-flow", "dummy@ref", key, action)
		dump := appctl("dpctl/dump-flows", "dummy@ref")
		_, got, ok := strings.Cut(strings.TrimSpace(dump), "actions:")
		if !ok {
			t.Fatalf("%s: dump %q", action, dump)
		}
		if got != action {
			t.Errorf("Open vSwitch: %s\ngvs:          %s", got, action)
		}
	}
}

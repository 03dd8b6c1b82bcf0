package ovn

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// kind names a chassis switch: the subtest names.
type kind string

const (
	kindOVS kind = "ovs" // Debian's ovs-vswitchd, netdev datapath: the reference
	kindGVS kind = "gvs" // gvs-vswitchd: the switch under test
	// kindGVSDB is gvs-vswitchd with gvs-ovsdb-server serving the
	// northbound and southbound databases too.
	kindGVSDB kind = "gvs-ovsdb"
)

// integrationBridge is the bridge ovn-controller creates and programs.
const integrationBridge = "br-int"

// recorder carries the reference run's outcomes (by step name) from the
// ovs subtest to the gvs subtest of one scenario.
type recorder struct {
	mu       sync.Mutex
	outcomes map[string]string
}

// scenario runs fn with Debian's ovs-vswitchd as the chassis (subtest
// "ovs", first: it proves the test) and then with gvs-vswitchd ("gvs"),
// each with a control plane and namespaces of its own.
func scenario(t *testing.T, short string, fn func(t *testing.T, c *chassis), extra ...string) {
	scenarioSkipping(t, short, nil, fn, extra...)
}

// scenarioSkipping is scenario with a skip rule: skip(k) != "" skips the
// subtest of kind k, with that reason, before anything starts.
func scenarioSkipping(t *testing.T, short string, skip func(kind) string, fn func(t *testing.T, c *chassis), extra ...string) {
	requireEnv(t, extra...)
	rec := &recorder{outcomes: map[string]string{}}
	for _, k := range []kind{kindOVS, kindGVS, kindGVSDB} {
		t.Run(string(k), func(t *testing.T) {
			if skip != nil {
				if why := skip(k); why != "" {
					t.Skip(why)
				}
			}
			c := newChassis(t, k, short, rec)
			// Before the cleanups: the ports must still be there to trace.
			defer c.diagnose()
			fn(t, c)
			c.checkControllerLog()
		})
	}
}

// chassis is one switch with the OVN control plane around it: Debian's
// ovsdb-server for the northbound and southbound databases, ovn-northd and
// ovn-controller, all in a private directory.
type chassis struct {
	t      *testing.T
	kind   kind
	prefix string // namespace name prefix, unique to this run
	sw     string // the switch's namespace: the vswitchd and its port ends
	dir    string // rundir, dbdir, logdir of every daemon: short, for socket paths
	ctl    string // the directory of the NB and SB sockets (dir, or the first chassis')
	// systemID and encapIP are the chassis' OVN identity and Geneve
	// address.
	systemID, encapIP string
	rec               *recorder
	hosts             []*host
	// traces are ofproto/trace flow specs logged on failure.
	traces []string
}

var chassisSeq struct {
	sync.Mutex
	n int
}

func newChassis(t *testing.T, k kind, short string, rec *recorder) *chassis {
	t.Helper()
	chassisSeq.Lock()
	chassisSeq.n++
	n := chassisSeq.n
	chassisSeq.Unlock()
	c := &chassis{t: t, kind: k, rec: rec}
	if k != kindOVS && suite.buildErr != nil {
		t.Fatal(suite.buildErr)
	}
	c.prefix = fmt.Sprintf("gvon%d-%d-%s-%s-", os.Getpid(), n, short, k)
	dir, err := os.MkdirTemp("", "gvon")
	if err != nil {
		t.Fatal(err)
	}
	c.dir, c.ctl = dir, dir
	c.systemID, c.encapIP = c.prefix+"hv1", "198.18.255.1"
	t.Cleanup(func() {
		if keep := os.Getenv("GVS_OVN_KEEP"); keep != "" && (t.Failed() || os.Getenv("GVS_OVN_KEEP_ALL") != "") {
			dst := filepath.Join(keep, strings.ReplaceAll(t.Name(), "/", "-"))
			os.RemoveAll(dst)
			if err := os.Rename(dir, dst); err == nil {
				t.Logf("kept %s", dst)
				return
			}
		}
		os.RemoveAll(dir)
	})
	// A start that fails shows why (the scenario's own deferred
	// diagnose is not in place yet).
	defer func() {
		if t.Failed() {
			c.diagnose()
		}
	}()
	c.sw = c.newNS("sw")
	c.startSwitch()
	c.startControlPlane()
	return c
}

// newNS creates a namespace (removed at cleanup) with loopback up.
func (c *chassis) newNS(name string) string {
	c.t.Helper()
	ns := c.prefix + name
	exec.Command(ipPath, "netns", "del", ns).Run()
	c.run(ipPath, "netns", "add", ns)
	c.t.Cleanup(func() { exec.Command(ipPath, "netns", "del", ns).Run() })
	c.run(ipPath, "-n", ns, "link", "set", "lo", "up")
	return ns
}

func (c *chassis) environ() []string {
	var env []string
	for _, v := range os.Environ() {
		if !strings.HasPrefix(v, "OVS_") && !strings.HasPrefix(v, "OVN_") {
			env = append(env, v)
		}
	}
	for _, p := range []string{"OVS", "OVN"} {
		env = append(env, p+"_RUNDIR="+c.dir, p+"_DBDIR="+c.dir, p+"_LOGDIR="+c.dir, p+"_SYSCONFDIR="+c.dir)
	}
	return append(env, "OVS_PKGDATADIR=/usr/share/openvswitch", "OVN_PKGDATADIR=/usr/share/ovn")
}

func (c *chassis) path(name string) string { return filepath.Join(c.dir, name) }

// ctlPath is a file of the control plane's directory.
func (c *chassis) ctlPath(name string) string { return filepath.Join(c.ctl, name) }

// startSwitch starts the chassis switch: Debian's ovsdb-server (root
// namespace) and ovs-vswitchd, or gvs-vswitchd with its embedded database;
// the vswitchd runs in c.sw.
func (c *chassis) startSwitch() {
	c.t.Helper()
	logs := []string{"--pidfile", "--log-file", "-vconsole:off"}
	if c.kind == kindOVS {
		c.run(toolPath, "create", c.path("conf.db"), vswitchSchema)
		c.launch("", debianServer, c.path("conf.db"), "--remote=punix:"+c.path("db.sock"),
			"--pidfile", "--log-file", "-vconsole:off")
		c.waitFile(c.path("db.sock"))
		c.vsctl("--no-wait", "init")
		c.launch(c.sw, debianVswitchd, append([]string{"unix:" + c.path("db.sock")}, logs...)...)
	} else {
		c.launch(c.sw, suite.gvsBinary, logs...)
		c.waitFile(c.path("db.sock"))
		c.vsctl("--no-wait", "init")
	}
	c.waitFor("ovs-vswitchd's control socket", 15*time.Second, func() bool {
		_, err := c.tool(appctlPath, "--timeout=5", "-t", "ovs-vswitchd", "version")
		return err == nil
	})
}

// startControlPlane starts the OVN side: the NB and SB databases on
// Debian's ovsdb-server (gvs-ovsdb-server for kindGVSDB), ovn-northd, and
// the chassis' ovn-controller.
func (c *chassis) startControlPlane() {
	c.t.Helper()
	server := debianServer
	if c.kind == kindGVSDB {
		server = suite.gvsDBServer
	}
	for _, db := range []struct{ name, schema string }{{"nb", nbSchema}, {"sb", sbSchema}} {
		c.run(toolPath, "create", c.path(db.name+".db"), db.schema)
		c.launch("", server, c.path(db.name+".db"), "--remote=punix:"+c.path(db.name+".sock"),
			"--pidfile="+c.path(db.name+".pid"), "--unixctl="+c.path(db.name+".ctl"),
			"--log-file="+c.path(db.name+".log"), "-vconsole:off")
		c.waitFile(c.path(db.name + ".sock"))
	}
	c.launch("", northdPath, "--ovnnb-db=unix:"+c.ctlPath("nb.sock"), "--ovnsb-db=unix:"+c.ctlPath("sb.sock"),
		"--pidfile", "--log-file", "-vconsole:off")
	c.startController()
}

// startController starts ovn-controller pointed at the switch's database
// and the southbound database, with the chassis' system-id and Geneve
// encapsulation address. ovn-controller creates br-int itself, on the
// netdev datapath (ovn-bridge-datapath-type).
func (c *chassis) startController() {
	c.t.Helper()
	c.vsctl("set", "open_vswitch", ".",
		"external-ids:system-id="+c.systemID,
		"external-ids:ovn-remote=unix:"+c.ctlPath("sb.sock"),
		"external-ids:ovn-encap-type=geneve",
		"external-ids:ovn-encap-ip="+c.encapIP,
		"external-ids:ovn-bridge-datapath-type=netdev")
	// In the switch's namespace, as on a host: it looks up devices of the
	// switch (the provider bridge of the encapsulation address).
	c.launch(c.sw, controllerPath, "unix:"+c.path("db.sock"), "--pidfile", "--log-file", "-vconsole:off")
	c.vsctl("wait-until", "bridge", integrationBridge)
	// The chassis is registered and has caught up with the northbound
	// database.
	c.nbctl("--wait=hv", "sync")
}

// addChassis starts a second chassis of the same kind for c's control
// plane: its own switch namespace (name+"sw"), directory, switch and
// ovn-controller (system-id ...name), Geneve from encapIP.
func (c *chassis) addChassis(name, encapIP string) *chassis {
	c.t.Helper()
	c2 := &chassis{t: c.t, kind: c.kind, prefix: c.prefix, rec: c.rec, ctl: c.ctl,
		systemID: c.prefix + name, encapIP: encapIP}
	dir, err := os.MkdirTemp("", "gvon")
	if err != nil {
		c.t.Fatal(err)
	}
	c2.dir = dir
	c.t.Cleanup(func() { os.RemoveAll(dir) })
	c2.sw = c2.newNS(name + "sw")
	c2.startSwitch()
	c2.startController()
	return c2
}

// launch starts binary in namespace ns ("" the root one) in the
// foreground; cleanup stops it with SIGTERM (SIGKILL after 5 s). Daemons
// die with the test binary (Pdeathsig).
func (c *chassis) launch(ns, binary string, args ...string) {
	c.t.Helper()
	name := filepath.Base(binary)
	if ns != "" {
		args = append([]string{"netns", "exec", ns, binary}, args...)
		binary = ipPath
	}
	// name.stderr; name.2.stderr for a second instance, and so on.
	errFile := c.path(name + ".stderr")
	for i := 2; ; i++ {
		if _, err := os.Stat(errFile); err != nil {
			break
		}
		errFile = c.path(fmt.Sprintf("%s.%d.stderr", name, i))
	}
	out, err := os.Create(errFile)
	if err != nil {
		c.t.Fatal(err)
	}
	cmd := exec.Command(binary, args...)
	cmd.Dir = c.dir
	cmd.Env = c.environ()
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		out.Close()
		c.t.Fatalf("start %s: %v", name, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); out.Close(); close(done) }()
	c.t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
			c.t.Errorf("%s ignored SIGTERM for 5 s", name)
		}
	})
}

func (c *chassis) waitFile(path string) {
	c.t.Helper()
	c.waitFor(filepath.Base(path), 15*time.Second, func() bool { _, err := os.Stat(path); return err == nil })
}

func (c *chassis) waitFor(what string, timeout time.Duration, cond func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			c.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// run runs a command and fails the test when it fails.
func (c *chassis) run(name string, args ...string) string {
	c.t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		c.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (c *chassis) tool(path string, args ...string) (string, error) {
	cmd := exec.Command(path, args...)
	cmd.Env = c.environ()
	cmd.Dir = c.dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return stdout.String() + stderr.String(), err
	}
	return stdout.String(), nil
}

func (c *chassis) mustTool(path string, args ...string) string {
	c.t.Helper()
	out, err := c.tool(path, args...)
	if err != nil {
		c.t.Fatalf("%s %s: %v\n%s", filepath.Base(path), strings.Join(args, " "), err, out)
	}
	return out
}

// vsctl runs Debian's ovs-vsctl against the switch's database.
func (c *chassis) vsctl(args ...string) string {
	c.t.Helper()
	return c.mustTool(vsctlPath, append([]string{"--timeout=30", "--db=unix:" + c.path("db.sock")}, args...)...)
}

// nbctl runs ovn-nbctl against the northbound database.
func (c *chassis) nbctl(args ...string) string {
	c.t.Helper()
	return c.mustTool(nbctlPath, append([]string{"--timeout=60", "--db=unix:" + c.ctlPath("nb.sock")}, args...)...)
}

// sbctl runs ovn-sbctl against the southbound database.
func (c *chassis) sbctl(args ...string) string {
	c.t.Helper()
	return c.mustTool(sbctlPath, append([]string{"--timeout=30", "--db=unix:" + c.ctlPath("sb.sock")}, args...)...)
}

func (c *chassis) appctl(args ...string) (string, error) {
	return c.tool(appctlPath, append([]string{"--timeout=10", "-t", "ovs-vswitchd"}, args...)...)
}

// outcome records the reference's outcome of a step (ovs) or requires the
// same outcome from gvs.
func (c *chassis) outcome(step, got string) {
	c.t.Helper()
	c.rec.mu.Lock()
	defer c.rec.mu.Unlock()
	c.t.Logf("%s: %s", step, got)
	if c.kind == kindOVS {
		c.rec.outcomes[step] = got
		return
	}
	want, ok := c.rec.outcomes[step]
	if !ok {
		c.t.Logf("%s: no reference outcome (the ovs subtest did not get this far)", step)
		return
	}
	if got != want {
		c.t.Errorf("%s: %s with gvs, %s with Debian's ovs-vswitchd", step, got, want)
	}
}

// checkControllerLog requires a quiet ovn-controller: any OpenFlow error
// makes it drop the connection to br-int.mgmt and reconnect (it logs the
// OFPT_ERROR, rconn "disconnecting"; a connection the switch closed,
// "connection closed by peer"), so none of that may be in its log, and it must have
// logged no warning or error besides the expected ones (no VIF plug
// provider here; br-int.mgmt missing or not listening yet before the
// first connection). How many connections were made is not compared: a
// first attempt that found no socket is retried only when ovn-controller
// next wakes.
func (c *chassis) checkControllerLog() {
	c.t.Helper()
	data, err := os.ReadFile(c.path("ovn-controller.log"))
	if err != nil {
		c.t.Errorf("ovn-controller.log: %v", err)
		return
	}
	connects := 0
	var bad, lost []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, "br-int.mgmt: connected") {
			connects++
		}
		if strings.Contains(l, "br-int.mgmt: disconnecting") || strings.Contains(l, "br-int.mgmt: connection closed by peer") ||
			strings.Contains(l, "OFPT_ERROR") {
			lost = append(lost, l)
		}
		if !strings.Contains(l, "|WARN|") && !strings.Contains(l, "|ERR|") && !strings.Contains(l, "|EMER|") {
			continue
		}
		// Before the first connection, failing to connect is expected:
		// br-int.mgmt does not exist until br-int does, and between the
		// socket's bind and listen a connect is refused.
		if strings.Contains(l, "|vif_plug_provider|") || connects == 0 && strings.Contains(l, "br-int.mgmt: connection failed") {
			continue
		}
		bad = append(bad, l)
	}
	c.outcome("ovn-controller's OpenFlow errors and lost connections", fmt.Sprint(len(lost)))
	if len(lost) > 0 {
		c.t.Errorf("ovn-controller got OpenFlow errors or lost connections:\n%s", strings.Join(lost, "\n"))
	}
	if len(bad) > 0 {
		c.t.Errorf("ovn-controller logged %d warnings or errors:\n%s", len(bad), strings.Join(bad, "\n"))
	}
}

// diagnose logs, when the test failed, what routes a fix: ovn-controller's
// warnings (an OpenFlow error makes it reconnect), the switch's log, the
// datapath flows, and a summary of br-int's OpenFlow tables. GVS_OVN_KEEP=DIR
// keeps the whole directory (databases, logs) under DIR.
func (c *chassis) diagnose() {
	if !c.t.Failed() {
		return
	}
	var b strings.Builder
	show := func(title, path string, args ...string) {
		out, err := c.tool(path, args...)
		if err != nil {
			out += "(" + err.Error() + ")"
		}
		fmt.Fprintf(&b, "--- %s:\n%s\n", title, out)
	}
	flows, _ := c.tool(ofctlPath, "-O", "OpenFlow15", "--no-stats", "dump-flows", integrationBridge)
	os.WriteFile(c.path("br-int.flows"), []byte(flows), 0o644)
	fmt.Fprintf(&b, "--- br-int: %d OpenFlow flows (full dump in br-int.flows with GVS_OVN_KEEP)\n", strings.Count(flows, "actions="))
	show("interfaces", vsctlPath, "--db=unix:"+c.path("db.sock"), "--format=table", "--columns=name,type,options,ofport,error",
		"list", "interface")
	show("dpctl/dump-flows", appctlPath, "-t", "ovs-vswitchd", "dpctl/dump-flows")
	for _, tr := range c.traces {
		show("ofproto/trace "+tr, appctlPath, "-t", "ovs-vswitchd", "ofproto/trace", integrationBridge, tr)
	}
	show("ovn-sbctl show", sbctlPath, "--db=unix:"+c.ctlPath("sb.sock"), "show")
	fmt.Fprintf(&b, "--- ovn-controller.log (warnings):\n%s\n", tailMatching(c.path("ovn-controller.log"), 40, "|WARN|", "|ERR|", "|EMER|"))
	for _, f := range []string{"ovn-northd.log", "nb.log", "sb.log"} {
		fmt.Fprintf(&b, "--- %s (warnings):\n%s\n", f, tailMatching(c.ctlPath(f), 20, "|WARN|", "|ERR|", "|EMER|"))
	}
	show("NB_Global nb_cfg, sb_cfg, hv_cfg", nbctlPath, "--db=unix:"+c.ctlPath("nb.sock"), "--timeout=5",
		"--columns=nb_cfg,sb_cfg,hv_cfg", "list", "NB_Global")
	show("SB_Global nb_cfg", sbctlPath, "--db=unix:"+c.ctlPath("sb.sock"), "--timeout=5", "--columns=nb_cfg", "list", "SB_Global")
	show("Chassis_Private nb_cfg", sbctlPath, "--db=unix:"+c.ctlPath("sb.sock"), "--timeout=5",
		"--columns=name,nb_cfg", "list", "Chassis_Private")
	fmt.Fprintf(&b, "--- ovs-vswitchd.log (tail):\n%s\n", tailMatching(c.path("ovs-vswitchd.log"), 40))
	s, _ := os.ReadFile(c.path(filepath.Base(suite.gvsBinary) + ".stderr"))
	b.Write(s)
	c.t.Logf("%s diagnostics:\n%s", c.kind, b.String())
}

// tailMatching returns the last n lines of file containing any of subs
// (every line when none given).
func tailMatching(file string, n int, subs ...string) string {
	data, _ := os.ReadFile(file)
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		if len(subs) == 0 {
			lines = append(lines, l)
			continue
		}
		for _, s := range subs {
			if strings.Contains(l, s) {
				lines = append(lines, l)
				break
			}
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

package conntrack

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// kind names a switch implementation: the subtest names.
type kind string

const (
	kindOVS kind = "ovs" // Debian's ovs-vswitchd, netdev datapath: the reference
	kindGVS kind = "gvs" // gvs-vswitchd: the switch under test
)

// bridgeName is the bridge of every scenario; it lives in the switch's own
// namespace, so the two switches (and other tests) never share it.
const bridgeName = "br0"

// recorder carries the reference's normalised dump-conntrack output from
// the ovs subtest to the gvs subtest of one scenario, by checkpoint name.
type recorder struct {
	mu    sync.Mutex
	dumps map[string]string
	stats map[string][]statsLine // dump-conntrack -s
}

// scenario runs fn against Debian's ovs-vswitchd (subtest "ovs") and then
// gvs-vswitchd (subtest "gvs"), each in a topology of its own; at each
// checkpoint the gvs run's normalised conntrack table must equal the
// reference's.
func scenario(t *testing.T, short string, fn func(t *testing.T, e *env)) {
	requireEnv(t)
	rec := &recorder{dumps: map[string]string{}, stats: map[string][]statsLine{}}
	for _, k := range []kind{kindOVS, kindGVS} {
		t.Run(string(k), func(t *testing.T) {
			e := newEnv(t, k, short, rec)
			fn(t, e)
		})
	}
}

// env is one switch with its namespaces for one scenario run.
type env struct {
	t      *testing.T
	kind   kind
	debian bool   // runs Debian's ovs-vswitchd (the ovs kind, or any kind in self-check mode)
	prefix string // namespace name prefix, unique to this run
	sw     string // the switch's namespace: its ports and the daemon live there
	dir    string // rundir, dbdir, logdir: short, for unix socket paths
	rec    *recorder
	hosts  []*host
	procs  []*exec.Cmd
	// traces are ofproto/trace flow specs the scenario logs on failure.
	traces []string
}

var envSeq struct {
	sync.Mutex
	n int
}

func newEnv(t *testing.T, k kind, short string, rec *recorder) *env {
	t.Helper()
	envSeq.Lock()
	envSeq.n++
	n := envSeq.n
	envSeq.Unlock()
	e := &env{t: t, kind: k, rec: rec, debian: k == kindOVS || suite.selfCheck}
	if !e.debian && suite.buildErr != nil {
		t.Fatal(suite.buildErr)
	}
	e.prefix = fmt.Sprintf("gvct%d-%d-%s-%s-", os.Getpid(), n, short, k)
	dir, err := os.MkdirTemp("", "gvct")
	if err != nil {
		t.Fatal(err)
	}
	e.dir = dir
	t.Cleanup(func() { os.RemoveAll(dir) })
	e.sw = e.newNS("sw")
	e.startSwitch()
	e.vsctl("add-br", bridgeName, "--", "set", "bridge", bridgeName, "datapath_type=netdev", "fail-mode=secure",
		"protocols=OpenFlow10,OpenFlow13,OpenFlow15", "other-config:datapath-id=0000000000000001")
	t.Cleanup(e.diagnose)
	return e
}

// newNS creates a namespace (removed at cleanup) with loopback up.
func (e *env) newNS(name string) string {
	e.t.Helper()
	ns := e.prefix + name
	exec.Command(ipPath, "netns", "del", ns).Run()
	e.run(ipPath, "netns", "add", ns)
	e.t.Cleanup(func() { exec.Command(ipPath, "netns", "del", ns).Run() })
	e.run(ipPath, "-n", ns, "link", "set", "lo", "up")
	return ns
}

func (e *env) environ() []string {
	var env []string
	for _, v := range os.Environ() {
		if !strings.HasPrefix(v, "OVS_") {
			env = append(env, v)
		}
	}
	return append(env, "OVS_RUNDIR="+e.dir, "OVS_DBDIR="+e.dir, "OVS_LOGDIR="+e.dir, "OVS_SYSCONFDIR="+e.dir,
		"OVS_PKGDATADIR=/usr/share/openvswitch")
}

// startSwitch starts the daemons: Debian's ovsdb-server (root namespace)
// and ovs-vswitchd, or gvs-vswitchd with its embedded database; the
// vswitchd runs in e.sw. They die with the test binary (Pdeathsig) and are
// stopped at cleanup.
func (e *env) startSwitch() {
	e.t.Helper()
	logs := []string{"--pidfile", "--log-file", "-vconsole:off"}
	if e.debian {
		e.run(toolPath, "create", filepath.Join(e.dir, "conf.db"), vswitchSchema)
		e.launch("", debianServer, filepath.Join(e.dir, "conf.db"), "--remote=punix:"+filepath.Join(e.dir, "db.sock"),
			"--pidfile", "--log-file", "-vconsole:off")
		e.waitFor("ovsdb-server's socket", func() bool { _, err := os.Stat(filepath.Join(e.dir, "db.sock")); return err == nil })
		e.vsctl("--no-wait", "init")
		e.launch(e.sw, debianVswitchd, append([]string{"unix:" + filepath.Join(e.dir, "db.sock")}, logs...)...)
	} else {
		e.launch(e.sw, suite.gvsBinary, logs...)
		e.waitFor("gvs-vswitchd's database socket", func() bool { _, err := os.Stat(filepath.Join(e.dir, "db.sock")); return err == nil })
		e.vsctl("--no-wait", "init")
	}
	e.waitFor("ovs-vswitchd's control socket", func() bool {
		_, err := e.appctlErr("version")
		return err == nil
	})
}

// launch starts binary in namespace ns ("" the root one) in the
// foreground; cleanup stops it with SIGTERM (SIGKILL after 5 s).
func (e *env) launch(ns, binary string, args ...string) {
	e.t.Helper()
	name := filepath.Base(binary)
	if ns != "" {
		args = append([]string{"netns", "exec", ns, binary}, args...)
		binary = ipPath
	}
	out, err := os.Create(filepath.Join(e.dir, name+".stderr"))
	if err != nil {
		e.t.Fatal(err)
	}
	cmd := exec.Command(binary, args...)
	cmd.Dir = e.dir
	cmd.Env = e.environ()
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		out.Close()
		e.t.Fatalf("start %s: %v", name, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); out.Close(); close(done) }()
	e.t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
			e.t.Errorf("%s ignored SIGTERM for 5 s", name)
		}
		// A daemon built with -race (GVS_E2E_RACE=1) reports races on
		// stderr without failing anything; a panic likewise.
		if b, err := os.ReadFile(out.Name()); err == nil && (bytes.Contains(b, []byte("WARNING: DATA RACE")) || bytes.Contains(b, []byte("panic:"))) {
			e.t.Errorf("%s's stderr reports a race or a panic:\n%s", name, b)
		}
	})
}

func (e *env) waitFor(what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting for %s\n%s", what, e.logTail())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// run runs a command and fails the test when it fails.
func (e *env) run(name string, args ...string) string {
	e.t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		e.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (e *env) tool(path string, args ...string) (string, error) {
	cmd := exec.Command(path, args...)
	cmd.Env = e.environ()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return stdout.String() + stderr.String(), err
	}
	return stdout.String(), nil
}

func (e *env) mustTool(path string, args ...string) string {
	e.t.Helper()
	out, err := e.tool(path, args...)
	if err != nil {
		e.t.Fatalf("%s %s: %v\n%s", filepath.Base(path), strings.Join(args, " "), err, out)
	}
	return out
}

// vsctl runs Debian's ovs-vsctl (without --no-wait it returns once the
// switch applied the change).
func (e *env) vsctl(args ...string) string {
	e.t.Helper()
	return e.mustTool(vsctlPath, append([]string{"--timeout=20"}, args...)...)
}

// ofctl runs Debian's ovs-ofctl with OpenFlow 1.5 against the bridge's
// management socket.
func (e *env) ofctl(cmd string, args ...string) string {
	e.t.Helper()
	return e.mustTool(ofctlPath, append([]string{"--timeout=10", "-O", "OpenFlow15", cmd, bridgeName}, args...)...)
}

// addFlows installs flows (one per line; blank lines and # comments
// skipped) with ovs-ofctl add-flows.
func (e *env) addFlows(flows string) {
	e.t.Helper()
	var lines []string
	for _, l := range strings.Split(flows, "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	file := filepath.Join(e.dir, "flows")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		e.t.Fatal(err)
	}
	e.ofctl("add-flows", file)
}

func (e *env) appctlErr(args ...string) (string, error) {
	return e.tool(appctlPath, append([]string{"--timeout=10", "-t", "ovs-vswitchd"}, args...)...)
}

// appctl runs Debian's ovs-appctl against the vswitchd.
func (e *env) appctl(args ...string) string {
	e.t.Helper()
	out, err := e.appctlErr(args...)
	if err != nil {
		e.t.Fatalf("ovs-appctl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// flushConntrack empties the switch's connection table before a step.
// A switch without the command fails the test but the scenario goes on,
// so its traffic checks still report.
func (e *env) flushConntrack() {
	e.t.Helper()
	if out, err := e.appctlErr("dpctl/flush-conntrack"); err != nil {
		e.t.Errorf("ovs-appctl dpctl/flush-conntrack: %v\n%s", err, out)
	}
}

// dumpConntrack returns dpctl/dump-conntrack's output (args: -s, zone=N);
// when the command fails the test fails and the dump is empty.
func (e *env) dumpConntrack(args ...string) string {
	e.t.Helper()
	out, err := e.appctlErr(append([]string{"dpctl/dump-conntrack"}, args...)...)
	if err != nil {
		e.t.Errorf("ovs-appctl dpctl/dump-conntrack %s: %v\n%s", strings.Join(args, " "), err, out)
		return ""
	}
	return out
}

// checkpoint dumps the connection table, records it (ovs) or compares it
// with the reference's at the same checkpoint (gvs), both normalised (see
// normalise, after the scenario's own rewrites also, documented where
// they are defined), and returns the raw dump for the scenario's own
// checks.
func (e *env) checkpoint(step string, also ...func(string) string) string {
	e.t.Helper()
	raw, err := e.appctlErr("dpctl/dump-conntrack")
	if err != nil {
		// Nothing to compare: say so once.
		e.t.Errorf("%s: ovs-appctl dpctl/dump-conntrack: %v\n%s", step, err, raw)
		return ""
	}
	got := raw
	for _, f := range also {
		got = f(got)
	}
	got = normalise(got)
	e.rec.mu.Lock()
	defer e.rec.mu.Unlock()
	key := step
	if e.kind == kindOVS {
		e.rec.stats[key] = e.statsDump(also)
		e.rec.dumps[key+" ct-stats-show"] = e.ctStatsShow()
		e.t.Logf("%s: ct-stats-show:\n%s", step, e.rec.dumps[key+" ct-stats-show"])
		e.rec.dumps[key] = got
		e.t.Logf("%s: dump-conntrack (normalised):\n%s", step, firstLines(got, 12))
		return raw
	}
	e.checkStats(step, also)
	e.checkCounts(step)
	want, ok := e.rec.dumps[key]
	if !ok {
		e.t.Logf("%s: no reference dump (the ovs subtest did not get this far or did not run)", step)
		return raw
	}
	if got != want {
		e.t.Errorf("%s: dump-conntrack differs from Debian's ovs-vswitchd (normalised)\n%s", step, lineDiff(want, got))
	}
	return raw
}

// diagnose logs, when the test failed, what the lead needs to route a fix:
// the OpenFlow tables, the datapath flows, the connection table, traces of
// the scenario's packets and the end of the daemon's log.
func (e *env) diagnose() {
	if !e.t.Failed() {
		return
	}
	var b strings.Builder
	show := func(title, path string, args ...string) {
		out, err := e.tool(path, args...)
		if err != nil {
			out += "(" + err.Error() + ")"
		}
		fmt.Fprintf(&b, "--- %s:\n%s\n", title, out)
	}
	show("ovs-ofctl dump-flows", ofctlPath, "-O", "OpenFlow15", "dump-flows", bridgeName)
	show("ovs-ofctl dump-groups", ofctlPath, "-O", "OpenFlow15", "dump-groups", bridgeName)
	show("dpctl/dump-flows", appctlPath, "-t", "ovs-vswitchd", "dpctl/dump-flows")
	show("dpctl/dump-conntrack -s", appctlPath, "-t", "ovs-vswitchd", "dpctl/dump-conntrack", "-s")
	for _, tr := range e.traces {
		show("ofproto/trace "+tr, appctlPath, "-t", "ovs-vswitchd", "ofproto/trace", bridgeName, tr)
	}
	b.WriteString("--- ovs-vswitchd.log (tail):\n" + e.logTail())
	e.t.Logf("%s diagnostics:\n%s", e.kind, b.String())
}

func (e *env) logTail() string {
	b, _ := os.ReadFile(filepath.Join(e.dir, "ovs-vswitchd.log"))
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	s, _ := os.ReadFile(filepath.Join(e.dir, filepath.Base(suite.gvsBinary)+".stderr"))
	return strings.Join(lines, "\n") + "\n" + string(s)
}

// lineDiff shows the lines only in want (-) and only in got (+).
func lineDiff(want, got string) string {
	count := map[string]int{}
	for _, l := range strings.Split(want, "\n") {
		count[l]++
	}
	for _, l := range strings.Split(got, "\n") {
		count[l]--
	}
	var b strings.Builder
	for _, l := range strings.Split(want, "\n") {
		if count[l] > 0 {
			fmt.Fprintf(&b, "- %s\n", l)
			count[l]--
		}
	}
	for _, l := range strings.Split(got, "\n") {
		if count[l] < 0 {
			fmt.Fprintf(&b, "+ %s\n", l)
			count[l]++
		}
	}
	return b.String()
}

func itoa(n int) string { return strconv.Itoa(n) }

// firstLines shortens a long text for the log.
func firstLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) <= n {
		return s
	}
	return strings.Join(lines[:n], "\n") + fmt.Sprintf("\n... (%d lines)", len(lines))
}

// statsDump is dump-conntrack -s after the scenario's rewrites, as
// normaliseStats splits it.
func (e *env) statsDump(also []func(string) string) []statsLine {
	e.t.Helper()
	got := e.dumpConntrack("-s")
	for _, f := range also {
		got = f(got)
	}
	return normaliseStats(got)
}

// checkStats compares dump-conntrack -s with the reference's at the same
// checkpoint: the same entries (normalised) and each one's timeout within
// timeoutSlack of the reference's (the two runs dump at slightly
// different moments after the last packet).
func (e *env) checkStats(step string, also []func(string) string) {
	e.t.Helper()
	got := e.statsDump(also)
	want, ok := e.rec.stats[step]
	if !ok {
		return
	}
	if g, w := joinStats(got), joinStats(want); g != w {
		e.t.Errorf("%s: dump-conntrack -s differs from Debian's ovs-vswitchd (normalised)\n%s", step, lineDiff(w, g))
		return
	}
	for i := range got {
		if d := got[i].timeout - want[i].timeout; d > timeoutSlack || d < -timeoutSlack {
			e.t.Errorf("%s: timeout=%d, Debian's ovs-vswitchd has timeout=%d for %s", step, got[i].timeout, want[i].timeout, got[i].text)
		}
	}
}

// ctStatsShow is dpctl/ct-stats-show: the table's connections counted by
// protocol and TCP state, exact (nothing in it depends on timing).
func (e *env) ctStatsShow() string {
	e.t.Helper()
	out, err := e.appctlErr("dpctl/ct-stats-show")
	if err != nil {
		e.t.Errorf("ovs-appctl dpctl/ct-stats-show: %v\n%s", err, out)
		return ""
	}
	return strings.TrimRight(out, "\n")
}

// checkCounts compares dpctl/ct-stats-show with the reference's.
func (e *env) checkCounts(step string) {
	e.t.Helper()
	got := e.ctStatsShow()
	if want, ok := e.rec.dumps[step+" ct-stats-show"]; ok && got != want {
		e.t.Errorf("%s: dpctl/ct-stats-show differs from Debian's ovs-vswitchd:\n%s", step, lineDiff(want, got))
	}
}

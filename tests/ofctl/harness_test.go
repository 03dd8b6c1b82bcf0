package ofctl

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Debian's programs and schema.
const (
	vsctlPath      = "/usr/bin/ovs-vsctl"
	ofctlPath      = "/usr/bin/ovs-ofctl"
	appctlPath     = "/usr/bin/ovs-appctl"
	toolPath       = "/usr/bin/ovsdb-tool"
	debianServer   = "/usr/sbin/ovsdb-server"
	debianVswitchd = "/usr/sbin/ovs-vswitchd"
	vswitchSchema  = "/usr/share/openvswitch/vswitch.ovsschema"
)

const (
	startTimeout = 10 * time.Second
	stopTimeout  = 5 * time.Second
	toolTimeout  = 20 * time.Second
	pollInterval = 2 * time.Millisecond
)

// dummyFlags are the daemon flags Open vSwitch's test suite starts
// ovs-vswitchd with.
var dummyFlags = []string{"--enable-dummy", "--disable-system", "--disable-system-route"}

var suite struct {
	gvsBinary string
	buildErr  error
	selfCheck bool
}

func TestMain(m *testing.M) { os.Exit(runSuite(m)) }

func runSuite(m *testing.M) int {
	suite.selfCheck = os.Getenv("GVS_OFCTL_SELFCHECK") != ""
	dir, err := os.MkdirTemp("", "gvs-ofctl-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "ofctl:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	suite.gvsBinary = filepath.Join(dir, "gvs-vswitchd")
	build := []string{"build", "-o", suite.gvsBinary}
	if tags := os.Getenv("GVS_OFCTL_TAGS"); tags != "" {
		build = append(build, "-tags", tags)
	}
	if out, err := exec.Command("go", append(build, "gvs/cmd/gvs-vswitchd")...).CombinedOutput(); err != nil {
		suite.buildErr = fmt.Errorf("go build gvs/cmd/gvs-vswitchd: %v\n%s", err, out)
	}
	return m.Run()
}

// kind is one side of a comparison.
type kind struct {
	name string // "debian", "gvs"; in self-check mode "debian-a", "debian-b"
	gvs  bool
}

func requireTools(tb testing.TB) {
	tb.Helper()
	for _, p := range []string{vsctlPath, ofctlPath, appctlPath, toolPath, debianServer, debianVswitchd, vswitchSchema} {
		if _, err := os.Stat(p); err != nil {
			tb.Skipf("Debian's %s is missing (%v): run scripts/install-test-deps.sh", p, err)
		}
	}
}

// sides returns the reference (Debian) and the switch under test.
func sides(tb testing.TB) (ref, sut kind) {
	tb.Helper()
	requireTools(tb)
	if suite.selfCheck {
		return kind{name: "debian-a"}, kind{name: "debian-b"}
	}
	if suite.buildErr != nil {
		tb.Fatal(suite.buildErr)
	}
	return kind{name: "debian"}, kind{name: "gvs", gvs: true}
}

// proc is one daemon we started; it dies with the test binary
// (Pdeathsig) and is stopped by its pid at cleanup.
type proc struct {
	name   string
	cmd    *exec.Cmd
	exited chan struct{}
}

// vswitch is one running switch: database, daemon, private directory.
type vswitch struct {
	kind  kind
	dir   string // short, for sun_path
	db    string // unix:dir/db.sock
	procs []*proc
	// extra are processes a test started through the shell (ovs-ofctl
	// monitor --detach ...) with their pidfiles, killed at cleanup.
	extraPidfiles []string
}

func (s *vswitch) env() []string {
	env := []string{}
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "OVS_") {
			env = append(env, e)
		}
	}
	return append(env, "OVS_RUNDIR="+s.dir, "OVS_DBDIR="+s.dir, "OVS_LOGDIR="+s.dir, "OVS_SYSCONFDIR="+s.dir,
		"OVS_PKGDATADIR=/usr/share/openvswitch", "DIR="+s.dir)
}

// startSwitch starts one side with its bridge br0 (see the package
// documentation) and then runs setup (ovs-vsctl arguments appended to the
// add-br command, e.g. adding ports), waiting until the switch applied it.
func startSwitch(tb testing.TB, k kind, setup ...string) *vswitch {
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
	if k.gvs {
		s.launch(tb, "gvs-vswitchd", suite.gvsBinary, append(append([]string{}, dummyFlags...),
			"--pidfile="+filepath.Join(dir, "ovs-vswitchd.pid"), "--log-file="+filepath.Join(dir, "ovs-vswitchd.log"))...)
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
		s.launch(tb, "ovs-vswitchd", debianVswitchd, append(append([]string{s.db}, dummyFlags...),
			"--pidfile="+filepath.Join(dir, "ovs-vswitchd.pid"), "--log-file="+filepath.Join(dir, "ovs-vswitchd.log"))...)
	}
	s.waitControl(tb)
	// OVS_VSWITCHD_START's bridge.
	args := []string{"--db=" + s.db, "--timeout=10", "--", "add-br", "br0", "--", "set", "bridge", "br0", "datapath-type=dummy",
		"other-config:datapath-id=fedcba9876543210", "other-config:hwaddr=aa:55:aa:55:00:00",
		"protocols=[OpenFlow10,OpenFlow11,OpenFlow12,OpenFlow13,OpenFlow14,OpenFlow15]", "fail-mode=secure"}
	for _, a := range setup {
		args = append(args, a)
	}
	s.mustRun(tb, vsctlPath, args...)
	return s
}

// addPortsArgs returns the ovs-vsctl arguments that add dummy ports p1..pN
// to br0 with OpenFlow port numbers 1..N (add_of_ports in ofproto-macros.at).
func addPortsArgs(n int) []string {
	var args []string
	for i := 1; i <= n; i++ {
		p := "p" + strconv.Itoa(i)
		args = append(args, "--", "add-port", "br0", p, "--", "set", "interface", p, "type=dummy", "ofport_request="+strconv.Itoa(i))
	}
	return args
}

func (s *vswitch) launch(tb testing.TB, name, binary string, args ...string) {
	tb.Helper()
	logf, err := os.Create(filepath.Join(s.dir, name+".stderr"))
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(binary, args...)
	cmd.Dir = s.dir
	cmd.Env = s.env()
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		tb.Fatalf("start %s: %v", name, err)
	}
	p := &proc{name: name, cmd: cmd, exited: make(chan struct{})}
	go func() {
		cmd.Wait()
		logf.Close()
		close(p.exited)
	}()
	s.procs = append(s.procs, p)
}

func (s *vswitch) waitSocket(tb testing.TB, path string) {
	tb.Helper()
	deadline := time.Now().Add(startTimeout)
	for {
		if c, err := net.Dial("unix", path); err == nil {
			c.Close()
			return
		}
		for _, p := range s.procs {
			select {
			case <-p.exited:
				tb.Fatalf("%s %s exited while starting", s.kind.name, p.name)
			default:
			}
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%s: %s did not appear within %v", s.kind.name, path, startTimeout)
		}
		time.Sleep(pollInterval)
	}
}

// waitControl waits for ovs-vswitchd's control socket (named after its pid,
// which the pidfile gives).
func (s *vswitch) waitControl(tb testing.TB) {
	tb.Helper()
	deadline := time.Now().Add(startTimeout)
	for {
		if b, err := os.ReadFile(filepath.Join(s.dir, "ovs-vswitchd.pid")); err == nil {
			if pid := strings.TrimSpace(string(b)); pid != "" {
				s.waitSocket(tb, filepath.Join(s.dir, "ovs-vswitchd."+pid+".ctl"))
				return
			}
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%s: no ovs-vswitchd pidfile within %v", s.kind.name, startTimeout)
		}
		time.Sleep(pollInterval)
	}
}

// stop ends every process of this switch: shell-started ones by their
// pidfiles, then the daemons (SIGTERM, SIGKILL after stopTimeout).
func (s *vswitch) stop(tb testing.TB) {
	for _, pf := range s.extraPidfiles {
		b, err := os.ReadFile(pf)
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 1 {
			syscall.Kill(pid, syscall.SIGTERM)
		}
	}
	for i := len(s.procs) - 1; i >= 0; i-- {
		p := s.procs[i]
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(stopTimeout):
			p.cmd.Process.Kill()
			<-p.exited
		}
	}
	s.procs = nil
}

func (s *vswitch) dumpLogs(tb testing.TB) {
	for _, name := range []string{"ovs-vswitchd.log", "gvs-vswitchd.stderr"} {
		if b, err := os.ReadFile(filepath.Join(s.dir, name)); err == nil && len(b) > 0 {
			if len(b) > 8000 {
				b = b[len(b)-8000:]
			}
			tb.Logf("%s %s:\n%s", s.kind.name, name, b)
		}
	}
}

// result is what one command line printed and its exit status.
type result struct {
	stdout, stderr string
	exit           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout ---\n%s--- stderr ---\n%s", r.exit, r.stdout, r.stderr)
}

// sh runs a shell command line in the switch's directory and environment
// (OVS_RUNDIR and friends: ovs-ofctl br0 finds br0.mgmt, ovs-appctl -t
// ovs-vswitchd finds the daemon; $DIR is the directory).
func (s *vswitch) sh(tb testing.TB, line string) result {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", line)
	cmd.Env = s.env()
	cmd.Dir = s.dir
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		tb.Fatalf("%s: %q did not finish within %v", s.kind.name, line, toolTimeout)
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		tb.Fatalf("%s: %q: %v", s.kind.name, line, err)
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), exit: cmd.ProcessState.ExitCode()}
}

func (s *vswitch) mustRun(tb testing.TB, tool string, args ...string) string {
	tb.Helper()
	cmd := exec.Command(tool, args...)
	cmd.Env = s.env()
	cmd.Dir = s.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("%s: %s %s: %v\n%s", s.kind.name, tool, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// pair is the reference switch and the one under test, set up alike.
type pair struct{ ref, sut *vswitch }

// startPair starts both sides with the same setup (ovs-vsctl arguments
// appended to the bridge's creation).
func startPair(tb testing.TB, setup ...string) pair {
	tb.Helper()
	refKind, sutKind := sides(tb)
	return pair{ref: startSwitch(tb, refKind, setup...), sut: startSwitch(tb, sutKind, setup...)}
}

// requireOpenFlow skips the test while the switch under test does not
// serve OpenFlow on br0's management socket (gvs before OpenFlow landed);
// it never skips for any other reason.
func (p pair) requireOpenFlow(tb testing.TB) {
	tb.Helper()
	mgmt := filepath.Join(p.sut.dir, "br0.mgmt")
	deadline := time.Now().Add(500 * time.Millisecond)
	for {
		if st, err := os.Stat(mgmt); err == nil && st.Mode()&os.ModeSocket != 0 {
			return
		}
		if time.Now().After(deadline) {
			tb.Skipf("%s serves no OpenFlow yet (no %s)", p.sut.kind.name, mgmt)
		}
		time.Sleep(pollInterval)
	}
}

// compare runs each command line on both sides, in order, and requires the
// same normalised output. "!" before a line runs it on both without
// comparing (setup whose output is noise); "sort:" before a line sorts
// the lines of its standard output after the first (normalisation 5: for
// replies Open vSwitch prints in hash-table order); "noxid:" masks the
// xids in its standard output (normalisation 6); "recirc:" masks
// recirculation ids (normalisation 12); "counters:" and
// "prefixes:" compare a line without a known difference (normalize_test.go).
func (p pair) compare(t *testing.T, lines ...string) {
	t.Helper()
	for _, line := range lines {
		if rest, ok := strings.CutPrefix(line, "!"); ok {
			p.ref.sh(t, rest)
			p.sut.sh(t, rest)
			continue
		}
		sorted, noXID, counters, prefixes, recirc := false, false, false, false, false
		if rest, ok := strings.CutPrefix(line, "recirc:"); ok {
			line, recirc = rest, true
		}
		if rest, ok := strings.CutPrefix(line, "counters:"); ok {
			line, counters = rest, true
		}
		if rest, ok := strings.CutPrefix(line, "prefixes:"); ok {
			line, prefixes = rest, true
		}
		if rest, ok := strings.CutPrefix(line, "sort:"); ok {
			line, sorted = rest, true
		}
		if rest, ok := strings.CutPrefix(line, "noxid:"); ok {
			line, noXID = rest, true
		}
		ref := normalize(p.ref, p.ref.sh(t, line))
		sut := normalize(p.sut, p.sut.sh(t, line))
		ref.stdout, sut.stdout = normalizeOrder(line, ref.stdout), normalizeOrder(line, sut.stdout)
		ref.stdout, sut.stdout = normalizeFields(line, ref.stdout), normalizeFields(line, sut.stdout)
		if counters {
			ref.stdout, sut.stdout = maskCounters(ref.stdout), maskCounters(sut.stdout)
		}
		if prefixes {
			ref.stdout, sut.stdout = maskPrefixes(ref.stdout), maskPrefixes(sut.stdout)
		}
		if sorted {
			ref.stdout, sut.stdout = sortAfterFirstLine(ref.stdout), sortAfterFirstLine(sut.stdout)
		}
		if recirc {
			ref.stdout, sut.stdout = maskRecirc(ref.stdout), maskRecirc(sut.stdout)
		}
		if noXID {
			ref.stdout, sut.stdout = xidRE.ReplaceAllString(ref.stdout, "xid=<x>"), xidRE.ReplaceAllString(sut.stdout, "xid=<x>")
		}
		if ref != sut {
			t.Errorf("%s\n%s differs from %s (first difference: %s)\n=== %s ===\n%s=== %s ===\n%s", line, p.sut.kind.name, p.ref.kind.name,
				firstDifference(ref.String(), sut.String()), p.ref.kind.name, ref, p.sut.kind.name, sut)
		} else if os.Getenv("GVS_OFCTL_SHOW") != "" {
			t.Logf("same: %s\n%s", line, ref)
		} else if testing.Verbose() {
			t.Logf("same: %s", line)
		}
	}
}

// both runs a line on both sides without comparing and returns the
// results (for tests that check something beyond equality).
func (p pair) both(t *testing.T, line string) (ref, sut result) {
	t.Helper()
	return normalize(p.ref, p.ref.sh(t, line)), normalize(p.sut, p.sut.sh(t, line))
}

func firstDifference(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < min(len(al), len(bl)); i++ {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d: %q vs %q", i+1, al[i], bl[i])
		}
	}
	return fmt.Sprintf("%d lines vs %d", len(al), len(bl))
}

package tests

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Paths of the Debian tools the suite drives. A test that needs one that is
// missing is skipped, naming it.
const (
	vsctlPath     = "/usr/bin/ovs-vsctl"
	clientPath    = "/usr/bin/ovsdb-client"
	toolPath      = "/usr/bin/ovsdb-tool"
	appctlPath    = "/usr/bin/ovs-appctl"
	debianServer  = "/usr/sbin/ovsdb-server"
	systemPython  = "/usr/bin/python3" // not the pyenv python3 on PATH: only this one sees python3-openvswitch
	vswitchSchema = "/usr/share/openvswitch/vswitch.ovsschema"
)

// Bounds on every wait, so a hung server fails a test instead of the run.
const (
	startTimeout = 10 * time.Second
	stopTimeout  = 5 * time.Second
	toolTimeout  = 20 * time.Second // safety net above each tool's own --timeout
	pollInterval = 5 * time.Millisecond
)

// suite is what TestMain prepares once per run.
var suite struct {
	oursBinary string // built gvs-ovsdb-server; empty in self-check mode
	buildErr   error
	selfCheck  bool
}

func TestMain(m *testing.M) { os.Exit(runSuite(m)) }

func runSuite(m *testing.M) int {
	suite.selfCheck = os.Getenv("GVS_E2E_SELFCHECK") != ""
	if !suite.selfCheck {
		dir, err := os.MkdirTemp("", "gvs-e2e-bin-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "tests:", err)
			return 1
		}
		defer os.RemoveAll(dir)
		suite.oursBinary = filepath.Join(dir, "gvs-ovsdb-server")
		build := exec.Command("go", "build", "-o", suite.oursBinary, "gvs/cmd/gvs-ovsdb-server")
		if out, err := build.CombinedOutput(); err != nil {
			suite.buildErr = fmt.Errorf("go build gvs/cmd/gvs-ovsdb-server: %v\n%s", err, out)
		}
	}
	return m.Run()
}

// serverKind is one side of a comparison.
type serverKind struct {
	name   string // "ours" or "debian" (in self-check mode "debian-a"/"debian-b")
	binary string
}

// sides returns the two servers every comparison runs against: the
// reference (Debian's) first, then ours. It skips when a tool in need is
// missing and fails when our binary did not build.
func sides(tb testing.TB, tools ...string) (ref, ours serverKind) {
	tb.Helper()
	requireTools(tb, append([]string{debianServer, toolPath, appctlPath}, tools...)...)
	ref = serverKind{name: "debian", binary: debianServer}
	if suite.selfCheck {
		return serverKind{name: "debian-a", binary: debianServer}, serverKind{name: "debian-b", binary: debianServer}
	}
	if suite.buildErr != nil {
		tb.Fatal(suite.buildErr)
	}
	return ref, serverKind{name: "ours", binary: suite.oursBinary}
}

func requireTools(tb testing.TB, paths ...string) {
	tb.Helper()
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			tb.Skipf("Debian tool %s is missing (%v); install openvswitch-common/openvswitch-switch", p, err)
		}
	}
}

// server is one running database server in a private directory.
type server struct {
	kind    serverKind
	dir     string // holds db, sockets, pidfile and logs; short, for sun_path
	db      string
	sock    string
	remote  string // "unix:" + sock
	ctl     string // unixctl socket
	logFile string
	cmd     *exec.Cmd
	exited  chan struct{} // closed when cmd.Wait returns
	waitErr error
	stopped bool // stop was called for the current process
}

// startServer creates a fresh Open_vSwitch database with ovsdb-tool and
// serves it; t.Cleanup stops the server and removes its directory, dumping
// its logs first if the test failed.
func startServer(tb testing.TB, kind serverKind) *server {
	tb.Helper()
	// os.MkdirTemp, not tb.TempDir: the socket path must fit in sun_path
	// (108 bytes) whatever the test's name.
	dir, err := os.MkdirTemp("", "gvs")
	if err != nil {
		tb.Fatal(err)
	}
	s := &server{
		kind:    kind,
		dir:     dir,
		db:      filepath.Join(dir, "conf.db"),
		sock:    filepath.Join(dir, "db.sock"),
		ctl:     filepath.Join(dir, "ctl"),
		logFile: filepath.Join(dir, "ovsdb-server.log"),
	}
	s.remote = "unix:" + s.sock
	tb.Cleanup(func() {
		s.stop(tb)
		if tb.Failed() {
			s.dumpLogs(tb)
		}
		os.RemoveAll(dir)
	})
	if out, err := exec.Command(toolPath, "create", s.db, vswitchSchema).CombinedOutput(); err != nil {
		tb.Fatalf("ovsdb-tool create: %v\n%s", err, out)
	}
	s.launch(tb)
	return s
}

// restart stops the server through its control socket and starts it again
// on the same database file.
func (s *server) restart(tb testing.TB) {
	tb.Helper()
	s.stop(tb)
	s.launch(tb)
}

// launch starts the server process on the existing database file and waits
// until its socket accepts connections.
func (s *server) launch(tb testing.TB) {
	tb.Helper()
	exited := make(chan struct{})
	s.exited = exited
	s.waitErr = nil
	s.stopped = false
	stdout, err := os.OpenFile(filepath.Join(s.dir, "stdout"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		tb.Fatal(err)
	}
	stderr, err := os.OpenFile(filepath.Join(s.dir, "stderr"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		tb.Fatal(err)
	}
	s.cmd = exec.Command(s.kind.binary, s.db,
		"--remote=punix:"+s.sock,
		"--unixctl="+s.ctl,
		"--pidfile="+filepath.Join(s.dir, "ovsdb-server.pid"),
		"--log-file="+s.logFile,
	)
	s.cmd.Dir = s.dir
	s.cmd.Env = s.env()
	// Should the test binary die, the kernel kills the server too.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	s.cmd.Stdout, s.cmd.Stderr = stdout, stderr
	if err := s.cmd.Start(); err != nil {
		stdout.Close()
		stderr.Close()
		tb.Fatalf("start %s: %v", s.kind.name, err)
	}
	cmd := s.cmd
	go func() {
		s.waitErr = cmd.Wait()
		stdout.Close()
		stderr.Close()
		close(exited)
	}()
	deadline := time.Now().Add(startTimeout)
	for {
		if c, err := net.Dial("unix", s.sock); err == nil {
			c.Close()
			return
		}
		select {
		case <-s.exited:
			s.stopped = true
			tb.Fatalf("%s server exited before accepting connections: %v", s.kind.name, s.waitErr)
		case <-time.After(pollInterval):
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%s server: %s did not accept connections within %v", s.kind.name, s.sock, startTimeout)
		}
	}
}

// env is the environment for the server and every tool run against it:
// everything Open vSwitch would put in /var/run, /etc or /var/log goes to
// the private directory.
func (s *server) env() []string {
	return append(os.Environ(), "OVS_RUNDIR="+s.dir, "OVS_DBDIR="+s.dir, "OVS_LOGDIR="+s.dir, "OVS_SYSCONFDIR="+s.dir)
}

// stop asks the server to exit through its control socket, as an operator
// would, and kills it if it does not. A server that ignores "exit", exits
// with an error, or has died before it was asked to stop fails the test.
func (s *server) stop(tb testing.TB) {
	if s.cmd == nil || s.cmd.Process == nil || s.stopped {
		return
	}
	s.stopped = true
	select {
	case <-s.exited:
		tb.Errorf("%s server died during the test: %v", s.kind.name, s.waitErr)
		return
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, appctlPath, "-t", s.ctl, "exit").CombinedOutput()
	if err != nil {
		tb.Errorf("%s: ovs-appctl -t %s exit: %v\n%s", s.kind.name, s.ctl, err, out)
	}
	select {
	case <-s.exited:
		if s.waitErr != nil {
			tb.Errorf("%s server: after ovs-appctl exit: %v", s.kind.name, s.waitErr)
		}
		return
	case <-time.After(stopTimeout):
		tb.Errorf("%s server did not exit within %v of ovs-appctl exit; killing it", s.kind.name, stopTimeout)
	}
	s.cmd.Process.Kill()
	<-s.exited
}

func (s *server) dumpLogs(tb testing.TB) {
	for _, name := range []string{"ovsdb-server.log", "stdout", "stderr"} {
		b, err := os.ReadFile(filepath.Join(s.dir, name))
		if err != nil || len(b) == 0 {
			continue
		}
		const max = 16 << 10
		if len(b) > max {
			b = append([]byte("...\n"), b[len(b)-max:]...)
		}
		tb.Logf("=== %s server %s ===\n%s", s.kind.name, name, b)
	}
}

// result is what a tool run produced.
type result struct {
	stdout, stderr string
	exit           int // exit code; 128+N when killed by signal N, as a shell reports it
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout ---\n%s--- stderr ---\n%s", r.exit, r.stdout, r.stderr)
}

// run executes a tool with the server's environment and stdin (may be "").
func (s *server) run(tb testing.TB, stdin string, tool string, args ...string) result {
	tb.Helper()
	r, err := runToolInput(s, strings.NewReader(stdin), tool, args...)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// runTool is run for goroutines other than the test's: a failure to run
// the tool at all is reported in the result (exit -1, the error in stderr).
func runTool(s *server, tool string, args ...string) result {
	r, err := runToolInput(s, strings.NewReader(""), tool, args...)
	if err != nil {
		return result{exit: -1, stderr: err.Error()}
	}
	return r
}

// runToolInput runs a tool reading stdin; an *os.File is passed as the
// tool's own descriptor (ovsdb-client restore seeks on it).
func runToolInput(s *server, stdin io.Reader, tool string, args ...string) (result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, tool, args...)
	cmd.Env = s.env()
	cmd.Dir = s.dir
	cmd.Stdin = stdin
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		return result{}, fmt.Errorf("%s %s: no exit within %v (the tool's own --timeout should have fired)", tool, strings.Join(args, " "), toolTimeout)
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		return result{}, fmt.Errorf("%s: %v", tool, err)
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), exit: exitStatus(cmd.ProcessState)}, nil
}

func exitStatus(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// vsctl runs ovs-vsctl against the server with a bounded --timeout.
func (s *server) vsctl(tb testing.TB, args ...string) result {
	tb.Helper()
	return s.run(tb, "", vsctlPath, append([]string{"--db=" + s.remote, "--timeout=5"}, args...)...)
}

// client runs ovsdb-client with the given command and the server's remote
// inserted as the SERVER argument right after the command.
func (s *server) client(tb testing.TB, opts []string, command string, args ...string) result {
	tb.Helper()
	full := append(append(append([]string{"--timeout=5"}, opts...), command, s.remote), args...)
	return s.run(tb, "", clientPath, full...)
}

// pair is the reference server and ours, started together.
type pair struct {
	ref, ours *server
}

func startPair(tb testing.TB, tools ...string) pair {
	tb.Helper()
	refKind, oursKind := sides(tb, tools...)
	return pair{ref: startServer(tb, refKind), ours: startServer(tb, oursKind)}
}

func (p pair) both() []*server { return []*server{p.ref, p.ours} }

// waitFor polls cond until it holds or the timeout passes.
func waitFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pollInterval)
	}
}

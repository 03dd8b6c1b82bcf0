package bridge

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// dbMode is where the database lives: embedded in gvs-vswitchd when
// server is empty, else in that external server.
type dbMode struct {
	name   string
	server func() string // the server binary
}

var modes = []dbMode{
	{name: "embedded"},
	{name: "debian-ovsdb-server", server: func() string { return debianServer }},
	{name: "gvs-ovsdb-server", server: func() string { return bins.ovsdbServer }},
}

// startExternal serves dir/conf.db (created with Debian's ovsdb-tool when
// missing) with server on dir/db.sock, in the background, privately.
func startExternal(t *testing.T, dir, server string) {
	t.Helper()
	for _, tool := range []string{server, toolPath, vswitchSchem} {
		if _, err := os.Stat(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	db := filepath.Join(dir, "conf.db")
	if _, err := os.Stat(db); err != nil {
		run(t, toolPath, "create", db, vswitchSchem)
	}
	run(t, server, db, "--remote=punix:"+filepath.Join(dir, "db.sock"), "--pidfile="+filepath.Join(dir, "ovsdb-server.pid"),
		"--unixctl="+filepath.Join(dir, "ovsdb-server.ctl"), "--log-file="+filepath.Join(dir, "ovsdb-server.log"),
		"--detach", "--no-chdir", "-vconsole:off")
}

// restartServer stops the external server and starts it again on the same
// file, while gvs-vswitchd keeps running.
func (s *switchd) restartServer() {
	s.t.Helper()
	stopPidfile(s.t, filepath.Join(s.dir, "ovsdb-server.pid"))
	startExternal(s.t, s.dir, s.mode.server())
}

// switchd is a gvs-vswitchd run in its own state directory.
type switchd struct {
	t        *testing.T
	dir      string
	mode     dbMode
	external bool
}

func newSwitchd(t *testing.T, mode dbMode) *switchd {
	t.Helper()
	dir := t.TempDir()
	s := &switchd{t: t, dir: dir, mode: mode, external: mode.server != nil}
	if s.external {
		startExternal(t, dir, mode.server())
		t.Cleanup(func() { stopPidfile(t, filepath.Join(dir, "ovsdb-server.pid")) })
	}
	s.start()
	t.Cleanup(func() {
		if t.Failed() {
			if b, err := os.ReadFile(filepath.Join(dir, "ovs-vswitchd.log")); err == nil {
				t.Logf("ovs-vswitchd.log:\n%s", b)
			}
		}
		s.stop()
	})
	s.vsctl("--no-wait", "init")
	return s
}

func (s *switchd) env() []string {
	return append(os.Environ(), "OVS_RUNDIR="+s.dir, "OVS_DBDIR="+s.dir, "OVS_LOGDIR="+s.dir)
}

func (s *switchd) pidfile() string { return filepath.Join(s.dir, "ovs-vswitchd.pid") }

// start runs gvs-vswitchd --detach: it returns once the daemon serves.
func (s *switchd) start() {
	s.t.Helper()
	args := []string{"--pidfile", "--log-file", "--detach", "--no-chdir", "-vconsole:off", "--metrics-address=127.0.0.1:0"}
	if s.external {
		args = append([]string{"unix:" + filepath.Join(s.dir, "db.sock")}, args...)
	}
	cmd := exec.Command(bins.vswitchd, args...)
	cmd.Env = s.env()
	if out, err := cmd.CombinedOutput(); err != nil {
		s.t.Fatalf("gvs-vswitchd: %v\n%s", err, out)
	}
}

// stop sends SIGTERM and waits for the process to be gone.
func (s *switchd) stop() { stopPidfile(s.t, s.pidfile()) }

func stopPidfile(t *testing.T, pidfile string) {
	t.Helper()
	b, err := os.ReadFile(pidfile)
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("%s: %v", pidfile, err)
	}
	syscall.Kill(pid, syscall.SIGTERM)
	deadline := time.Now().Add(10 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("pid %d (%s) ignored SIGTERM for 10 s", pid, pidfile)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// vsctl runs the real ovs-vsctl; without --no-wait it returns once
// gvs-vswitchd has applied the change.
func (s *switchd) vsctl(args ...string) string {
	s.t.Helper()
	out, err := s.vsctlErr(args...)
	if err != nil {
		s.t.Fatalf("ovs-vsctl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (s *switchd) vsctlErr(args ...string) (string, error) {
	cmd := exec.Command(vsctlPath, append([]string{"--timeout=30"}, args...)...)
	cmd.Env = s.env()
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func (s *switchd) get(table, record, column string) string {
	s.t.Helper()
	return s.vsctl("--no-wait", "get", table, record, column)
}

// eventually polls cond for up to 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// appctl runs the real ovs-appctl against gvs-vswitchd.
func (s *switchd) appctl(args ...string) string {
	s.t.Helper()
	if _, err := os.Stat(appctlPath); err != nil {
		s.t.Skipf("%s not installed", appctlPath)
	}
	cmd := exec.Command(appctlPath, append([]string{"--timeout=10", "-t", "ovs-vswitchd"}, args...)...)
	cmd.Env = s.env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		s.t.Fatalf("ovs-appctl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// metricsURL finds the metrics endpoint the running gvs-vswitchd logged
// (it listens on port 0).
func (s *switchd) metricsURL() string {
	s.t.Helper()
	b, err := os.ReadFile(filepath.Join(s.dir, "ovs-vswitchd.log"))
	if err != nil {
		s.t.Fatal(err)
	}
	url := ""
	for _, line := range strings.Split(string(b), "\n") {
		if _, rest, ok := strings.Cut(line, "serving metrics address="); ok {
			url = strings.Fields(rest)[0] // the last start's
		}
	}
	if url == "" {
		s.t.Fatal("gvs-vswitchd logged no metrics address")
	}
	return url
}

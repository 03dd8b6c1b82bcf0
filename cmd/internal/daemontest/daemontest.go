// Package daemontest helps the binaries' tests run the binary under test as
// a real daemon: the test executable re-runs itself as the program, so
// --detach, pidfiles, signals and control sockets are exercised for real.
//
// Contract: call MaybeRunMain from TestMain before m.Run; the helpers are
// for test goroutines.
package daemontest

import (
	"bytes"
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

const runMainEnv = "GVS_TEST_RUN_MAIN"

// MaybeRunMain runs main and exits when the test binary was started as the
// program by Command.
func MaybeRunMain(main func()) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
}

// Env is a private Open vSwitch directory set for one test.
type Env struct {
	Dir string
}

// NewEnv makes run/db/log directories under a short temporary path (Unix
// socket paths are limited to 107 bytes).
func NewEnv(t *testing.T) *Env {
	dir, err := os.MkdirTemp("", "gvs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return &Env{Dir: dir}
}

// Vars are the OVS_* variables pointing at the env's directory.
func (e *Env) Vars() []string {
	return []string{"OVS_RUNDIR=" + e.Dir, "OVS_DBDIR=" + e.Dir, "OVS_LOGDIR=" + e.Dir}
}

// Path joins name to the env's directory.
func (e *Env) Path(name string) string { return filepath.Join(e.Dir, name) }

// Command runs the program under test with args in this env.
func (e *Env) Command(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), runMainEnv+"=1"), e.Vars()...)
	cmd.Dir = e.Dir
	return cmd
}

// Result is a finished command's output and exit code (-1 when killed by
// a signal).
type Result struct {
	Stdout, Stderr string
	Code           int
	Signal         syscall.Signal
}

// Run runs cmd to completion.
func Run(t *testing.T, cmd *exec.Cmd) Result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := Result{Stdout: stdout.String(), Stderr: stderr.String()}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		r.Code = exitErr.ExitCode()
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.Signal = ws.Signal()
		}
	} else if err != nil {
		t.Fatalf("%v: %v", cmd.Args, err)
	}
	return r
}

// Appctl runs the real ovs-appctl in this env, skipping the test when it is
// not installed.
func (e *Env) Appctl(t *testing.T, args ...string) Result {
	t.Helper()
	const appctl = "/usr/bin/ovs-appctl"
	if _, err := os.Stat(appctl); err != nil {
		t.Skip("ovs-appctl not installed")
	}
	cmd := exec.Command(appctl, append([]string{"--timeout=10"}, args...)...)
	cmd.Env = append(os.Environ(), e.Vars()...)
	return Run(t, cmd)
}

// KillFromPidfile makes sure the daemon that wrote pidfile is gone when the
// test ends, whatever happened.
func KillFromPidfile(t *testing.T, pidfile string) {
	t.Cleanup(func() {
		content, err := os.ReadFile(pidfile)
		if err != nil {
			return
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(content))); err == nil && pid > 1 {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}

// WaitFor polls cond for up to ten seconds.
func WaitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Exists reports whether path exists.
func Exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

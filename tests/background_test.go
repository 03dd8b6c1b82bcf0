package tests

import (
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// syncBuffer collects a background tool's output while tests poll it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// background is a long-running tool (ovsdb-client monitor, lock, ...).
type background struct {
	desc           string
	cmd            *exec.Cmd
	stdout, stderr syncBuffer
	exited         chan struct{}
}

// startTool starts a tool against the server; t.Cleanup kills it if the
// test did not stop it.
func (s *server) startTool(tb testing.TB, tool string, args ...string) *background {
	tb.Helper()
	b := &background{desc: tool + " " + strings.Join(args, " "), exited: make(chan struct{})}
	b.cmd = exec.Command(tool, args...)
	b.cmd.Env = s.env()
	b.cmd.Dir = s.dir
	b.cmd.Stdout, b.cmd.Stderr = &b.stdout, &b.stderr
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := b.cmd.Start(); err != nil {
		tb.Fatalf("start %s: %v", b.desc, err)
	}
	go func() {
		b.cmd.Wait()
		close(b.exited)
	}()
	tb.Cleanup(func() {
		b.cmd.Process.Kill()
		<-b.exited
	})
	return b
}

// waitStdout polls until cond holds for the output so far; false on
// timeout or if the tool exited without satisfying it.
func (b *background) waitStdout(timeout time.Duration, cond func(stdout string) bool) bool {
	return waitFor(timeout, func() bool {
		if cond(b.stdout.String()) {
			return true
		}
		select {
		case <-b.exited:
			return cond(b.stdout.String())
		default:
			return false
		}
	})
}

// stop terminates the tool with SIGTERM, as an operator's Ctrl-C would, and
// returns what it printed. Open vSwitch tools re-raise the signal, so the
// exit status is 128+15.
func (b *background) stop(tb testing.TB) result {
	tb.Helper()
	b.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-b.exited:
	case <-time.After(stopTimeout):
		tb.Errorf("%s ignored SIGTERM for %v; killing it", b.desc, stopTimeout)
		b.cmd.Process.Kill()
		<-b.exited
	}
	return result{stdout: b.stdout.String(), stderr: b.stderr.String(), exit: exitStatus(b.cmd.ProcessState)}
}

func lineCount(s string) int { return strings.Count(s, "\n") }

func hasLine(want string) func(string) bool {
	return func(out string) bool {
		for _, l := range strings.Split(out, "\n") {
			if l == want {
				return true
			}
		}
		return false
	}
}

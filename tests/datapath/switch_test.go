package datapathtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// switchProc is the parent side of a switch child process (see
// switchproc_test.go for the child).
type switchProc struct {
	t      testing.TB
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte // stdout, one JSON state per line
	stderr *lockedBuffer
	exited chan struct{}
	ready  switchState
}

// errStartFailed wraps the child's own report of a failed build.
type errStartFailed struct{ msg, stderr string }

func (e *errStartFailed) Error() string { return e.msg + "\nswitch stderr:\n" + e.stderr }

// startSwitch starts the datapath in namespace ns and waits until every
// port is added. Cleanup stops it (if the test did not) and checks it
// exited cleanly.
func startSwitch(t testing.TB, ns string, spec switchSpec) (*switchProc, error) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	js, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("ip", "netns", "exec", ns, exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=switch", specEnv+"="+string(js))
	s := &switchProc{t: t, cmd: cmd, lines: make(chan []byte, 16), stderr: &lockedBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = s.stderr
	if s.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			s.lines <- bytes.Clone(sc.Bytes())
		}
		close(s.lines)
	}()
	go func() { _ = cmd.Wait(); close(s.exited) }()
	t.Cleanup(func() {
		if err := s.stop(); err != nil {
			t.Errorf("switch: %v", err)
		}
	})
	st, err := s.next(30 * time.Second)
	if err != nil {
		return nil, err
	}
	if st.Error != "" {
		return nil, &errStartFailed{msg: st.Error, stderr: s.stderr.String()}
	}
	s.ready = st
	return s, nil
}

// next reads the child's next state line.
func (s *switchProc) next(timeout time.Duration) (switchState, error) {
	var st switchState
	select {
	case line, ok := <-s.lines:
		if !ok {
			<-s.exited
			return st, fmt.Errorf("switch process exited (%v); stderr:\n%s", s.cmd.ProcessState, s.stderr.String())
		}
		if err := json.Unmarshal(line, &st); err != nil {
			return st, fmt.Errorf("switch said %q: %v", line, err)
		}
		return st, nil
	case <-time.After(timeout):
		return st, fmt.Errorf("switch did not answer within %v; stderr:\n%s", timeout, s.stderr.String())
	}
}

// stats asks the running child for its counters; the test fails if the
// child is gone (a PMD that panicked kills it) or does not answer.
func (s *switchProc) stats() switchState {
	s.t.Helper()
	if _, err := io.WriteString(s.stdin, "stats\n"); err != nil {
		select {
		case <-s.exited:
			s.t.Fatalf("switch process is gone (%v; a PMD panic kills it); stderr:\n%s", s.cmd.ProcessState, s.stderr.String())
		case <-time.After(5 * time.Second):
			s.t.Fatalf("switch: %v; stderr:\n%s", err, s.stderr.String())
		}
	}
	st, err := s.next(10 * time.Second)
	if err != nil {
		s.t.Fatal(err)
	}
	return st
}

// port returns the named port's state in st.
func (st switchState) port(name string) portState {
	for _, p := range st.Ports {
		if p.Name == name {
			return p
		}
	}
	return portState{}
}

// stop asks the child to close the datapath and exit; it reports an
// unclean exit (non-zero status, a panic, a failed Close). Idempotent.
func (s *switchProc) stop() error {
	select {
	case <-s.exited:
		return s.exitError(switchState{})
	default:
	}
	_, _ = io.WriteString(s.stdin, "quit\n")
	final, err := s.next(20 * time.Second)
	if err != nil {
		_ = s.cmd.Process.Kill()
		<-s.exited
		return err
	}
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
		return fmt.Errorf("switch did not exit after closing; stderr:\n%s", s.stderr.String())
	}
	return s.exitError(final)
}

func (s *switchProc) exitError(final switchState) error {
	if final.Error != "" {
		return fmt.Errorf("%s; stderr:\n%s", final.Error, s.stderr.String())
	}
	if strings.Contains(s.stderr.String(), "panic:") {
		return fmt.Errorf("switch panicked; stderr:\n%s", s.stderr.String())
	}
	if s.cmd.ProcessState != nil && !s.cmd.ProcessState.Success() {
		return fmt.Errorf("switch exited with %v; stderr:\n%s", s.cmd.ProcessState, s.stderr.String())
	}
	return nil
}

// lockedBuffer collects a child's stderr.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

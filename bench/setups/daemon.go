package setups

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"gvs/bench/topo"
)

// daemon is one process this package started, stopped by its own pid.
type daemon struct {
	name   string
	pid    int
	exited chan struct{}
	// How it was started, so that restart can start it again.
	ns, dir string
	env     []string
	argv    []string
}

// startDaemon runs argv in namespace ns (root when "") with env added, its
// output in dir/<name>.out. The process is not tied to ctx: Stop ends it.
func startDaemon(ns, dir, name string, env []string, argv ...string) (*daemon, error) {
	out, err := os.Create(filepath.Join(dir, name+".out"))
	if err != nil {
		return nil, err
	}
	cmd := topo.Command(context.Background(), ns, argv...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	d := &daemon{name: name, pid: cmd.Process.Pid, exited: make(chan struct{}), ns: ns, dir: dir, env: env, argv: argv}
	go func() {
		cmd.Wait()
		out.Close()
		close(d.exited)
	}()
	return d, nil
}

// again starts a new process the way d was started, once d has exited;
// the old process's output is kept beside the new one's.
func (d *daemon) again() (*daemon, error) {
	if d.running() {
		return nil, fmt.Errorf("%s (pid %d) still runs", d.name, d.pid)
	}
	out := filepath.Join(d.dir, d.name+".out")
	os.Rename(out, out+".before-restart")
	return startDaemon(d.ns, d.dir, d.name, d.env, d.argv...)
}

// wait waits up to limit for the process to exit.
func (d *daemon) wait(limit time.Duration) bool {
	select {
	case <-d.exited:
		return true
	case <-time.After(limit):
		return false
	}
}

// running reports whether the process has not exited.
func (d *daemon) running() bool {
	select {
	case <-d.exited:
		return false
	default:
		return true
	}
}

// stop sends SIGTERM, waits a bounded time, then SIGKILL.
func (d *daemon) stop() {
	if d == nil || !d.running() {
		return
	}
	syscall.Kill(d.pid, syscall.SIGTERM)
	select {
	case <-d.exited:
		return
	case <-time.After(5 * time.Second):
	}
	syscall.Kill(d.pid, syscall.SIGKILL)
	select {
	case <-d.exited:
	case <-time.After(2 * time.Second):
	}
}

// waitSocket waits until the Unix socket at path accepts a connection
// (a socket file is there between bind and listen, refusing) and d still
// runs.
func waitSocket(ctx context.Context, d *daemon, path string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		if _, err := os.Stat(path); err == nil {
			if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
				c.Close()
				return nil
			}
		}
		if !d.running() {
			return fmt.Errorf("%s exited before creating %s", d.name, path)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s: no %s after %v", d.name, path, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// tail returns the last lines of a file, for error messages.
func tail(path string, lines int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	all := strings.Split(strings.TrimSpace(string(data)), "\n")
	return strings.Join(all[max(0, len(all)-lines):], " | ")
}

func isMissingLink(err error) bool {
	s := err.Error()
	return strings.Contains(s, "Cannot find device") || strings.Contains(s, "does not exist")
}

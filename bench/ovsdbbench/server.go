package ovsdbbench

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"
)

// Paths of Debian's tools.
const (
	DebianServer  = "/usr/sbin/ovsdb-server"
	ovsdbTool     = "/usr/bin/ovsdb-tool"
	vswitchSchema = "/usr/share/openvswitch/vswitch.ovsschema"
)

// Server is one OVSDB server binary to measure.
type Server struct {
	Name   string
	Binary string
}

// Available reports whether the binary and Debian's ovsdb-tool exist.
func (s Server) Available() (bool, string) {
	for _, p := range []string{s.Binary, ovsdbTool, vswitchSchema} {
		if _, err := os.Stat(p); err != nil {
			return false, p + " is missing"
		}
	}
	return true, ""
}

// Result of one measurement.
type Result struct {
	TxnPerSecond     float64
	MonitorLatencyUs float64 // median
}

// Measure starts the server on a fresh database in a private directory,
// runs the workload and stops it by pid.
func Measure(ctx context.Context, s Server, duration time.Duration, updates int) (Result, error) {
	dir, err := os.MkdirTemp("", "gbdb")
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(dir)
	db, sock := filepath.Join(dir, "conf.db"), filepath.Join(dir, "db.sock")
	if out, err := exec.CommandContext(ctx, ovsdbTool, "create", db, vswitchSchema).CombinedOutput(); err != nil {
		return Result{}, fmt.Errorf("ovsdb-tool create: %v: %s", err, out)
	}
	cmd := exec.Command(s.Binary, db, "--remote=punix:"+sock, "--unixctl="+filepath.Join(dir, "ctl"),
		"--pidfile="+filepath.Join(dir, "pid"), "--log-file="+filepath.Join(dir, "log"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "OVS_RUNDIR="+dir, "OVS_DBDIR="+dir, "OVS_LOGDIR="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return Result{}, err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	}()
	if err := waitDial(ctx, sock, exited); err != nil {
		return Result{}, fmt.Errorf("%s: %w", s.Name, err)
	}
	return run(ctx, sock, duration, updates)
}

func waitDial(ctx context.Context, sock string, exited chan struct{}) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("exited before listening")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not listening after 10 s")
		}
	}
}

func run(ctx context.Context, sock string, duration time.Duration, updates int) (Result, error) {
	c, err := dial(sock)
	if err != nil {
		return Result{}, err
	}
	defer c.close()
	w, err := newWorkload(c)
	if err != nil {
		return Result{}, fmt.Errorf("setting up br0: %w", err)
	}
	// Transactions per second, back to back.
	start := time.Now()
	n := 0
	for time.Since(start) < duration && ctx.Err() == nil {
		if err := w.toggle(); err != nil {
			return Result{}, err
		}
		n++
	}
	res := Result{TxnPerSecond: float64(n) / time.Since(start).Seconds()}
	// Monitor latency, one transaction at a time.
	mon, err := dial(sock)
	if err != nil {
		return Result{}, err
	}
	defer mon.close()
	if _, err := mon.call("monitor", "Open_vSwitch", "bench", map[string]any{
		"Bridge": map[string]any{"columns": []string{"ports"}},
		"Port":   map[string]any{"columns": []string{"name"}},
	}); err != nil {
		return Result{}, err
	}
	latencies := make([]time.Duration, 0, updates)
	for range updates {
		if ctx.Err() != nil {
			return Result{}, ctx.Err()
		}
		t0 := time.Now()
		reply, err := c.send("transact", w.next()...)
		if err != nil {
			return Result{}, err
		}
		select {
		case <-mon.notes:
			latencies = append(latencies, time.Since(t0))
		case <-time.After(callTimeout):
			return Result{}, fmt.Errorf("no monitor update within %v", callTimeout)
		}
		raw, err := await(reply)
		if err != nil {
			return Result{}, err
		}
		if err := w.finish(raw); err != nil {
			return Result{}, err
		}
	}
	slices.Sort(latencies)
	res.MonitorLatencyUs = float64(latencies[len(latencies)/2].Nanoseconds()) / 1e3
	return res, nil
}

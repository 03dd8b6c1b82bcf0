package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"gvs/bench/measure"
	"gvs/bench/probe"
	"gvs/bench/topo"
)

// iperf runs one iperf3 measurement and the switch's CPU seconds during it
// (-1 when the setup has no process of its own).
func (r *runner) iperf(spec measure.IperfSpec) (measure.IperfResult, float64, error) {
	pids := r.setup.PIDs()
	before := measure.CPUSeconds(pids)
	res, err := measure.RunIperf(r.ctx, r.topo.Client, r.topo.Server, topo.ServerIP, spec)
	cpu := -1.0
	if len(pids) > 0 {
		cpu = measure.CPUSeconds(pids) - before
	}
	return res, cpu, err
}

// probeJSON runs a probe sub-command in ns, bounded, and decodes its
// report.
func (r *runner) probeJSON(ns string, limit time.Duration, v any, args ...string) error {
	ctx, cancel := context.WithTimeout(r.ctx, limit)
	defer cancel()
	cmd := topo.Command(ctx, ns, append([]string{r.self}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %v: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return json.Unmarshal(stdout.Bytes(), v)
}

func (r *runner) ping(count int) (float64, error) {
	var res probe.PingResult
	if err := r.probeJSON(r.topo.Client, time.Duration(count)*time.Second+5*time.Second, &res,
		"_ping", "-dst", topo.ServerIP, "-count", fmt.Sprint(count), "-interval", "50ms"); err != nil {
		return 0, err
	}
	if res.Received < res.Sent/2 {
		return 0, fmt.Errorf("ping: %d of %d answered", res.Received, res.Sent)
	}
	return measure.Percentile(res.RTTMicro, 50), nil
}

// server is a probe server running in a namespace until stop.
type server struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
}

func (r *runner) startServer(ns string, args ...string) (*server, error) {
	cmd := topo.Command(r.ctx, ns, append([]string{r.self}, args...)...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, stdin: stdin, stdout: bufio.NewReader(out)}
	ready := make(chan error, 1)
	go func() {
		line, err := s.stdout.ReadString('\n')
		if err == nil && strings.TrimSpace(line) != "ready" {
			err = fmt.Errorf("unexpected %q", line)
		}
		ready <- err
	}()
	select {
	case err = <-ready:
	case <-time.After(5 * time.Second):
		err = fmt.Errorf("not ready after 5 s")
	}
	if err != nil {
		s.kill()
		return nil, fmt.Errorf("%s: %v %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return s, nil
}

// stop closes the server's standard input and returns what it printed.
func (s *server) stop() ([]byte, error) {
	s.stdin.Close()
	done := make(chan struct{})
	var out []byte
	go func() { out, _ = io.ReadAll(s.stdout); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		s.kill()
		return nil, fmt.Errorf("server did not stop")
	}
	return out, s.cmd.Wait()
}

func (s *server) kill() {
	s.cmd.Process.Kill()
	s.cmd.Wait()
}

func (r *runner) requestResponse(d time.Duration) (map[string]float64, error) {
	srv, err := r.startServer(r.topo.Server, "_rr-server", "-addr", topo.ServerIP)
	if err != nil {
		return nil, err
	}
	defer srv.kill()
	vals := map[string]float64{}
	for _, proto := range []string{"udp", "tcp"} {
		var res probe.RRResult
		if err := r.probeJSON(r.topo.Client, d+10*time.Second, &res, "_rr-client", "-dst", topo.ServerIP, "-proto", proto, "-duration", d.String()); err != nil {
			return nil, err
		}
		vals["rr-"+proto] = res.PerSecond
	}
	return vals, nil
}

// flows sends rate new flows per second for d and returns the loss in
// percent.
func (r *runner) flows(rate int, d time.Duration) (float64, error) {
	srv, err := r.startServer(r.topo.Server, "_flow-recv", "-addr", topo.ServerIP)
	if err != nil {
		return 0, err
	}
	defer srv.kill()
	var sent probe.FlowSendResult
	if err := r.probeJSON(r.topo.Client, d+10*time.Second, &sent, "_flow-send", "-dst", topo.ServerIP,
		"-rate", fmt.Sprint(rate), "-duration", d.String(), "-first", fmt.Sprint(r.flowIndex)); err != nil {
		return 0, err
	}
	r.flowIndex += sent.Sent
	time.Sleep(300 * time.Millisecond) // let the last packets arrive
	out, err := srv.stop()
	if err != nil {
		return 0, fmt.Errorf("flow receiver: %w", err)
	}
	var recv probe.FlowRecvResult
	if err := json.Unmarshal(out, &recv); err != nil {
		return 0, fmt.Errorf("flow receiver: %w", err)
	}
	if sent.Sent == 0 {
		return 0, fmt.Errorf("flow sender sent nothing")
	}
	return max(0, 100*(1-float64(recv.Received)/float64(sent.Sent))), nil
}

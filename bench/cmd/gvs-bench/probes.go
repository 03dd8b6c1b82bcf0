package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"

	"gvs/bench/measure"
	"gvs/bench/probe"
	"gvs/bench/setups"
	"gvs/bench/topo"
)

// iperf runs one iperf3 measurement and the switch's CPU seconds during it
// (-1 when the setup has no process of its own).
func (r *runner) iperf(spec measure.IperfSpec) (iperfRun, error) {
	pids := r.setup.PIDs()
	before := measure.CPUSeconds(pids)
	machineBefore, machineErr := measure.ReadMachineCPU()
	res, err := measure.RunIperf(r.ctx, r.topo.Client, r.topo.Server, topo.ServerIP, spec)
	run := iperfRun{IperfResult: res, switchCPU: -1, machineCPU: -1}
	if len(pids) > 0 {
		run.switchCPU = measure.CPUSeconds(pids) - before
	}
	if after, err := measure.ReadMachineCPU(); err == nil && machineErr == nil {
		run.machineCPU = after.BusySecondsSince(machineBefore)
	}
	return run, err
}

// iperfRun is an iperf3 result with the CPU time spent meanwhile by the
// switch's processes and by the whole machine (seconds; -1 when not
// measured). The machine's includes the iperf3 server's start and the
// hosts' own work: direct shows what moving the bytes costs without a
// switch.
type iperfRun struct {
	measure.IperfResult
	switchCPU, machineCPU float64
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

// flowSenders are the senders of the new-flow test for the current
// setup: all of the topology's, or fewer when the session or the setup
// limits them (the OVN pipeline has a logical port for the client only).
func (r *runner) flowSenders() []topo.Sender {
	n := len(r.topo.Senders)
	if r.maxSenders > 0 {
		n = min(n, r.maxSenders)
	}
	if fs, ok := r.setup.(setups.FlowSenders); ok && fs.FlowSenders() > 0 {
		n = min(n, fs.FlowSenders())
	}
	return r.topo.Senders[:n]
}

// warmSenders pings the server once from every flow sender, so that each
// has its neighbour entry and the switch its MAC before flows start (the
// entries may have gone stale since the setup started).
func (r *runner) warmSenders() error {
	for _, s := range r.flowSenders() {
		var res probe.PingResult
		if err := r.probeJSON(s.NS, 5*time.Second, &res, "_ping", "-dst", s.Target(r.topo.Direct()), "-count", "2", "-interval", "10ms", "-timeout", "500ms"); err != nil {
			return err
		}
		if res.Received == 0 {
			return fmt.Errorf("flow sender %s: no ping answered", s.NS)
		}
	}
	return nil
}

// flows sends rate new flows per second for d, split evenly over every
// sender, all at once, and returns the loss in the switch in percent:
// datagrams sent but neither received nor dropped by the receiving host
// (ReceiverDrops).
func (r *runner) flows(rate int, d time.Duration) (lossPct, achieved float64, err error) {
	srv, err := r.startServer(r.topo.Server, "_flow-recv", "-addr", "0.0.0.0")
	if err != nil {
		return 0, 0, err
	}
	defer srv.kill()
	before, err := measure.ReadSNMP(r.ctx, r.topo.Server)
	if err != nil {
		return 0, 0, err
	}
	jobs := flowJobs(r.flowSenders(), max(1, r.procsPerSender), rate, d, r.flowIndex)
	results := make([]probe.FlowSendResult, len(jobs))
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Go(func() {
			errs[i] = r.probeJSON(j.sender.NS, d+10*time.Second, &results[i], "_flow-send", "-dst", j.sender.Target(r.topo.Direct()),
				"-rate", fmt.Sprint(j.rate), "-duration", d.String(), "-first", fmt.Sprint(j.first))
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return 0, 0, err
	}
	sent, longest := 0, 0.0
	for _, res := range results {
		sent += res.Sent
		longest = max(longest, res.Seconds)
	}
	r.flowIndex = nextFlowIndex(jobs, results)
	time.Sleep(300 * time.Millisecond) // let the last packets arrive
	out, err := srv.stop()
	if err != nil {
		return 0, 0, fmt.Errorf("flow receiver: %w", err)
	}
	var recv probe.FlowRecvResult
	if err := json.Unmarshal(out, &recv); err != nil {
		return 0, 0, fmt.Errorf("flow receiver: %w", err)
	}
	after, err := measure.ReadSNMP(r.ctx, r.topo.Server)
	if err != nil {
		return 0, 0, err
	}
	if sent == 0 {
		return 0, 0, fmt.Errorf("flow senders sent nothing")
	}
	dropped := measure.ReceiverDrops(before, after)
	if dropped > 0 {
		r.prog.logf("%s: flows at %d/s: the receiving host dropped %d of %d datagrams (not counted as the switch's loss)", r.setup.Name(), rate, dropped, sent)
	}
	lost := float64(sent) - float64(recv.Received) - float64(dropped)
	if longest > 0 {
		achieved = float64(sent) / longest
	}
	return max(0, 100*lost/float64(sent)), achieved, nil
}

// flowJob is one sender process of the new-flow test.
type flowJob struct {
	sender topo.Sender
	rate   int // its share of the rate
	first  int // index of its first flow
}

// flowJobs splits rate evenly over procs processes per sender. Senders
// differ by source address, so they may walk the same port tuples; the
// processes of one sender walk disjoint ranges of flow indices, from
// first on.
func flowJobs(senders []topo.Sender, procs, rate int, d time.Duration, first int) []flowJob {
	n := len(senders) * procs
	span := int(float64(rate/n+1)*d.Seconds()) + 1 // most flows one process sends
	var jobs []flowJob
	for i, s := range senders {
		for p := range procs {
			k := i*procs + p
			share := rate / n
			if k < rate%n {
				share++
			}
			jobs = append(jobs, flowJob{sender: s, rate: share, first: first + p*span})
		}
	}
	return jobs
}

// nextFlowIndex is the first flow index no job used.
func nextFlowIndex(jobs []flowJob, results []probe.FlowSendResult) int {
	next := 0
	for i, j := range jobs {
		next = max(next, j.first+results[i].Sent)
	}
	return next
}

package datapathtest

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// needIperf skips t when iperf3 is missing.
func needIperf(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("iperf3"); err != nil {
		t.Skip("needs iperf3")
	}
}

// iperfResult is what one iperf3 run measured.
type iperfResult struct {
	SentBytes, RecvBytes float64
	RecvGbps             float64
	Retransmits          int
	// IntervalBytes: bytes sent in each 1 s interval (client side).
	IntervalBytes []float64
}

// loss is the fraction of sent bytes that did not arrive, from both
// ends' byte counts (iperf3 3.12 under-reports UDP loss).
func (r iperfResult) loss() float64 {
	if r.SentBytes == 0 {
		return 1
	}
	return 1 - r.RecvBytes/r.SentBytes
}

type iperfJSON struct {
	Intervals []struct {
		Sum struct {
			Bytes float64 `json:"bytes"`
		} `json:"sum"`
	} `json:"intervals"`
	End struct {
		SumSent struct {
			Bytes       float64 `json:"bytes"`
			Retransmits int     `json:"retransmits"`
		} `json:"sum_sent"`
		SumReceived struct {
			Bytes         float64 `json:"bytes"`
			BitsPerSecond float64 `json:"bits_per_second"`
		} `json:"sum_received"`
	} `json:"end"`
	Error string `json:"error"`
}

// iperf runs a fresh one-shot iperf3 server in serverNS bound to addr
// and a client in clientNS with args (e.g. "-t", "3"), bounded by
// deadline: a stalled transfer ends in an error, never a hang.
func iperf(serverNS, clientNS, addr string, deadline time.Duration, args ...string) (iperfResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	srv := exec.CommandContext(ctx, "ip", "netns", "exec", serverNS, "iperf3", "-s", "-1", "-B", addr)
	if err := srv.Start(); err != nil {
		return iperfResult{}, err
	}
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
	var r iperfJSON
	for {
		cargs := append([]string{"netns", "exec", clientNS, "iperf3", "-J", "-c", addr, "--connect-timeout", "1000"}, args...)
		out, err := exec.CommandContext(ctx, "ip", cargs...).Output()
		r = iperfJSON{}
		jerr := json.Unmarshal(out, &r)
		if ctx.Err() != nil {
			return iperfResult{}, fmt.Errorf("iperf3 %s did not finish within %v (stalled?): %s", strings.Join(args, " "), deadline, tail(out))
		}
		if jerr != nil {
			return iperfResult{}, fmt.Errorf("iperf3: %v (%v): %s", err, jerr, tail(out))
		}
		// The server may not listen yet: retry "unable to connect"
		// (bounded by ctx).
		if strings.Contains(r.Error, "unable to connect") {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if err != nil || r.Error != "" {
			return iperfResult{}, fmt.Errorf("iperf3: %v: %s", err, r.Error)
		}
		break
	}
	res := iperfResult{
		SentBytes:   r.End.SumSent.Bytes,
		RecvBytes:   r.End.SumReceived.Bytes,
		RecvGbps:    r.End.SumReceived.BitsPerSecond / 1e9,
		Retransmits: r.End.SumSent.Retransmits,
	}
	for _, iv := range r.Intervals {
		res.IntervalBytes = append(res.IntervalBytes, iv.Sum.Bytes)
	}
	return res, nil
}

// iperfTCP runs TCP for secs seconds.
func iperfTCP(serverNS, clientNS, addr string, secs int) (iperfResult, error) {
	return iperf(serverNS, clientNS, addr, time.Duration(secs+20)*time.Second, "-t", strconv.Itoa(secs))
}

// iperfUDP runs UDP at rate with datagrams of size bytes for secs
// seconds. Both ends get 4 MiB socket buffers (-w; within the host's
// net.core.rmem_max or clamped to it): the kernel's default receive
// buffer overflows whenever the receiving iperf3 loses the CPU for a few
// milliseconds on this shared machine, which measures the machine, not
// the switch.
func iperfUDP(serverNS, clientNS, addr, rate string, size, secs int) (iperfResult, error) {
	return iperf(serverNS, clientNS, addr, time.Duration(secs+20)*time.Second,
		"-u", "-b", rate, "-l", strconv.Itoa(size), "-t", strconv.Itoa(secs), "-w", "4M")
}

func tail(b []byte) string {
	if len(b) > 600 {
		b = b[len(b)-600:]
	}
	return string(b)
}

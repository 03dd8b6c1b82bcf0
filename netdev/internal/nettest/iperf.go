package nettest

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// IperfResult is what a TCP iperf3 run measured at the receiver.
type IperfResult struct {
	Gbps        float64
	Retransmits int
}

// IperfTCP runs a one-shot iperf3 server in serverNS on addr and a client
// in clientNS for the given duration, and returns the receiver's rate. It
// skips the test if iperf3 is missing.
func (e *Env) IperfTCP(serverNS, clientNS, addr string, d time.Duration, extra ...string) (IperfResult, error) {
	e.t.Helper()
	if _, err := exec.LookPath("iperf3"); err != nil {
		e.t.Skip("needs iperf3")
	}
	srv := exec.Command("ip", "netns", "exec", serverNS, "iperf3", "-s", "-1", "-B", addr)
	if err := srv.Start(); err != nil {
		return IperfResult{}, err
	}
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
	secs := strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
	var out []byte
	var err error
	var r iperfJSON
	for range 50 { // the server needs a moment to listen
		time.Sleep(50 * time.Millisecond)
		args := append([]string{"netns", "exec", clientNS, "iperf3", "-J", "-c", addr, "-t", secs}, extra...)
		out, err = exec.Command("ip", args...).Output()
		r = iperfJSON{}
		if jerr := json.Unmarshal(out, &r); jerr != nil {
			return IperfResult{}, fmt.Errorf("iperf3: %v (%v): %s", err, jerr, out)
		}
		if err == nil && r.Error == "" || !strings.Contains(r.Error, "unable to connect") {
			break
		}
	}
	if r.Error != "" || err != nil {
		return IperfResult{}, fmt.Errorf("iperf3: %v %s", err, r.Error)
	}
	return IperfResult{Gbps: r.End.SumReceived.BitsPerSecond / 1e9, Retransmits: r.End.SumSent.Retransmits}, nil
}

type iperfJSON struct {
	End struct {
		SumReceived struct {
			BitsPerSecond float64 `json:"bits_per_second"`
		} `json:"sum_received"`
		SumSent struct {
			Retransmits int `json:"retransmits"`
		} `json:"sum_sent"`
	} `json:"end"`
	Error string `json:"error"`
}

// NeedIperf skips t if iperf3 is missing.
func NeedIperf(t testing.TB) {
	if _, err := exec.LookPath("iperf3"); err != nil {
		t.Skip("needs iperf3")
	}
}

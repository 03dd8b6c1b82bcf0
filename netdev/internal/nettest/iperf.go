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
	// Intervals is the rate in Gbit/s at the sender per reporting
	// interval (iperf3 -i); ZeroIntervals counts those that moved
	// nothing: a stall.
	Intervals     []float64
	ZeroIntervals int
}

// IperfTCP runs a one-shot iperf3 server in serverNS on addr and a client
// in clientNS for the given duration, and returns the receiver's rate. It
// skips the test if iperf3 is missing.
func (e *Env) IperfTCP(serverNS, clientNS, addr string, d time.Duration, extra ...string) (IperfResult, error) {
	e.t.Helper()
	r, err := e.iperf(serverNS, clientNS, addr, d, extra...)
	if err != nil {
		return IperfResult{}, err
	}
	res := IperfResult{Gbps: r.End.SumReceived.BitsPerSecond / 1e9, Retransmits: r.End.SumSent.Retransmits}
	for _, iv := range r.Intervals {
		g := iv.Sum.BitsPerSecond / 1e9
		res.Intervals = append(res.Intervals, g)
		if g == 0 {
			res.ZeroIntervals++
		}
	}
	return res, nil
}

// UDPResult is what a UDP iperf3 run sent and what arrived, in bytes,
// and the rate received in Gbit/s.
type UDPResult struct {
	SentBytes, ReceivedBytes uint64
	Gbps                     float64
}

// Loss is 1 - received/sent (iperf3's own loss count under-reports).
func (u UDPResult) Loss() float64 {
	if u.SentBytes == 0 {
		return 1
	}
	return 1 - float64(u.ReceivedBytes)/float64(u.SentBytes)
}

// IperfUDP offers UDP datagrams of size bytes at rate (iperf3 -b syntax,
// such as "1G") from clientNS to a one-shot server in serverNS.
func (e *Env) IperfUDP(serverNS, clientNS, addr string, d time.Duration, rate string, size int) (UDPResult, error) {
	e.t.Helper()
	r, err := e.iperf(serverNS, clientNS, addr, d, "-u", "-b", rate, "-l", strconv.Itoa(size))
	if err != nil {
		return UDPResult{}, err
	}
	return UDPResult{SentBytes: r.End.SumSent.Bytes, ReceivedBytes: r.End.SumReceived.Bytes,
		Gbps: r.End.SumReceived.BitsPerSecond / 1e9}, nil
}

func (e *Env) iperf(serverNS, clientNS, addr string, d time.Duration, extra ...string) (iperfJSON, error) {
	e.t.Helper()
	if _, err := exec.LookPath("iperf3"); err != nil {
		e.t.Skip("needs iperf3")
	}
	srv := exec.Command("ip", "netns", "exec", serverNS, "iperf3", "-s", "-1", "-B", addr)
	if err := srv.Start(); err != nil {
		return iperfJSON{}, err
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
			return iperfJSON{}, fmt.Errorf("iperf3: %v (%v): %s", err, jerr, out)
		}
		if err == nil && r.Error == "" || !strings.Contains(r.Error, "unable to connect") {
			break
		}
	}
	if r.Error != "" || err != nil {
		return iperfJSON{}, fmt.Errorf("iperf3: %v %s", err, r.Error)
	}
	return r, nil
}

type iperfJSON struct {
	Intervals []struct {
		Sum struct {
			BitsPerSecond float64 `json:"bits_per_second"`
		} `json:"sum"`
	} `json:"intervals"`
	End struct {
		SumReceived struct {
			BitsPerSecond float64 `json:"bits_per_second"`
			Bytes         uint64  `json:"bytes"`
		} `json:"sum_received"`
		SumSent struct {
			Retransmits int    `json:"retransmits"`
			Bytes       uint64 `json:"bytes"`
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

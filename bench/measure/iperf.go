package measure

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"gvs/bench/topo"
)

// IperfPort is the port of the one-shot iperf3 server.
const IperfPort = 5201

// IperfSpec is one iperf3 run.
type IperfSpec struct {
	UDP     bool
	Streams int   // parallel streams, at least 1
	Length  int   // UDP datagram size; 0 for iperf3's default (TCP)
	Rate    int64 // offered bits/s for UDP; 0 is unlimited
	Seconds int
	// Window is iperf3's -w in bytes (0: not set): the socket buffers of
	// both ends, which iperf3 passes on to the server. The UDP tests set
	// it so that the receiving socket is not what drops; it is capped by
	// net.core.rmem_max/wmem_max.
	Window int
}

// IperfResult is what one run delivered.
type IperfResult struct {
	SentBytes     int64   `json:"sent_bytes"`
	ReceivedBytes int64   `json:"received_bytes"`
	Seconds       float64 `json:"seconds"`
	Retransmits   int64   `json:"retransmits"`
	// Gbps is the rate delivered to the receiver.
	Gbps float64 `json:"gbps"`
	// LossPct is 1 - received/sent bytes, in percent (iperf3's own
	// lost_percent under-reports).
	LossPct float64 `json:"loss_pct"`
	// UDP only: ReceiverDropped datagrams reached the receiving host's UDP
	// layer but not the receiving iperf3 (see ReceiverDrops);
	// ReceiverLossPct is their bytes in percent of the bytes sent, and
	// PathLossPct = LossPct - ReceiverLossPct, what was lost before the
	// receiving host's UDP layer: in the switch and the veths around it.
	ReceiverDropped int64   `json:"receiver_dropped"`
	ReceiverLossPct float64 `json:"receiver_loss_pct"`
	PathLossPct     float64 `json:"path_loss_pct"`
}

// AttributeLoss splits r.LossPct into the receiver's share (dropped
// datagrams of length bytes each) and the rest, the path's.
func (r *IperfResult) AttributeLoss(dropped int64, length int) {
	r.ReceiverDropped = dropped
	if r.SentBytes <= 0 {
		return
	}
	// In bytes, so that all loss in the receiver leaves exactly 0 to the
	// path.
	lost := max(0, r.SentBytes-r.ReceivedBytes)
	inReceiver := min(lost, dropped*int64(max(0, length)))
	r.ReceiverLossPct = 100 * float64(inReceiver) / float64(r.SentBytes)
	r.PathLossPct = 100 * float64(lost-inReceiver) / float64(r.SentBytes)
}

type iperfSum struct {
	Seconds     float64 `json:"seconds"`
	Bytes       int64   `json:"bytes"`
	Retransmits int64   `json:"retransmits"`
}

type iperfOutput struct {
	Error string `json:"error"`
	End   struct {
		SumSent     *iperfSum `json:"sum_sent"`
		SumReceived *iperfSum `json:"sum_received"`
	} `json:"end"`
}

// ParseIperf reads an iperf3 -J client report.
func ParseIperf(data []byte) (IperfResult, error) {
	var out iperfOutput
	if err := json.Unmarshal(data, &out); err != nil {
		return IperfResult{}, fmt.Errorf("iperf3 output: %w", err)
	}
	if out.Error != "" {
		return IperfResult{}, fmt.Errorf("iperf3: %s", out.Error)
	}
	sent, recv := out.End.SumSent, out.End.SumReceived
	if sent == nil || recv == nil {
		return IperfResult{}, errors.New("iperf3 output has no end.sum_sent/sum_received")
	}
	if sent.Seconds <= 0 || sent.Bytes <= 0 {
		return IperfResult{}, errors.New("iperf3 sent nothing")
	}
	res := IperfResult{
		SentBytes: sent.Bytes, ReceivedBytes: recv.Bytes, Seconds: sent.Seconds, Retransmits: sent.Retransmits,
		Gbps: float64(recv.Bytes) * 8 / sent.Seconds / 1e9,
	}
	res.LossPct = max(0, 100*(1-float64(recv.Bytes)/float64(sent.Bytes)))
	return res, nil
}

// Args returns the iperf3 client arguments for spec against server.
func (s IperfSpec) Args(server string) []string {
	args := []string{"iperf3", "-J", "-c", server, "-p", strconv.Itoa(IperfPort), "-t", strconv.Itoa(s.Seconds), "--connect-timeout", "3000"}
	if s.Streams > 1 {
		args = append(args, "-P", strconv.Itoa(s.Streams))
	}
	if s.UDP {
		args = append(args, "-u", "-b", strconv.FormatInt(s.Rate, 10))
	}
	if s.Length > 0 {
		args = append(args, "-l", strconv.Itoa(s.Length))
	}
	if s.Window > 0 {
		args = append(args, "-w", strconv.Itoa(s.Window))
	}
	return args
}

// RunIperf starts a fresh one-shot server in serverNS, runs the client in
// clientNS, and returns the parsed result, all bounded in time. For UDP it
// reads serverNS's /proc/net/snmp before and after, to attribute the loss
// (AttributeLoss).
func RunIperf(ctx context.Context, clientNS, serverNS, serverIP string, spec IperfSpec) (IperfResult, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(spec.Seconds)*time.Second+20*time.Second)
	defer cancel()
	server := topo.Command(ctx, serverNS, "iperf3", "-s", "-1", "-B", serverIP, "-p", strconv.Itoa(IperfPort))
	var serverErr bytes.Buffer
	server.Stderr = &serverErr
	if err := server.Start(); err != nil {
		return IperfResult{}, err
	}
	defer func() {
		server.Process.Kill()
		server.Wait()
	}()
	if err := waitListening(ctx, server.Process.Pid, IperfPort, 5*time.Second); err != nil {
		return IperfResult{}, fmt.Errorf("iperf3 server: %w %s", err, strings.TrimSpace(serverErr.String()))
	}
	var before SNMP
	if spec.UDP {
		var err error
		if before, err = ReadSNMP(ctx, serverNS); err != nil {
			return IperfResult{}, err
		}
	}
	client := topo.Command(ctx, clientNS, spec.Args(serverIP)...)
	var stdout, stderr bytes.Buffer
	client.Stdout, client.Stderr = &stdout, &stderr
	runErr := client.Run()
	res, err := ParseIperf(stdout.Bytes())
	if err != nil {
		if runErr != nil {
			return IperfResult{}, fmt.Errorf("%w (%v %s)", err, runErr, strings.TrimSpace(stderr.String()))
		}
		return IperfResult{}, err
	}
	if spec.UDP {
		after, err := ReadSNMP(ctx, serverNS)
		if err != nil {
			return IperfResult{}, err
		}
		res.AttributeLoss(ReceiverDrops(before, after), spec.Length)
	}
	return res, nil
}

// waitListening polls the TCP table of pid's network namespace until a
// socket listens on port.
func waitListening(ctx context.Context, pid, port int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/tcp", pid))
		if err == nil && HasListener(string(data), port) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not listening on port %d after %v", port, limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// HasListener reports whether a /proc/net/tcp table has a socket in state
// LISTEN on port.
func HasListener(table string, port int) bool {
	suffix := fmt.Sprintf(":%04X", port)
	for _, line := range strings.Split(table, "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 3 && strings.HasSuffix(f[1], suffix) && f[3] == "0A" {
			return true
		}
	}
	return false
}

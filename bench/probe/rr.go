package probe

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"slices"
	"time"
)

// Ports of the request/response server.
const (
	RRPortUDP = 7001
	RRPortTCP = 7002
)

// RRResult is what _rr-client prints.
type RRResult struct {
	Protocol     string  `json:"protocol"`
	Transactions int     `json:"transactions"`
	Timeouts     int     `json:"timeouts"`
	Seconds      float64 `json:"seconds"`
	PerSecond    float64 `json:"per_second"`
	P50Micro     float64 `json:"p50_us"`
	P99Micro     float64 `json:"p99_us"`
}

// rrServerMain: _rr-server -addr IP echoes every UDP datagram on RRPortUDP
// and every byte on TCP RRPortTCP until standard input closes.
func rrServerMain(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("rr-server", flag.ContinueOnError)
	addr := fs.String("addr", "", "address to listen on")
	if err := fs.Parse(args); err != nil {
		return err
	}
	udp, err := net.ListenPacket("udp4", fmt.Sprintf("%s:%d", *addr, RRPortUDP))
	if err != nil {
		return err
	}
	defer udp.Close()
	tcp, err := net.Listen("tcp4", fmt.Sprintf("%s:%d", *addr, RRPortTCP))
	if err != nil {
		return err
	}
	defer tcp.Close()
	go func() {
		buf := make([]byte, 65536)
		for {
			n, from, err := udp.ReadFrom(buf)
			if err != nil {
				return
			}
			udp.WriteTo(buf[:n], from)
		}
	}()
	go func() {
		for {
			c, err := tcp.Accept()
			if err != nil {
				return
			}
			if tc, ok := c.(*net.TCPConn); ok {
				tc.SetNoDelay(true)
			}
			go func() { defer c.Close(); io.Copy(c, c) }()
		}
	}()
	fmt.Fprintln(stdout, "ready")
	<-waitStdinClosed()
	return nil
}

// rrClientMain: _rr-client -dst IP -proto udp|tcp [-duration D] [-size N]
// runs one transaction at a time (request of size bytes, the echoed
// response) for the duration and reports the rate and latency.
func rrClientMain(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("rr-client", flag.ContinueOnError)
	dst := fs.String("dst", "", "server address")
	proto := fs.String("proto", "udp", "udp or tcp")
	duration := fs.Duration("duration", time.Second, "how long to run")
	size := fs.Int("size", 1, "request and response size in bytes")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var conn net.Conn
	var err error
	switch *proto {
	case "udp":
		conn, err = net.DialTimeout("udp4", fmt.Sprintf("%s:%d", *dst, RRPortUDP), time.Second)
	case "tcp":
		conn, err = net.DialTimeout("tcp4", fmt.Sprintf("%s:%d", *dst, RRPortTCP), time.Second)
		if tc, ok := conn.(*net.TCPConn); ok {
			tc.SetNoDelay(true)
		}
	default:
		return errors.New("-proto must be udp or tcp")
	}
	if err != nil {
		return err
	}
	defer conn.Close()
	req := make([]byte, *size)
	resp := make([]byte, 65536)
	res := RRResult{Protocol: *proto}
	latencies := make([]time.Duration, 0, 65536)
	start := time.Now()
	end := start.Add(*duration)
	for time.Now().Before(end) {
		t0 := time.Now()
		if _, err := conn.Write(req); err != nil {
			return err
		}
		conn.SetReadDeadline(t0.Add(200 * time.Millisecond))
		if _, err := io.ReadFull(conn, resp[:*size]); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() && *proto == "udp" {
				res.Timeouts++
				continue
			}
			return err
		}
		latencies = append(latencies, time.Since(t0))
		res.Transactions++
	}
	res.Seconds = time.Since(start).Seconds()
	res.PerSecond = float64(res.Transactions) / res.Seconds
	slices.Sort(latencies)
	if n := len(latencies); n > 0 {
		res.P50Micro = float64(latencies[n/2].Nanoseconds()) / 1e3
		res.P99Micro = float64(latencies[min(n-1, n*99/100)].Nanoseconds()) / 1e3
	}
	return writeJSON(stdout, res)
}

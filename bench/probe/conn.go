package probe

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Ports of the connection servers: ConnPortRate closes every connection
// it accepts at once (the connection-rate test); ConnPortHold keeps each
// until the client closes it (the memory test).
const (
	ConnPortRate = 7003
	ConnPortHold = 7004
)

// ConnServerResult is what _conn-server prints when it stops.
type ConnServerResult struct {
	Accepted int64 `json:"accepted"`
}

// connServerMain: _conn-server -addr IP accepts TCP connections on
// ConnPortRate, closing each at once, and on ConnPortHold, holding each
// until its client closes it, until standard input closes.
func connServerMain(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("conn-server", flag.ContinueOnError)
	addr := fs.String("addr", "", "address to listen on")
	if err := fs.Parse(args); err != nil {
		return err
	}
	rate, err := listenBacklog(net.JoinHostPort(*addr, fmt.Sprint(ConnPortRate)))
	if err != nil {
		return err
	}
	defer rate.Close()
	hold, err := listenBacklog(net.JoinHostPort(*addr, fmt.Sprint(ConnPortHold)))
	if err != nil {
		return err
	}
	defer hold.Close()
	var accepted atomic.Int64
	go func() {
		for {
			c, err := rate.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	go func() {
		for {
			c, err := hold.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			go func() { defer c.Close(); io.Copy(io.Discard, c) }()
		}
	}()
	fmt.Fprintln(stdout, "ready")
	<-waitStdinClosed()
	return writeJSON(stdout, ConnServerResult{Accepted: accepted.Load()})
}

func listenBacklog(addr string) (net.Listener, error) {
	// Go's listen backlog is the system's somaxconn; the accept loop
	// keeps up, so it is enough.
	return net.Listen("tcp4", addr)
}

// ConnClientResult is what _conn-client prints.
type ConnClientResult struct {
	Connections int64   `json:"connections"` // opened and closed
	Failures    int64   `json:"failures"`    // dials that failed or timed out
	Seconds     float64 `json:"seconds"`
	PerSecond   float64 `json:"per_second"`
}

// connClientMain: _conn-client -dst IP [-duration D] [-parallel N] opens
// TCP connections to ConnPortRate one after another on each of N
// goroutines for the duration: connect, wait for the server's FIN, close
// (the full handshake and teardown a connection-rate test needs; the
// server side keeps the TIME_WAIT, so the client's ports do not run out).
func connClientMain(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("conn-client", flag.ContinueOnError)
	dst := fs.String("dst", "", "server address")
	duration := fs.Duration("duration", 2*time.Second, "how long to open connections")
	parallel := fs.Int("parallel", 4, "connections in flight at once")
	if err := fs.Parse(args); err != nil {
		return err
	}
	target := net.JoinHostPort(*dst, fmt.Sprint(ConnPortRate))
	var done, failed atomic.Int64
	start := time.Now()
	stop := start.Add(*duration)
	var wg sync.WaitGroup
	for range max(1, *parallel) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf [1]byte
			for time.Now().Before(stop) {
				c, err := net.DialTimeout("tcp4", target, time.Second)
				if err != nil {
					failed.Add(1)
					continue
				}
				c.SetReadDeadline(time.Now().Add(time.Second))
				_, err = c.Read(buf[:])
				c.Close()
				if errors.Is(err, io.EOF) {
					done.Add(1)
				} else {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	return writeJSON(stdout, ConnClientResult{Connections: done.Load(), Failures: failed.Load(), Seconds: secs,
		PerSecond: float64(done.Load()) / secs})
}

// ConnHoldResult is what _conn-hold prints once its connections are up.
type ConnHoldResult struct {
	Established int     `json:"established"`
	Seconds     float64 `json:"seconds"`
}

// connHoldMain: _conn-hold -dst IP -n N opens N TCP connections to
// ConnPortHold (a few at a time), prints how many are up, and holds them
// until standard input closes.
func connHoldMain(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("conn-hold", flag.ContinueOnError)
	dst := fs.String("dst", "", "server address")
	n := fs.Int("n", 1000, "connections to hold")
	parallel := fs.Int("parallel", 16, "dials in flight at once")
	if err := fs.Parse(args); err != nil {
		return err
	}
	target := net.JoinHostPort(*dst, fmt.Sprint(ConnPortHold))
	start := time.Now()
	conns := make([]net.Conn, 0, *n)
	var mu sync.Mutex
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(1, *parallel) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(*n) {
				c, err := net.DialTimeout("tcp4", target, 2*time.Second)
				if err != nil {
					continue
				}
				mu.Lock()
				conns = append(conns, c)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	if err := writeJSON(stdout, ConnHoldResult{Established: len(conns), Seconds: time.Since(start).Seconds()}); err != nil {
		return err
	}
	<-waitStdinClosed()
	return nil
}

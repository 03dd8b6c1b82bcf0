package nettest

import (
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// UDPRequestResponse runs a 1-byte UDP echo server on addr:port in
// serverNS and a client in clientNS that sends one request at a time and
// waits for its response (at most 100 ms, then sends the next), for d. It
// returns completed transactions per second: with one in flight, the
// inverse of the round trip through the whole path.
func UDPRequestResponse(serverNS, clientNS string, addr netip.Addr, port int, d time.Duration) (float64, error) {
	srv, err := SocketIn(serverNS, unix.AF_INET, unix.SOCK_DGRAM, 0)
	if err != nil {
		return 0, err
	}
	sa := &unix.SockaddrInet4{Addr: addr.As4(), Port: port}
	if err := unix.Bind(srv, sa); err != nil {
		unix.Close(srv)
		return 0, fmt.Errorf("bind %v:%d: %w", addr, port, err)
	}
	tv := unix.NsecToTimeval((100 * time.Millisecond).Nanoseconds())
	if err := unix.SetsockoptTimeval(srv, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		unix.Close(srv)
		return 0, err
	}
	var stop sync.WaitGroup
	done := make(chan struct{})
	stop.Add(1)
	go func() { // echo until done
		defer stop.Done()
		var buf [64]byte
		for {
			select {
			case <-done:
				return
			default:
			}
			n, from, err := unix.Recvfrom(srv, buf[:], 0)
			if err == nil {
				_ = unix.Sendto(srv, buf[:n], 0, from)
			}
		}
	}()
	defer func() { close(done); stop.Wait(); unix.Close(srv) }()

	cl, err := SocketIn(clientNS, unix.AF_INET, unix.SOCK_DGRAM, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(cl)
	if err := unix.SetsockoptTimeval(cl, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return 0, err
	}
	if err := unix.Connect(cl, sa); err != nil {
		return 0, err
	}
	req, resp := []byte{'x'}, make([]byte, 64)
	// Warm up: ARP, flow set-up.
	for range 10 {
		if _, err := unix.Write(cl, req); err == nil {
			_, _ = unix.Read(cl, resp)
		}
	}
	n := 0
	start := time.Now()
	for time.Since(start) < d {
		if _, err := unix.Write(cl, req); err != nil {
			return 0, fmt.Errorf("send: %w", err)
		}
		if _, err := unix.Read(cl, resp); err != nil {
			if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
				continue
			}
			return 0, fmt.Errorf("receive: %w", err)
		}
		n++
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

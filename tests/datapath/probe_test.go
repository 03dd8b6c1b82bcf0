package datapathtest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// inNS runs fn on an OS thread that has entered network namespace ns.
// Sockets fn creates stay in ns for their whole life, whichever thread
// uses them later. The thread is never unlocked, so it is discarded when
// fn returns and no other goroutine ever runs in ns by accident.
func inNS(ns string, fn func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		f, err := os.Open("/run/netns/" + ns)
		if err != nil {
			done <- err
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			done <- fmt.Errorf("setns %s: %w", ns, err)
			return
		}
		done <- fn()
	}()
	return <-done
}

// pinger sends ICMP echo requests from a raw socket inside a namespace;
// the kernels of the other namespaces answer them. ping(8) is not needed.
type pinger struct {
	fd  int
	id  uint16
	seq uint16
	buf []byte
}

// newPinger opens the socket in ns; packets carry DF (never fragmented
// locally), so a size over the path MTU fails instead of passing in
// pieces. Cleanup closes it.
func newPinger(t testing.TB, ns string) *pinger {
	t.Helper()
	p := &pinger{id: uint16(os.Getpid()), buf: make([]byte, 65536)}
	err := inNS(ns, func() error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.IPPROTO_ICMP)
		if err != nil {
			return err
		}
		p.fd = fd
		return unix.SetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_MTU_DISCOVER, unix.IP_PMTUDISC_PROBE)
	})
	if err != nil {
		t.Fatalf("ICMP socket in %s: %v", ns, err)
	}
	t.Cleanup(func() { unix.Close(p.fd) })
	return p
}

var errNoReply = errors.New("no echo reply")

// ping sends one echo request with size bytes of ICMP payload to dst and
// waits up to timeout for its reply.
func (p *pinger) ping(dst string, size int, timeout time.Duration) (time.Duration, error) {
	addr, err := netip.ParseAddr(dst)
	if err != nil {
		return 0, err
	}
	p.seq++
	msg := make([]byte, 8+size)
	msg[0] = 8 // echo request
	binary.BigEndian.PutUint16(msg[4:], p.id)
	binary.BigEndian.PutUint16(msg[6:], p.seq)
	for i := 8; i < len(msg); i++ {
		msg[i] = byte(i)
	}
	binary.BigEndian.PutUint16(msg[2:], ^inetSum(msg))
	start := time.Now()
	if err := unix.Sendto(p.fd, msg, 0, &unix.SockaddrInet4{Addr: addr.As4()}); err != nil {
		return 0, fmt.Errorf("sendto %s: %w", dst, err)
	}
	for {
		left := timeout - time.Since(start)
		if left <= 0 {
			return 0, errNoReply
		}
		tv := unix.NsecToTimeval(left.Nanoseconds())
		if err := unix.SetsockoptTimeval(p.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
			return 0, err
		}
		n, from, err := unix.Recvfrom(p.fd, p.buf, 0)
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return 0, err
		}
		rtt := time.Since(start)
		sa, ok := from.(*unix.SockaddrInet4)
		if !ok || sa.Addr != addr.As4() || n < 20 {
			continue
		}
		ihl := int(p.buf[0]&0x0f) * 4
		if n < ihl+8 {
			continue
		}
		icmp := p.buf[ihl:n]
		if icmp[0] == 0 && binary.BigEndian.Uint16(icmp[4:]) == p.id && binary.BigEndian.Uint16(icmp[6:]) == p.seq {
			if len(icmp) != len(msg) {
				return 0, fmt.Errorf("echo reply of %d bytes for a %d-byte request", len(icmp), len(msg))
			}
			return rtt, nil
		}
	}
}

// reach pings dst until a reply arrives (ARP resolution and the first
// upcalls may take a moment) or timeout passes.
func (p *pinger) reach(dst string, size int, timeout time.Duration) (time.Duration, error) {
	end := time.Now().Add(timeout)
	for {
		rtt, err := p.ping(dst, size, 300*time.Millisecond)
		if err == nil || time.Now().After(end) {
			return rtt, err
		}
	}
}

// replies sends n echo requests to dst, waiting up to wait for each, and
// counts the replies.
func (p *pinger) replies(dst string, n int, wait time.Duration) int {
	got := 0
	for range n {
		if _, err := p.ping(dst, 56, wait); err == nil {
			got++
		}
	}
	return got
}

// inetSum is the Internet checksum sum of b, not complemented.
func inetSum(b []byte) uint16 {
	var s uint32
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(binary.BigEndian.Uint16(b[i:]))
	}
	if len(b)%2 == 1 {
		s += uint32(b[len(b)-1]) << 8
	}
	for s > 0xffff {
		s = s>>16 + s&0xffff
	}
	return uint16(s)
}

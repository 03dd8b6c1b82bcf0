package nettest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// SocketIn creates a socket inside network namespace ns (a name under
// /run/netns). The socket stays in that namespace for its whole life
// whichever thread uses it later; the thread that entered the namespace
// is locked and discarded.
func SocketIn(ns string, domain, typ, proto int) (int, error) {
	type result struct {
		fd  int
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with us
		f, err := os.Open("/run/netns/" + ns)
		if err != nil {
			ch <- result{-1, err}
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			ch <- result{-1, fmt.Errorf("setns %s: %w", ns, err)}
			return
		}
		fd, err := unix.Socket(domain, typ|unix.SOCK_CLOEXEC, proto)
		ch <- result{fd, err}
	}()
	r := <-ch
	return r.fd, r.err
}

// Pinger sends ICMP echo requests from inside a namespace.
type Pinger struct {
	fd  int
	id  uint16
	seq uint16
}

// NewPinger opens a raw ICMP socket in ns; with dontFragment set, packets
// carry DF and are never fragmented locally.
func NewPinger(ns string, dontFragment bool) (*Pinger, error) {
	fd, err := SocketIn(ns, unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP)
	if err != nil {
		return nil, err
	}
	if dontFragment {
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_MTU_DISCOVER, unix.IP_PMTUDISC_PROBE); err != nil {
			unix.Close(fd)
			return nil, err
		}
	}
	return &Pinger{fd: fd, id: uint16(os.Getpid())}, nil
}

// Close closes the socket.
func (p *Pinger) Close() error { return unix.Close(p.fd) }

var errTimeout = errors.New("no echo reply")

// Ping sends one echo request with size bytes of payload to dst and
// returns the round trip time, or an error after timeout.
func (p *Pinger) Ping(dst netip.Addr, size int, timeout time.Duration) (time.Duration, error) {
	p.seq++
	msg := make([]byte, 8+size)
	msg[0] = 8 // echo request
	binary.BigEndian.PutUint16(msg[4:], p.id)
	binary.BigEndian.PutUint16(msg[6:], p.seq)
	binary.BigEndian.PutUint16(msg[2:], ^sum(msg))
	tv := unix.NsecToTimeval(timeout.Nanoseconds())
	if err := unix.SetsockoptTimeval(p.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return 0, err
	}
	start := time.Now()
	if err := unix.Sendto(p.fd, msg, 0, &unix.SockaddrInet4{Addr: dst.As4()}); err != nil {
		return 0, fmt.Errorf("sendto: %w", err)
	}
	buf := make([]byte, 65536)
	for time.Since(start) < timeout {
		n, _, err := unix.Recvfrom(p.fd, buf, 0)
		if err != nil {
			if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
				continue
			}
			return 0, err
		}
		rtt := time.Since(start)
		ihl := int(buf[0]&0x0f) * 4
		if n < ihl+8 {
			continue
		}
		icmp := buf[ihl:n]
		if icmp[0] == 0 && binary.BigEndian.Uint16(icmp[4:]) == p.id && binary.BigEndian.Uint16(icmp[6:]) == p.seq {
			return rtt, nil
		}
	}
	return 0, errTimeout
}

// sum is the Internet checksum sum of b (not complemented).
func sum(b []byte) uint16 {
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

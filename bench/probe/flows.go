package probe

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// New-flow test layout: the receiver listens on FlowPorts consecutive UDP
// ports from FlowBasePort; the sender walks source ports
// [flowFirstSrcPort, flowFirstSrcPort+flowSrcPorts) for each of them, so
// flow i of a session is a 5-tuple no earlier flow used.
const (
	FlowBasePort     = 9000
	FlowPorts        = 8
	flowFirstSrcPort = 2000
	flowSrcPorts     = 60000
	flowPayload      = 18 // a 64-byte Ethernet frame
)

// FlowTuple returns the source and destination ports of flow i.
func FlowTuple(i int) (src, dst uint16) {
	i %= flowSrcPorts * FlowPorts
	return uint16(flowFirstSrcPort + i%flowSrcPorts), uint16(FlowBasePort + i/flowSrcPorts)
}

// FlowSendResult is what _flow-send prints.
type FlowSendResult struct {
	Sent    int     `json:"sent"`
	Seconds float64 `json:"seconds"`
}

// FlowRecvResult is what _flow-recv prints.
type FlowRecvResult struct {
	Received int64 `json:"received"`
}

// flowSendMain: _flow-send -dst IP -rate N -duration D -first I sends one
// UDP datagram per new 5-tuple (flows first..first+rate*duration), paced
// evenly, from a raw socket so that any source port can be used.
func flowSendMain(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("flow-send", flag.ContinueOnError)
	dst := fs.String("dst", "", "receiver address")
	rate := fs.Int("rate", 10000, "new flows per second")
	duration := fs.Duration("duration", time.Second, "how long to send")
	first := fs.Int("first", 0, "index of the first flow")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ip := net.ParseIP(*dst).To4()
	if ip == nil || *rate <= 0 {
		return errors.New("need -dst IPv4 and -rate > 0")
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.IPPROTO_UDP)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	to := &unix.SockaddrInet4{}
	copy(to.Addr[:], ip)
	total := int(float64(*rate) * duration.Seconds())
	msg := make([]byte, 8+flowPayload)
	binary.BigEndian.PutUint16(msg[4:], uint16(len(msg)))
	start := time.Now()
	sent := 0
	for sent < total {
		due := min(total, int(time.Since(start).Seconds()*float64(*rate))+1)
		for ; sent < due; sent++ {
			src, dstPort := FlowTuple(*first + sent)
			binary.BigEndian.PutUint16(msg[0:], src)
			binary.BigEndian.PutUint16(msg[2:], dstPort)
			// Checksum 0: none, which IPv4 allows for UDP.
			if err := unix.Sendto(fd, msg, 0, to); err != nil && !errors.Is(err, unix.ENOBUFS) {
				return fmt.Errorf("sendto: %w", err)
			}
		}
		time.Sleep(100 * time.Microsecond)
	}
	return writeJSON(stdout, FlowSendResult{Sent: sent, Seconds: time.Since(start).Seconds()})
}

// flowRecvMain: _flow-recv -addr IP counts datagrams on the flow ports
// until standard input closes.
func flowRecvMain(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("flow-recv", flag.ContinueOnError)
	addr := fs.String("addr", "", "address to listen on")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var received atomic.Int64
	for p := range FlowPorts {
		conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.ParseIP(*addr), Port: FlowBasePort + p})
		if err != nil {
			return err
		}
		defer conn.Close()
		forceReceiveBuffer(conn, 8<<20)
		go func() {
			buf := make([]byte, 2048)
			for {
				if _, _, err := conn.ReadFromUDP(buf); err != nil {
					return
				}
				received.Add(1)
			}
		}()
	}
	fmt.Fprintln(stdout, "ready")
	<-waitStdinClosed()
	return writeJSON(stdout, FlowRecvResult{Received: received.Load()})
}

// forceReceiveBuffer enlarges the socket's receive buffer past rmem_max so
// that the receiver is never what drops.
func forceReceiveBuffer(conn *net.UDPConn, bytes int) {
	raw, err := conn.SyscallConn()
	if err != nil {
		return
	}
	raw.Control(func(fd uintptr) {
		unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, bytes)
	})
}

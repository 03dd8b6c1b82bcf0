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
	"unsafe"

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
	// Connected, so that sendmmsg needs no address per message.
	if err := unix.Connect(fd, to); err != nil {
		return err
	}
	total := int(float64(*rate) * duration.Seconds())
	batch := newFlowBatch(flowBatch)
	start := time.Now()
	sent := 0
	for sent < total {
		due := min(total, int(time.Since(start).Seconds()*float64(*rate))+1)
		for sent < due {
			n := min(due-sent, flowBatch)
			for j := range n {
				src, dstPort := FlowTuple(*first + sent + j)
				batch.set(j, src, dstPort)
			}
			done, err := batch.send(fd, n)
			if err != 0 && err != unix.ENOBUFS && err != unix.EAGAIN && err != unix.EINTR {
				return fmt.Errorf("sendmmsg: %w", err)
			}
			if done == 0 {
				// A datagram the kernel refused (ENOBUFS) counts as
				// sent and lost, as before batching.
				done = 1
			}
			sent += done
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

// flowBatch is how many datagrams one sendmmsg call carries at most.
const flowBatch = 64

// flowMsgs is a reusable batch of new-flow datagrams (UDP header and
// payload; checksum 0, which IPv4 allows) for sendmmsg on a connected raw
// socket.
type flowMsgs struct {
	bufs [][8 + flowPayload]byte
	iovs []unix.Iovec
	msgs []mmsghdr
}

// mmsghdr is struct mmsghdr.
type mmsghdr struct {
	hdr unix.Msghdr
	n   uint32
	_   [4]byte
}

func newFlowBatch(size int) *flowMsgs {
	b := &flowMsgs{bufs: make([][8 + flowPayload]byte, size), iovs: make([]unix.Iovec, size), msgs: make([]mmsghdr, size)}
	for i := range b.msgs {
		binary.BigEndian.PutUint16(b.bufs[i][4:], 8+flowPayload)
		b.iovs[i].Base = &b.bufs[i][0]
		b.iovs[i].SetLen(8 + flowPayload)
		b.msgs[i].hdr.Iov = &b.iovs[i]
		b.msgs[i].hdr.Iovlen = 1
	}
	return b
}

func (b *flowMsgs) set(i int, src, dst uint16) {
	binary.BigEndian.PutUint16(b.bufs[i][0:], src)
	binary.BigEndian.PutUint16(b.bufs[i][2:], dst)
}

// send sends the first n messages and returns how many the kernel took.
func (b *flowMsgs) send(fd, n int) (int, unix.Errno) {
	r, _, e := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(fd), uintptr(unsafe.Pointer(&b.msgs[0])), uintptr(n), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), 0
}

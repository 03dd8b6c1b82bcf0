package probe

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// EtherTypeProbe is the EtherType of the forwarding check's frames, IEEE
// 802's "local experimental" one: no host stack answers it, and no IP
// address is involved.
const EtherTypeProbe = 0x88b5

// l2Magic starts every probe frame's payload.
var l2Magic = [4]byte{'g', 'v', 's', 'b'}

// L2CheckResult is what _l2check prints.
type L2CheckResult struct {
	Ports        int   `json:"ports"`
	Seen         int   `json:"seen"`
	Missing      []int `json:"missing,omitempty"` // the first few indexes not seen
	MissingCount int   `json:"missing_count"`
	Rounds       int   `json:"rounds"`
	// StartUnixNano is when the first frame was sent; AllSeenUnixNano when
	// the frame of the last port to forward arrived (0 unless all did).
	StartUnixNano   int64 `json:"start_unix_ns"`
	AllSeenUnixNano int64 `json:"all_seen_unix_ns"`
}

// l2CheckMain: _l2check -sink DEV -prefix P -from I -count N [-timeout D]
// [-interval D] [-expect-none] checks that a switch forwards a frame from
// every peer P<I>..P<I+N-1> to the sink's port. All these devices are in
// the current namespace. Each round the sink first sends a broadcast frame
// (so a learning switch knows where the sink is and forwards the others
// only there), then every peer not seen yet sends one unicast frame to the
// sink; rounds repeat every interval until every peer was seen or the
// timeout passes. With -expect-none each peer sends once and the probe
// listens for the whole timeout: the ports were removed and must not
// forward.
func l2CheckMain(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("l2check", flag.ContinueOnError)
	sink := fs.String("sink", "", "device the frames must reach")
	prefix := fs.String("prefix", "", "peer device name prefix")
	from := fs.Int("from", 0, "first peer index")
	count := fs.Int("count", 0, "number of peers")
	timeout := fs.Duration("timeout", 10*time.Second, "give up after")
	interval := fs.Duration("interval", 100*time.Millisecond, "time between rounds")
	expectNone := fs.Bool("expect-none", false, "send once and count what arrives within the timeout")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *sink == "" || *prefix == "" || *count <= 0 {
		return errors.New("-sink, -prefix and -count > 0 are required")
	}
	ifaces, err := net.Interfaces()
	if err != nil {
		return err
	}
	byName := make(map[string]net.Interface, len(ifaces))
	for _, ifc := range ifaces {
		byName[ifc.Name] = ifc
	}
	sinkIf, ok := byName[*sink]
	if !ok {
		return fmt.Errorf("no device %s", *sink)
	}
	peers := make([]net.Interface, *count)
	for i := range peers {
		name := fmt.Sprintf("%s%d", *prefix, *from+i)
		if peers[i], ok = byName[name]; !ok {
			return fmt.Errorf("no device %s", name)
		}
	}
	rx, err := openProbeReceiver(sinkIf.Index)
	if err != nil {
		return err
	}
	defer unix.Close(rx)
	tx, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, 0) // sends only
	if err != nil {
		return fmt.Errorf("packet socket: %w", err)
	}
	defer unix.Close(tx)

	nonce := rand.Uint32()
	seen := newSeenSet(*count)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		receiveProbes(rx, nonce, *from, seen, done)
	}()

	res := L2CheckResult{Ports: *count, StartUnixNano: time.Now().UnixNano()}
	deadline := time.Now().Add(*timeout)
	frame := make([]byte, 60)
	for {
		res.Rounds++
		if err := sendProbe(tx, frame, sinkIf, broadcastMAC, nonce, -1); err != nil {
			return err
		}
		// Let the switch learn where the sink is before the unicast
		// frames, so they are not flooded to every port.
		time.Sleep(2 * time.Millisecond)
		for i, p := range peers {
			if !seen.has(i) {
				// A send can fail while the switch re-creates a port
				// (ENXIO, ENETDOWN): the next round tries again.
				sendProbe(tx, frame, p, sinkIf.HardwareAddr, nonce, *from+i)
			}
		}
		wait := *interval
		if *expectNone {
			wait = time.Until(deadline)
		}
		if seen.waitAll(min(wait, time.Until(deadline))) || *expectNone || time.Now().After(deadline) {
			break
		}
	}
	close(done)
	wg.Wait()
	res.Seen, res.AllSeenUnixNano = seen.summary()
	for i := range *count {
		if !seen.has(i) {
			res.MissingCount++
			if len(res.Missing) < 20 {
				res.Missing = append(res.Missing, *from+i)
			}
		}
	}
	return writeJSON(stdout, res)
}

var broadcastMAC = net.HardwareAddr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

// openProbeReceiver opens a packet socket for the probe EtherType on the
// sink device, with a receive buffer large enough for a frame from each of
// thousands of ports at once, and a short read timeout so the reader can
// notice the end.
func openProbeReceiver(ifindex int) (int, error) {
	proto := int(htons(EtherTypeProbe))
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, proto)
	if err != nil {
		return -1, fmt.Errorf("packet socket: %w", err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 16<<20); err != nil {
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 16<<20)
	}
	tv := unix.NsecToTimeval((50 * time.Millisecond).Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		unix.Close(fd)
		return -1, err
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: uint16(proto), Ifindex: ifindex}); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("bind packet socket: %w", err)
	}
	return fd, nil
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// sendProbe sends one probe frame out of dev: dst, dev's own MAC as the
// source, and the payload magic, nonce, index (-1 for the sink's own
// announcement).
func sendProbe(fd int, frame []byte, dev net.Interface, dst net.HardwareAddr, nonce uint32, index int) error {
	encodeProbe(frame, dst, dev.HardwareAddr, nonce, index)
	addr := &unix.SockaddrLinklayer{Ifindex: dev.Index, Halen: 6}
	copy(addr.Addr[:], dst)
	if err := unix.Sendto(fd, frame, 0, addr); err != nil {
		return fmt.Errorf("send on %s: %w", dev.Name, err)
	}
	return nil
}

// encodeProbe fills a 60-byte frame (the Ethernet minimum without FCS).
func encodeProbe(frame []byte, dst, src net.HardwareAddr, nonce uint32, index int) {
	clear(frame)
	copy(frame[0:6], dst)
	copy(frame[6:12], src)
	binary.BigEndian.PutUint16(frame[12:], EtherTypeProbe)
	copy(frame[14:18], l2Magic[:])
	binary.BigEndian.PutUint32(frame[18:], nonce)
	binary.BigEndian.PutUint32(frame[22:], uint32(int32(index)))
}

// decodeProbe returns the index of a probe frame of this run (nonce), or
// false for anything else: other runs' frames, the sink's announcements.
func decodeProbe(frame []byte, nonce uint32) (int, bool) {
	if len(frame) < 26 || binary.BigEndian.Uint16(frame[12:]) != EtherTypeProbe ||
		[4]byte(frame[14:18]) != l2Magic || binary.BigEndian.Uint32(frame[18:]) != nonce {
		return 0, false
	}
	index := int(int32(binary.BigEndian.Uint32(frame[22:])))
	return index, index >= 0
}

func receiveProbes(fd int, nonce uint32, from int, seen *seenSet, done <-chan struct{}) {
	buf := make([]byte, 2048)
	for {
		select {
		case <-done:
			return
		default:
		}
		n, sa, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			continue // timeout: look at done again
		}
		if ll, ok := sa.(*unix.SockaddrLinklayer); ok && ll.Pkttype == unix.PACKET_OUTGOING {
			continue // the sink's own announcement
		}
		if index, ok := decodeProbe(buf[:n], nonce); ok {
			seen.mark(index-from, time.Now())
		}
	}
}

// seenSet records which peers' frames arrived, and when the last missing
// one did.
type seenSet struct {
	mu      sync.Mutex
	seen    []bool
	n       int
	lastNew time.Time
	all     chan struct{}
}

func newSeenSet(n int) *seenSet {
	return &seenSet{seen: make([]bool, n), all: make(chan struct{})}
}

func (s *seenSet) mark(i int, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i < 0 || i >= len(s.seen) || s.seen[i] {
		return
	}
	s.seen[i] = true
	s.n++
	s.lastNew = at
	if s.n == len(s.seen) {
		close(s.all)
	}
}

func (s *seenSet) has(i int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[i]
}

// waitAll waits up to d for every peer and reports whether all were seen.
func (s *seenSet) waitAll(d time.Duration) bool {
	if d <= 0 {
		select {
		case <-s.all:
			return true
		default:
			return false
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.all:
		return true
	case <-t.C:
		return false
	}
}

// summary returns how many were seen and, when all were, the arrival time
// of the last one (Unix ns), else 0.
func (s *seenSet) summary() (int, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n == len(s.seen) {
		return s.n, s.lastNew.UnixNano()
	}
	return s.n, 0
}

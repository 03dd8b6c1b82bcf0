package dummy

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Dummy devices joined by sockets (options:pstream and options:stream, as
// netdev-dummy has them): every frame the device sends goes to each
// connection as a 2-byte big-endian length and the frame, and every frame
// read from a connection is received on queue 0. "stream" dials
// unix:PATH or tcp:IP:PORT and redials when the connection drops;
// "pstream" listens on punix:PATH or ptcp:PORT[:IP] and takes any number
// of connections. A relative unix path is relative to Config.RunDir, as
// Open vSwitch resolves it against its run directory.

const (
	minRedial = 100 * time.Millisecond
	maxRedial = 4 * time.Second
)

// streams is a device's socket side.
type streams struct {
	dev      *Device
	active   bool // options:stream: conn-state reports on it
	ln       net.Listener
	conns    atomic.Pointer[[]*streamConn] // replaced whole; Send reads it without a lock
	mu       sync.Mutex                    // serialises changes to conns
	stop     chan struct{}
	wg       sync.WaitGroup
	connects atomic.Uint64
}

// streamConn is one connection: a writer goroutine drains out, whose
// buffers come back through free, so Send copies a frame without
// allocating once MaxQueueLen buffers exist.
type streamConn struct {
	c         net.Conn
	out, free chan []byte
	done      chan struct{} // closed by shut
	allocated atomic.Int32
	closeOnce sync.Once
}

func parseTarget(s, runDir string, passive bool) (network, addr string, err error) {
	unixPrefix, tcpPrefix := "unix:", "tcp:"
	if passive {
		unixPrefix, tcpPrefix = "punix:", "ptcp:"
	}
	switch {
	case strings.HasPrefix(s, unixPrefix):
		path := strings.TrimPrefix(s, unixPrefix)
		if path == "" {
			break
		}
		if !filepath.IsAbs(path) && runDir != "" {
			path = filepath.Join(runDir, path)
		}
		return "unix", path, nil
	case strings.HasPrefix(s, tcpPrefix):
		rest := strings.TrimPrefix(s, tcpPrefix)
		if passive { // ptcp:PORT[:IP]
			port, ip, _ := strings.Cut(rest, ":")
			return "tcp", net.JoinHostPort(ip, port), nil
		}
		if _, _, err := net.SplitHostPort(rest); err == nil {
			return "tcp", rest, nil
		}
	}
	return "", "", fmt.Errorf("%s: unknown or malformed stream", s)
}

func newStreams(d *Device, pstream, stream, runDir string) (*streams, error) {
	s := &streams{dev: d, stop: make(chan struct{})}
	empty := []*streamConn{}
	s.conns.Store(&empty)
	if pstream != "" {
		network, addr, err := parseTarget(pstream, runDir, true)
		if err != nil {
			return nil, err
		}
		if network == "unix" {
			removeStaleSocket(addr)
		}
		ln, err := net.Listen(network, addr)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", d.cfg.Name, pstream, err)
		}
		s.ln = ln
		s.wg.Add(1)
		go s.accept()
	}
	if stream != "" {
		network, addr, err := parseTarget(stream, runDir, false)
		if err != nil {
			s.close()
			return nil, err
		}
		s.active = true
		s.wg.Add(1)
		go s.dial(network, addr)
	}
	return s, nil
}

// removeStaleSocket removes a socket file nobody listens on any more.
func removeStaleSocket(path string) {
	if c, err := net.Dial("unix", path); err == nil {
		c.Close()
		return
	}
	removeFile(path)
}

func (s *streams) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return // closed
		}
		s.serve(c)
	}
}

func (s *streams) dial(network, addr string) {
	defer s.wg.Done()
	backoff := minRedial
	for {
		c, err := net.Dial(network, addr)
		if err == nil {
			backoff = minRedial
			done := s.serve(c)
			select {
			case <-done:
			case <-s.stop:
				return
			}
		}
		select {
		case <-s.stop:
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxRedial)
	}
}

// serve adds a connection and starts its reader and writer; the channel
// closes when the connection is gone.
func (s *streams) serve(c net.Conn) <-chan struct{} {
	sc := &streamConn{c: c, out: make(chan []byte, MaxQueueLen), free: make(chan []byte, MaxQueueLen), done: make(chan struct{})}
	done := make(chan struct{})
	s.mu.Lock()
	select {
	case <-s.stop:
		s.mu.Unlock()
		c.Close()
		close(done)
		return done
	default:
	}
	next := append(append([]*streamConn{}, *s.conns.Load()...), sc)
	s.conns.Store(&next)
	s.connects.Add(1)
	s.mu.Unlock()
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		sc.write()
	}()
	go func() {
		defer s.wg.Done()
		defer close(done)
		s.read(sc)
		sc.shut()
		s.mu.Lock()
		var rest []*streamConn
		for _, o := range *s.conns.Load() {
			if o != sc {
				rest = append(rest, o)
			}
		}
		s.conns.Store(&rest)
		s.mu.Unlock()
	}()
	return done
}

// read receives frames until the connection fails or breaks the framing
// (a frame shorter than an Ethernet header: EPROTO in Open vSwitch).
func (s *streams) read(sc *streamConn) {
	var hdr [2]byte
	for {
		if _, err := io.ReadFull(sc.c, hdr[:]); err != nil {
			return
		}
		n := int(binary.BigEndian.Uint16(hdr[:]))
		if n < 14 {
			return
		}
		frame := make([]byte, n)
		if _, err := io.ReadFull(sc.c, frame); err != nil {
			return
		}
		s.dev.receive(0, frame)
	}
}

func (sc *streamConn) write() {
	for {
		var b []byte
		select {
		case b = <-sc.out:
		case <-sc.done:
			return
		}
		if _, err := sc.c.Write(b); err != nil {
			sc.c.Close() // the reader sees it and removes the connection
		}
		select {
		case sc.free <- b[:0]:
		default:
		}
	}
}

func (sc *streamConn) shut() {
	sc.closeOnce.Do(func() {
		sc.c.Close()
		close(sc.done)
	})
}

// send queues a copy of frame for every connection; a connection whose
// queue is full drops it, as netdev-dummy does beyond
// NETDEV_DUMMY_MAX_QUEUE.
func (s *streams) send(frame []byte) {
	for _, sc := range *s.conns.Load() {
		var b []byte
		select {
		case b = <-sc.free:
		default:
			if sc.allocated.Load() >= MaxQueueLen {
				continue
			}
			sc.allocated.Add(1)
		}
		if cap(b) < 2+len(frame) {
			b = make([]byte, 0, 2+max(len(frame), 1514))
		}
		b = binary.BigEndian.AppendUint16(b[:0], uint16(len(frame)))
		b = append(b, frame...)
		select {
		case sc.out <- b:
		default:
		}
	}
}

// state is conn-state's answer: only an active stream has one.
func (s *streams) state() string {
	if s == nil || !s.active {
		return "unknown"
	}
	if len(*s.conns.Load()) > 0 {
		return "connected"
	}
	return "disconnected"
}

func (s *streams) close() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	select {
	case <-s.stop:
		s.mu.Unlock()
		return nil
	default:
	}
	close(s.stop)
	conns := *s.conns.Load()
	s.mu.Unlock()
	var err error
	if s.ln != nil {
		err = s.ln.Close()
	}
	for _, sc := range conns {
		sc.c.Close()
	}
	s.wg.Wait()
	return err
}

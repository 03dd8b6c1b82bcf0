package connmgr

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"gvs/ofproto/ofp"
)

// ConnType is Open vSwitch's ofconn_type.
type ConnType int

const (
	// Primary connections are controllers: they get asynchronous
	// messages by default (miss_send_len 128) and count for fail-open.
	Primary ConnType = iota
	// Service connections (the mgmt socket, passive targets by default)
	// are tools like ovs-ofctl: no asynchronous message unless they set a
	// non-zero miss_send_len.
	Service
)

func (t ConnType) String() string {
	if t == Primary {
		return "primary"
	}
	return "service"
}

// errEOF marks a connection the peer closed (Open vSwitch: EOF, shown as
// "End of file").
var errEOF = errors.New("end of file")

// negotiateTimeout bounds the HELLO exchange.
const negotiateTimeout = 10 * time.Second

// negotiate sends our HELLO, reads the peer's and picks the highest common
// version, as Open vSwitch's vconn: without one it sends OFPHFC_INCOMPATIBLE
// with an explanation and fails.
func negotiate(nc net.Conn, allowed Versions) (uint8, error) {
	nc.SetDeadline(time.Now().Add(negotiateTimeout))
	defer nc.SetDeadline(time.Time{})
	if _, err := nc.Write(encodeHello(allowed, 0)); err != nil {
		return 0, err
	}
	b, err := readMsg(nc)
	if err != nil {
		if err == io.EOF {
			err = errEOF
		}
		return 0, err
	}
	if parseHeader(b).Type != typeHello {
		return 0, fmt.Errorf("received message while expecting hello: %w", syscall.EPROTO)
	}
	peer, _ := decodeHello(b)
	common := peer & allowed
	if common == 0 {
		text := fmt.Sprintf("We support %s, you support %s, no common versions.", allowed, peer)
		nc.Write(encodeRawError(peer.highest(), 0, errTypeHelloFailed, errCodeHelloIncompatible, []byte(text)))
		return 0, &negotiationError{allowed: allowed, peer: peer}
	}
	return common.highest(), nil
}

// negotiationError is a failed version negotiation; its text is Open
// vSwitch's log line.
type negotiationError struct{ allowed, peer Versions }

func (e *negotiationError) Error() string {
	return fmt.Sprintf("version negotiation failed (we support %s, peer supports %s)", e.allowed, e.peer)
}

// Unwrap: the connection fails with EPROTO, as in Open vSwitch.
func (e *negotiationError) Unwrap() error { return syscall.EPROTO }

// ofconn is one negotiated OpenFlow connection. Its reader goroutine
// delivers messages to the Manager's dispatcher and probes an idle peer;
// its writer goroutine drains txq. The fields under "dispatcher" are
// touched only by the Manager's dispatch goroutine.
type ofconn struct {
	id      uint64
	m       *Manager
	svc     *service
	typ     ConnType
	name    string
	nc      net.Conn
	version uint8
	probe   time.Duration

	lastActivity atomic.Int64 // unix nanoseconds of the last message in or out

	mu   sync.Mutex // txq, pins, corked, writing, closed, err; a leaf
	cond *sync.Cond
	txq  [][]byte
	pins int // packet-ins queued in txq
	// corked: the reader is handling messages it has already received and
	// will write what they queued itself (flush) before it waits for more,
	// so that replies go out in one write without waking the writer.
	corked bool
	// writing: the writer goroutine or a flush has taken the head of txq
	// and is writing it; the other waits, so messages keep their order.
	writing bool
	closed  bool
	err     error
	// raw writes without blocking for flush (nil: a stream without a
	// descriptor, such as net.Pipe; everything goes through the writer).
	raw     syscall.RawConn
	wbuf    []byte        // flush's buffer, reused; only the token holder touches it
	done    chan struct{} // closed once both goroutines are gone
	readEnd chan struct{}

	idle atomic.Bool // an echo request is outstanding (rconn's IDLE)

	// Dispatcher state (Open vSwitch's struct ofconn).
	state    connState
	admitted bool // counted in Manager.connected
	// sched are the packet-in schedulers for action and miss packet-ins
	// (nil without a rate limit).
	sched [2]*pinsched
	// updates are flow monitor updates waiting for flushMonitorUpdates;
	// sentAbbrev: the batch has its abbreviated update.
	updates    []ofp.FlowUpdate
	sentAbbrev bool
}

func newOfconn(m *Manager, svc *service, nc net.Conn, version uint8, typ ConnType, probe time.Duration, name string) *ofconn {
	c := &ofconn{
		id: m.nextConnID.Add(1), m: m, svc: svc, typ: typ, name: name, nc: nc,
		version: version, probe: probe,
		done: make(chan struct{}), readEnd: make(chan struct{}),
	}
	c.cond = sync.NewCond(&c.mu)
	if sc, ok := nc.(syscall.Conn); ok {
		c.raw, _ = sc.SyscallConn()
	}
	c.lastActivity.Store(time.Now().UnixNano())
	c.state.init(typ)
	return c
}

// start runs the connection's goroutines; the dispatcher learns of the
// connection before any of its messages (connOpened first).
func (c *ofconn) start() {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); c.writeLoop() }()
	go func() { defer wg.Done(); c.readLoop() }()
	go func() { wg.Wait(); close(c.done) }()
}

// send queues a message; it never blocks. False when the connection is
// closed.
func (c *ofconn) send(b []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.txq = append(c.txq, b)
	c.kickWriter()
	return true
}

// kickWriter wakes the writer for what is queued, unless the reader will
// flush it or a write is under way (whose end looks at the queue again).
// c.mu held.
func (c *ofconn) kickWriter() {
	if !c.corked && !c.writing {
		c.cond.Signal()
	}
}

// sendPacketIn queues a packet-in unless max are already queued (Open
// vSwitch's controller_queue_size); false when dropped.
func (c *ofconn) sendPacketIn(b []byte, max int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || (max > 0 && c.pins >= max) {
		return false
	}
	c.txq = append(c.txq, b)
	c.pins++
	c.kickWriter()
	return true
}

// cork holds what the connection queues from now on for the reader's
// next flush.
func (c *ofconn) cork() {
	if c.raw == nil {
		return
	}
	c.mu.Lock()
	c.corked = true
	c.mu.Unlock()
}

// maxFlush bounds what flush writes itself; more goes to the writer
// goroutine (one writev, no copy) and flush's buffer stays small.
const maxFlush = 64 << 10

// flush uncorks and writes what is queued on the reader's goroutine, with
// one write that never blocks: what the socket does not take now, and
// anything queued meanwhile, is left to the writer goroutine in order.
func (c *ofconn) flush() {
	if c.raw == nil {
		return
	}
	c.mu.Lock()
	c.corked = false
	if c.closed || len(c.txq) == 0 || c.writing {
		c.kickWriterIfQueued()
		c.mu.Unlock()
		return
	}
	size := 0
	for _, b := range c.txq {
		size += len(b)
	}
	if size > maxFlush {
		c.kickWriterIfQueued()
		c.mu.Unlock()
		return
	}
	batch := c.txq
	c.txq = nil
	c.pins = 0
	c.writing = true
	c.mu.Unlock()

	buf := c.wbuf[:0]
	for _, b := range batch {
		buf = append(buf, b...)
	}
	c.wbuf = buf
	var n int
	var werr error
	err := c.raw.Write(func(fd uintptr) bool {
		n, werr = syscall.Write(int(fd), buf)
		return true // never wait for the socket: the writer does
	})
	if err == nil && (werr == syscall.EAGAIN || werr == syscall.EINTR) {
		n, werr = 0, nil
	}
	if err == nil {
		err = werr
	}
	c.mu.Lock()
	c.writing = false
	if err != nil {
		c.mu.Unlock()
		c.close(err)
		return
	}
	if n < len(buf) {
		c.txq = append([][]byte{slices.Clone(buf[n:])}, c.txq...)
	}
	c.kickWriterIfQueued()
	c.mu.Unlock()
	for _, b := range batch {
		c.svc.copyToMonitors(b)
	}
	c.lastActivity.Store(time.Now().UnixNano())
}

// kickWriterIfQueued wakes the writer when something waits. c.mu held.
func (c *ofconn) kickWriterIfQueued() {
	if len(c.txq) > 0 {
		c.cond.Signal()
	}
}

// close shuts the connection down with err as its reason (nil: closed by
// us). Safe to call more than once.
func (c *ofconn) close(err error) {
	c.mu.Lock()
	if !c.closed {
		c.closed, c.err = true, err
		c.txq = nil
		c.cond.Broadcast()
	}
	c.mu.Unlock()
	c.nc.Close()
}

func (c *ofconn) closeErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *ofconn) writeLoop() {
	for {
		c.mu.Lock()
		for (len(c.txq) == 0 || c.writing || c.corked) && !c.closed {
			c.cond.Wait()
		}
		if c.closed {
			c.mu.Unlock()
			return
		}
		batch := c.txq
		c.txq = nil
		c.pins = 0
		c.writing = true
		c.mu.Unlock()
		// One writev for the whole batch.
		bufs := net.Buffers(slices.Clone(batch))
		_, err := bufs.WriteTo(c.nc)
		c.mu.Lock()
		c.writing = false
		c.mu.Unlock()
		if err != nil {
			c.close(err)
			return
		}
		for _, b := range batch {
			c.svc.copyToMonitors(b)
		}
		c.lastActivity.Store(time.Now().UnixNano())
	}
}

// readLoop reads messages and hands them to the dispatcher. With a probe
// interval, a peer silent for that long gets an echo request, and one
// silent for twice as long is disconnected (Open vSwitch's rconn IDLE
// state).
func (c *ofconn) readLoop() {
	defer close(c.readEnd)
	idle := false
	var idleSince time.Time
	mr := newMsgReader(c.nc)
	for {
		if !mr.buffered() {
			// The next read may wait: what the messages handled so far
			// queued goes out first, in one write.
			c.flush()
		}
		if c.probe > 0 {
			if idle {
				c.nc.SetReadDeadline(idleSince.Add(c.probe))
			} else {
				c.nc.SetReadDeadline(time.Unix(0, c.lastActivity.Load()).Add(c.probe))
			}
		}
		b, err := mr.next()
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) && c.probe > 0 {
				now := time.Now()
				if idle {
					c.m.log.Error(fmt.Sprintf("%s: no response to inactivity probe after %d seconds, disconnecting", c.name, int(now.Sub(idleSince)/time.Second)))
					c.close(syscall.ETIMEDOUT)
					c.m.post(inMsg{conn: c, closed: true})
					return
				}
				if now.Sub(time.Unix(0, c.lastActivity.Load())) < c.probe {
					continue // something was sent meanwhile
				}
				idle, idleSince = true, now
				c.idle.Store(true)
				c.send(encodeEcho(c.version, typeEchoRequest, 0, nil))
				continue
			}
			if err == io.EOF {
				err = errEOF
			}
			c.close(err)
			c.m.post(inMsg{conn: c, closed: true})
			return
		}
		idle = false
		c.idle.Store(false)
		c.lastActivity.Store(time.Now().UnixNano())
		c.cork()
		c.svc.copyToMonitors(b)
		h := parseHeader(b)
		switch {
		case h.Type == typeEchoRequest:
			// Answered here, not by the dispatcher, so that a long bundle
			// commit never looks like a dead switch; in the request's
			// version, as Open vSwitch.
			r := encodeEcho(h.Version, typeEchoReply, h.XID, b[headerLen:])
			c.send(r)
			continue
		case h.Type == typeEchoReply:
			continue
		case h.Version != c.version && h.Type != typeHello && h.Type != typeError && h.Type != typeEchoRequest:
			c.m.log.Error(fmt.Sprintf("%s: received OpenFlow version 0x%02x != expected %02x", c.name, h.Version, c.version))
			c.send(encodeRawError(h.Version, h.XID, errTypeBadRequest, errCodeBadVersion, errorData(b)))
			continue
		}
		if !c.m.post(inMsg{conn: c, msg: b}) {
			c.close(nil)
			return
		}
	}
}

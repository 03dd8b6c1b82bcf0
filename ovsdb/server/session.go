package server

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"gvs/ovsdb/db"
	"gvs/ovsdb/jsonrpc"
)

// session is one client connection. Three goroutines serve it: the reader
// decodes messages and hands them to the loop; the loop (the goroutine that
// called run) handles requests, re-runs blocked transactions and probes for
// inactivity; the writer drains the outgoing queue onto the connection.
// Anyone may queue a message (enqueue never blocks); a session whose queue
// grows past the server's backlog limit is dropped, so a client that stops
// reading costs the server a bounded amount of memory and stalls nobody.
type session struct {
	srv    *Server
	conn   net.Conn
	name   string
	remote string // the listener's remote, "" for ServeConn
	log    *slog.Logger
	probe  time.Duration // 0 disables the inactivity probe

	inbox chan inMessage
	wake  chan struct{} // a commit happened where we have a blocked transaction
	done  chan struct{} // closed by close
	once  sync.Once

	qmu     sync.Mutex
	queue   [][]byte
	backlog int // bytes queued and not yet written
	qsignal chan struct{}
	flushed chan struct{} // the writer finished writing a batch

	mu       sync.Mutex // guards monitors
	monitors map[string]*monitor

	dbChangeAware atomic.Bool
	lastActivity  atomic.Int64 // unix nanoseconds of the last sign of life

	// Owned by the loop goroutine.
	triggers  []*trigger
	probeSent time.Time
	// heldSlot releases the large-message slot kept while the reply to a
	// large message is written, until heldUntil at the latest.
	heldSlot  func()
	heldUntil time.Time
}

func newSession(srv *Server, conn net.Conn, probe time.Duration) *session {
	name := "unknown"
	if a := conn.RemoteAddr(); a != nil && a.String() != "" {
		name = a.Network() + ":" + a.String()
	}
	s := &session{
		srv:      srv,
		conn:     conn,
		name:     name,
		log:      srv.logger.With("session", name),
		probe:    probe,
		inbox:    make(chan inMessage),
		wake:     make(chan struct{}, 1),
		done:     make(chan struct{}),
		qsignal:  make(chan struct{}, 1),
		flushed:  make(chan struct{}, 1),
		monitors: map[string]*monitor{},
	}
	s.touch()
	return s
}

func (s *session) touch() { s.lastActivity.Store(time.Now().UnixNano()) }

// close ends the session; safe from any goroutine, any number of times.
func (s *session) close(reason string) {
	s.once.Do(func() {
		if reason != "" {
			s.log.Info("disconnecting", "reason", reason)
		}
		close(s.done)
		// Closing a TLS connection may try to write an alert to a peer
		// that does not read; never wait for that, whatever lock the
		// caller holds.
		go s.conn.Close()
	})
}

func (s *session) closed() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

func (s *session) wakeUp() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// inMessage is a message on its way from the reader to the loop; release,
// if set, frees the large-message slot it was read with once handled.
type inMessage struct {
	m       *jsonrpc.Message
	release func()
}

func (s *session) reader(wg *sync.WaitGroup) {
	defer wg.Done()
	budget := &budgetReader{s: s}
	defer budget.dropSlot()
	r := jsonrpc.NewReader(budget)
	for {
		m, err := r.Read()
		if err != nil {
			if !s.closed() && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				s.log.Warn("receive error, disconnecting", "err", err)
			}
			// The loop handles what was received before it ends the session.
			close(s.inbox)
			return
		}
		in := inMessage{m: m, release: budget.messageDone()}
		select {
		case s.inbox <- in:
		case <-s.done:
			if in.release != nil {
				in.release()
			}
			return
		}
	}
}

// run serves the session until it ends, then releases everything it held.
func (s *session) run() {
	var wg sync.WaitGroup
	wg.Add(2)
	go s.writer(&wg)
	go s.reader(&wg)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for !s.closed() {
		timer.Reset(s.nextDeadline())
		// Like ovsdb-server, take no new request from a client that is
		// not reading our replies: it stalls itself, not the server. (A
		// client that stops reading while its monitors keep producing
		// updates is dropped by enqueue instead.)
		inbox := s.inbox
		if s.backlogBytes() > s.srv.pauseBacklog {
			inbox = nil
		}
		select {
		case <-s.flushed:
			s.releaseHeldSlot(false)
		case in, ok := <-inbox:
			if !ok {
				// The client closed its side: let the replies to what
				// it sent reach it before hanging up.
				s.flush(5 * time.Second)
				s.close("")
				continue
			}
			s.handle(in.m)
			if in.release != nil {
				s.holdSlotForReply(in.release)
			}
		case <-s.wake:
			s.retryTriggers()
		case <-timer.C:
			s.retryTriggers()
			s.checkProbe()
			s.releaseHeldSlot(false)
		case <-s.done:
		}
	}
	s.releaseHeldSlot(true)
	s.cleanup()
	wg.Wait()
}

func (s *session) nextDeadline() time.Duration {
	now := time.Now()
	next := now.Add(time.Hour)
	for _, t := range s.triggers {
		if !t.retryAt.IsZero() && t.retryAt.Before(next) {
			next = t.retryAt
		}
	}
	if s.probe > 0 {
		var probeAt time.Time
		if s.probeSent.IsZero() {
			probeAt = time.Unix(0, s.lastActivity.Load()).Add(s.probe)
		} else {
			probeAt = s.probeSent.Add(s.probe)
		}
		if probeAt.Before(next) {
			next = probeAt
		}
	}
	if s.heldSlot != nil && s.heldUntil.Before(next) {
		next = s.heldUntil
	}
	d := next.Sub(now)
	if d < time.Millisecond {
		d = time.Millisecond
	}
	return d
}

// checkProbe implements Open vSwitch's reconnect FSM for a passive session:
// after probe of silence send an "echo" request; after another probe of
// silence, give up.
func (s *session) checkProbe() {
	if s.probe <= 0 {
		return
	}
	now := time.Now()
	last := time.Unix(0, s.lastActivity.Load())
	if !s.probeSent.IsZero() {
		if last.After(s.probeSent) {
			s.probeSent = time.Time{}
		} else if now.Sub(s.probeSent) >= s.probe {
			s.log.Warn("no response to inactivity probe, disconnecting", "after", s.probe)
			s.close("")
			return
		} else {
			return
		}
	}
	if now.Sub(last) >= s.probe {
		s.probeSent = now
		s.enqueue([]byte(`{"id":"echo","method":"echo","params":[]}`))
	}
}

// cleanup drops the session's monitors, locks and blocked transactions.
func (s *session) cleanup() {
	s.mu.Lock()
	monitors := make([]*monitor, 0, len(s.monitors))
	for _, m := range s.monitors {
		monitors = append(monitors, m)
	}
	s.monitors = map[string]*monitor{}
	s.mu.Unlock()
	for _, m := range monitors {
		m.sdb.removeMonitor(m)
	}
	for _, t := range s.triggers {
		t.sdb.removeWaiter(s)
	}
	s.triggers = nil
	s.srv.locks.unlockAll(s)
	s.srv.removeSession(s)
}

func (s *session) addMonitor(m *monitor) {
	s.mu.Lock()
	s.monitors[m.key] = m
	s.mu.Unlock()
}

func (s *session) findMonitor(id json.RawMessage) *monitor {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.monitors[canonicalJSON(id)]
}

func (s *session) rekeyMonitor(m *monitor, newID json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.monitors, m.key)
	m.id = json.RawMessage(canonicalJSON(newID))
	m.key = string(m.id)
	s.monitors[m.key] = m
}

func (s *session) dropMonitor(m *monitor) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.monitors[m.key] != m {
		return false
	}
	delete(s.monitors, m.key)
	return true
}

// hasLock is TxnEnv.HasLock for this session.
func (s *session) hasLock(name string) bool { return s.srv.locks.owns(s, name) }

func (s *session) txnEnv(started time.Time) db.TxnEnv {
	return db.TxnEnv{HasLock: s.hasLock, Started: started, Now: time.Now()}
}

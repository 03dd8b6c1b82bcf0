package connmgr

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// service is one target: a listener (ptcp:, punix:, the mgmt socket) whose
// accepted connections are its ofconns, or an active target (tcp:, unix:)
// reconnecting for ever with Open vSwitch's rconn backoff.
type service struct {
	m        *Manager
	target   string
	versions Versions
	active   bool
	created  time.Time

	cfgMu sync.Mutex // cfg; a leaf
	cfg   ControllerConfig

	ln       net.Listener
	cancel   context.CancelFunc
	loopDone chan struct{}

	stMu sync.Mutex // st; a leaf
	st   rconnStatus

	monMu    sync.Mutex // monitors; a leaf
	monitors []*snooper
}

// rconnStatus is what Controller.status reports of an active target.
type rconnStatus struct {
	state            string // VOID, BACKOFF, CONNECTING, ACTIVE, IDLE
	connected        bool
	conn             *ofconn
	lastError        error
	lastConnected    time.Time
	lastDisconnected time.Time
	lastAdmitted     time.Time
}

func (s *service) config() ControllerConfig {
	s.cfgMu.Lock()
	defer s.cfgMu.Unlock()
	return s.cfg
}

// reconfigure applies what changes without a new connection: probe
// interval (from the next connection), backoff, queue size.
func (s *service) reconfigure(c ControllerConfig) {
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = DefaultMaxBackoff
	}
	if c.QueueSize <= 0 {
		c.QueueSize = defaultQueueSize
	}
	s.cfgMu.Lock()
	s.cfg = c
	s.cfgMu.Unlock()
}

func (s *service) status() rconnStatus {
	s.stMu.Lock()
	defer s.stMu.Unlock()
	st := s.st
	if st.connected && st.conn != nil && st.conn.idle.Load() {
		st.state = "IDLE"
	}
	return st
}

func (s *service) setAdmitted(t time.Time) {
	s.stMu.Lock()
	s.st.lastAdmitted = t
	s.stMu.Unlock()
}

// failureDuration is rconn_failure_duration: 0 while an admitted
// connection is up, else the time since there last was one.
func (s *service) failureDuration(now time.Time) time.Duration {
	s.stMu.Lock()
	defer s.stMu.Unlock()
	if s.st.connected && s.st.conn != nil && !s.st.lastAdmitted.Before(s.st.lastConnected) {
		return 0
	}
	return now.Sub(s.st.lastAdmitted)
}

func (s *service) shutdown() {
	if s.ln != nil {
		s.ln.Close()
	}
	if s.cancel != nil {
		s.cancel()
	}
	s.monMu.Lock()
	for _, sn := range s.monitors {
		sn.close()
	}
	s.monitors = nil
	s.monMu.Unlock()
}

func (s *service) wait() {
	if s.loopDone != nil {
		<-s.loopDone
	}
}

func (s *service) connName(peer string) string {
	return fmt.Sprintf("%s<->%s", s.m.name, peer)
}

// acceptLoop serves a listener: each connection negotiates its version on
// its own goroutine, then joins the dispatcher.
func (s *service) acceptLoop(l net.Listener) {
	for n := 0; ; n++ {
		nc, err := l.Accept()
		if err != nil {
			return
		}
		peer := fmt.Sprintf("%s#%d", targetScheme(s.target), n)
		if ra := nc.RemoteAddr(); ra != nil && ra.Network() == "tcp" {
			peer = "tcp:" + ra.String()
		}
		go func() {
			v, err := negotiate(nc, s.versions)
			if err != nil {
				s.m.log.Warn(fmt.Sprintf("%s: %v", s.connName(peer), err))
				nc.Close()
				return
			}
			cfg := s.config()
			c := newOfconn(s.m, s, nc, v, cfg.Type, cfg.ProbeInterval, s.connName(peer))
			if !s.m.post(inMsg{conn: c, opened: true}) {
				nc.Close()
				return
			}
			c.start()
		}()
	}
}

func targetScheme(target string) string {
	for i := range target {
		if target[i] == ':' {
			return target[1:i] // "punix" -> "unix", "ptcp" -> "tcp"
		}
	}
	return target
}

func (s *service) setState(f func(st *rconnStatus)) {
	s.stMu.Lock()
	f(&s.st)
	s.stMu.Unlock()
}

// connectLoop is rconn for an active target: connect, negotiate, serve,
// and after a failure or disconnection wait before the next attempt: 1 s,
// doubling up to max_backoff, back to 1 s after a connection that lasted
// longer than the backoff it started with.
func (s *service) connectLoop(ctx context.Context) {
	defer close(s.loopDone)
	name := s.connName(s.target)
	var backoff time.Duration
	var backoffDeadline time.Time // zero: the first disconnection resets
	for ctx.Err() == nil {
		cfg := s.config()
		// As rconn, attempts are logged until the backoff reaches its
		// maximum, then retried quietly.
		logging := backoff < cfg.MaxBackoff
		s.setState(func(st *rconnStatus) { st.state = "CONNECTING" })
		if logging {
			s.m.log.Info(fmt.Sprintf("%s: connecting...", name))
		}
		nc, err := dialTarget(ctx, s.target, s.m.rundir, max(time.Second, backoff))
		var c *ofconn
		if err != nil {
			if logging {
				s.m.log.Info(fmt.Sprintf("%s: connection failed (%s)", name, errnoString(err)))
			}
			backoffDeadline = time.Unix(1<<62, 0) // a failed attempt never resets the backoff
		} else {
			backoffDeadline = time.Now().Add(backoff)
			var v uint8
			v, err = negotiate(nc, s.versions)
			if err != nil {
				var ne *negotiationError
				if errors.As(err, &ne) {
					s.m.log.Warn(fmt.Sprintf("%s: %v", name, err))
				} else if logging {
					s.m.log.Info(fmt.Sprintf("%s: connection failed (%s)", name, errnoString(err)))
				}
				nc.Close()
			} else {
				c = newOfconn(s.m, s, nc, v, cfg.Type, cfg.ProbeInterval, name)
				if !s.m.post(inMsg{conn: c, opened: true}) {
					nc.Close()
					return
				}
				now := s.m.now()
				s.setState(func(st *rconnStatus) {
					st.state, st.connected, st.conn, st.lastConnected = "ACTIVE", true, c, now
				})
				c.start()
				select {
				case <-c.done:
				case <-ctx.Done():
					c.close(nil)
					<-c.done
				}
				err = c.closeErr()
				now = s.m.now()
				s.setState(func(st *rconnStatus) {
					st.connected, st.conn, st.lastDisconnected = false, nil, now
				})
			}
		}
		if ctx.Err() != nil {
			return
		}
		now := time.Now()
		switch {
		case !now.Before(backoffDeadline):
			backoff = time.Second
		case backoff < cfg.MaxBackoff/2:
			backoff = max(time.Second, 2*backoff)
			s.m.log.Info(fmt.Sprintf("%s: waiting %d seconds before reconnect", name, int(backoff/time.Second)))
		default:
			if backoff < cfg.MaxBackoff {
				s.m.log.Info(fmt.Sprintf("%s: continuing to retry connections in the background but suppressing further logging", name))
			}
			backoff = cfg.MaxBackoff
		}
		backoffDeadline = now.Add(backoff)
		if err == nil {
			err = errEOF
		}
		s.setState(func(st *rconnStatus) { st.state, st.lastError = "BACKOFF", err })
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return
		}
	}
}

// snooper is a connection on the snoop socket: it gets a copy of every
// message to and from one controller.
type snooper struct {
	nc   net.Conn
	q    chan []byte
	once sync.Once
	gone chan struct{}
}

func (s *service) addMonitor(nc net.Conn) {
	s.monMu.Lock()
	defer s.monMu.Unlock()
	if len(s.monitors) >= maxMonitors {
		nc.Close()
		return
	}
	s.m.log.Info(fmt.Sprintf("new monitor connection from %s", nc.RemoteAddr()))
	sn := &snooper{nc: nc, q: make(chan []byte, 1024), gone: make(chan struct{})}
	s.monitors = append(s.monitors, sn)
	go sn.writeLoop()
	go func() {
		// Whatever the snooper sends is ignored; its end closes it.
		buf := make([]byte, 4096)
		for {
			if _, err := nc.Read(buf); err != nil {
				s.m.log.Debug(fmt.Sprintf("snoop connection closed: %v", err))
				sn.close()
				s.removeMonitor(sn)
				return
			}
		}
	}()
}

func (s *service) removeMonitor(sn *snooper) {
	s.monMu.Lock()
	defer s.monMu.Unlock()
	for i, x := range s.monitors {
		if x == sn {
			s.monitors = append(s.monitors[:i], s.monitors[i+1:]...)
			return
		}
	}
}

// copyToMonitors sends a copy of b to the snoopers (dropped for a
// snooper too slow to keep up).
func (s *service) copyToMonitors(b []byte) {
	if !s.active {
		return
	}
	s.monMu.Lock()
	defer s.monMu.Unlock()
	for _, sn := range s.monitors {
		select {
		case sn.q <- b:
		default:
		}
	}
}

func (sn *snooper) close() {
	sn.once.Do(func() { close(sn.gone); sn.nc.Close() })
}

func (sn *snooper) writeLoop() {
	for {
		select {
		case b := <-sn.q:
			if _, err := sn.nc.Write(b); err != nil {
				sn.close()
				return
			}
		case <-sn.gone:
			return
		}
	}
}

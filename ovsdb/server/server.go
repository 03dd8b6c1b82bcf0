package server

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"gvs/ovsdb/db"
)

// Defaults, matching Open vSwitch where it has one.
const (
	// DefaultProbeInterval is Open vSwitch's RECONNECT_DEFAULT_PROBE_INTERVAL,
	// used for TCP and SSL sessions; unix socket sessions are not probed.
	DefaultProbeInterval = 5 * time.Second
	// DefaultMaxBacklog is how many bytes may wait for a client that does
	// not read before the server drops it.
	DefaultMaxBacklog = 64 << 20
	// DefaultPauseBacklog is the backlog above which a session's requests
	// are no longer read until its client catches up.
	DefaultPauseBacklog = 1 << 20
	// DefaultHistory is how many commits per database monitor_cond_since
	// can look back over. Open vSwitch keeps a transaction history only for
	// clustered databases; for standalone ones (all gvs serves) it keeps
	// none and sends the all-zero transaction id, so clients such as the
	// Python IDL replay the full state after a reconnect. gvs does the same.
	DefaultHistory = 0
)

// Server serves OVSDB databases over JSON-RPC.
type Server struct {
	logger     *slog.Logger
	id         string // get_server_id: fixed for the life of the Server
	locks      *lockTable
	historyLen int
	maxBacklog int
	// pauseBacklog is the backlog at which a session stops taking requests.
	pauseBacklog int
	// probeInterval applies to sessions on TCP and SSL connections.
	probeInterval time.Duration

	mu        sync.Mutex
	dbs       map[string]*served
	serverDB  *served
	remotes   map[string]*listener
	sessions  map[*session]struct{}
	tlsConfig *tls.Config
	converter ConvertFunc // nil: convert in memory
	closed    bool
	wg        sync.WaitGroup // listeners' accept loops and sessions

	// convertMu serialises conversions ("convert" requests) and removals
	// of databases.
	convertMu sync.Mutex

	counters serverCounters // Stats; atomic, no lock

	// monitorCondOff: ovsdb-server/disable-monitor-cond was run.
	monitorCondOff atomic.Bool
	// large bounds how many sessions read large messages at once;
	// largeStall is how long one may stall while holding a slot.
	large      *largeSlots
	largeStall time.Duration
}

// New returns a server with only the _Server database and no remotes.
func New(logger *slog.Logger) *Server {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		logger:        logger,
		id:            string(db.NewUUID()),
		locks:         newLockTable(),
		historyLen:    DefaultHistory,
		maxBacklog:    DefaultMaxBacklog,
		pauseBacklog:  DefaultPauseBacklog,
		probeInterval: DefaultProbeInterval,
		dbs:           map[string]*served{},
		remotes:       map[string]*listener{},
		sessions:      map[*session]struct{}{},
		counters:      newServerCounters(),
		large:         newLargeSlots(DefaultLargeMessageSlots),
		largeStall:    DefaultLargeMessageStall,
	}
	if sdb, err := newServerDB(logger, s.historyLen); err != nil {
		logger.Error("cannot create _Server database", "err", err)
	} else {
		s.serverDB = sdb
		s.dbs[serverDBName] = sdb
		s.updateServerDB()
	}
	return s
}

// AddDatabase serves d under its schema's name. Like ovsdb-server, it
// disconnects clients that have not declared themselves change-aware.
func (s *Server) AddDatabase(d *db.Database) error {
	name := d.Schema().Name
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return errors.New("server is closed")
	case s.dbs[name] != nil:
		s.mu.Unlock()
		return fmt.Errorf("%s: duplicate database name", name)
	}
	s.mu.Unlock()
	sdb := newServed(d, s.historyLen)
	s.mu.Lock()
	if s.dbs[name] != nil || s.closed {
		s.mu.Unlock()
		sdb.unsubscribe()
		return fmt.Errorf("%s: duplicate database name", name)
	}
	s.dbs[name] = sdb
	s.mu.Unlock()
	s.updateServerDB()
	s.reconnect(false, fmt.Sprintf("adding %s database", name))
	return nil
}

// RemoveDatabase stops serving a database. Change-aware sessions get a
// "monitor_canceled" notification for each of their monitors of it and a
// "canceled" error for each blocked transaction on it; other sessions are
// disconnected, as ovsdb-server does.
func (s *Server) RemoveDatabase(name string) error {
	s.convertMu.Lock() // not in the middle of converting it
	defer s.convertMu.Unlock()
	s.mu.Lock()
	sdb := s.dbs[name]
	if sdb == nil || sdb == s.serverDB {
		s.mu.Unlock()
		return fmt.Errorf("%s: no database by that name", name)
	}
	delete(s.dbs, name)
	s.mu.Unlock()
	// The gate lets transactions in progress finish first.
	sdb.gate.Lock()
	sdb.retire()
	sdb.gate.Unlock()
	s.updateServerDB()
	s.reconnect(false, fmt.Sprintf("removing %s database", name))
	return nil
}

// Databases returns the names of the served databases, sorted, including
// "_Server".
func (s *Server) Databases() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.dbs))
	for name := range s.dbs {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// ServeConn serves one already-accepted connection until the session ends;
// it closes c. Connections over TCP or TLS get the inactivity probe.
func (s *Server) ServeConn(c net.Conn) {
	s.serve(c, s.probeFor(c), "")
}

func (s *Server) probeFor(c net.Conn) time.Duration {
	switch c.(type) {
	case *net.TCPConn, *tls.Conn:
		return s.probeInterval
	}
	return 0
}

func (s *Server) serve(c net.Conn, probe time.Duration, remote string) {
	sess := newSession(s, c, probe)
	sess.remote = remote
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		c.Close()
		return
	}
	s.sessions[sess] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	s.counters.accepted.Add(1)
	defer s.wg.Done()
	sess.log.Debug("connection accepted")
	sess.run()
}

func (s *Server) removeSession(sess *session) {
	s.mu.Lock()
	delete(s.sessions, sess)
	s.mu.Unlock()
}

// reconnect disconnects every session, or with force false only those that
// are not change-aware, like ovsdb_jsonrpc_server_reconnect().
func (s *Server) reconnect(force bool, comment string) {
	s.disconnect(force, nil, comment)
}

// reconnectExcept is reconnect(false, comment) for every session but
// spare, which handles its own case.
func (s *Server) reconnectExcept(spare *session, comment string) {
	s.disconnect(false, spare, comment)
}

func (s *Server) disconnect(force bool, spare *session, comment string) {
	s.mu.Lock()
	var victims []*session
	for sess := range s.sessions {
		if sess != spare && (force || !sess.dbChangeAware.Load()) {
			victims = append(victims, sess)
		}
	}
	s.mu.Unlock()
	for _, sess := range victims {
		sess.close(comment)
	}
}

// Close stops every listener and ends every session, and waits for their
// goroutines. Databases are left as they are.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	var errs []error
	for name, l := range s.remotes {
		errs = append(errs, l.close())
		delete(s.remotes, name)
	}
	sessions := make([]*session, 0, len(s.sessions))
	for sess := range s.sessions {
		sessions = append(sessions, sess)
	}
	dbs := make([]*served, 0, len(s.dbs))
	for _, sdb := range s.dbs {
		dbs = append(dbs, sdb)
	}
	s.mu.Unlock()
	for _, sess := range sessions {
		sess.close("")
	}
	s.wg.Wait()
	for _, sdb := range dbs {
		sdb.unsubscribe()
	}
	return errors.Join(errs...)
}

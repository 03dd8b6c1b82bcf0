package connmgr

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Config creates a Manager.
type Config struct {
	// Name is the bridge's name: log prefix and the mgmt/snoop socket
	// names.
	Name string
	// RunDir holds <Name>.mgmt and <Name>.snoop; "" opens neither (tests
	// that use only Controller targets). Relative unix: and punix:
	// targets are relative to it too.
	RunDir string
	Bridge Bridge
	Logger *slog.Logger // nil: discard
	// Now is the clock for controller status; default time.Now.
	Now func() time.Time
	// OnChange, when set, is called (on the dispatcher; it must not
	// block) when a controller connects, disconnects or changes role:
	// ControllerInfo has news for the Controller table.
	OnChange func()
}

// ControllerConfig is one Controller row, as Open vSwitch's struct
// ofproto_controller.
type ControllerConfig struct {
	Type ConnType
	// MaxBackoff caps the wait between connection attempts of an active
	// target (Controller.max_backoff); 0 takes 8 s.
	MaxBackoff time.Duration
	// ProbeInterval is the idle time before an echo request, and again
	// before disconnecting (Controller.inactivity_probe); 0 disables.
	ProbeInterval time.Duration
	// DisableAsync is enable_async_messages=false: the connection gets no
	// asynchronous message until it asks with SET_ASYNC.
	DisableAsync bool
	// QueueSize bounds the packet-ins queued for a connection
	// (controller_queue_size); 0 takes 100.
	QueueSize int
	// RateLimit (packet-ins a second) and BurstLimit
	// (controller_rate_limit, controller_burst_limit): with a rate,
	// packet-ins beyond it wait in per-port queues (pinsched); 0: no
	// limit. A zero burst is a quarter of the rate.
	RateLimit, BurstLimit int
}

func (c ControllerConfig) asyncEnabled() bool { return !c.DisableAsync }

// DefaultProbeInterval and DefaultMaxBackoff are Open vSwitch's defaults for
// a Controller row without inactivity_probe and max_backoff.
const (
	DefaultProbeInterval = 5 * time.Second
	DefaultMaxBackoff    = 8 * time.Second
	defaultQueueSize     = 100
	mgmtProbeInterval    = 60 * time.Second
	maxMonitors          = 8 // snoop connections per controller, as rconn
)

// ControllerTypeFor is Open vSwitch's get_controller_ofconn_type: the
// Controller.type column when set ("primary", "service"), else primary
// for an active target and service for a passive one.
func ControllerTypeFor(target, column string) ConnType {
	switch column {
	case "primary":
		return Primary
	case "service":
		return Service
	}
	if isPassive(target) {
		return Service
	}
	return Primary
}

// ControllerInfo is what the bridge writes back to an active Controller
// row: is_connected, role and status.
type ControllerInfo struct {
	IsConnected bool
	Role        Role // RoleNoChange when not connected
	Status      map[string]string
}

// Manager is one bridge's OpenFlow connection manager: Open vSwitch's
// connmgr. See the package documentation for its goroutines.
type Manager struct {
	name   string
	rundir string
	br     Bridge
	log    *slog.Logger
	now    func() time.Time
	notify func()

	// dmu is the dispatcher lock: whoever holds it is the dispatcher (a
	// connection's reader handling its own message, a configuration call,
	// or the run goroutine with events and timers).
	dmu       sync.Mutex
	closeOnce sync.Once
	stop      chan struct{}
	done      chan struct{}

	evMu   sync.Mutex // events, dispatching; a leaf
	events []event
	// dispatching: a dispatcher is at work and drains the events before
	// it releases the dispatcher lock, so queue need not kick run.
	dispatching bool
	evKick      chan struct{}

	nextConnID atomic.Uint64
	// connected counts admitted primary connections (ControllerConnected).
	connected atomic.Int32
	// wantMiss counts what makes WantsPacketInOnMiss true.
	wantMiss atomic.Int32
	// monitoring: some connection has a flow monitor (WantsFlowChanges).
	monitoring atomic.Bool

	// Dispatcher state.
	versions    Versions
	controllers map[string]ControllerConfig
	services    map[string]*service
	conns       map[uint64]*ofconn
	snoop       net.Listener
	failSecure  bool
	failOpen    failOpen
	closing     bool // Close was called: nothing more is dispatched
	pinDropped  uint64
	roleGenID   uint64
	roleGenSet  bool
	// pinTimer wakes the dispatcher to send rate-limited packet-ins;
	// pinC is its channel while armed.
	pinTimer *time.Timer
	pinC     <-chan time.Time
	pinAt    time.Time
}

var _ Events = (*Manager)(nil)

type inMsg struct {
	conn   *ofconn
	msg    []byte
	opened bool
	closed bool
	snoop  net.Conn // an accepted, negotiated snoop connection
}

// New starts a bridge's connection manager with the mgmt and snoop
// sockets (when RunDir is set; one that cannot be opened is logged) and
// no controller. It does not fail today; the error is for the future. The bridge's tables are
// left alone: the first SetFailMode(false) flushes them and installs
// "priority=0 actions=NORMAL", as Open vSwitch does for a new bridge
// (its connmgr starts in secure mode).
func New(cfg Config) (*Manager, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.OnChange == nil {
		cfg.OnChange = func() {}
	}
	m := &Manager{
		name: cfg.Name, rundir: cfg.RunDir, br: cfg.Bridge, log: cfg.Logger, now: cfg.Now, notify: cfg.OnChange,
		stop: make(chan struct{}), done: make(chan struct{}),
		evKick:      make(chan struct{}, 1),
		versions:    DefaultVersions,
		controllers: map[string]ControllerConfig{},
		services:    map[string]*service{},
		conns:       map[uint64]*ofconn{},
		failSecure:  true,
	}
	if m.rundir != "" {
		// A socket that cannot be opened is logged, not fatal, as in Open
		// vSwitch: the bridge must still get its fail-mode flows.
		if l, err := listenTarget("punix:"+m.snoopPath(), "", m.log); err != nil {
			m.log.Error(fmt.Sprintf("%s: %s: listen failed: %s", m.name, m.snoopPath(), errnoString(err)))
		} else {
			m.snoop = l
			go m.acceptSnoops(l)
		}
	}
	// Accepted connections are dispatched at once: the listeners come up
	// under the dispatcher lock like every later change of them.
	m.dmu.Lock()
	m.applyServices()
	m.dmu.Unlock()
	go m.run()
	return m, nil
}

// MgmtPath is <rundir>/<bridge>.mgmt, the socket ovs-ofctl talks to.
func (m *Manager) MgmtPath() string { return filepath.Join(m.rundir, m.name+".mgmt") }

func (m *Manager) snoopPath() string { return filepath.Join(m.rundir, m.name+".snoop") }

// do runs f as the dispatcher (holding the dispatcher lock), then
// delivers the events f caused; after Close it does nothing.
func (m *Manager) do(f func()) {
	m.dmu.Lock()
	defer m.dmu.Unlock()
	if m.closing {
		return
	}
	m.beginDispatch()
	f()
	m.afterDispatch()
}

// post handles a connection event as the dispatcher, on the caller's
// goroutine (so a message costs no hand-off between goroutines), and
// delivers the events it caused before returning; false once the Manager
// is closing.
func (m *Manager) post(x inMsg) bool {
	m.dmu.Lock()
	defer m.dmu.Unlock()
	if m.closing {
		return false
	}
	m.beginDispatch()
	// Events queued before this message (by the bridge's own goroutines)
	// go out before anything it answers.
	m.drainEvents()
	m.beginDispatch()
	m.handleIn(x)
	m.afterDispatch()
	return true
}

// afterDispatch runs after everything the dispatcher does: the queued
// asynchronous events go out (so a barrier's reply follows the messages
// its predecessors caused) and the miss-packet-in and flow-change wishes
// are recounted.
func (m *Manager) afterDispatch() {
	m.drainEvents()
	m.updateWantMiss()
}

// SetVersions sets the OpenFlow versions every connection may negotiate
// (Bridge.protocols), the mgmt socket's included. Listeners and
// controllers whose versions change are re-created, as Open vSwitch does.
func (m *Manager) SetVersions(vs Versions) {
	if vs == 0 {
		vs = DefaultVersions
	}
	m.do(func() {
		if vs != m.versions {
			m.versions = vs
			m.applyServices()
		}
	})
}

// SetControllers replaces the set of controllers, by target.
func (m *Manager) SetControllers(ctrls map[string]ControllerConfig) {
	ctrls = maps.Clone(ctrls)
	m.do(func() {
		had := m.hasControllers()
		m.controllers = ctrls
		m.applyServices()
		if had != m.hasControllers() {
			m.flushFlows()
		}
	})
}

// SetFailMode sets fail_mode: secure (true) or standalone (false). Without
// controllers a change flushes the flow tables, and standalone installs
// the NORMAL flow.
func (m *Manager) SetFailMode(secure bool) {
	m.do(func() {
		if m.failSecure != secure {
			m.failSecure = secure
			if !m.hasControllers() {
				m.flushFlows()
			}
		}
	})
}

// ControllerInfo reports the active controllers' state by target, for the
// Controller table's is_connected, role and status columns (Open
// vSwitch's connmgr_get_controller_info: passive targets have none).
func (m *Manager) ControllerInfo() map[string]ControllerInfo {
	out := map[string]ControllerInfo{}
	m.do(func() {
		now := m.now()
		for target, s := range m.services {
			if !s.active {
				continue
			}
			st := s.status()
			info := ControllerInfo{IsConnected: st.connected, Role: RoleNoChange, Status: map[string]string{}}
			for _, c := range m.conns {
				if c.svc == s {
					info.Role = c.state.role
				}
			}
			if st.lastError != nil {
				info.Status["last_error"] = errnoString(st.lastError)
			}
			info.Status["state"] = st.state
			if !st.lastConnected.IsZero() {
				info.Status["sec_since_connect"] = fmt.Sprint(int64(now.Sub(st.lastConnected) / time.Second))
			}
			if !st.lastDisconnected.IsZero() {
				info.Status["sec_since_disconnect"] = fmt.Sprint(int64(now.Sub(st.lastDisconnected) / time.Second))
			}
			for _, c := range m.conns {
				if c.svc != s {
					continue
				}
				for i, ps := range c.sched {
					if ps == nil {
						continue
					}
					kind := "action"
					if i == 1 {
						kind = "miss"
					}
					info.Status["packet-in-"+kind+"-backlog"] = fmt.Sprint(ps.queued)
					info.Status["packet-in-"+kind+"-bypassed"] = fmt.Sprint(ps.normal)
					info.Status["packet-in-"+kind+"-queued"] = fmt.Sprint(ps.limited)
					info.Status["packet-in-"+kind+"-dropped"] = fmt.Sprint(ps.dropped)
				}
			}
			out[target] = info
		}
	})
	return out
}

// Reconnect drops every controller connection (connmgr_reconnect).
func (m *Manager) Reconnect() {
	m.do(func() {
		for _, c := range m.conns {
			if c.svc.active {
				c.close(nil)
			}
		}
	})
}

// Close closes every connection and listener and stops the goroutines.
// Later calls only wait for the first.
func (m *Manager) Close() {
	m.closeOnce.Do(func() {
		m.dmu.Lock()
		m.closing = true
		m.dmu.Unlock()
		close(m.stop)
	})
	<-m.done
}

// hasControllers is connmgr_has_controllers: a primary controller is
// configured.
func (m *Manager) hasControllers() bool {
	for _, c := range m.controllers {
		if c.Type == Primary {
			return true
		}
	}
	return false
}

// ControllerConnected reports whether a primary controller is connected
// and admitted. Any goroutine.
func (m *Manager) ControllerConnected() bool { return m.connected.Load() > 0 }

// WantsPacketInOnMiss implements Events. Any goroutine.
func (m *Manager) WantsPacketInOnMiss() bool { return m.wantMiss.Load() > 0 }

// WantsFlowChanges reports whether a connection has a flow monitor: when
// none has, FlowChanged and FlowMonitor reports are dropped anyway and the
// bridge may skip making them. A monitor request handled before a change
// is seen by it. Any goroutine.
func (m *Manager) WantsFlowChanges() bool { return m.monitoring.Load() }

// updateWantMiss recounts WantsPacketInOnMiss's reasons (Open vSwitch's
// update_want_packet_in_on_miss, summed): each connection with controller
// id 0 below OpenFlow 1.3, and each active target without a connection
// (its ofconn has no protocol yet, which Open vSwitch counts).
func (m *Manager) updateWantMiss() {
	n := int32(0)
	for _, c := range m.conns {
		if c.state.controller == 0 && c.version < OF13 {
			n++
		}
	}
	for _, s := range m.services {
		if s.active && !m.hasConn(s) {
			n++
		}
	}
	m.wantMiss.Store(n)
	monitoring := false
	for _, c := range m.conns {
		if len(c.state.monitors) > 0 {
			monitoring = true
			break
		}
	}
	m.monitoring.Store(monitoring)
}

// hasConn reports whether service s has a connection (an active target
// has at most one).
func (m *Manager) hasConn(s *service) bool {
	for _, c := range m.conns {
		if c.svc == s {
			return true
		}
	}
	return false
}

// flushFlows is ofproto_flush_flows + connmgr_flushed.
func (m *Manager) flushFlows() {
	m.br.FlushFlows()
	if m.failOpen.active {
		m.br.AddNormalFlow(failOpenPriority)
	}
	if !m.hasControllers() && !m.failSecure {
		m.br.AddNormalFlow(0)
	}
}

// wantedServices is the mgmt socket plus the controllers.
func (m *Manager) wantedServices() map[string]ControllerConfig {
	want := maps.Clone(m.controllers)
	if want == nil {
		want = map[string]ControllerConfig{}
	}
	if m.rundir != "" {
		want["punix:"+m.MgmtPath()] = ControllerConfig{Type: Service, ProbeInterval: mgmtProbeInterval}
	}
	return want
}

// applyServices creates, re-creates and removes listeners and active
// connections to match the configuration (connmgr_set_controllers).
func (m *Manager) applyServices() {
	want := m.wantedServices()
	for target, s := range m.services {
		c, ok := want[target]
		switch {
		case !ok:
			m.log.Info(fmt.Sprintf("%s: removed %s controller %q", m.name, s.cfg.Type, target))
			m.destroyService(s)
		case c.Type != s.cfg.Type || m.versions != s.versions:
			m.log.Info(fmt.Sprintf("%s: Changes to controller %q expects re-initialization: Re-initializing now.", m.name, target))
			m.destroyService(s)
		default:
			s.reconfigure(c)
			for _, conn := range m.conns {
				if conn.svc == s {
					m.setRateLimit(conn)
				}
			}
		}
	}
	for _, target := range slices.Sorted(maps.Keys(want)) {
		if m.services[target] == nil {
			m.createService(target, want[target])
		}
	}
}

func (m *Manager) destroyService(s *service) {
	delete(m.services, s.target)
	s.shutdown()
	for _, c := range m.conns {
		if c.svc == s {
			c.close(nil)
		}
	}
}

func (m *Manager) createService(target string, c ControllerConfig) {
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = DefaultMaxBackoff
	}
	if c.QueueSize <= 0 {
		c.QueueSize = defaultQueueSize
	}
	s := &service{m: m, target: target, cfg: c, versions: m.versions, created: m.now()}
	switch {
	case isActive(target):
		s.active = true
		s.st.state = "VOID"
		s.st.lastAdmitted = s.created
		ctx, cancel := context.WithCancel(context.Background())
		s.cancel = cancel
		s.loopDone = make(chan struct{})
		go s.connectLoop(ctx)
	case isPassive(target):
		l, err := listenTarget(target, m.rundir, m.log)
		if err != nil {
			m.log.Error(fmt.Sprintf("%s: %s: listen failed: %s", m.name, target, errnoString(err)))
			return
		}
		s.ln = l
		go s.acceptLoop(l)
	default:
		m.log.Warn(fmt.Sprintf("%s: unsupported controller %q", m.name, target))
		return
	}
	m.services[target] = s
	m.log.Info(fmt.Sprintf("%s: added %s controller %q", m.name, c.Type, target))
}

// run is the dispatcher of what no connection brings: asynchronous
// events the bridge queued from its own goroutines, the periodic work
// (fail-open, bundle expiry) and rate-limited packet-ins, each under the
// dispatcher lock.
func (m *Manager) run() {
	defer close(m.done)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-m.evKick:
			m.dispatchLocked(func() {})
		case <-tick.C:
			m.dispatchLocked(m.runPeriodic)
		case <-m.pinC:
			m.dispatchLocked(func() {
				m.pinC = nil
				m.runPinscheds()
			})
		case <-m.stop:
			m.shutdown()
			return
		}
	}
}

// dispatchLocked runs f as the dispatcher, even while closing (run's own
// work until it sees stop).
func (m *Manager) dispatchLocked(f func()) {
	m.dmu.Lock()
	m.beginDispatch()
	f()
	m.afterDispatch()
	m.dmu.Unlock()
}

// shutdown closes everything under the dispatcher lock, then waits for
// the connections' and targets' goroutines without it (a reader waiting
// for the lock sees closing and ends).
func (m *Manager) shutdown() {
	m.dmu.Lock()
	if m.pinTimer != nil {
		m.pinTimer.Stop()
	}
	if m.snoop != nil {
		m.snoop.Close()
	}
	for _, s := range m.services {
		s.shutdown()
	}
	for _, c := range m.conns {
		c.close(nil)
	}
	conns := slices.Collect(maps.Values(m.conns))
	services := slices.Collect(maps.Values(m.services))
	m.dmu.Unlock()
	for _, c := range conns {
		<-c.done
	}
	for _, s := range services {
		s.wait()
	}
}

func (m *Manager) handleIn(x inMsg) {
	switch {
	case x.snoop != nil:
		m.addSnooper(x.snoop)
	case x.opened:
		if m.services[x.conn.svc.target] != x.conn.svc {
			// Its service was removed or re-created meanwhile.
			x.conn.close(nil)
			return
		}
		m.conns[x.conn.id] = x.conn
		m.setRateLimit(x.conn)
		// As rconn: INFO for controllers, DBG for accepted connections.
		if x.conn.svc.active {
			m.log.Info(fmt.Sprintf("%s: connected", x.conn.name))
		} else {
			m.log.Debug(fmt.Sprintf("%s: connected", x.conn.name))
		}
		if x.conn.svc.active {
			m.notify()
		}
	case x.closed:
		if _, ok := m.conns[x.conn.id]; !ok {
			return
		}
		delete(m.conns, x.conn.id)
		if x.conn.admitted {
			x.conn.admitted = false
			m.connected.Add(-1)
		}
		m.connClosed(x.conn)
		if x.conn.svc.active {
			m.notify()
		}
	default:
		c := m.conns[x.conn.id]
		if c == nil {
			return
		}
		if !c.admitted && c.typ == Primary && c.svc.active && admits(parseHeader(x.msg).Type) {
			c.admitted = true
			m.connected.Add(1)
			c.svc.setAdmitted(m.now())
			m.failOpenMaybeRecover()
		}
		m.handleMessage(c, x.msg)
	}
}

// admits is rconn's is_admitted_msg: a controller that sends anything but
// the connection-setup messages has accepted the switch.
func admits(typ uint8) bool {
	switch typ {
	case typeHello, typeError, typeEchoRequest, typeEchoReply, 5 /* FEATURES_REQUEST */, 6 /* FEATURES_REPLY */, 7 /* GET_CONFIG_REQUEST */, 8 /* GET_CONFIG_REPLY */, 9 /* SET_CONFIG */ :
		return false
	}
	return true
}

// connClosed forgets a connection's bundles and monitors. It logs as
// rconn's report_error: a peer's close at INFO for a controller (DBG for
// an accepted connection), any other error at WARN.
func (m *Manager) connClosed(c *ofconn) {
	switch err := c.closeErr(); {
	case err == nil:
	case errors.Is(err, errEOF):
		if c.svc.active {
			m.log.Info(fmt.Sprintf("%s: connection closed by peer", c.name))
		} else {
			m.log.Debug(fmt.Sprintf("%s: connection closed by peer", c.name))
		}
	default:
		m.log.Warn(fmt.Sprintf("%s: connection dropped (%s)", c.name, errnoString(err)))
	}
	clear(c.state.bundles)
	clear(c.state.monitors)
}

func (m *Manager) runPeriodic() {
	m.failOpenRun()
	for _, c := range m.conns {
		m.expireBundles(c)
	}
}

// acceptSnoops accepts connections on the snoop socket.
func (m *Manager) acceptSnoops(l net.Listener) {
	for {
		nc, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			if _, err := negotiate(nc, DefaultVersions); err != nil {
				nc.Close()
				return
			}
			if !m.post(inMsg{snoop: nc}) {
				nc.Close()
			}
		}()
	}
}

// addSnooper attaches a snoop connection to the controller that matters
// most (master, then equal, then slave), as Open vSwitch's add_snooper;
// without any active controller it is closed.
func (m *Manager) addSnooper(nc net.Conn) {
	var best *service
	bestPref := -1
	for _, target := range slices.Sorted(maps.Keys(m.services)) {
		s := m.services[target]
		if !s.active {
			continue
		}
		pref := 0
		for _, c := range m.conns {
			if c.svc == s {
				switch c.state.role {
				case RoleMaster:
					pref = 3
				case RoleEqual:
					pref = 2
				case RoleSlave:
					pref = 1
				}
			}
		}
		if pref > bestPref {
			best, bestPref = s, pref
		}
	}
	if best == nil {
		m.log.Info("no controller connection to snoop")
		nc.Close()
		return
	}
	best.addMonitor(nc)
}

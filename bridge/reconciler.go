package bridge

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/ovn-kubernetes/libovsdb/cache"
	"github.com/ovn-kubernetes/libovsdb/client"
	"github.com/ovn-kubernetes/libovsdb/model"

	"gvs/metrics/source"
	"gvs/schema/vswitchd"
)

// Config configures a Reconciler.
type Config struct {
	// Remote is the database: "unix:PATH" or "tcp:IP:PORT".
	Remote   string
	Datapath Datapath
	Logger   *slog.Logger // nil: discard
	// OVSVersion is written to Open_vSwitch.ovs_version.
	OVSVersion string
	// SystemType and SystemVersion go to the Open_vSwitch columns of the
	// same names; empty: read from /etc/os-release (ID, VERSION_ID).
	SystemType, SystemVersion string
	// MinStatsInterval bounds stats-update-interval from below; default
	// 5 s as in Open vSwitch (tests lower it).
	MinStatsInterval time.Duration
	// Backoff bounds between reconnection attempts; defaults 100 ms
	// and 8 s.
	MinBackoff, MaxBackoff time.Duration
	// Metrics, when set, counts the passes and their durations.
	Metrics *source.Reconciler
	// DummyTypes: the datapath offers the dummy datapath and devices
	// (gvs-vswitchd --enable-dummy), so Open_vSwitch.datapath_types and
	// iface_types list them as ovs-vswitchd --enable-dummy does.
	DummyTypes bool
	// NoSystemDatapath: gvs-vswitchd --disable-system; datapath_types
	// leaves out "system", as ovs-vswitchd --disable-system does.
	NoSystemDatapath bool
	// RunDir is where each bridge's OpenFlow sockets (<bridge>.mgmt,
	// <bridge>.snoop) go, and what relative unix: controller targets are
	// relative to; "" opens no mgmt or snoop socket. Used only with a
	// Datapath that is an OpenFlowDatapath.
	RunDir string
}

// Reconciler keeps a Datapath in step with the Open_vSwitch database and
// writes the results back. See the package documentation.
type Reconciler struct {
	cfg   Config
	log   *slog.Logger
	dp    Datapath
	model model.ClientDBModel

	kick chan struct{}

	changedMu sync.Mutex // guards changed and watched; a leaf
	changed   changedPorts
	// watched are the device names a link event matters for: the ports
	// and the failed interfaces, as of the last pass.
	watched map[string]bool

	mu     sync.Mutex // guards client, connCtx and ofports
	client client.Client
	// connCtx ends when client's connection is given up, so a pass
	// blocked on a dead connection returns instead of wedging the worker.
	connCtx context.Context
	ofports map[string]map[string]int // bridge -> interface -> ofport, as written

	state *state // owned by the worker goroutine
}

// New checks cfg; Run starts the work.
func New(cfg Config) (*Reconciler, error) {
	if cfg.Datapath == nil {
		return nil, errors.New("bridge: no datapath")
	}
	if !strings.HasPrefix(cfg.Remote, "unix:") && !strings.HasPrefix(cfg.Remote, "tcp:") {
		return nil, errors.New("bridge: database remote must be unix:PATH or tcp:IP:PORT, not " + cfg.Remote)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MinStatsInterval <= 0 {
		cfg.MinStatsInterval = minStatsInterval
	}
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = 100 * time.Millisecond
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = 8 * time.Second
	}
	if cfg.SystemType == "" && cfg.SystemVersion == "" {
		cfg.SystemType, cfg.SystemVersion = osRelease()
	}
	m, err := vswitchd.FullDatabaseModel()
	if err != nil {
		return nil, err
	}
	return &Reconciler{
		cfg:     cfg,
		log:     cfg.Logger,
		dp:      cfg.Datapath,
		model:   m,
		kick:    make(chan struct{}, 1),
		changed: changedPorts{names: map[string]bool{}},
		state:   newState(),
	}, nil
}

// Kick asks for a reconciliation pass soon; passes coalesce. Any goroutine
// may call it (link events do).
func (r *Reconciler) Kick() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// PortsChanged tells the reconciler that the kernel devices of these
// names changed (link events: appeared, went away, link state, MTU,
// address): the next pass, which it asks for, re-reads the state of their
// ports and tries again to add interfaces of those names that failed.
// Other ports are not looked at, and names that are neither a port nor a
// failed interface cause no pass. Any goroutine may call it.
func (r *Reconciler) PortsChanged(names ...string) {
	r.changedMu.Lock()
	relevant := false
	for _, n := range names {
		// Kept even when not watched: the pass under way may be about
		// to fail to add it (setWatched then asks for another pass).
		r.changed.names[n] = true
		relevant = relevant || r.watched[n]
	}
	r.changedMu.Unlock()
	if relevant {
		r.Kick()
	}
}

// setWatched records the names PortsChanged is to pass on.
// A name reported during the pass that is watched now (an interface that
// just failed for want of its device, which has appeared since) asks for
// another pass.
func (r *Reconciler) setWatched(names map[string]bool) {
	r.changedMu.Lock()
	r.watched = names
	again := false
	for n := range r.changed.names {
		again = again || names[n]
	}
	r.changedMu.Unlock()
	if again {
		r.Kick()
	}
}

// ResyncPorts is PortsChanged for every port and every failed interface,
// for when the link events may have been lost (the netlink socket
// overflowed or was resubscribed). Any goroutine may call it.
func (r *Reconciler) ResyncPorts() {
	r.changedMu.Lock()
	r.changed.all = true
	r.changedMu.Unlock()
	r.Kick()
}

// takeChanged returns what PortsChanged and ResyncPorts reported since
// the last call.
func (r *Reconciler) takeChanged() changedPorts {
	r.changedMu.Lock()
	defer r.changedMu.Unlock()
	c := r.changed
	r.changed = changedPorts{names: map[string]bool{}}
	return c
}

// giveBackChanged returns c to the set for the next pass (this one could
// not read the database).
func (r *Reconciler) giveBackChanged(c changedPorts) {
	r.changedMu.Lock()
	defer r.changedMu.Unlock()
	r.changed.all = r.changed.all || c.all
	for n := range c.names {
		r.changed.names[n] = true
	}
}

// Run follows the database until ctx ends, reconnecting whenever the
// connection drops. It leaves the datapath configured as it last was: the
// caller closes the Datapath to tear the ports down.
func (r *Reconciler) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.worker(ctx)
	}()
	r.connectLoop(ctx)
	wg.Wait()
	r.closeOpenFlow("")
	r.setClient(nil, nil)
}

// OFPorts returns the OpenFlow port numbers of a bridge's working
// interfaces by name, as last written to the database (for ovs-appctl).
// Any goroutine may call it.
func (r *Reconciler) OFPorts(bridge string) map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.ofports[bridge])
}

func (r *Reconciler) currentClient() (client.Client, context.Context) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.client, r.connCtx
}

func (r *Reconciler) setClient(c client.Client, connCtx context.Context) {
	r.mu.Lock()
	old := r.client
	r.client, r.connCtx = c, connCtx
	r.mu.Unlock()
	if old != nil && old != c {
		old.Close()
	}
}

// connectLoop connects, monitors, waits for the connection to drop, and
// starts again with exponential backoff. Each connection gets a fresh
// client and so a fresh cache: nothing stale survives a reconnection.
func (r *Reconciler) connectLoop(ctx context.Context) {
	backoff := r.cfg.MinBackoff
	failures := 0
	for ctx.Err() == nil {
		c, err := r.connect(ctx)
		if err != nil {
			failures++
			if failures == 1 || failures%30 == 0 {
				r.log.Warn(r.cfg.Remote + ": database connection failed (" + err.Error() + "), retrying")
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(backoff*2, r.cfg.MaxBackoff)
			continue
		}
		if failures > 0 || r.state.connectedBefore {
			r.log.Info(r.cfg.Remote + ": connected")
		}
		failures, backoff = 0, r.cfg.MinBackoff
		r.state.connectedBefore = true
		connCtx, cancel := context.WithCancel(ctx)
		r.setClient(c, connCtx)
		r.Kick()
		r.waitDisconnect(ctx, c)
		cancel()
		r.setClient(nil, nil)
		if ctx.Err() == nil {
			r.log.Warn(r.cfg.Remote + ": connection to database lost, reconnecting")
		}
	}
}

func (r *Reconciler) waitDisconnect(ctx context.Context, c client.Client) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.DisconnectNotify():
			return
		case <-tick.C:
			// The notification is sent only to a listener; a drop between
			// connecting and this select is caught here.
			if !c.Connected() {
				return
			}
		}
	}
}

func (r *Reconciler) connect(ctx context.Context) (client.Client, error) {
	c, err := client.NewOVSDBClient(r.model, client.WithEndpoint(r.cfg.Remote))
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := c.Connect(cctx); err != nil {
		c.Close()
		return nil, err
	}
	kick := func(string, model.Model) { r.Kick() }
	c.Cache().AddEventHandler(&cache.EventHandlerFuncs{
		AddFunc:    kick,
		DeleteFunc: kick,
		UpdateFunc: func(_ string, old, new model.Model) {
			if configChanged(old, new) {
				r.Kick()
			}
		},
	})
	mon := c.NewMonitor(
		client.WithTable(&vswitchd.OpenvSwitch{}),
		client.WithTable(&vswitchd.Bridge{}),
		client.WithTable(&vswitchd.Port{}),
		client.WithTable(&vswitchd.Interface{}),
		client.WithTable(&vswitchd.Datapath{}),
		client.WithTable(&vswitchd.Mirror{}),
		client.WithTable(&vswitchd.QoS{}),
		client.WithTable(&vswitchd.Controller{}),
		client.WithTable(&vswitchd.CTZone{}),
		client.WithTable(&vswitchd.CTTimeoutPolicy{}),
	)
	if _, err := c.Monitor(cctx, mon); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// worker runs the passes: on a kick, and on the statistics timer.
func (r *Reconciler) worker(ctx context.Context) {
	timer := time.NewTimer(DefaultStatsInterval)
	defer timer.Stop()
	for {
		statsDue := false
		select {
		case <-ctx.Done():
			return
		case <-r.kick:
			r.settle(ctx)
		case <-timer.C:
			statsDue = true
		}
		c, connCtx := r.currentClient()
		if c == nil {
			if statsDue {
				timer.Reset(r.state.statsInterval)
			}
			continue
		}
		interval := r.state.statsInterval
		start := time.Now()
		changed := r.takeChanged()
		err := r.pass(connCtx, c, statsDue, changed)
		if r.cfg.Metrics != nil {
			r.cfg.Metrics.RecordPass(time.Since(start), err)
		}
		if statsDue || interval != r.state.statsInterval {
			// A new stats-update-interval takes effect at once.
			timer.Reset(r.state.statsInterval)
		}
		if err != nil && ctx.Err() == nil {
			// A failed transaction is retried after a pause, not in a
			// tight loop.
			time.AfterFunc(500*time.Millisecond, r.Kick)
		}
	}
}

// settleQuiet and settleMax bound how long a pass waits after a kick for
// the rest of a burst of kicks: one database update reaches the cache
// whole, but its rows' events arrive one after another, each a kick; a
// pass started at the first would be followed by one more for the rest,
// which at 1,000 ports costs as much as the first.
const (
	settleQuiet = 300 * time.Microsecond
	settleMax   = 5 * time.Millisecond
)

// settle waits until no kick has come for settleQuiet (at most
// settleMax), taking the kicks that come meanwhile.
func (r *Reconciler) settle(ctx context.Context) {
	deadline := time.Now().Add(settleMax)
	quiet := time.NewTimer(settleQuiet)
	defer quiet.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.kick:
			if time.Now().After(deadline) {
				return
			}
			quiet.Reset(settleQuiet)
		case <-quiet.C:
			return
		}
	}
}

// osRelease reads the distribution's ID and VERSION_ID, which ovs-ctl
// writes to system_type and system_version.
func osRelease() (id, version string) {
	data, err := os.ReadFile("/etc/os-release")
	if err != nil {
		return "", ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		v = strings.Trim(v, `"`)
		switch k {
		case "ID":
			id = v
		case "VERSION_ID":
			version = v
		}
	}
	return id, version
}

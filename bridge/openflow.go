package bridge

import (
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ovn-kubernetes/libovsdb/client"
	"github.com/ovn-kubernetes/libovsdb/ovsdb"

	"gvs/ofproto/connmgr"
	"gvs/ofproto/ofp"
	"gvs/schema/vswitchd"
)

// OpenFlowDatapath is implemented by a Datapath whose bridges are OpenFlow
// switches (the ofproto core). The reconciler then runs one
// connmgr.Manager per bridge: the <rundir>/<bridge>.mgmt and .snoop
// sockets and the bridge's Controller rows.
type OpenFlowDatapath interface {
	// OpenFlowBridge returns the OpenFlow side of a bridge AddBridge
	// created, which reports its asynchronous messages to events from
	// now on.
	OpenFlowBridge(name string, events connmgr.Events) (connmgr.Bridge, error)
	// SetDatapathID sets the datapath id the bridge reports in
	// FEATURES_REPLY (the one written to Bridge.datapath_id).
	SetDatapathID(name string, id uint64)
}

// openflowSettings is a bridge's OpenFlow configuration as read.
type openflowSettings struct {
	versions    connmgr.Versions
	controllers map[string]connmgr.ControllerConfig
	failSecure  bool
	// datapathID is other_config:datapath-id when valid, else 0.
	datapathID uint64
	rows       []*vswitchd.Controller // the bridge's Controller rows
}

func (o *openflowSettings) equal(p *openflowSettings) bool {
	return o.versions == p.versions && o.failSecure == p.failSecure && maps.Equal(o.controllers, p.controllers)
}

// parseOpenFlow reads Bridge.protocols, fail_mode, other_config
// (datapath-id, disable-in-band) and the Controller rows as Open vSwitch's
// bridge_configure_remotes does.
func parseOpenFlow(br *vswitchd.Bridge, ctrls map[string]*vswitchd.Controller, warnings *[]string) openflowSettings {
	var s openflowSettings
	names := make([]string, len(br.Protocols))
	for i, p := range br.Protocols {
		names[i] = string(p)
	}
	var unknown []string
	s.versions, unknown = connmgr.ParseProtocols(names)
	for _, u := range unknown {
		*warnings = append(*warnings, fmt.Sprintf("bridge %s: unknown OpenFlow protocol %q ignored", br.Name, u))
	}
	s.failSecure = br.FailMode != nil && *br.FailMode == vswitchd.BridgeFailModeSecure
	if v, ok := br.OtherConfig["datapath-id"]; ok {
		if id, ok := parseDatapathID(v); ok {
			s.datapathID = id
		} else {
			*warnings = append(*warnings, fmt.Sprintf("bridge %s: other_config:datapath-id %q is not 16 hex digits; ignored", br.Name, v))
		}
	}
	s.controllers = map[string]connmgr.ControllerConfig{}
	for _, id := range br.Controller {
		c := ctrls[id]
		if c == nil {
			continue
		}
		s.rows = append(s.rows, c)
		cc := connmgr.ControllerConfig{
			Type:          connmgr.ControllerTypeFor(c.Target, deref(c.Type)),
			MaxBackoff:    connmgr.DefaultMaxBackoff,
			ProbeInterval: connmgr.DefaultProbeInterval,
			DisableAsync:  c.EnableAsyncMessages != nil && !*c.EnableAsyncMessages,
			QueueSize:     derefInt(c.ControllerQueueSize),
			RateLimit:     derefInt(c.ControllerRateLimit),
			BurstLimit:    derefInt(c.ControllerBurstLimit),
		}
		if c.MaxBackoff != nil {
			cc.MaxBackoff = time.Duration(*c.MaxBackoff/1000) * time.Second
		}
		if c.InactivityProbe != nil {
			// Open vSwitch: 0 disables, below a second is a second, whole
			// seconds otherwise.
			switch p := *c.InactivityProbe; {
			case p == 0:
				cc.ProbeInterval = 0
			case p < 1000:
				cc.ProbeInterval = time.Second
			default:
				cc.ProbeInterval = time.Duration(p/1000) * time.Second
			}
		}
		if c.ConnectionMode == nil || *c.ConnectionMode == vswitchd.ControllerConnectionModeInBand {
			if br.OtherConfig["disable-in-band"] != "true" && needsInBand(c.Target) {
				*warnings = append(*warnings, fmt.Sprintf("bridge %s: controller %s: in-band control is not supported by gvs; connecting out-of-band", br.Name, c.Target))
			}
		}
		s.controllers[c.Target] = cc
	}
	slices.SortFunc(s.rows, func(a, b *vswitchd.Controller) int { return strings.Compare(a.Target, b.Target) })
	return s
}

// needsInBand reports whether in-band control would matter for a
// controller target: a remote tcp: or ssl: address (unix sockets and
// loopback addresses never go through the bridge's ports).
func needsInBand(target string) bool {
	var hostPort string
	switch {
	case strings.HasPrefix(target, "tcp:"):
		hostPort = target[len("tcp:"):]
	case strings.HasPrefix(target, "ssl:"):
		hostPort = target[len("ssl:"):]
	default:
		return false
	}
	host := hostPort
	if h, _, err := net.SplitHostPort(hostPort); err == nil {
		host = h
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip == nil || !ip.IsLoopback()
}

// parseDatapathID is Open vSwitch's dpid_from_string: exactly 16 hex
// digits, not all zero.
func parseDatapathID(s string) (uint64, bool) {
	if len(s) != 16 {
		return 0, false
	}
	id, err := strconv.ParseUint(s, 16, 64)
	return id, err == nil && id != 0
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// ofBridge is a bridge's OpenFlow side as applied.
type ofBridge struct {
	mgr     *connmgr.Manager
	applied openflowSettings
	dpid    uint64
	// connected and roles are what was last written to the Controller
	// rows, to write again when they change.
	written map[string]connmgr.ControllerInfo
}

// applyOpenFlow starts and reconfigures the bridges' connection managers
// (closeOpenFlow stops a deleted bridge's).
func (r *Reconciler) applyOpenFlow(d *desired, warned map[string]bool) {
	ofdp, ok := r.dp.(OpenFlowDatapath)
	if !ok {
		return
	}
	s := r.state
	for _, b := range d.bridges {
		name := b.row.Name
		if _, ok := s.bridges[name]; !ok {
			continue // could not be created
		}
		ob := s.openflow[name]
		if ob == nil {
			mgr, err := r.newManager(ofdp, name)
			if err != nil {
				r.warnOnce(warned, fmt.Sprintf("bridge %s: OpenFlow: %v", name, err))
				continue
			}
			ob = &ofBridge{mgr: mgr, written: map[string]connmgr.ControllerInfo{}}
			s.openflow[name] = ob
			// As Open vSwitch configures a new bridge: versions and
			// controllers, then the fail mode, whose first setting
			// installs the standalone default flow.
			ob.mgr.SetVersions(b.openflow.versions)
			ob.mgr.SetControllers(b.openflow.controllers)
			ob.mgr.SetFailMode(b.openflow.failSecure)
			ob.applied = b.openflow
			continue
		}
		if ob.applied.equal(&b.openflow) {
			continue
		}
		if ob.applied.versions != b.openflow.versions {
			ob.mgr.SetVersions(b.openflow.versions)
		}
		if !maps.Equal(ob.applied.controllers, b.openflow.controllers) {
			ob.mgr.SetControllers(b.openflow.controllers)
		}
		if ob.applied.failSecure != b.openflow.failSecure {
			ob.mgr.SetFailMode(b.openflow.failSecure)
		}
		ob.applied = b.openflow
	}
}

func (r *Reconciler) newManager(ofdp OpenFlowDatapath, name string) (*connmgr.Manager, error) {
	ev := &lateEvents{}
	ofb, err := ofdp.OpenFlowBridge(name, ev)
	if err != nil {
		return nil, err
	}
	mgr, err := connmgr.New(connmgr.Config{
		Name: name, RunDir: r.cfg.RunDir, Bridge: ofb,
		Logger:   r.log.With("module", "connmgr"),
		OnChange: r.Kick,
	})
	if err != nil {
		return nil, err
	}
	ev.set(mgr)
	return mgr, nil
}

// closeOpenFlow stops a bridge's connection manager (before the bridge
// is deleted), or every one for name "" (Run ending).
func (r *Reconciler) closeOpenFlow(name string) {
	for n, ob := range r.state.openflow {
		if name == "" || n == name {
			ob.mgr.Close()
			delete(r.state.openflow, n)
		}
	}
}

// setDatapathID tells the bridge the id written to Bridge.datapath_id.
func (r *Reconciler) setDatapathID(name string, id uint64) {
	ofdp, ok := r.dp.(OpenFlowDatapath)
	ob := r.state.openflow[name]
	if !ok || ob == nil || ob.dpid == id {
		return
	}
	ofdp.SetDatapathID(name, id)
	ob.dpid = id
}

// controllerUpdates writes is_connected, role and status of a bridge's
// Controller rows (Open vSwitch's refresh_controller_status): on the
// statistics timer, and on any pass where a connection came or went or a
// role changed. Passive targets have no status.
func (r *Reconciler) controllerUpdates(c client.Client, b *desiredBridge, statsDue bool) ([]ovsdb.Operation, error) {
	ob := r.state.openflow[b.row.Name]
	if ob == nil || len(b.openflow.rows) == 0 {
		return nil, nil
	}
	info := ob.mgr.ControllerInfo()
	for target := range ob.written {
		if _, ok := info[target]; !ok {
			delete(ob.written, target) // no longer configured
		}
	}
	var ops []ovsdb.Operation
	for _, old := range b.openflow.rows {
		row := *old
		u := rowUpdate{row: &row}
		ci, ok := info[old.Target]
		if ok {
			row.IsConnected = ci.IsConnected
			row.Role = nil
			if ci.Role != connmgr.RoleNoChange {
				row.Role = ptr(ci.Role.String())
			}
			row.Status = ci.Status
			prev, seen := ob.written[old.Target]
			if !statsDue && seen && prev.IsConnected == ci.IsConnected && prev.Status["state"] == ci.Status["state"] {
				// Between statistics passes only a change of state is
				// worth a write: keep the times as written.
				row.Status = maps.Clone(ci.Status)
				for _, k := range []string{"sec_since_connect", "sec_since_disconnect"} {
					if v, ok := old.Status[k]; ok {
						row.Status[k] = v
					}
				}
			}
			ob.written[old.Target] = ci
		} else {
			row.IsConnected, row.Role, row.Status = false, nil, nil
		}
		u.set(row.IsConnected != old.IsConnected, &row.IsConnected)
		u.set(!eqPtr(row.Role, old.Role), &row.Role)
		u.set(!maps.Equal(row.Status, old.Status), &row.Status)
		o, err := u.ops(c, "Controller", old.UUID)
		if err != nil {
			return nil, err
		}
		ops = append(ops, o...)
	}
	return ops, nil
}

// lateEvents lets the bridge's OpenFlow side get its event sink before
// the Manager that implements it exists.
type lateEvents struct {
	mgr atomic.Pointer[connmgr.Manager]
}

func (e *lateEvents) set(m *connmgr.Manager) { e.mgr.Store(m) }

// The Events methods forward to the Manager once there is one (the
// bridge reports nothing before its OpenFlowBridge call returned).

func (e *lateEvents) PacketIn(pin *ofp.PacketIn) {
	if m := e.mgr.Load(); m != nil {
		m.PacketIn(pin)
	}
}

func (e *lateEvents) PacketInTo(id uint16, pin *ofp.PacketIn) {
	if m := e.mgr.Load(); m != nil {
		m.PacketInTo(id, pin)
	}
}

func (e *lateEvents) FlowRemoved(fr *ofp.FlowRemoved) {
	if m := e.mgr.Load(); m != nil {
		m.FlowRemoved(fr)
	}
}

func (e *lateEvents) PortStatus(reason uint8, desc *ofp.Port) {
	if m := e.mgr.Load(); m != nil {
		m.PortStatus(reason, desc)
	}
}

func (e *lateEvents) PortChanged(reason uint8, old, desc *ofp.Port, o connmgr.Origin) {
	if m := e.mgr.Load(); m != nil {
		m.PortChanged(reason, old, desc, o)
	}
}

func (e *lateEvents) FlowMonitor(u *ofp.FlowUpdate, o connmgr.Origin) {
	if m := e.mgr.Load(); m != nil {
		m.FlowMonitor(u, o)
	}
}

func (e *lateEvents) FlowChanged(fc *connmgr.FlowChange, o connmgr.Origin) {
	if m := e.mgr.Load(); m != nil {
		m.FlowChanged(fc, o)
	}
}

// WantsFlowChanges lets the bridge skip flow monitor reports nobody takes.
func (e *lateEvents) WantsFlowChanges() bool {
	if m := e.mgr.Load(); m != nil {
		return m.WantsFlowChanges()
	}
	return false
}

func (e *lateEvents) ControllerConnected() bool {
	if m := e.mgr.Load(); m != nil {
		return m.ControllerConnected()
	}
	return false
}

func (e *lateEvents) WantsPacketInOnMiss() bool {
	if m := e.mgr.Load(); m != nil {
		return m.WantsPacketInOnMiss()
	}
	return false
}

var _ connmgr.Events = (*lateEvents)(nil)

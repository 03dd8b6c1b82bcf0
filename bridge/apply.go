package bridge

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"time"

	"gvs/netdev"
)

// state is what the worker knows about the datapath it configured. Only
// the worker goroutine touches it.
type state struct {
	connectedBefore bool
	statsInterval   time.Duration

	dpCfg *DatapathConfig // nil before the first SetConfig
	// ctCfg is the conntrack configuration last applied (nil: none yet).
	ctCfg      *ConntrackConfig
	sockBuf    int
	sockBufSet bool
	bridges    map[string]BridgeConfig
	ports      map[string]appliedPort // by interface name
	// failed are the interfaces AddPorts refused, by name: tried again
	// only when their configuration changes or a link event names them
	// (PortsChanged, ResyncPorts), not on every pass.
	failed map[string]failedIface
	// seen and counters are what the datapath last reported of each
	// port in s.ports (PortState, PortStats), by interface name.
	seen     map[string]*PortState
	counters map[string]*PortStats
	errors   map[string]string // Interface UUID -> Interface.error
	ofports  map[string]int    // Interface UUID -> ofport written
	logged   map[string]bool   // warnings already logged
	// datapathInserted is when we last inserted the "netdev" Datapath row.
	datapathInserted time.Time
	// openflow are the bridges' connection managers, by bridge name
	// (with an OpenFlowDatapath only).
	openflow map[string]*ofBridge
}

type appliedPort struct {
	uuid string
	spec PortSpec
}

type failedIface struct {
	uuid string
	spec PortSpec
	msg  string // Interface.error
}

func newState() *state {
	return &state{
		statsInterval: DefaultStatsInterval,
		bridges:       map[string]BridgeConfig{},
		ports:         map[string]appliedPort{},
		failed:        map[string]failedIface{},
		seen:          map[string]*PortState{},
		counters:      map[string]*PortStats{},
		errors:        map[string]string{},
		ofports:       map[string]int{},
		logged:        map[string]bool{},
		openflow:      map[string]*ofBridge{},
	}
}

// ErrUnsupportedType is wrapped by Datapath.AddPort for an Interface type
// gvs cannot create. Open vSwitch reports it as EAFNOSUPPORT.
var ErrUnsupportedType = errors.New("Address family not supported by protocol")

// openError words a failed AddPort as Open vSwitch's Interface.error does.
func openError(name string, err error) string {
	var ie *InterfaceError
	if errors.As(err, &ie) {
		return ie.Msg
	}
	reason := err.Error()
	switch {
	case errors.Is(err, netdev.ErrNoDevice):
		reason = "No such device"
	case errors.Is(err, ErrUnsupportedType):
		reason = ErrUnsupportedType.Error()
	}
	return fmt.Sprintf("could not open network device %s (%s)", name, reason)
}

// warnOnce logs each distinct warning once while it persists.
func (r *Reconciler) warnOnce(current map[string]bool, msg string) {
	current[msg] = true
	if !r.state.logged[msg] {
		r.log.Warn(msg)
	}
}

// changedPorts are the device names link events reported since the last
// pass; all: every port (the event stream was lost, or a setting that
// shows in every port's status changed).
type changedPorts struct {
	names map[string]bool
	all   bool
}

func (c changedPorts) has(name string) bool { return c.all || c.names[name] }

// apply brings the datapath to d and records per-interface errors. It
// calls the datapath only for what differs from the state it keeps, and
// reads the state of only the ports in changed, the ones it adds and the
// ones it sets.
func (r *Reconciler) apply(d *desired, changed changedPorts) {
	s := r.state
	warned := map[string]bool{}
	for _, w := range append(d.global.warnings, d.warnings...) {
		r.warnOnce(warned, w)
	}
	for _, m := range d.mirrors {
		r.warnOnce(warned, fmt.Sprintf("mirror %s: mirrors are not supported by gvs; ignored", m.Name))
	}
	for _, q := range d.qos {
		r.warnOnce(warned, fmt.Sprintf("QoS %s (type %s): QoS is not supported by gvs; ignored", q.UUID, q.Type))
	}
	s.statsInterval = d.global.statsInterval

	// PMD settings are applied live: ports, flows and MAC tables stay.
	if s.dpCfg == nil || *s.dpCfg != d.global.dp {
		if s.dpCfg != nil {
			r.log.Info(fmt.Sprintf("datapath configuration changed: pmd-cpu-mask %q, pmd-maxsleep %v, pmd-rxq-assign %q, %s %d",
				d.global.dp.PMDCPUMask, d.global.dp.PMDMaxSleep, d.global.dp.RxqAssign, RxRingBudgetKey, d.global.dp.RxRingBudget))
		}
		if err := r.dp.SetConfig(d.global.dp); err != nil {
			r.warnOnce(warned, "datapath configuration: "+err.Error())
		}
		cfg := d.global.dp
		s.dpCfg = &cfg
	}
	if cd, ok := r.dp.(ConntrackDatapath); ok && (s.ctCfg == nil || !s.ctCfg.Equal(d.conntrack)) {
		if err := cd.SetConntrackConfig(d.conntrack); err != nil {
			r.warnOnce(warned, "conntrack zones: "+err.Error())
		}
		cfg := d.conntrack
		s.ctCfg = &cfg
	}
	if !s.sockBufSet || s.sockBuf != d.global.sockBuf {
		if err := r.dp.SetSocketBuffers(d.global.sockBuf); err != nil {
			r.warnOnce(warned, "userspace-sock-buf-size: "+err.Error())
		}
		if s.sockBufSet {
			changed.all = true // the sizes show in every port's status
		}
		s.sockBuf, s.sockBufSet = d.global.sockBuf, true
	}

	// Remove what is no longer wanted, or must be reopened, or whose
	// device went away.
	var doomed []string
	for name, ap := range s.ports {
		di := d.byName[name]
		if di == nil || di.problem != "" || di.row.UUID != ap.uuid || !sameDevice(ap.spec, di.spec) {
			doomed = append(doomed, name)
			continue
		}
		if changed.has(name) {
			if err := r.readState(name); errors.Is(err, netdev.ErrNoDevice) {
				r.log.Warn(fmt.Sprintf("%s: network device went away; the port is re-added when it returns", name))
				doomed = append(doomed, name)
			}
		}
	}
	slices.Sort(doomed)
	patchesBefore := r.patchPeers()
	r.delPorts(doomed)
	want := map[string]*desiredBridge{}
	for _, b := range d.bridges {
		want[b.row.Name] = b
	}
	for _, name := range slices.Sorted(maps.Keys(s.bridges)) {
		if want[name] == nil {
			r.closeOpenFlow(name)
			if err := r.dp.DelBridge(name); err != nil {
				r.log.Warn("deleting bridge " + name + ": " + err.Error())
			}
			delete(s.bridges, name)
			r.log.Info("bridge " + name + ": deleted")
		}
	}

	errs := map[string]string{}
	var adding []*desiredIface
	for _, b := range d.bridges {
		name := b.row.Name
		cfg, exists := s.bridges[name]
		switch {
		case !exists:
			if err := r.dp.AddBridge(name, b.settings.cfg); err != nil {
				r.warnOnce(warned, "bridge "+name+": could not be created: "+err.Error())
				for _, di := range b.ifaces {
					errs[di.row.UUID] = "bridge " + name + " could not be created: " + err.Error()
				}
				continue
			}
			s.bridges[name] = b.settings.cfg
			r.log.Info("bridge " + name + ": added")
		case cfg != b.settings.cfg:
			if err := r.dp.SetBridge(name, b.settings.cfg); err != nil {
				r.warnOnce(warned, "bridge "+name+": "+err.Error())
			} else {
				s.bridges[name] = b.settings.cfg
			}
		}
		for _, di := range b.ifaces {
			msg, add := r.applyIface(di, changed)
			if msg != "" {
				errs[di.row.UUID] = msg
			}
			if add {
				adding = append(adding, di)
			}
		}
	}
	r.addPorts(adding, errs)
	r.refreshPatches(patchesBefore)
	r.applyOpenFlow(d, warned)
	if fs, ok := r.dp.(FlowSyncer); ok {
		fs.SyncFlows()
	}
	for name, f := range s.failed {
		if di := d.byName[name]; di == nil || di.row.UUID != f.uuid {
			delete(s.failed, name)
		}
	}
	if changed.all {
		for name := range s.ports {
			r.readState(name)
		}
	}
	watched := make(map[string]bool, len(s.ports)+len(s.failed))
	for name := range s.ports {
		watched[name] = true
	}
	for name := range s.failed {
		watched[name] = true
	}
	r.setWatched(watched)
	for id, msg := range errs {
		if s.errors[id] != msg {
			r.log.Warn(msg)
		}
	}
	s.errors = errs
	for msg := range s.logged {
		if !warned[msg] {
			delete(s.logged, msg)
		}
	}
	maps.Copy(s.logged, warned)
}

// applyIface updates one interface already in the datapath, or says it
// is to be added; it returns the interface's error text.
func (r *Reconciler) applyIface(di *desiredIface, changed changedPorts) (msg string, add bool) {
	s := r.state
	if di.problem != "" {
		return di.problem, false
	}
	name := di.spec.Name
	if ap, ok := s.ports[name]; ok {
		if !sameSettings(ap.spec, di.spec) {
			if err := r.dp.SetPort(di.spec); err != nil {
				return fmt.Sprintf("%s: %v", name, err), false
			}
			s.ports[name] = appliedPort{uuid: di.row.UUID, spec: di.spec}
			r.readState(name) // the MTU may have changed
		}
		return "", false
	}
	if f, ok := s.failed[name]; ok && f.uuid == di.row.UUID && sameSpec(f.spec, di.spec) && !changed.has(name) {
		return f.msg, false
	}
	return "", true
}

// addPorts adds the interfaces in one AddPorts call and records the
// errors in errs.
func (r *Reconciler) addPorts(adding []*desiredIface, errs map[string]string) {
	if len(adding) == 0 {
		return
	}
	s := r.state
	specs := make([]PortSpec, len(adding))
	for i, di := range adding {
		specs[i] = di.spec
		// The number the interface had: ours, else the database's (so
		// numbers survive a restart).
		if n, ok := s.ofports[di.row.UUID]; ok {
			specs[i].PreviousOFPort = n
		} else {
			specs[i].PreviousOFPort = derefInt(di.row.Ofport)
		}
	}
	for i, err := range r.dp.AddPorts(specs) {
		di := adding[i]
		name := di.spec.Name
		if err != nil {
			msg := openError(name, err)
			s.failed[name] = failedIface{uuid: di.row.UUID, spec: di.spec, msg: msg}
			errs[di.row.UUID] = msg
			continue
		}
		delete(s.failed, name)
		s.ports[name] = appliedPort{uuid: di.row.UUID, spec: specs[i]}
		r.readState(name)
		r.log.Info(fmt.Sprintf("bridge %s: added interface %s (type %s)", di.spec.Bridge, name, di.spec.Type))
	}
}

// readState reads a port's state into s.seen.
func (r *Reconciler) readState(name string) error {
	st, err := r.dp.PortState(name)
	if err != nil {
		return err
	}
	r.state.seen[name] = &st
	return nil
}

// readAll refreshes the state and counters of every port: the
// statistics timer's work, written back in one transaction.
func (r *Reconciler) readAll() {
	s := r.state
	for name := range s.ports {
		r.readState(name)
		if st, err := r.dp.PortStats(name); err == nil {
			s.counters[name] = &st
		}
	}
}

// delPorts removes the ports in one DelPorts call.
func (r *Reconciler) delPorts(names []string) {
	if len(names) == 0 {
		return
	}
	s := r.state
	for i, err := range r.dp.DelPorts(names) {
		name := names[i]
		ap := s.ports[name]
		if err != nil {
			r.log.Warn(fmt.Sprintf("bridge %s: deleting interface %s: %v", ap.spec.Bridge, name, err))
		} else {
			r.log.Info(fmt.Sprintf("bridge %s: deleted interface %s", ap.spec.Bridge, name))
		}
		delete(s.ports, name)
		delete(s.seen, name)
		delete(s.counters, name)
	}
}

// sameDevice: the port can stay open (otherwise it is deleted and re-added).
func sameDevice(a, b PortSpec) bool {
	return a.Bridge == b.Bridge && a.Type == b.Type && maps.Equal(a.Options, b.Options) &&
		macEqual(a.MAC, b.MAC)
}

// sameSettings: nothing SetPort changes differs.
func sameSettings(a, b PortSpec) bool {
	return a.MTURequest == b.MTURequest && a.VLAN.Tag == b.VLAN.Tag && a.VLAN.Mode == b.VLAN.Mode &&
		slices.Equal(a.VLAN.Trunks, b.VLAN.Trunks) && a.OFPortRequest == b.OFPortRequest
}

// sameSpec: nothing in the spec differs.
func sameSpec(a, b PortSpec) bool {
	return a.Name == b.Name && a.Port == b.Port && sameDevice(a, b) && sameSettings(a, b)
}

func macEqual(a, b net.HardwareAddr) bool { return string(a) == string(b) }

// patchPeers maps each patch port in the datapath to its options:peer.
func (r *Reconciler) patchPeers() map[string]string {
	m := map[string]string{}
	for name, ap := range r.state.ports {
		if ap.spec.Type == "patch" {
			m[name] = ap.spec.Options["peer"]
		}
	}
	return m
}

// refreshPatches re-reads every patch port's state when the pass added,
// removed or re-pointed one: adding or removing a port pairs or unpairs
// its peer, whose Interface.error changes though the peer did not.
func (r *Reconciler) refreshPatches(before map[string]string) {
	after := r.patchPeers()
	if maps.Equal(before, after) {
		return
	}
	for name := range after {
		r.readState(name)
	}
}

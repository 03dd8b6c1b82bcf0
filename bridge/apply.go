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

	dpCfg      *DatapathConfig // nil before the first SetConfig
	sockBuf    int
	sockBufSet bool
	bridges    map[string]BridgeConfig
	ports      map[string]appliedPort // by interface name
	errors     map[string]string      // Interface UUID -> Interface.error
	ofports    map[string]int         // Interface UUID -> ofport assigned
	// ofportAlloc numbers new ports of each bridge (by name).
	ofportAlloc map[string]*ofportAllocator
	links       map[string]*linkTrack // interface name
	logged      map[string]bool       // warnings already logged
	// datapathInserted is when we last inserted the "netdev" Datapath row.
	datapathInserted time.Time
}

type appliedPort struct {
	uuid string
	spec PortSpec
}

type linkTrack struct {
	carrier bool
	resets  int
}

func newState() *state {
	return &state{
		statsInterval: DefaultStatsInterval,
		bridges:       map[string]BridgeConfig{},
		ports:         map[string]appliedPort{},
		errors:        map[string]string{},
		ofports:       map[string]int{},
		ofportAlloc:   map[string]*ofportAllocator{},
		links:         map[string]*linkTrack{},
		logged:        map[string]bool{},
	}
}

// ErrUnsupportedType is wrapped by Datapath.AddPort for an Interface type
// gvs cannot create. Open vSwitch reports it as EAFNOSUPPORT.
var ErrUnsupportedType = errors.New("Address family not supported by protocol")

// openError words a failed AddPort as Open vSwitch's Interface.error does.
func openError(name string, err error) string {
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

// apply brings the datapath to d and records per-interface errors.
func (r *Reconciler) apply(d *desired) {
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
	if !s.sockBufSet || s.sockBuf != d.global.sockBuf {
		if err := r.dp.SetSocketBuffers(d.global.sockBuf); err != nil {
			r.warnOnce(warned, "userspace-sock-buf-size: "+err.Error())
		}
		s.sockBuf, s.sockBufSet = d.global.sockBuf, true
	}

	// Remove what is no longer wanted, or must be reopened.
	for _, name := range slices.Sorted(maps.Keys(s.ports)) {
		ap := s.ports[name]
		di := d.byName[name]
		if di == nil || di.problem != "" || di.row.UUID != ap.uuid || !sameDevice(ap.spec, di.spec) {
			r.delPort(name)
			continue
		}
		if _, err := r.dp.PortState(name); errors.Is(err, netdev.ErrNoDevice) {
			r.log.Warn(fmt.Sprintf("%s: network device went away; the port is re-added when it returns", name))
			r.delPort(name)
		}
	}
	want := map[string]*desiredBridge{}
	for _, b := range d.bridges {
		want[b.row.Name] = b
	}
	for _, name := range slices.Sorted(maps.Keys(s.bridges)) {
		if want[name] == nil {
			if err := r.dp.DelBridge(name); err != nil {
				r.log.Warn("deleting bridge " + name + ": " + err.Error())
			}
			delete(s.bridges, name)
			r.log.Info("bridge " + name + ": deleted")
		}
	}

	errs := map[string]string{}
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
			if msg := r.applyIface(di); msg != "" {
				errs[di.row.UUID] = msg
			}
		}
	}
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

// applyIface adds or updates one interface and returns its error text.
func (r *Reconciler) applyIface(di *desiredIface) string {
	s := r.state
	if di.problem != "" {
		return di.problem
	}
	name := di.spec.Name
	if ap, ok := s.ports[name]; ok {
		if !sameSettings(ap.spec, di.spec) {
			if err := r.dp.SetPort(di.spec); err != nil {
				return fmt.Sprintf("%s: %v", name, err)
			}
			s.ports[name] = appliedPort{uuid: di.row.UUID, spec: di.spec}
		}
		return ""
	}
	if err := r.dp.AddPort(di.spec); err != nil {
		return openError(name, err)
	}
	s.ports[name] = appliedPort{uuid: di.row.UUID, spec: di.spec}
	r.log.Info(fmt.Sprintf("bridge %s: added interface %s (type %s)", di.spec.Bridge, name, di.spec.Type))
	return ""
}

func (r *Reconciler) delPort(name string) {
	ap := r.state.ports[name]
	if err := r.dp.DelPort(name); err != nil {
		r.log.Warn(fmt.Sprintf("bridge %s: deleting interface %s: %v", ap.spec.Bridge, name, err))
	} else {
		r.log.Info(fmt.Sprintf("bridge %s: deleted interface %s", ap.spec.Bridge, name))
	}
	delete(r.state.ports, name)
	delete(r.state.links, name)
}

// sameDevice: the port can stay open (otherwise it is deleted and re-added).
func sameDevice(a, b PortSpec) bool {
	return a.Bridge == b.Bridge && a.Type == b.Type && maps.Equal(a.Options, b.Options) &&
		macEqual(a.MAC, b.MAC)
}

// sameSettings: nothing SetPort changes differs.
func sameSettings(a, b PortSpec) bool {
	return a.MTURequest == b.MTURequest && a.VLAN.Tag == b.VLAN.Tag && a.VLAN.Mode == b.VLAN.Mode &&
		slices.Equal(a.VLAN.Trunks, b.VLAN.Trunks)
}

func macEqual(a, b net.HardwareAddr) bool { return string(a) == string(b) }

// Package bridgetest provides a fake bridge.Datapath for tests of the
// reconciler: it keeps bridges and ports in memory, opens "system" and
// "afxdp" ports only on devices the test created with AddDevice (as the
// kernel would), creates "internal" and "tap" devices itself, and records
// every call (one line per port for the batch calls, and one for each
// PortState and PortStats read, so a test can count the work a change
// caused). Devices appearing and disappearing are reported to the
// function given to SetLinkListener, as dpadapter reports link events.
//
// Contract: all methods are safe from any goroutine (the reconciler calls
// the bridge.Datapath methods from its worker while the test inspects);
// the link listener is called without the fake's lock held.
package bridgetest

import (
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"gvs/bridge"
	"gvs/netdev"
	"gvs/ofproto"
)

// Port is a port of the fake datapath as last configured.
type Port struct {
	Spec bridge.PortSpec
	// CarrierDown and CarrierResets are the link as SetCarrier left it.
	CarrierDown   bool
	CarrierResets int
	Stats         netdev.Stats
	// CustomStats are what an afxdp device reports (nil: none).
	CustomStats map[string]uint64
	// OFPort is the OpenFlow number the port got, as ofproto numbers
	// ports.
	OFPort uint32
}

// Datapath is the fake.
type Datapath struct {
	mu      sync.Mutex
	devices map[string]net.HardwareAddr // kernel devices that exist
	made    map[string]bool             // devices we created (internal, tap)
	bridges map[string]bridge.BridgeConfig
	numbers map[string]*ofproto.PortNumbers // per bridge
	ports   map[string]*Port
	cfg     bridge.DatapathConfig
	sockBuf int
	calls   []string
	nextMAC uint32
	closed  bool
	// linkListener is told the names of devices that appear or go.
	linkListener func(names ...string)
	// ct is the last SetConntrackConfig, ctSets how many there were
	// (kept out of calls: every reconciler's first pass makes one).
	ct     bridge.ConntrackConfig
	ctSets int
}

var (
	_ bridge.Datapath          = (*Datapath)(nil)
	_ bridge.ConntrackDatapath = (*Datapath)(nil)
)

// New returns an empty fake datapath.
func New() *Datapath {
	return &Datapath{
		devices: map[string]net.HardwareAddr{},
		made:    map[string]bool{},
		bridges: map[string]bridge.BridgeConfig{},
		numbers: map[string]*ofproto.PortNumbers{},
		ports:   map[string]*Port{},
	}
}

func (f *Datapath) record(format string, args ...any) {
	f.calls = append(f.calls, fmt.Sprintf(format, args...))
}

// newMAC returns 02:00:00:00:00:01, then 02:00:00:00:00:02, ...: each
// device's address is above every earlier one.
func (f *Datapath) newMAC() net.HardwareAddr {
	f.nextMAC++
	n := f.nextMAC
	return net.HardwareAddr{0x02, 0, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}
}

// SetLinkListener sets the function told about devices that AddDevice
// and RemoveDevice make appear and disappear (bridge.Reconciler's
// PortsChanged, as the real datapath's link events call it).
func (f *Datapath) SetLinkListener(fn func(names ...string)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.linkListener = fn
}

func (f *Datapath) linkChanged(name string) {
	f.mu.Lock()
	fn := f.linkListener
	f.mu.Unlock()
	if fn != nil {
		fn(name)
	}
}

// AddDevice makes a kernel device (a veth, say) appear.
func (f *Datapath) AddDevice(name string) {
	f.mu.Lock()
	f.devices[name] = f.newMAC()
	f.mu.Unlock()
	f.linkChanged(name)
}

// RemoveDevice makes a kernel device disappear.
func (f *Datapath) RemoveDevice(name string) {
	f.mu.Lock()
	delete(f.devices, name)
	f.mu.Unlock()
	f.linkChanged(name)
}

// SetCarrier sets a port's carrier, counting transitions as the real
// datapath counts them from link events, and reports the change to the
// link listener.
func (f *Datapath) SetCarrier(name string, up bool) {
	f.mu.Lock()
	if p := f.ports[name]; p != nil && p.CarrierDown == up {
		p.CarrierDown = !up
		p.CarrierResets++
	}
	f.mu.Unlock()
	f.linkChanged(name)
}

// SetStats sets a port's counters.
func (f *Datapath) SetStats(name string, s netdev.Stats) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p := f.ports[name]; p != nil {
		p.Stats = s
	}
}

// SetCustomStats sets a port's custom counters, as an afxdp device
// reports its XDP_STATISTICS.
func (f *Datapath) SetCustomStats(name string, cs map[string]uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p := f.ports[name]; p != nil {
		p.CustomStats = maps.Clone(cs)
	}
}

// Port returns a copy of the named port.
func (f *Datapath) Port(name string) (Port, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.ports[name]
	if !ok {
		return Port{}, false
	}
	return *p, true
}

// Ports lists the port names, sorted.
func (f *Datapath) Ports() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Sorted(maps.Keys(f.ports))
}

// Bridges returns the bridges and their configuration.
func (f *Datapath) Bridges() map[string]bridge.BridgeConfig {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.bridges)
}

// Config returns the last datapath configuration and socket buffer size.
func (f *Datapath) Config() (bridge.DatapathConfig, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cfg, f.sockBuf
}

// Calls returns the calls so far, one line each ("AddPort br0 p1", ...).
func (f *Datapath) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// ResetCalls forgets the calls so far.
func (f *Datapath) ResetCalls() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = nil
}

// CallCount returns how many recorded calls start with prefix
// ("AddPort ", "AddPorts ", "DelPort ", "PortState ", "SetConfig ").
func (f *Datapath) CallCount(prefix string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		if strings.HasPrefix(c, prefix) {
			n++
		}
	}
	return n
}

// Closed reports whether Close was called.
func (f *Datapath) Closed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}

func (f *Datapath) SetConfig(cfg bridge.DatapathConfig) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("SetConfig %q %v %q", cfg.PMDCPUMask, cfg.PMDMaxSleep, cfg.RxqAssign)
	f.cfg = cfg // with ports in place, as the real datapath does
	return nil
}

func (f *Datapath) AddBridge(name string, cfg bridge.BridgeConfig) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("AddBridge %s", name)
	if _, ok := f.bridges[name]; ok {
		return fmt.Errorf("bridge %s exists", name)
	}
	f.bridges[name] = cfg
	return nil
}

func (f *Datapath) SetBridge(name string, cfg bridge.BridgeConfig) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("SetBridge %s", name)
	if _, ok := f.bridges[name]; !ok {
		return fmt.Errorf("no bridge %s", name)
	}
	f.bridges[name] = cfg
	return nil
}

func (f *Datapath) DelBridge(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("DelBridge %s", name)
	if _, ok := f.bridges[name]; !ok {
		return fmt.Errorf("no bridge %s", name)
	}
	for _, p := range f.ports {
		if p.Spec.Bridge == name {
			return fmt.Errorf("bridge %s still has port %s", name, p.Spec.Name)
		}
	}
	delete(f.bridges, name)
	return nil
}

// AddPorts records "AddPorts N", then "AddPort BRIDGE NAME TYPE" for
// each spec.
func (f *Datapath) AddPorts(specs []bridge.PortSpec) []error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("AddPorts %d", len(specs))
	errs := make([]error, len(specs))
	for i, spec := range specs {
		errs[i] = f.addPortLocked(spec)
	}
	// Number the ports added, per bridge, as the real datapath's ofproto
	// bridges do.
	reqs := map[string][]ofproto.PortRequest{}
	for i, spec := range specs {
		if errs[i] != nil {
			continue
		}
		if spec.Name == spec.Bridge {
			f.ports[spec.Name].OFPort = 65534
			continue
		}
		reqs[spec.Bridge] = append(reqs[spec.Bridge], ofproto.PortRequest{Name: spec.Name, Request: spec.OFPortRequest, Previous: spec.PreviousOFPort})
	}
	for br, rs := range reqs {
		nums := f.numbers[br]
		if nums == nil {
			nums = ofproto.NewPortNumbers()
			f.numbers[br] = nums
		}
		got := nums.Assign(rs, func(n uint32) bool { return f.ofportUsedLocked(br, n) }, time.Now())
		for name, n := range got {
			f.ports[name].OFPort = n
		}
	}
	return errs
}

func (f *Datapath) ofportUsedLocked(br string, n uint32) bool {
	for _, p := range f.ports {
		if p.Spec.Bridge == br && p.OFPort == n {
			return true
		}
	}
	return false
}

func (f *Datapath) addPortLocked(spec bridge.PortSpec) error {
	f.record("AddPort %s %s %s", spec.Bridge, spec.Name, spec.Type)
	if _, ok := f.bridges[spec.Bridge]; !ok {
		return fmt.Errorf("no bridge %s", spec.Bridge)
	}
	if _, ok := f.ports[spec.Name]; ok {
		return fmt.Errorf("port %s exists", spec.Name)
	}
	switch spec.Type {
	case "system", "afxdp":
		if _, ok := f.devices[spec.Name]; !ok {
			return fmt.Errorf("%s: %w", spec.Name, netdev.ErrNoDevice)
		}
	case "patch":
		// No device; Open vSwitch's configuration check, its words.
		if _, ok := spec.Options["peer"]; !ok {
			return &bridge.InterfaceError{Msg: spec.Name + ": patch type requires valid 'peer' argument"}
		}
		f.devices[spec.Name] = f.newMAC()
		f.made[spec.Name] = true
	case "internal", "tap":
		if _, ok := f.devices[spec.Name]; !ok {
			f.devices[spec.Name] = f.newMAC()
			f.made[spec.Name] = true
		}
		if spec.MAC != nil {
			f.devices[spec.Name] = spec.MAC
		}
	default:
		return fmt.Errorf("%s: type %s: %w", spec.Name, spec.Type, bridge.ErrUnsupportedType)
	}
	f.ports[spec.Name] = &Port{Spec: spec}
	return nil
}

func (f *Datapath) SetPort(spec bridge.PortSpec) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("SetPort %s", spec.Name)
	p, ok := f.ports[spec.Name]
	if !ok {
		return fmt.Errorf("no port %s", spec.Name)
	}
	// A new ofport_request renumbers the port when the number is free
	// (ofproto.OFBridge.SetPortRequest).
	if r := spec.OFPortRequest; r > 0 && r < 65280 && uint32(r) != p.OFPort && p.OFPort != 65534 && !f.ofportUsedLocked(spec.Bridge, uint32(r)) {
		if nums := f.numbers[spec.Bridge]; nums != nil {
			nums.Freed(p.OFPort, time.Now())
		}
		p.OFPort = uint32(r)
	}
	spec.PreviousOFPort = p.Spec.PreviousOFPort
	p.Spec = spec
	return nil
}

// DelPorts records "DelPorts N", then "DelPort NAME" for each name.
func (f *Datapath) DelPorts(names []string) []error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("DelPorts %d", len(names))
	errs := make([]error, len(names))
	for i, name := range names {
		f.record("DelPort %s", name)
		p, ok := f.ports[name]
		if !ok {
			errs[i] = fmt.Errorf("no port %s", name)
			continue
		}
		if nums := f.numbers[p.Spec.Bridge]; nums != nil {
			nums.Freed(p.OFPort, time.Now())
		}
		delete(f.ports, name)
		if f.made[name] {
			delete(f.made, name)
			delete(f.devices, name)
		}
	}
	return errs
}

// PortState records "PortState NAME".
func (f *Datapath) PortState(name string) (bridge.PortState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("PortState %s", name)
	p, ok := f.ports[name]
	if !ok {
		return bridge.PortState{}, fmt.Errorf("no port %s", name)
	}
	mac, ok := f.devices[name]
	if !ok {
		return bridge.PortState{}, fmt.Errorf("%s: %w", name, netdev.ErrNoDevice)
	}
	mtu := 1500
	if p.Spec.MTURequest > 0 {
		mtu = p.Spec.MTURequest
	}
	status := map[string]string{"driver_name": "fake"}
	if f.sockBuf > 0 {
		status["socket_buf_requested"] = strconv.Itoa(f.sockBuf)
		status["socket_rcvbuf"] = strconv.Itoa(2 * f.sockBuf)
	}
	st := bridge.PortState{
		Link:          netdev.LinkState{AdminUp: true, CarrierUp: !p.CarrierDown, SpeedMbps: 10000, IfIndex: 100 + int(mac[5])},
		CarrierResets: p.CarrierResets,
		MAC:           mac,
		MTU:           mtu,
		Status:        status,
		OFPort:        int(p.OFPort),
	}
	if p.Spec.Type == "patch" {
		// Paired when the peer is a patch port naming this one.
		peer := p.Spec.Options["peer"]
		if q, ok := f.ports[peer]; !ok || q.Spec.Type != "patch" || q.Spec.Options["peer"] != name {
			st.Error = "No usable peer '" + peer + "' exists in 'system' datapath."
		}
	}
	return st, nil
}

// PortStats records "PortStats NAME".
func (f *Datapath) PortStats(name string) (bridge.PortStats, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("PortStats %s", name)
	p, ok := f.ports[name]
	if !ok {
		return bridge.PortStats{}, fmt.Errorf("no port %s", name)
	}
	return bridge.PortStats{Stats: p.Stats, Custom: maps.Clone(p.CustomStats)}, nil
}

// SetConntrackConfig implements bridge.ConntrackDatapath: it keeps the
// configuration for Conntrack.
func (f *Datapath) SetConntrackConfig(cfg bridge.ConntrackConfig) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ct = bridge.ConntrackConfig{Policies: map[string]map[string]uint32{}, Zones: maps.Clone(cfg.Zones)}
	for id, p := range cfg.Policies {
		f.ct.Policies[id] = maps.Clone(p)
	}
	f.ctSets++
	return nil
}

// Conntrack returns the last conntrack configuration and how many times
// one was set.
func (f *Datapath) Conntrack() (bridge.ConntrackConfig, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ct, f.ctSets
}

func (f *Datapath) SetSocketBuffers(bytes int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("SetSocketBuffers %d", bytes)
	f.sockBuf = bytes
	return nil
}

func (f *Datapath) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("Close")
	f.ports = map[string]*Port{}
	f.bridges = map[string]bridge.BridgeConfig{}
	for name := range f.made {
		delete(f.devices, name)
	}
	f.made = map[string]bool{}
	f.closed = true
	return nil
}

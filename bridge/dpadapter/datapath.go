package dpadapter

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"gvs/bridge"
	"gvs/dpif"
	"gvs/metrics/source"
	"gvs/netdev"
	"gvs/netdev/afpacket"
	"gvs/netdev/afxdp"
	"gvs/netdev/dummy"
	"gvs/netdev/tap"
	"gvs/ofproto"
	maclearn "gvs/ofproto/mac"
)

// Config configures the adapter.
type Config struct {
	Logger *slog.Logger // nil: discard
	// PMDs is the number of unpinned PMD goroutines (0: dpif's default).
	PMDs int
	// Dummy is gvs-vswitchd's --enable-dummy: whether "dummy" bridges
	// and ports exist and which other types become dummy devices.
	Dummy DummyMode
	// RunDir resolves dummy ports' relative unix:/punix: stream paths.
	RunDir string
}

// DummyMode is --enable-dummy's level, as Open vSwitch's dummy_enable
// reads it.
type DummyMode int

const (
	// DummyDisabled: no --enable-dummy; "dummy" bridges and ports are
	// refused.
	DummyDisabled DummyMode = iota
	// DummyEnabled (--enable-dummy): datapath_type=dummy bridges, whose
	// internal ports are dummy devices, and type=dummy ports.
	DummyEnabled
	// DummySystem (--enable-dummy=system): "system" ports are dummy
	// devices too.
	DummySystem
	// DummyOverride (--enable-dummy=override): every port type is a
	// dummy device, "patch" excepted as in Open vSwitch.
	DummyOverride
)

// ParseDummyMode reads --enable-dummy's optional argument.
func ParseDummyMode(arg string) (DummyMode, error) {
	switch arg {
	case "":
		return DummyEnabled, nil
	case "system":
		return DummySystem, nil
	case "override":
		return DummyOverride, nil
	}
	return DummyDisabled, fmt.Errorf("%s: unknown dummy level", arg)
}

// ErrDummyDisabled is returned for a dummy bridge or port without
// --enable-dummy.
var ErrDummyDisabled = errors.New("dummy datapath and devices need --enable-dummy")

// Datapath implements bridge.Datapath.
type Datapath struct {
	cfg Config
	log *slog.Logger

	mu sync.Mutex
	dp *dpif.Datapath
	sw *ofproto.Switch
	// flowsStale says a bridge or port setting that translation reads
	// changed since the last SyncFlows.
	flowsStale bool
	bridges    map[string]*ofproto.Bridge
	// conns are the bridges connection managers drive (OpenFlowBridge).
	conns   map[string]*ofproto.ConnBridge
	created map[string]time.Time // when each bridge was added
	ports   map[string]*port
	byIndex map[int]*port // ports by their device's ifindex
	sockBuf int
	// dpTypes is each bridge's datapath_type (BridgeConfig.DatapathType).
	dpTypes map[string]string
	// umem is the UMEM every afxdp port shares unless its
	// options:xdp-shared-umem is false (made with the first afxdp port,
	// closed by Close).
	umem *afxdp.UMEMGroup
	// rings is the budget every system port's receive rings reserve
	// from (other_config:gvs-rx-ring-budget, changed live by
	// SetConfig).
	rings *netdev.MemoryBudget
	// spares keeps receive sockets ready for system ports (made with
	// the first system port, closed by Close and when the last system
	// port goes; its rings reserve from rings).
	spares *afpacket.SparePool
	// dummies are the open dummy devices (netdev-dummy/* commands).
	dummies *dummy.Registry
	// pmdCfg is the PMD configuration in effect (nil before the
	// datapath runs), so that SetConfig leaves the PMDs alone when
	// only the budget changed.
	pmdCfg *dpif.PMDConfig
	// ctWant is the conntrack configuration the reconciler last set
	// (nil: none yet), ct what its tracker has of it (conntrack.go).
	ctWant *bridge.ConntrackConfig
	ct     ctApplied
	// patches are the patch ports (patch.go): no device, no datapath
	// port.
	patches map[string]*patchPort
}

type port struct {
	spec    bridge.PortSpec
	no      uint32
	ofport  uint32 // OpenFlow number
	dev     netdev.Device
	ifindex int
	// link, mac and mtu are the device as the kernel's link events last
	// described it (read from the device when the port was added); gone:
	// the device was deleted, renamed or replaced by another of the same
	// name.
	link   netdev.LinkState
	resets int // carrier transitions seen
	mac    net.HardwareAddr
	mtu    int
	gone   bool
	// virtual: a device with no kernel link (dummy), which link events
	// never concern; its state is read from the device.
	virtual bool
}

var _ bridge.Datapath = (*Datapath)(nil)

// New returns an adapter; the datapath itself starts with SetConfig (or
// the first bridge).
func New(cfg Config) *Datapath {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Datapath{cfg: cfg, log: cfg.Logger, bridges: map[string]*ofproto.Bridge{},
		dpTypes: map[string]string{}, created: map[string]time.Time{}, ports: map[string]*port{},
		byIndex: map[int]*port{}, rings: netdev.NewMemoryBudget(0), dummies: dummy.NewRegistry()}
}

// Dummies returns the registry of the adapter's dummy devices, for the
// netdev-dummy/* commands.
func (d *Datapath) Dummies() *dummy.Registry { return d.dummies }

// dummyType returns the type of dummy device to open for spec on a bridge
// of datapath type dpType, or "" when spec is not a dummy port: type
// dummy (and dummy-internal, dummy-pmd), an internal port of a dummy
// bridge (Open vSwitch's dummy datapath opens those as dummy-internal),
// and with --enable-dummy=system or =override the types they replace.
func (d *Datapath) dummyType(spec bridge.PortSpec, dpType string) string {
	if d.cfg.Dummy == DummyDisabled {
		return ""
	}
	switch {
	case spec.Type == "dummy" || spec.Type == "dummy-internal" || spec.Type == "dummy-pmd":
		return spec.Type
	case spec.Type == "internal" && dpType == "dummy":
		return "dummy-internal"
	case spec.Type == "system" && d.cfg.Dummy >= DummySystem:
		return spec.Type
	case d.cfg.Dummy == DummyOverride:
		return spec.Type
	}
	return ""
}

// SetConfig applies the receive-ring budget (at once: rings grow within
// the new limit, and shrink on their next check if it is now exceeded)
// and the PMD settings: to the running datapath in place, ports, flows
// and MAC tables kept (dpif.Datapath.SetPMDConfig), or to the datapath it
// starts when none runs yet; PMD settings equal to those in effect are
// not applied again. A CPU mask the datapath refuses is reported and the
// PMDs run unpinned instead, with the rest of the settings applied.
func (d *Datapath) SetConfig(cfg bridge.DatapathConfig) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.rings.SetLimit(cfg.RxRingBudget)
	pc := dpif.PMDConfig{CPUMask: cfg.PMDCPUMask, PMDs: d.cfg.PMDs, MaxSleep: cfg.PMDMaxSleep, RxqAssign: cfg.RxqAssign}
	if d.dp != nil && d.pmdCfg != nil && *d.pmdCfg == pc {
		return nil
	}
	// What was asked, even if a refused mask left the PMDs unpinned:
	// asking the same again (with another budget) changes nothing.
	asked := pc
	defer func() {
		if d.dp != nil {
			d.pmdCfg = &asked
		}
	}()
	apply := func(pc dpif.PMDConfig) error {
		if d.dp != nil {
			return d.dp.SetPMDConfig(pc)
		}
		dp, err := dpif.New(dpif.Config{Logger: d.log.With("module", "dpif"), PMDs: pc.PMDs, PMDCPUMask: pc.CPUMask,
			MaxSleep: pc.MaxSleep, RxqAssign: pc.RxqAssign})
		if err != nil {
			return err
		}
		d.dp, d.sw = dp, ofproto.New(dp, d.log.With("module", "ofproto"))
		d.applyConntrackLocked()
		return nil
	}
	err := apply(pc)
	if err == nil || cfg.PMDCPUMask == "" {
		return err
	}
	maskErr := fmt.Errorf("pmd-cpu-mask %s: %w; PMD threads are not pinned", cfg.PMDCPUMask, err)
	pc.CPUMask = ""
	if err := apply(pc); err != nil {
		return errors.Join(maskErr, err)
	}
	return maskErr
}

func (d *Datapath) ensureLocked() error {
	if d.dp != nil {
		return nil
	}
	dp, err := dpif.New(dpif.Config{Logger: d.log.With("module", "dpif"), PMDs: d.cfg.PMDs})
	if err != nil {
		return err
	}
	d.dp, d.sw = dp, ofproto.New(dp, d.log.With("module", "ofproto"))
	d.applyConntrackLocked()
	return nil
}

func bridgeConfig(name string, c bridge.BridgeConfig, log *slog.Logger) ofproto.BridgeConfig {
	dpType := c.DatapathType
	if dpType == "" {
		dpType = "system"
	}
	return ofproto.BridgeConfig{MACTableSize: c.MACTableSize, MACAgingTime: c.MACAgingTime, ForwardBPDU: c.ForwardBPDU,
		Log: log.With("module", "ofproto", "bridge", name), DatapathType: dpType}
}

func (d *Datapath) AddBridge(name string, cfg bridge.BridgeConfig) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if cfg.DatapathType == "dummy" && d.cfg.Dummy == DummyDisabled {
		return ErrDummyDisabled
	}
	if err := d.ensureLocked(); err != nil {
		return err
	}
	br, err := d.sw.AddBridge(name, bridgeConfig(name, cfg, d.log))
	if err != nil {
		return err
	}
	// Standalone with no controller (the default flow) until a
	// connection manager takes the bridge over.
	br.SetFailMode(ofproto.FailStandalone)
	br.SetPortAdmin(d.setAdmin)
	br.SetCTZoneTimeoutPolicies(d.ct.zonePolicies)
	d.bridges[name] = br
	d.dpTypes[name] = cfg.DatapathType
	d.created[name] = time.Now()
	return nil
}

func (d *Datapath) SetBridge(name string, cfg bridge.BridgeConfig) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	br := d.bridges[name]
	if br == nil {
		return fmt.Errorf("%w: %s", ofproto.ErrNoBridge, name)
	}
	br.SetNormalConfig(cfg.MACTableSize, cfg.MACAgingTime, cfg.ForwardBPDU)
	br.SetDatapathType(bridgeConfig(name, cfg, d.log).DatapathType)
	d.flowsStale = true
	// Ports opened already keep their devices; ports added from now on
	// follow the new type.
	d.dpTypes[name] = cfg.DatapathType
	return nil
}

func (d *Datapath) DelBridge(name string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.bridges[name] == nil {
		return fmt.Errorf("%w: %s", ofproto.ErrNoBridge, name)
	}
	delete(d.bridges, name)
	delete(d.dpTypes, name)
	delete(d.conns, name)
	delete(d.created, name)
	return d.sw.DelBridge(name)
}

// open opens the device of spec's type with the socket buffer size
// given; afxdp ports share umem unless their options say otherwise, and
// system ports take ready sockets from spares when they fit. It is
// called concurrently for the ports of one AddPorts call.
func (d *Datapath) open(spec bridge.PortSpec, dpType string, sockBuf int, umem *afxdp.UMEMGroup, spares *afpacket.SparePool) (netdev.Device, error) {
	logger := d.log.With("module", "netdev", "device", spec.Name)
	if typ := d.dummyType(spec, dpType); typ != "" {
		cfg, err := dummy.ConfigFromOptions(spec.Name, typ, spec.Options)
		if err != nil {
			return nil, err
		}
		cfg.MAC, cfg.Logger, cfg.RunDir = spec.MAC, logger, d.cfg.RunDir
		return d.dummies.Open(cfg)
	}
	switch spec.Type {
	case "dummy", "dummy-internal", "dummy-pmd":
		return nil, fmt.Errorf("%s: type %q: %w", spec.Name, spec.Type, ErrDummyDisabled)
	case "system":
		cfg, err := afpacket.ConfigFromOptions(spec.Name, spec.Options, logger)
		if err != nil {
			return nil, err
		}
		cfg.SocketBuffer = sockBuf
		cfg.Budget = d.rings
		cfg.Spares = spares
		return afpacket.Open(cfg)
	case "internal", "tap":
		return tap.Open(tap.Config{Name: spec.Name, Type: spec.Type, MAC: spec.MAC, Logger: logger})
	case "afxdp":
		cfg, err := afxdp.ConfigFromOptions(spec.Name, spec.Options, logger)
		if err != nil {
			return nil, err
		}
		cfg.UMEM = umem
		return afxdp.Open(cfg)
	}
	return nil, fmt.Errorf("%s: type %q: %w", spec.Name, spec.Type, bridge.ErrUnsupportedType)
}

// AddPort adds one port: AddPorts of one spec.
func (d *Datapath) AddPort(spec bridge.PortSpec) error {
	return d.AddPorts([]bridge.PortSpec{spec})[0]
}

// AddPorts opens the specs' devices concurrently (at most
// dpif.MaxParallelDeviceOps at a time: opening is mostly waiting in the
// kernel), without holding the adapter's lock, then adds the ones that
// opened to the datapath in one step (dpif.PortsAdd) and to their
// bridges. A spec that fails opened nothing: its device, if opened, is
// closed again.
func (d *Datapath) AddPorts(specs []bridge.PortSpec) []error {
	var patchAt, devAt []int
	for i, spec := range specs {
		if spec.Type == "patch" {
			patchAt = append(patchAt, i)
		} else {
			devAt = append(devAt, i)
		}
	}
	if len(patchAt) == 0 {
		return d.addDevicePorts(specs)
	}
	errs := make([]error, len(specs))
	if len(devAt) > 0 {
		devSpecs := make([]bridge.PortSpec, len(devAt))
		for j, i := range devAt {
			devSpecs[j] = specs[i]
		}
		for j, err := range d.addDevicePorts(devSpecs) {
			errs[devAt[j]] = err
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.ensureLocked(); err != nil {
		for _, i := range patchAt {
			errs[i] = err
		}
		return errs
	}
	d.addPatchesLocked(specs, patchAt, errs)
	return errs
}

// addDevicePorts is AddPorts for ports with a device.
func (d *Datapath) addDevicePorts(specs []bridge.PortSpec) []error {
	errs := make([]error, len(specs))
	d.mu.Lock()
	if err := d.ensureLocked(); err != nil {
		d.mu.Unlock()
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	sockBuf := d.sockBuf
	dpTypes := maps.Clone(d.dpTypes)
	inBatch := map[string]bool{}
	var afxdpPorts, systemPorts bool
	for i, spec := range specs {
		switch {
		case d.bridges[spec.Bridge] == nil:
			errs[i] = fmt.Errorf("%w: %s", ofproto.ErrNoBridge, spec.Bridge)
		case d.ports[spec.Name] != nil || d.patches[spec.Name] != nil || inBatch[spec.Name]:
			errs[i] = fmt.Errorf("%s: %w", spec.Name, dpif.ErrDevInUse)
		}
		inBatch[spec.Name] = true
		if d.dummyType(spec, d.dpTypes[spec.Bridge]) != "" {
			continue
		}
		afxdpPorts = afxdpPorts || spec.Type == "afxdp"
		systemPorts = systemPorts || spec.Type == "system"
	}
	if systemPorts && d.spares == nil {
		d.spares = afpacket.NewSparePool(afpacket.SpareConfig{Budget: d.rings, Logger: d.log.With("module", "netdev")})
	}
	spares := d.spares
	if afxdpPorts && d.umem == nil {
		umem, err := afxdp.NewUMEMGroup(afxdp.GroupConfig{Logger: d.log.With("module", "netdev")})
		if err != nil {
			for i, spec := range specs {
				if errs[i] == nil && spec.Type == "afxdp" {
					errs[i] = err
				}
			}
		}
		d.umem = umem
	}
	umem := d.umem
	d.mu.Unlock()

	// Dummy devices get their numbered MACs in a fixed order, not in the
	// order the concurrent opens run: the bridge's own port first, as
	// Open vSwitch creates it first (it then takes the bridge's
	// address), then by name.
	var dummyAt []int
	for i, spec := range specs {
		if errs[i] == nil && d.dummyType(spec, dpTypes[spec.Bridge]) != "" {
			dummyAt = append(dummyAt, i)
		}
	}
	slices.SortFunc(dummyAt, func(a, b int) int {
		ai, bi := specs[a].Type == "internal", specs[b].Type == "internal"
		if ai != bi {
			if ai {
				return -1
			}
			return 1
		}
		return strings.Compare(specs[a].Name, specs[b].Name)
	})
	dummyMACs := map[int]net.HardwareAddr{}
	for k, mac := range d.dummies.ReserveMACs(len(dummyAt)) {
		dummyMACs[dummyAt[k]] = mac
	}

	devs := make([]netdev.Device, len(specs))
	opened := make([]*port, len(specs))
	dpif.Parallel(len(specs), func(i int) {
		if errs[i] != nil {
			return
		}
		spec := specs[i]
		if spec.MAC == nil && dummyMACs[i] != nil {
			spec.MAC = dummyMACs[i]
		}
		dev, err := d.open(spec, dpTypes[spec.Bridge], sockBuf, umem, spares)
		if err != nil {
			errs[i] = err
			return
		}
		if sockBuf != 0 && spec.Type != "system" {
			if _, err := dev.SetSocketBuffers(sockBuf); err != nil {
				d.log.Warn(spec.Name + ": " + err.Error())
			}
		}
		if spec.MTURequest > 0 && dev.MTU() != spec.MTURequest {
			if err := dev.SetMTU(spec.MTURequest); err != nil {
				d.log.Warn(fmt.Sprintf("%s: setting MTU %d: %v", spec.Name, spec.MTURequest, err))
			}
		}
		link := dev.Link()
		devs[i] = dev
		_, virtual := dev.(*dummy.Device)
		opened[i] = &port{spec: spec, dev: dev, ifindex: link.IfIndex, link: link, mac: dev.MAC(), mtu: dev.MTU(), virtual: virtual}
	})

	d.mu.Lock()
	defer d.mu.Unlock()
	defer d.dropSparesIfUnused() // none of the system ports was added
	var batch []netdev.Device
	var idx []int
	for i, dev := range devs {
		if dev != nil {
			batch, idx = append(batch, dev), append(idx, i)
		}
	}
	if len(batch) == 0 {
		return errs
	}
	if d.dp == nil { // closed meanwhile
		for _, dev := range batch {
			dev.Close()
		}
		for _, i := range idx {
			errs[i] = dpif.ErrClosed
		}
		return errs
	}
	nos, addErrs := d.addToDatapath(batch, opened, idx)
	var undo []uint32
	for j, i := range idx {
		if addErrs[j] != nil {
			batch[j].Close()
			errs[i] = addErrs[j]
			continue
		}
		p := opened[i]
		p.no = nos[j]
		br := d.bridges[p.spec.Bridge]
		if br == nil { // deleted while the devices opened
			undo = append(undo, p.no)
			errs[i] = fmt.Errorf("%w: %s", ofproto.ErrNoBridge, p.spec.Bridge)
			continue
		}
		d.ports[p.spec.Name] = p
		if p.ifindex != 0 {
			d.byIndex[p.ifindex] = p
		}
	}
	undo = append(undo, d.addToBridgesLocked(opened, errs)...)
	if len(undo) > 0 {
		d.dp.PortsDel(undo)
	}
	return errs
}

// addToDatapath adds the opened devices to the datapath: the dummy
// devices of dummy bridges one by one under the number Open vSwitch's
// dummy datapath would give them (dummyPortNo), when it is free, and the
// rest in one dpif.PortsAdd; both in name order, so that who gets a
// contested number, and the order of the first free ones, do not depend
// on the order of the batch. Caller holds d.mu.
func (d *Datapath) addToDatapath(batch []netdev.Device, opened []*port, idx []int) ([]uint32, []error) {
	nos, errs := make([]uint32, len(batch)), make([]error, len(batch))
	var rest []netdev.Device
	var restAt []int
	order := make([]int, len(batch))
	for j := range order {
		order[j] = j
	}
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(batch[a].Name(), batch[b].Name()) })
	for _, j := range order {
		dev := batch[j]
		p := opened[idx[j]]
		if no, ok := dummyPortNo(p.spec.Name); ok && p.virtual && d.dpTypes[p.spec.Bridge] == "dummy" {
			n, err := d.dp.PortAdd(dev, no)
			if err == nil {
				nos[j] = n
				continue
			}
			if !errors.Is(err, dpif.ErrPortExists) {
				errs[j] = err
				continue
			}
		}
		rest, restAt = append(rest, dev), append(restAt, j)
	}
	if len(rest) > 0 {
		rnos, rerrs := d.dp.PortsAdd(rest)
		for k, j := range restAt {
			nos[j], errs[j] = rnos[k], rerrs[k]
		}
	}
	return nos, errs
}

// dummyPortNo is the datapath port number Open vSwitch's dummy datapath
// tries first for a port (dpif-netdev's choose_port, "to make writing
// tests easier"): the number in its name (p1: 1, vif2: 2), plus 100 for
// a name beginning with "br" (br0: 100).
func dummyPortNo(name string) (uint32, bool) {
	start := uint32(0)
	if strings.HasPrefix(name, "br") {
		start = 100
	}
	i := strings.IndexFunc(name, func(r rune) bool { return r >= '0' && r <= '9' })
	if i < 0 {
		return 0, false
	}
	j := i
	for j < len(name) && name[j] >= '0' && name[j] <= '9' {
		j++
	}
	n, err := strconv.ParseUint(name[i:j], 10, 32)
	if err != nil {
		return 0, false
	}
	no := start + uint32(n)
	if no == 0 || no == dpif.AutoPortNo {
		return 0, false
	}
	return no, true
}

// addToBridgesLocked adds the ports just added to the datapath to their
// bridges, which number them (per bridge in one call, so new ports are
// numbered in name order as Open vSwitch does). It returns the datapath
// ports of those a bridge refused, with their errors set in errs.
func (d *Datapath) addToBridgesLocked(opened []*port, errs []error) (undo []uint32) {
	byBridge := map[string][]int{}
	for i, p := range opened {
		if p != nil && errs[i] == nil && d.ports[p.spec.Name] == p {
			byBridge[p.spec.Bridge] = append(byBridge[p.spec.Bridge], i)
		}
	}
	for name, idx := range byBridge {
		br := d.bridges[name]
		specs := make([]ofproto.PortSpec, len(idx))
		for j, i := range idx {
			p := opened[i]
			var hw [6]byte
			copy(hw[:], p.mac)
			specs[j] = ofproto.PortSpec{Name: p.spec.Name, DPPort: p.no, Request: p.spec.OFPortRequest,
				Previous: p.spec.PreviousOFPort, VLAN: macPortConfig(p.spec.VLAN), MAC: hw, LinkDown: !p.link.CarrierUp, SpeedMbps: p.link.SpeedMbps,
				DummyQueue: p.virtual}
		}
		nums, perrs := br.AddPorts(specs)
		for j, i := range idx {
			p := opened[i]
			if perrs[j] != nil {
				errs[i] = perrs[j]
				delete(d.ports, p.spec.Name)
				if d.byIndex[p.ifindex] == p {
					delete(d.byIndex, p.ifindex)
				}
				undo = append(undo, p.no) // PortsDel closes the device
				continue
			}
			p.ofport = nums[j]
		}
	}
	return undo
}

func macPortConfig(v bridge.VLANConfig) maclearn.PortConfig {
	c := maclearn.PortConfig{Tag: uint16(v.Tag), VLANMode: maclearn.VLANMode(v.Mode)}
	for _, t := range v.Trunks {
		c.Trunks = append(c.Trunks, uint16(t))
	}
	return c
}

var _ bridge.FlowSyncer = (*Datapath)(nil)

// SyncFlows implements bridge.FlowSyncer: after a VLAN or NORMAL setting
// changed, one revalidation round, run outside the adapter's lock.
func (d *Datapath) SyncFlows() {
	d.mu.Lock()
	stale, sw := d.flowsStale, d.sw
	d.flowsStale = false
	d.mu.Unlock()
	if stale && sw != nil {
		sw.Handler().Revalidate()
	}
}

func (d *Datapath) SetPort(spec bridge.PortSpec) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if pp := d.patches[spec.Name]; pp != nil {
		return d.setPatchLocked(pp, spec)
	}
	p := d.ports[spec.Name]
	if p == nil {
		return fmt.Errorf("%s: %w", spec.Name, dpif.ErrNoPort)
	}
	br := d.bridges[spec.Bridge]
	if br == nil {
		return fmt.Errorf("%w: %s", ofproto.ErrNoBridge, spec.Bridge)
	}
	if !slices.Equal(p.spec.VLAN.Trunks, spec.VLAN.Trunks) || p.spec.VLAN.Tag != spec.VLAN.Tag || p.spec.VLAN.Mode != spec.VLAN.Mode {
		if err := br.SetPortVLAN(spec.Name, macPortConfig(spec.VLAN)); err != nil {
			return err
		}
		d.flowsStale = true
	}
	if spec.OFPortRequest != p.spec.OFPortRequest {
		n, err := br.SetPortRequest(spec.Name, spec.OFPortRequest)
		if err != nil {
			return err
		}
		p.ofport = n
	}
	spec.PreviousOFPort = p.spec.PreviousOFPort
	if spec.MTURequest > 0 && spec.MTURequest != p.dev.MTU() {
		if err := p.dev.SetMTU(spec.MTURequest); err != nil {
			return fmt.Errorf("setting MTU %d: %w", spec.MTURequest, err)
		}
		// PortState answers at once, before the link event arrives.
		p.mtu = p.dev.MTU()
	}
	p.spec = spec
	return nil
}

// DelPort removes one port: DelPorts of one name.
func (d *Datapath) DelPort(name string) error {
	return d.DelPorts([]string{name})[0]
}

// DelPorts removes the ports from their bridges and from the datapath
// in one step (dpif.PortsDel), which closes their devices concurrently.
func (d *Datapath) DelPorts(names []string) []error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.delPortsLocked(names)
}

func (d *Datapath) delPortsLocked(names []string) []error {
	errs := make([]error, len(names))
	var nos []uint32
	var idx []int
	for i, name := range names {
		if ok, err := d.delPatchLocked(name); ok {
			errs[i] = err
			continue
		}
		p := d.ports[name]
		if p == nil {
			errs[i] = fmt.Errorf("%s: %w", name, dpif.ErrNoPort)
			continue
		}
		delete(d.ports, name)
		if d.byIndex[p.ifindex] == p {
			delete(d.byIndex, p.ifindex)
		}
		if br := d.bridges[p.spec.Bridge]; br != nil {
			if err := br.DelPort(p.spec.Name); err != nil {
				errs[i] = err
			}
		}
		nos, idx = append(nos, p.no), append(idx, i)
	}
	d.dropSparesIfUnused()
	if len(nos) == 0 || d.dp == nil {
		return errs
	}
	for j, err := range d.dp.PortsDel(nos) {
		errs[idx[j]] = errors.Join(errs[idx[j]], err)
	}
	return errs
}

// dropSparesIfUnused closes the pool of ready sockets once no system
// port is left: a daemon without such ports keeps no spares.
func (d *Datapath) dropSparesIfUnused() {
	if d.spares == nil {
		return
	}
	for _, p := range d.ports {
		if p.spec.Type == "system" && !p.virtual {
			return
		}
	}
	d.spares.Close()
	d.spares = nil
}

// PortState answers from what the adapter keeps: the link, MAC and MTU
// the kernel's link events last reported (LinkEvents), and the device's
// status. A device deleted, renamed, or replaced by another of the same
// name (another interface index) is gone: the reconciler re-adds the
// port, which opens the new one.
func (d *Datapath) PortState(name string) (bridge.PortState, error) {
	d.mu.Lock()
	if pp := d.patches[name]; pp != nil {
		defer d.mu.Unlock()
		return d.patchState(pp), nil
	}
	p := d.ports[name]
	var st bridge.PortState
	gone := false
	if p != nil {
		if p.virtual {
			// No link events: the device's own state (set-admin-state).
			d.refreshVirtualLocked(p)
		}
		st = bridge.PortState{Link: p.link, CarrierResets: p.resets, MAC: slices.Clone(p.mac), MTU: p.mtu, OFPort: int(p.ofport)}
		gone = p.gone
	}
	d.mu.Unlock()
	if p == nil {
		return bridge.PortState{}, fmt.Errorf("%s: %w", name, dpif.ErrNoPort)
	}
	if gone {
		return bridge.PortState{}, fmt.Errorf("%s: deleted or replaced: %w", name, netdev.ErrNoDevice)
	}
	st.Status = p.dev.Status()
	return st, nil
}

// PortStats reads the device's counters.
func (d *Datapath) PortStats(name string) (bridge.PortStats, error) {
	d.mu.Lock()
	if pp := d.patches[name]; pp != nil {
		defer d.mu.Unlock()
		return d.patchStats(pp), nil
	}
	p := d.ports[name]
	d.mu.Unlock()
	if p == nil {
		return bridge.PortStats{}, fmt.Errorf("%s: %w", name, dpif.ErrNoPort)
	}
	return bridge.PortStats{Stats: p.dev.Stats(), Custom: source.CustomStatsOf(p.dev)}, nil
}

// SetSocketBuffers applies the size to every open device now and to the
// devices opened later.
func (d *Datapath) SetSocketBuffers(bytes int) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sockBuf = bytes
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(d.ports)) {
		if _, err := d.ports[name].dev.SetSocketBuffers(bytes); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Close removes every port (closing the devices concurrently: tap devices
// we created disappear, XDP programs are detached) and stops the
// datapath: what ovs-vswitchd's "exit --cleanup" removes.
func (d *Datapath) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.closeLocked()
}

// Detach stops the datapath as Close does but leaves the tap devices of
// "internal" and "tap" ports in the kernel (persistent), as
// ovs-vswitchd's plain "exit" leaves them (Open vSwitch makes them
// persistent and only deleting the datapath removes them); the next start
// attaches to them again. Everything else goes as with Close: gvs's
// datapath lives in the process.
func (d *Datapath) Detach() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, p := range d.ports {
		if k, ok := p.dev.(interface{ KeepOnClose() }); ok {
			k.KeepOnClose()
		}
	}
	return d.closeLocked()
}

func (d *Datapath) closeLocked() error {
	// All ports leave the datapath in one step; their devices are
	// closed concurrently. The spare sockets go with the last system
	// port.
	errs := d.delPortsLocked(append(slices.Sorted(maps.Keys(d.patches)), slices.Sorted(maps.Keys(d.ports))...))
	d.bridges = map[string]*ofproto.Bridge{}
	d.dpTypes = map[string]string{}
	d.created = map[string]time.Time{}
	if err := d.stopLocked(); err != nil {
		errs = append(errs, err)
	}
	if d.umem != nil {
		// Its memory goes when the last port and loan have let go.
		errs = append(errs, d.umem.Close())
		d.umem = nil
	}
	return errors.Join(errs...)
}

func (d *Datapath) stopLocked() error {
	if d.dp == nil {
		return nil
	}
	d.sw.Close()
	err := d.dp.Close()
	d.dp, d.sw, d.pmdCfg = nil, nil, nil
	return err
}

// adminSetter is a device whose administrative state the switch can set
// (the dummy devices; kernel devices keep theirs).
type adminSetter interface{ SetAdminState(up bool) }

// setAdmin sets a port's device up or down for a port mod's
// OFPPC_PORT_DOWN, when the device can.
func (d *Datapath) setAdmin(name string, up bool) {
	d.mu.Lock()
	p := d.ports[name]
	d.mu.Unlock()
	if p == nil {
		return
	}
	if a, ok := p.dev.(adminSetter); ok {
		a.SetAdminState(up)
		if p.virtual {
			d.mu.Lock()
			d.refreshVirtualLocked(p)
			d.mu.Unlock()
		}
	}
}

// refreshVirtualLocked reads a device without link events (dummy) and
// tells its bridge when the carrier changed (OFPPS_LINK_DOWN).
func (d *Datapath) refreshVirtualLocked(p *port) {
	was := p.link.CarrierUp
	p.link = p.dev.Link()
	p.mtu = p.dev.MTU()
	if was != p.link.CarrierUp {
		if br := d.bridges[p.spec.Bridge]; br != nil && p.ofport != 0 {
			br.SetPortLink(p.spec.Name, p.link.CarrierUp)
		}
	}
}

package dpadapter

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"gvs/bridge"
	"gvs/dpif"
	"gvs/metrics/source"
	"gvs/netdev"
	"gvs/netdev/afpacket"
	"gvs/netdev/afxdp"
	"gvs/netdev/tap"
	"gvs/ofproto"
)

// Config configures the adapter.
type Config struct {
	Logger *slog.Logger // nil: discard
	// PMDs is the number of unpinned PMD goroutines (0: dpif's default).
	PMDs int
}

// Datapath implements bridge.Datapath.
type Datapath struct {
	cfg Config
	log *slog.Logger

	mu      sync.Mutex
	dp      *dpif.Datapath
	sw      *ofproto.Switch
	bridges map[string]*ofproto.Bridge
	created map[string]time.Time // when each bridge was added
	ports   map[string]*port
	sockBuf int
	// umem is the UMEM every afxdp port shares unless its
	// options:xdp-shared-umem is false (made with the first afxdp port,
	// closed by Close).
	umem *afxdp.UMEMGroup
	// rings is the budget every system port's receive rings reserve
	// from (other_config:gvs-rx-ring-budget, changed live by
	// SetConfig).
	rings *netdev.MemoryBudget
	// pmdCfg is the PMD configuration in effect (nil before the
	// datapath runs), so that SetConfig leaves the PMDs alone when
	// only the budget changed.
	pmdCfg *dpif.PMDConfig
}

type port struct {
	spec    bridge.PortSpec
	no      uint32
	dev     netdev.Device
	ifindex int
}

var _ bridge.Datapath = (*Datapath)(nil)

// New returns an adapter; the datapath itself starts with SetConfig (or
// the first bridge).
func New(cfg Config) *Datapath {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Datapath{cfg: cfg, log: cfg.Logger, bridges: map[string]*ofproto.Bridge{}, created: map[string]time.Time{}, ports: map[string]*port{},
		rings: netdev.NewMemoryBudget(0)}
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
	return nil
}

func bridgeConfig(c bridge.BridgeConfig) ofproto.BridgeConfig {
	return ofproto.BridgeConfig{MACTableSize: c.MACTableSize, MACAgingTime: c.MACAgingTime, ForwardBPDU: c.ForwardBPDU}
}

func (d *Datapath) AddBridge(name string, cfg bridge.BridgeConfig) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.ensureLocked(); err != nil {
		return err
	}
	br, err := d.sw.AddBridge(name, bridgeConfig(cfg))
	if err != nil {
		return err
	}
	d.bridges[name] = br
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
	br.SetConfig(bridgeConfig(cfg))
	return nil
}

func (d *Datapath) DelBridge(name string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.bridges[name] == nil {
		return fmt.Errorf("%w: %s", ofproto.ErrNoBridge, name)
	}
	delete(d.bridges, name)
	delete(d.created, name)
	return d.sw.DelBridge(name)
}

// open opens the device of spec's type.
func (d *Datapath) open(spec bridge.PortSpec) (netdev.Device, error) {
	logger := d.log.With("module", "netdev", "device", spec.Name)
	switch spec.Type {
	case "system":
		cfg, err := afpacket.ConfigFromOptions(spec.Name, spec.Options, logger)
		if err != nil {
			return nil, err
		}
		cfg.SocketBuffer = d.sockBuf
		cfg.Budget = d.rings
		return afpacket.Open(cfg)
	case "internal", "tap":
		return tap.Open(tap.Config{Name: spec.Name, Type: spec.Type, MAC: spec.MAC, Logger: logger})
	case "afxdp":
		cfg, err := afxdp.ConfigFromOptions(spec.Name, spec.Options, logger)
		if err != nil {
			return nil, err
		}
		if d.umem == nil {
			if d.umem, err = afxdp.NewUMEMGroup(afxdp.GroupConfig{Logger: d.log.With("module", "netdev")}); err != nil {
				return nil, err
			}
		}
		cfg.UMEM = d.umem
		return afxdp.Open(cfg)
	}
	return nil, fmt.Errorf("%s: type %q: %w", spec.Name, spec.Type, bridge.ErrUnsupportedType)
}

func portConfig(v bridge.VLANConfig) ofproto.PortConfig {
	c := ofproto.PortConfig{Tag: uint16(v.Tag), VLANMode: ofproto.VLANMode(v.Mode)}
	for _, t := range v.Trunks {
		c.Trunks = append(c.Trunks, uint16(t))
	}
	return c
}

func (d *Datapath) AddPort(spec bridge.PortSpec) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	br := d.bridges[spec.Bridge]
	if br == nil {
		return fmt.Errorf("%w: %s", ofproto.ErrNoBridge, spec.Bridge)
	}
	if d.ports[spec.Name] != nil {
		return fmt.Errorf("%s: %w", spec.Name, dpif.ErrDevInUse)
	}
	dev, err := d.open(spec)
	if err != nil {
		return err
	}
	if d.sockBuf != 0 && spec.Type != "system" {
		if _, err := dev.SetSocketBuffers(d.sockBuf); err != nil {
			d.log.Warn(spec.Name + ": " + err.Error())
		}
	}
	if spec.MTURequest > 0 && dev.MTU() != spec.MTURequest {
		if err := dev.SetMTU(spec.MTURequest); err != nil {
			d.log.Warn(fmt.Sprintf("%s: setting MTU %d: %v", spec.Name, spec.MTURequest, err))
		}
	}
	ifindex := dev.Link().IfIndex
	no, err := d.dp.PortAdd(dev, dpif.AutoPortNo)
	if err != nil {
		dev.Close()
		return err
	}
	if err := br.AddPort(no, portConfig(spec.VLAN)); err != nil {
		d.dp.PortDel(no) // closes dev
		return err
	}
	d.ports[spec.Name] = &port{spec: spec, no: no, dev: dev, ifindex: ifindex}
	return nil
}

func (d *Datapath) SetPort(spec bridge.PortSpec) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	p := d.ports[spec.Name]
	if p == nil {
		return fmt.Errorf("%s: %w", spec.Name, dpif.ErrNoPort)
	}
	if !slices.Equal(p.spec.VLAN.Trunks, spec.VLAN.Trunks) || p.spec.VLAN.Tag != spec.VLAN.Tag || p.spec.VLAN.Mode != spec.VLAN.Mode {
		if err := d.bridges[spec.Bridge].SetPort(p.no, portConfig(spec.VLAN)); err != nil {
			return err
		}
	}
	if spec.MTURequest > 0 && spec.MTURequest != p.dev.MTU() {
		if err := p.dev.SetMTU(spec.MTURequest); err != nil {
			return fmt.Errorf("setting MTU %d: %w", spec.MTURequest, err)
		}
	}
	p.spec = spec
	return nil
}

func (d *Datapath) DelPort(name string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.delPortLocked(name)
}

func (d *Datapath) delPortLocked(name string) error {
	p := d.ports[name]
	if p == nil {
		return fmt.Errorf("%s: %w", name, dpif.ErrNoPort)
	}
	delete(d.ports, name)
	var errs []error
	if br := d.bridges[p.spec.Bridge]; br != nil {
		if err := br.DelPort(p.no); err != nil {
			errs = append(errs, err)
		}
	}
	if err := d.dp.PortDel(p.no); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// PortState reads the device. A device whose name no longer resolves, or
// resolves to another interface index (deleted and created again), is
// gone: the reconciler re-adds the port, which opens the new one.
func (d *Datapath) PortState(name string) (bridge.PortState, error) {
	d.mu.Lock()
	p := d.ports[name]
	d.mu.Unlock()
	if p == nil {
		return bridge.PortState{}, fmt.Errorf("%s: %w", name, dpif.ErrNoPort)
	}
	l, err := netlink.LinkByName(name)
	var nf netlink.LinkNotFoundError
	if errors.As(err, &nf) || errors.Is(err, unix.ENODEV) {
		return bridge.PortState{}, fmt.Errorf("%s: %w", name, netdev.ErrNoDevice)
	}
	if err == nil && p.ifindex != 0 && l.Attrs().Index != p.ifindex {
		return bridge.PortState{}, fmt.Errorf("%s: replaced by another device: %w", name, netdev.ErrNoDevice)
	}
	return bridge.PortState{
		Link:        p.dev.Link(),
		MAC:         p.dev.MAC(),
		MTU:         p.dev.MTU(),
		Stats:       p.dev.Stats(),
		CustomStats: source.CustomStatsOf(p.dev),
		Status:      p.dev.Status(),
	}, nil
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

// Close removes every port (closing the devices: tap devices we created
// disappear, XDP programs are detached) and stops the datapath.
func (d *Datapath) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(d.ports)) {
		if err := d.delPortLocked(name); err != nil {
			errs = append(errs, err)
		}
	}
	d.bridges = map[string]*ofproto.Bridge{}
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

package ofproto

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"gvs/dpif/conntrack"
	maclearn "gvs/ofproto/mac"
	"gvs/ofproto/mf"
	"gvs/ofproto/ofpact"
	"gvs/ofproto/pipeline"
	"gvs/ofproto/xlate"
)

// FailMode is Bridge.fail_mode: what the bridge does without a controller.
type FailMode uint8

const (
	// FailStandalone (the default): with no controller configured the
	// bridge has the flow "priority=0 actions=NORMAL" in table 0, so it
	// is a learning switch until a controller says otherwise.
	FailStandalone FailMode = iota
	// FailSecure: only the flows controllers add.
	FailSecure
)

// BridgeConfig configures an OpenFlow bridge.
type BridgeConfig struct {
	// MACTableSize, MACAgingTime and ForwardBPDU are NORMAL's settings
	// (other_config mac-table-size, mac-aging-time, forward-bpdu).
	MACTableSize int
	MACAgingTime time.Duration
	ForwardBPDU  bool
	// Now is the clock (tests); default time.Now.
	Now func() time.Time
	// Meters implements meters in the datapath; nil: no meters.
	Meters pipeline.MeterProvider
	// Log receives the bridge's warnings.
	Log *slog.Logger
	// DatapathType is the bridge's datapath type as Open vSwitch names
	// its backer ("system", "netdev", "dummy"): patch ports pair only
	// within one type.
	DatapathType string
}

// Bridge is one OpenFlow bridge: its pipeline (tables, groups, meters),
// its ports with their OpenFlow numbers, its MAC table and its
// translation settings. It implements xlate.Bridge (and upcall.Bridge)
// for translation and revalidation, which call it concurrently without
// taking its lock.
//
// Named Bridge while the NORMAL-only Bridge of this package still
// serves the datapath; it takes that name when translation replaces it.
type Bridge struct {
	name   string
	dpType string // BridgeConfig.DatapathType; under mu
	log    *slog.Logger
	now    func() time.Time
	pipe   *pipeline.Pipeline
	macs   *maclearn.Table

	xcfg      atomic.Pointer[xlate.Config]
	ports     atomic.Pointer[portSnapshot]
	tableMiss [pipeline.NumTables]atomic.Uint32
	events    atomic.Pointer[eventsBox]
	changed   atomic.Pointer[func()]
	portsHook atomic.Pointer[func()]
	packetOut atomic.Pointer[PacketOutFunc]
	counters  atomic.Pointer[func(uint32) (PortCounters, bool)]
	resumeFn  atomic.Pointer[ResumeFunc]
	adminFn   atomic.Pointer[func(string, bool)]
	ctSource  atomic.Pointer[func() conntrack.Conntrack] // ctflush.go
	recirc    atomic.Pointer[xlate.RecircTable]          // ctflush.go
	conts     continuations
	tlv       tlvTable
	trim      memTrim

	mu       sync.Mutex // ports, alloc, failMode, controllers; before the pipeline's lock
	alloc    *PortNumbers
	byName   map[string]*portState
	failMode FailMode
	hasCtrl  bool
	fragMode xlate.FragHandling
	stop     chan struct{} // the timer goroutine (Start/Close)
	done     chan struct{}
}

// portState is the bridge's own record of a port (under Bridge.mu).
type portState struct {
	xlate.Port
	vlan                maclearn.PortConfig
	hw                  [6]byte
	curr                uint32 // OFPPF_* current features (OpenFlow 1.1 layout)
	currSpeed, maxSpeed uint32 // kbit/s
	created             time.Time
	dummyQueue          bool
}

// portSnapshot is what translation reads: immutable once published.
type portSnapshot struct {
	byOF   map[uint32]*xlate.Port
	byDP   map[uint32]*xlate.Port
	sorted []*xlate.Port
}

// NewBridge creates a bridge with no ports and empty tables, as Open
// vSwitch's ofproto starts: the flows the switch owns come from whoever
// manages its fail mode (the connection manager, through FlushFlows and
// AddNormalFlow; or SetFailMode here), which starts out secure as
// connmgr_create does.
func NewBridge(name string, cfg BridgeConfig) *Bridge {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	b := &Bridge{
		name: name, dpType: cfg.DatapathType, log: cfg.Log, now: cfg.Now,
		macs:     maclearn.NewTable(cfg.MACTableSize, cfg.MACAgingTime),
		alloc:    NewPortNumbers(),
		byName:   map[string]*portState{},
		failMode: FailSecure,
	}
	b.pipe = pipeline.New(pipeline.Config{
		Now: cfg.Now, Events: flowRemovedSink{b}, Meters: cfg.Meters,
		Changed: func(uint64) {
			b.notifyChanged()
			b.trim.changed()
		},
	})
	b.trim.churn = b.pipe.Churn
	b.xcfg.Store(&xlate.Config{ForwardBPDU: cfg.ForwardBPDU, MissSendLen: 128, Now: cfg.Now})
	b.ports.Store(&portSnapshot{byOF: map[uint32]*xlate.Port{}, byDP: map[uint32]*xlate.Port{}})
	return b
}

// Pipeline returns the bridge's tables, groups and meters.
func (b *Bridge) Pipeline() *pipeline.Pipeline { return b.pipe }

// SetChanged installs the function called after anything translation
// depends on changed (the revalidator's kick). It must not block.
func (b *Bridge) SetChanged(fn func()) { b.changed.Store(&fn) }

// setPortsChanged installs the function called after the bridge's ports
// changed (the switch republishes its datapath port map).
func (b *Bridge) setPortsChanged(fn func()) { b.portsHook.Store(&fn) }

func (b *Bridge) portsChanged() {
	if fn := b.portsHook.Load(); fn != nil {
		(*fn)()
	}
}

func (b *Bridge) notifyChanged() {
	if fn := b.changed.Load(); fn != nil {
		(*fn)()
	}
}

// SetNormalConfig changes NORMAL's settings.
func (b *Bridge) SetNormalConfig(size int, aging time.Duration, forwardBPDU bool) {
	b.macs.SetLimits(size, aging)
	c := *b.xcfg.Load()
	if c.ForwardBPDU != forwardBPDU {
		c.ForwardBPDU = forwardBPDU
		b.xcfg.Store(&c)
		b.notifyChanged()
	}
}

// --- the default flow and fail mode (connmgr_flushed) ---

// normalActions is the default flow's "actions=NORMAL".
func normalActions() []pipeline.Action {
	return []pipeline.Action{&ofpact.Output{Port: mf.PortNormal}}
}

// flushed is connmgr_flushed: after the tables were emptied, a standalone
// bridge without controllers gets "priority=0 actions=NORMAL" back.
func (b *Bridge) flushed() {
	b.mu.Lock()
	add := b.failMode == FailStandalone && !b.hasCtrl
	b.mu.Unlock()
	if add {
		b.AddNormalFlow(0)
	}
}

// AddNormalFlow adds, in table 0, a flow matching everything with
// actions=NORMAL at priority (Open vSwitch's ofproto_add_flow: a flow
// the switch itself owns; above 0xffff it is hidden from OpenFlow). An
// identical flow already there is left alone, counters and all.
func (b *Bridge) AddNormalFlow(priority uint32) {
	var all mf.Match
	if r := b.findExactly(0, &all, int(priority)); r != nil && actionsAreNormal(r.Actions) {
		return
	}
	err := b.pipe.FlowMod(&pipeline.FlowMod{
		Command: pipeline.FlowAdd, Priority: int(priority), TableID: 0,
		NewCookie: 0, BufferID: pipeline.BufferNone, OutPort: mf.PortNone, OutGroup: pipeline.GroupAny,
		Flags: pipeline.FlagNoReadonly, Actions: normalActions(),
	})
	if err != nil {
		b.log.Warn("adding the default flow failed", "bridge", b.name, "err", err)
	}
}

// DeleteFlow deletes the flow with exactly this match and priority in
// table 0 (ofproto_delete_flow), without flow removed.
func (b *Bridge) DeleteFlow(m *mf.Match, priority uint32) {
	if b.findExactly(0, m, int(priority)) == nil {
		return
	}
	_ = b.pipe.FlowMod(&pipeline.FlowMod{
		Command: pipeline.FlowDeleteStrict, Match: *m, Priority: int(priority), TableID: 0,
		OutPort: mf.PortNone, OutGroup: pipeline.GroupAny, Flags: pipeline.FlagNoReadonly,
	})
}

func (b *Bridge) findExactly(table uint8, m *mf.Match, priority int) *pipeline.Rule {
	rules, _ := b.pipe.Flows(&pipeline.FlowQuery{
		TableID: table, Match: *m, Strict: true, Priority: priority,
		OutPort: mf.PortNone, OutGroup: pipeline.GroupAny, IncludeHidden: true,
	})
	if len(rules) == 0 {
		return nil
	}
	return rules[0]
}

func actionsAreNormal(acts []pipeline.Action) bool {
	if len(acts) != 1 {
		return false
	}
	o, ok := acts[0].(*ofpact.Output)
	return ok && o.Port == mf.PortNormal
}

// FlushFlows deletes every flow, group and meter (ofproto_flush__: flow
// removed goes out for flows that asked). The caller puts back the flows
// the switch owns (connmgr_flushed).
func (b *Bridge) FlushFlows() { b.pipe.Flush() }

// flushFlows is ofproto_flush_flows for a bridge whose fail mode is
// managed here: flush, then the default flow if it is due.
func (b *Bridge) flushFlows() {
	b.pipe.Flush()
	b.flushed()
}

// SetFailMode changes Bridge.fail_mode, for a bridge no connection
// manager manages (one that does calls FlushFlows and AddNormalFlow
// itself). A bridge without controllers flushes its flows when the mode
// changes, and the default flow follows the new mode
// (connmgr_set_fail_mode): a new bridge set to standalone gets
// "priority=0 actions=NORMAL".
func (b *Bridge) SetFailMode(mode FailMode) {
	b.mu.Lock()
	changed := b.failMode != mode
	b.failMode = mode
	flush := changed && !b.hasCtrl
	b.mu.Unlock()
	if flush {
		b.flushFlows()
	}
}

// SetHaveControllers says whether any controller is configured (the
// Controller column); when that changes the flows are flushed and the
// default flow follows (connmgr_set_controllers).
func (b *Bridge) SetHaveControllers(have bool) {
	b.mu.Lock()
	changed := b.hasCtrl != have
	b.hasCtrl = have
	b.mu.Unlock()
	if changed {
		b.flushFlows()
	}
}

// FailMode returns the bridge's fail mode.
func (b *Bridge) FailMode() FailMode {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.failMode
}

// --- xlate.Bridge ---

var _ xlate.Bridge = (*Bridge)(nil)

// Name implements xlate.Bridge.
func (b *Bridge) Name() string { return b.name }

// Version implements xlate.Bridge.
func (b *Bridge) Version() uint64 { return b.pipe.Version() }

// LookupRule implements xlate.Bridge.
func (b *Bridge) LookupRule(version uint64, table uint8, flow *mf.Flow, wc *mf.Wildcards) xlate.Rule {
	r := b.pipe.Lookup(version, table, flow, wc)
	b.pipe.CountLookup(table, r != nil)
	if r == nil {
		return nil
	}
	return xrule{r}
}

// TableMiss implements xlate.Bridge.
func (b *Bridge) TableMiss(table uint8) xlate.TableMiss {
	if int(table) >= len(b.tableMiss) {
		return xlate.MissDefault
	}
	return xlate.TableMiss(b.tableMiss[table].Load())
}

// SetTableMiss sets a table's miss behaviour (table mod); table
// pipeline.TableAll sets every table's.
func (b *Bridge) SetTableMiss(table uint8, miss xlate.TableMiss) error {
	if table == pipeline.TableAll {
		for i := range b.tableMiss {
			b.tableMiss[i].Store(uint32(miss))
		}
	} else if int(table) < len(b.tableMiss) {
		b.tableMiss[table].Store(uint32(miss))
	} else {
		return errBadTable
	}
	b.notifyChanged()
	return nil
}

var errBadTable = errors.New("ofproto: no such table")

// Config implements xlate.Bridge.
func (b *Bridge) Config() *xlate.Config { return b.xcfg.Load() }

// Port implements xlate.Bridge.
func (b *Bridge) Port(ofport uint32) *xlate.Port { return b.ports.Load().byOF[ofport] }

// PortByDatapath implements xlate.Bridge.
func (b *Bridge) PortByDatapath(dpPort uint32) *xlate.Port { return b.ports.Load().byDP[dpPort] }

// Ports implements xlate.Bridge.
func (b *Bridge) Ports() []*xlate.Port { return b.ports.Load().sorted }

// Group implements xlate.Bridge.
func (b *Bridge) Group(version uint64, id uint32) xlate.Group {
	g := b.pipe.Group(version, id)
	if g == nil {
		return nil
	}
	return xgroup{g}
}

// MACs implements xlate.Bridge.
func (b *Bridge) MACs() *maclearn.Table { return b.macs }

// xrule is a pipeline rule as translation sees it. It is one pointer, so
// converting it to the interface does not allocate.
type xrule struct{ r *pipeline.Rule }

var _ xlate.Rule = xrule{}

func (x xrule) TableID() uint8               { return x.r.TableID }
func (x xrule) Priority() uint16             { return uint16(x.r.Priority) }
func (x xrule) Cookie() uint64               { return x.r.Cookie }
func (x xrule) Match() *mf.Match             { return &x.r.Match }
func (x xrule) Actions() []xlate.Action      { return x.r.Actions }
func (x xrule) Credit(s xlate.Stats)         { x.r.Credit(s.Packets, s.Bytes, s.Used) }
func (x xrule) PipelineRule() *pipeline.Rule { return x.r }

// xgroup is a pipeline group as translation sees it.
type xgroup struct{ g *pipeline.Group }

var _ xlate.Group = xgroup{}

func (x xgroup) GroupID() uint32            { return x.g.ID }
func (x xgroup) GroupType() xlate.GroupType { return xlate.GroupType(x.g.Type) }
func (x xgroup) Buckets() []xlate.Bucket    { return x.g.Buckets }
func (x xgroup) Selection() (xlate.SelectionMethod, *mf.Wildcards, uint64) {
	return x.g.Props.SelectionMethod, &x.g.Props.Fields, x.g.Props.MethodParam
}
func (x xgroup) Credit(bucket int, s xlate.Stats) { x.g.Credit(bucket, s.Packets, s.Bytes) }

// --- ports ---

// PortSpec is a port to add to the bridge.
type PortSpec struct {
	Name   string
	DPPort uint32 // datapath port number
	// Request is Interface.ofport_request (0: none); Previous the number
	// the port had (Interface.ofport from the database; 0: none). The
	// bridge's own port (Name == bridge name) is always LOCAL.
	Request, Previous int
	VLAN              maclearn.PortConfig
	MAC               [6]byte
	// LinkDown: the device has no carrier (OFPPS_LINK_DOWN).
	LinkDown bool
	// SpeedMbps is the link speed (0: unknown): the port's current
	// features and speed.
	SpeedMbps int
	// DummyQueue: the device is like Open vSwitch's dummy netdev: one
	// queue (queue 0, statistics unknown), and only packet and byte
	// counters (port statistics report the others as unknown).
	DummyQueue bool
	// Patch: a patch port (Interface type=patch) with options:peer
	// PatchPeer. It has no datapath port (DPPort is ignored); the
	// switch pairs it with its peer (patch.go).
	Patch     bool
	PatchPeer string
}

// Errors of port configuration.
var (
	ErrPortExists = errors.New("ofproto: port exists")
	ErrNoOFPorts  = errors.New("ofproto: no OpenFlow port number left")
)

// AddPorts adds ports, numbering them as Open vSwitch does (see
// assignNumbers), and returns each one's OpenFlow number (0 for a port
// that could not be added: errs says why). Port-status ADD goes to the
// controllers for each.
func (b *Bridge) AddPorts(specs []PortSpec) (ofports []uint32, errs []error) {
	ofports, errs = make([]uint32, len(specs)), make([]error, len(specs))
	b.mu.Lock()
	now := b.now()
	var reqs []PortRequest
	vlans := make([]*maclearn.VLANPort, len(specs))
	for i, s := range specs {
		if b.byName[s.Name] != nil {
			errs[i] = fmt.Errorf("%w: %s", ErrPortExists, s.Name)
			continue
		}
		v, err := maclearn.NewVLANPort(s.VLAN)
		if err != nil {
			errs[i] = err
			continue
		}
		vlans[i] = v
		if s.Name != b.name {
			reqs = append(reqs, PortRequest{Name: s.Name, Request: s.Request, Previous: s.Previous})
		}
	}
	used := func(n uint32) bool {
		for _, p := range b.byName {
			if p.OFPort == n {
				return true
			}
		}
		return false
	}
	numbers := b.alloc.Assign(reqs, used, now)
	var added []*portState
	for i, s := range specs {
		if errs[i] != nil {
			continue
		}
		n := numbers[s.Name]
		if s.Name == b.name {
			n = mf.PortLocal
		}
		if n == 0 {
			errs[i] = fmt.Errorf("%w: %s", ErrNoOFPorts, s.Name)
			continue
		}
		p := &portState{vlan: s.VLAN, hw: s.MAC, created: now, dummyQueue: s.DummyQueue}
		p.curr, p.currSpeed = speedFeatures(s.SpeedMbps)
		p.Port = xlate.Port{OFPort: n, DPPort: s.DPPort, Name: s.Name, LinkDown: s.LinkDown, Live: !s.LinkDown, VLAN: vlans[i]}
		if s.Patch {
			p.Port.DPPort = xlate.NoDPPort
			p.Port.Patch = &xlate.PatchPort{PeerName: s.PatchPeer, Counters: new(xlate.PatchCounters)}
		}
		b.byName[s.Name] = p
		ofports[i] = n
		added = append(added, p)
	}
	b.publishPortsLocked()
	b.mu.Unlock()
	b.portsChanged()
	for _, p := range added {
		b.portStatus(PortAdded, nil, p)
	}
	if len(added) > 0 {
		b.notifyChanged()
	}
	return ofports, errs
}

// SetPortVLAN changes a port's NORMAL VLAN configuration; the MAC
// entries learned on it are forgotten.
func (b *Bridge) SetPortVLAN(name string, cfg maclearn.PortConfig) error {
	v, err := maclearn.NewVLANPort(cfg)
	if err != nil {
		return err
	}
	b.mu.Lock()
	p := b.byName[name]
	if p == nil {
		b.mu.Unlock()
		return fmt.Errorf("%w: %s", ErrNoPort, name)
	}
	np := *p
	np.VLAN, np.vlan = v, cfg
	b.byName[name] = &np
	b.publishPortsLocked()
	b.mu.Unlock()
	b.portsChanged()
	b.macs.FlushPort(np.OFPort)
	b.notifyChanged()
	return nil
}

// DelPort removes a port; its number is not reused for an hour. Port
// status DELETE goes to the controllers. Flows naming the port stay, as
// in Open vSwitch.
func (b *Bridge) DelPort(name string) error {
	b.mu.Lock()
	p := b.byName[name]
	if p == nil {
		b.mu.Unlock()
		return fmt.Errorf("%w: %s", ErrNoPort, name)
	}
	delete(b.byName, name)
	b.alloc.Freed(p.OFPort, b.now())
	b.publishPortsLocked()
	b.mu.Unlock()
	b.portsChanged()
	b.macs.FlushPort(p.OFPort)
	b.portStatus(PortDeleted, nil, p)
	b.notifyChanged()
	return nil
}

// OFPort returns the OpenFlow number of the named port (0 if none).
func (b *Bridge) OFPort(name string) uint32 {
	b.mu.Lock()
	defer b.mu.Unlock()
	if p := b.byName[name]; p != nil {
		return p.OFPort
	}
	return 0
}

// SetPortLink records a port's link state (carrier): OFPPS_LINK_DOWN and
// liveness for fast failover; port status MODIFY when it changed.
func (b *Bridge) SetPortLink(name string, up bool) {
	b.modifyPort(name, func(p *portState) {
		p.LinkDown = !up
		p.Live = up && p.Config&xlate.PortDown == 0
	})
}

// PortMod applies an OpenFlow port mod: config bits under mask. The
// hardware address must be the port's (OFPPMFC_BAD_HW_ADDR otherwise, as
// Open vSwitch checks).
func (b *Bridge) PortMod(ofport uint32, hw [6]byte, config, mask xlate.PortFlags) error {
	b.mu.Lock()
	var name string
	for n, p := range b.byName {
		if p.OFPort == ofport {
			name = n
			if p.hw != hw {
				b.mu.Unlock()
				return errBadHWAddr
			}
		}
	}
	b.mu.Unlock()
	if name == "" {
		return errBadPort
	}
	var downChanged, down bool
	b.modifyPort(name, func(p *portState) {
		old := p.Config
		p.Config = p.Config&^mask | config&mask
		p.Live = !p.LinkDown && p.Config&xlate.PortDown == 0
		down = p.Config&xlate.PortDown != 0
		downChanged = (old^p.Config)&xlate.PortDown != 0
	})
	// OFPPC_PORT_DOWN also takes the device down (or up), as Open
	// vSwitch's update_port_config turns NETDEV_UP off and on.
	if fn := b.adminFn.Load(); downChanged && fn != nil {
		(*fn)(name, !down)
	}
	return nil
}

// SetPortAdmin installs how the bridge sets a port's device
// administratively up or down (port mod's OFPPC_PORT_DOWN).
func (b *Bridge) SetPortAdmin(fn func(name string, up bool)) { b.adminFn.Store(&fn) }

func (b *Bridge) modifyPort(name string, edit func(*portState)) {
	b.mu.Lock()
	p := b.byName[name]
	if p == nil {
		b.mu.Unlock()
		return
	}
	np := *p
	edit(&np)
	if np.Port == p.Port {
		b.mu.Unlock()
		return
	}
	b.byName[name] = &np
	b.publishPortsLocked()
	b.mu.Unlock()
	b.portsChanged()
	b.portStatus(PortModified, p, &np)
	b.notifyChanged()
}

// publishPortsLocked publishes a new port snapshot. Caller holds b.mu.
func (b *Bridge) publishPortsLocked() {
	s := &portSnapshot{
		byOF:   make(map[uint32]*xlate.Port, len(b.byName)),
		byDP:   make(map[uint32]*xlate.Port, len(b.byName)),
		sorted: make([]*xlate.Port, 0, len(b.byName)),
	}
	for _, p := range b.byName {
		xp := new(xlate.Port)
		*xp = p.Port
		s.byOF[xp.OFPort] = xp
		if xp.DPPort != xlate.NoDPPort {
			s.byDP[xp.DPPort] = xp
		}
		s.sorted = append(s.sorted, xp)
	}
	slices.SortFunc(s.sorted, func(x, y *xlate.Port) int { return int(x.OFPort) - int(y.OFPort) })
	b.ports.Store(s)
}

// Meter implements xlate.Bridge: the datapath meter implementing
// OpenFlow meter id.
func (b *Bridge) Meter(id uint32) (dpMeter uint32, ok bool) {
	m := b.pipe.Meter(id)
	if m == nil {
		return 0, false
	}
	return m.ProviderID, true
}

// SetPortRequest applies a changed Interface.ofport_request: when the
// number is valid, differs from the port's and no other port has it, the
// port is renumbered, which OpenFlow sees as the port leaving and coming
// back (Open vSwitch deletes and re-adds it). It returns the port's
// number afterwards.
func (b *Bridge) SetPortRequest(name string, request int) (uint32, error) {
	b.mu.Lock()
	p := b.byName[name]
	if p == nil {
		b.mu.Unlock()
		return 0, fmt.Errorf("%w: %s", ErrNoPort, name)
	}
	n := uint32(request)
	if request < 1 || request >= int(mf.PortMax) || n == p.OFPort || p.OFPort == mf.PortLocal {
		b.mu.Unlock()
		return p.OFPort, nil
	}
	for _, o := range b.byName {
		if o.OFPort == n {
			b.mu.Unlock()
			return p.OFPort, nil
		}
	}
	np := *p
	np.OFPort = n
	b.byName[name] = &np
	b.alloc.Freed(p.OFPort, b.now())
	b.alloc.taken(n)
	b.publishPortsLocked()
	b.mu.Unlock()
	b.portsChanged()
	b.macs.FlushPort(p.OFPort)
	b.portStatus(PortDeleted, nil, p)
	b.portStatus(PortAdded, nil, &np)
	b.notifyChanged()
	return n, nil
}

// MACEntries lists the MAC table, least recently used first (fdb/show);
// ports are OpenFlow port numbers.
func (b *Bridge) MACEntries() []maclearn.Entry { return b.macs.Entries(b.now()) }

// MACStats returns the MAC table's counters (fdb/stats-show).
func (b *Bridge) MACStats() maclearn.Stats { return b.macs.Stats() }

// FlushMACs empties the MAC table (fdb/flush); flows that depended on it
// are revalidated.
func (b *Bridge) FlushMACs() {
	b.macs.Flush()
	b.notifyChanged()
}

package bridge

import (
	"net"
	"time"

	"gvs/netdev"
)

// Datapath is what the reconciler needs from the switching side: bridges
// that forward between their ports (NORMAL), ports backed by network
// devices, and the datapath-wide settings of Open_vSwitch.other_config.
// Ports are named by their Interface name, which Open vSwitch keeps unique
// across bridges.
//
// Contract: the reconciler calls every method from its one worker
// goroutine, never concurrently. A method that fails leaves the datapath as
// it was (a port AddPorts failed to add opened nothing, DelPorts removed
// the port anyway).
type Datapath interface {
	// SetConfig applies the datapath-wide settings, with bridges and
	// ports in place: they stay, with their devices, flows and MAC
	// tables (the PMD threads may be replaced, briefly pausing
	// forwarding, when a PMD setting changed). It is called before the first bridge and whenever the
	// settings change. An error is reported to the user (a warning);
	// the datapath keeps forwarding with what it could apply.
	SetConfig(cfg DatapathConfig) error
	// AddBridge creates a NORMAL bridge; SetBridge reconfigures one.
	AddBridge(name string, cfg BridgeConfig) error
	SetBridge(name string, cfg BridgeConfig) error
	// DelBridge removes a bridge that has no ports left.
	DelBridge(name string) error
	// AddPorts opens the devices of specs (concurrently: opening is
	// kernel work, mostly waiting) and adds them to their bridges, all
	// published to the datapath in one step. errs[i] is specs[i]'s, nil
	// when it was added; an error wraps netdev.ErrNoDevice when the
	// kernel device does not exist and ErrUnsupportedType for a type the
	// datapath does not know, and a spec that failed opened nothing.
	AddPorts(specs []PortSpec) (errs []error)
	// SetPort changes what can change without reopening the device:
	// the VLAN configuration and the MTU.
	SetPort(spec PortSpec) error
	// DelPorts removes the named ports in one step and closes their
	// devices (concurrently). errs[i] is names[i]'s; a port is removed
	// even when closing its device failed.
	DelPorts(names []string) (errs []error)
	// PortState is a port's device as the datapath last saw it: link,
	// MAC, MTU (kept up to date from the kernel's link events, not read
	// per call) and status; no counters. It returns an error wrapping
	// netdev.ErrNoDevice when the device has gone away (or was replaced
	// by another of the same name): the reconciler then deletes the port
	// and re-adds it when the device is back. The reconciler calls it
	// only for ports that changed (added, set, named by PortsChanged)
	// and, for all ports, on the statistics timer.
	PortState(name string) (PortState, error)
	// PortStats reads a port's counters; the reconciler calls it only on
	// the statistics timer.
	PortStats(name string) (PortStats, error)
	// SetSocketBuffers applies userspace-sock-buf-size (bytes, already
	// clamped; 0 for the kernel defaults) to every port and to the ports
	// added later. The effective sizes show in PortState.Status.
	SetSocketBuffers(bytes int) error
	// Close removes every port and bridge; nothing is left in the kernel.
	Close() error
}

// FlowSyncer is implemented by a Datapath that brings its cached flows in
// line with a configuration change in the background (revalidation):
// SyncFlows returns once no flow decided under a configuration applied
// before the call can forward another packet. The reconciler calls it at
// the end of each pass, before it reports the pass applied (cur_cfg), so
// `ovs-vsctl set port p tag=30` returns with the new VLAN in force; a
// pass that changed nothing a flow depends on costs nothing.
type FlowSyncer interface {
	SyncFlows()
}

// DatapathConfig is Open_vSwitch.other_config as the datapath uses it.
type DatapathConfig struct {
	PMDCPUMask  string        // validated hex mask, "" for unpinned
	PMDMaxSleep time.Duration // 0 for the datapath's default
	// RxqAssign is pmd-rxq-assign: "roundrobin", "cycles", "group", or
	// "" for the datapath's default.
	RxqAssign string
	// RxRingBudget is other_config:gvs-rx-ring-budget: the bytes all
	// receive rings may take together (netdev.MemoryBudget); 0 for the
	// default. Changing only it touches no PMD.
	RxRingBudget int64
}

// BridgeConfig is a bridge's Bridge.other_config as NORMAL uses it; zero
// fields take the datapath's defaults.
type BridgeConfig struct {
	MACTableSize int
	MACAgingTime time.Duration
	ForwardBPDU  bool // other_config:forward-bpdu
	// DatapathType is Bridge.datapath_type as written ("" , "system",
	// "netdev": gvs's userspace datapath; "dummy": the dummy datapath of
	// gvs-vswitchd --enable-dummy, whose internal ports are dummy
	// devices).
	DatapathType string
}

// VLANConfig is a port's Port.tag, trunks and vlan_mode.
type VLANConfig struct {
	Tag    int // 0: none
	Trunks []int
	Mode   string // "", "access", "trunk", "native-tagged", "native-untagged"
}

// PortSpec is one interface as the database configures it.
type PortSpec struct {
	Bridge string
	Port   string // Port.name (usually the same as Name)
	Name   string // Interface.name, the kernel device name
	// Type is "system", "internal", "tap" or "afxdp" (and anything else
	// the user typed, which AddPort rejects).
	Type    string
	Options map[string]string
	// MAC is the address to give an internal port: the bridge's
	// other_config:hwaddr for its own port, Interface.mac for others.
	MAC net.HardwareAddr
	// MTURequest is Interface.mtu_request, 0 when unset.
	MTURequest int
	VLAN       VLANConfig
	// OFPortRequest is Interface.ofport_request (0 when unset).
	// PreviousOFPort is the OpenFlow number the interface had (what the
	// reconciler assigned before, else the database's Interface.ofport;
	// 0 or -1 for none). The datapath numbers its ports as Open vSwitch's
	// ofproto does (ofproto.PortNumbers): the request when free, else the
	// previous number, else a new one (new ports of one AddPorts call in
	// name order); the bridge's own port is LOCAL (65534). SetPort
	// applies a changed request.
	OFPortRequest  int
	PreviousOFPort int
}

// PortState is what the reconciler writes back for a port, beside its
// statistics.
type PortState struct {
	Link netdev.LinkState
	// CarrierResets counts the carrier's transitions (up to down or
	// down to up) since the port was added: Interface.link_resets.
	CarrierResets int
	MAC           net.HardwareAddr
	MTU           int
	Status        map[string]string
	// OFPort is the port's OpenFlow number (Interface.ofport).
	OFPort int
	// Error is a working port's Interface.error ("" for none): a patch
	// port without a usable peer, in Open vSwitch's words.
	Error string
}

// InterfaceError is an error the datapath words as Open vSwitch writes it
// to Interface.error (a patch port's configuration: "p0: patch type
// requires valid 'peer' argument"); the reconciler writes it unchanged.
type InterfaceError struct{ Msg string }

func (e *InterfaceError) Error() string { return e.Msg }

// PortStats are a port's counters, for Interface.statistics.
type PortStats struct {
	Stats netdev.Stats
	// Custom are the device's counters beyond Stats (afxdp ports:
	// XDP_STATISTICS), written into Interface.statistics beside the
	// standard ones as Open vSwitch writes a netdev's custom statistics;
	// nil for devices without.
	Custom map[string]uint64
	// PacketsOnly: the port counts packets and bytes only (a patch
	// port, as Open vSwitch's netdev_vport), and Interface.statistics
	// has just those four.
	PacketsOnly bool
}

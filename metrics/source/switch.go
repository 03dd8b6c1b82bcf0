package source

import (
	"strconv"
	"time"

	"gvs/dpif"
	"gvs/netdev"
	"gvs/ofproto"
)

// Switch is the switch as the metrics collector and the ovs-appctl
// commands see it: the current datapath and the bridges configured on it,
// with the database's names for their ports. The bridge layer implements
// it (it alone knows Port and Interface names and OpenFlow port numbers).
//
// Both methods may be called from any goroutine, concurrently with
// reconfiguration, and must not block on the packet path. The datapath may
// be replaced (it is created with the first bridge and gone with the
// last; PMD settings change in place): callers ask again each time and
// never keep the pointer.
type Switch interface {
	// Datapath returns the running datapath, nil when there is none yet.
	Datapath() *dpif.Datapath
	// Bridges returns a snapshot of the bridges, sorted by name, each
	// with its ports sorted by name.
	Bridges() []Bridge
}

// Bridge is one bridge of a Switch snapshot.
type Bridge struct {
	Name string
	// OpenFlow is the bridge (tables, groups, meters, ports, the MAC
	// table NORMAL learns in); nil when the
	// bridge exists in the database but not (yet) in the datapath.
	OpenFlow *ofproto.Bridge
	// Created is when the bridge was added to the datapath (zero:
	// unknown); bridge/dump-flows reports its rules' age from it.
	Created time.Time
	Ports   []Port
	// Dummy: the bridge's datapath_type is dummy (gvs-vswitchd
	// --enable-dummy); dpif/show lists it under dummy@ovs-dummy.
	Dummy bool
}

// Port is one interface of a bridge. Open vSwitch names a Port row and
// its Interface rows separately; gvs supports one interface per port, so
// Port and Interface are usually the same name.
type Port struct {
	Port      string // Port.name
	Interface string // Interface.name: the device and datapath port name
	Type      string // Interface.type as configured ("" is "system")
	// OFPort is the OpenFlow port number (Interface.ofport; 65534 for
	// the bridge's own port); 0 when not assigned.
	OFPort int
	// DPPort is the datapath port number; valid only if InDatapath.
	DPPort     uint32
	InDatapath bool
	// SocketBufferRequest is userspace-sock-buf-size as applied to this
	// port (0: kernel defaults). Devices that report it themselves (in
	// Status "socket_buf_requested") take precedence.
	SocketBufferRequest int
	// Config is what dpif/show prints after the type, as Open vSwitch
	// prints a netdev's get_config (a dummy port's pstream and stream);
	// nil for none.
	Config map[string]string
}

// OFPortLocal is the OpenFlow number of a bridge's own port.
const OFPortLocal = 65534

// SocketBuffersOf reports a device's requested and effective socket
// buffer sizes from its Status ("socket_buf_requested", "socket_rcvbuf",
// "socket_sndbuf"), with fallbackRequest when the device does not say
// what was requested. Effective sizes are 0 when the device has no
// socket (AF_XDP rings, tap).
func SocketBuffersOf(dev netdev.Device, fallbackRequest int) netdev.SocketBuffers {
	st := dev.Status()
	b := netdev.SocketBuffers{Requested: fallbackRequest}
	if v, err := strconv.Atoi(st["socket_buf_requested"]); err == nil {
		b.Requested = v
	}
	b.Receive, _ = strconv.Atoi(st["socket_rcvbuf"])
	b.Send, _ = strconv.Atoi(st["socket_sndbuf"])
	return b
}

// CustomStatser is a device with counters beyond netdev.Stats, under the
// names Open vSwitch gives a netdev's custom statistics (afxdp ports: the
// kernel's XDP_STATISTICS as xsk_rx_dropped, xsk_rx_ring_full, ...). Like
// Stats, CustomStats may be called from any goroutine; it may allocate.
type CustomStatser interface {
	CustomStats() map[string]uint64
}

// CustomStatsOf returns dev's custom statistics, nil when it has none.
func CustomStatsOf(dev netdev.Device) map[string]uint64 {
	if c, ok := dev.(CustomStatser); ok {
		return c.CustomStats()
	}
	return nil
}

// RxRingBudget is the machine-wide budget for receive rings
// (netdev.MemoryBudget) as it stands: its limit and what the rings have
// reserved from it.
type RxRingBudget struct {
	Limit, Reserved int64
}

// RxRingBudgeter is a Switch whose ports' receive rings reserve from a
// memory budget (the bridge layer's). Like the Switch methods,
// RxRingBudget may be called from any goroutine and does not block.
type RxRingBudgeter interface {
	RxRingBudget() RxRingBudget
}

// RxRingBudgetOf returns sw's receive-ring budget; ok is false when sw
// has none (or an unlimited one, Limit 0).
func RxRingBudgetOf(sw Switch) (b RxRingBudget, ok bool) {
	if r, ok := sw.(RxRingBudgeter); ok {
		b = r.RxRingBudget()
		return b, b.Limit > 0
	}
	return RxRingBudget{}, false
}

// RxRingBytesOf is the memory of dev's receive rings
// (netdev.RxRingMemory); ok is false for a device without rings of its
// own.
func RxRingBytesOf(dev netdev.Device) (bytes int64, ok bool) {
	if r, ok := dev.(netdev.RxRingMemory); ok {
		return r.RxRingBytes(), true
	}
	return 0, false
}

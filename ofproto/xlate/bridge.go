package xlate

import (
	"time"

	"gvs/ofproto/mac"
	"gvs/ofproto/mf"
)

// Bridge is what translation needs from the bridge it runs for. Helper
// "core" implements it in package ofproto. Every method is called on
// upcall handler and revalidator goroutines, concurrently, while the
// bridge may be changing: each must be safe for concurrent use, must not
// block on a lock held across a translation, and must return data that
// stays valid (immutable) after the call.
type Bridge interface {
	// Name is the bridge's name (ofproto/trace prints it).
	Name() string

	// Version is the table version a new translation looks up in: the
	// classifier version the bridge last published.
	Version() uint64

	// LookupRule returns the highest-priority rule of table that matches
	// flow at version, or nil, adding to wc every bit the lookup examined
	// (classifier.Lookup). Translation handles the table-miss behaviour
	// itself, from TableMiss.
	LookupRule(version uint64, table uint8, flow *mf.Flow, wc *mf.Wildcards) Rule

	// TableMiss is the table's configured miss behaviour (OpenFlow 1.1
	// table config / OpenFlow 1.4 table-mod), MissDefault unless set.
	TableMiss(table uint8) TableMiss

	// Config returns the bridge's current translation settings.
	Config() *Config

	// Port returns the port with OpenFlow number ofport, or nil.
	Port(ofport uint32) *Port
	// PortByDatapath returns the port with datapath number dpPort, or nil.
	PortByDatapath(dpPort uint32) *Port
	// Ports returns every port of the bridge ordered by OpenFlow number
	// (the flooding order). The slice is shared: do not modify it.
	Ports() []*Port

	// Group returns the group with id at version, or nil.
	Group(version uint64, id uint32) Group

	// Meter returns the datapath meter implementing OpenFlow meter id,
	// or false if the bridge has no such meter.
	Meter(id uint32) (dpMeter uint32, ok bool)

	// MACs is the bridge's learning table (NORMAL).
	MACs() *mac.Table
}

// TableMiss is a table's miss behaviour, after Open vSwitch's enum
// ofputil_table_miss.
type TableMiss uint8

const (
	// MissDefault: OpenFlow 1.3+ semantics unless a controller speaks an
	// older version (then Config.PacketInOnMiss): drop.
	MissDefault TableMiss = iota
	// MissController sends a packet-in (reason no_match).
	MissController
	// MissContinue goes on to the next table.
	MissContinue
	// MissDrop drops.
	MissDrop
)

// FragHandling is the bridge's OFPC_FRAG_* setting (ovs-ofctl set-frags).
type FragHandling uint8

const (
	// FragNormal: fragments are looked up with L4 ports zero.
	FragNormal FragHandling = iota
	// FragDrop: fragments are dropped.
	FragDrop
	// FragReasm: reassembly (Open vSwitch does not support it; treated as
	// normal).
	FragReasm
	// FragNXMatch: fragments are looked up as they are (L4 ports of the
	// first fragment included).
	FragNXMatch
)

// Config is the bridge-wide part of translation's input. The bridge
// publishes a new *Config when a setting changes; translation never
// modifies one.
type Config struct {
	// ForwardBPDU (other_config:forward-bpdu): NORMAL forwards frames to
	// 01:80:c2:00:00:0x instead of dropping them.
	ForwardBPDU bool
	// FragHandling is the OFPC_FRAG_* setting.
	FragHandling FragHandling
	// PacketInOnMiss: a connected controller asked for packet-ins on table
	// misses under MissDefault (Open vSwitch's
	// connmgr_wants_packet_in_on_miss: an OpenFlow 1.0-1.2 controller,
	// or a fail-open bridge without controller connections... as connmgr
	// decides).
	PacketInOnMiss bool
	// MissSendLen is unused: a table-miss packet-in carries the whole
	// packet (reason ReasonImplicitMiss) and the connection manager
	// applies each connection's miss_send_len, as Open vSwitch does.
	MissSendLen uint16
	// Now is the clock NORMAL learns with; nil means time.Now.
	Now func() time.Time
	// CTZoneTimeoutPolicy is the datapath's timeout policy id of each
	// conntrack zone that has one (Datapath.ct_zones' CT_Zone rows): a
	// committing ct action in such a zone names it, as Open vSwitch's
	// put_ct_timeout does for its netdev datapath (timeout=ID). Never
	// modified once published.
	CTZoneTimeoutPolicy map[uint16]uint32
}

// PortConfig and PortState bits, as Open vSwitch's OFPUTIL_PC_* and
// OFPUTIL_PS_* (OpenFlow's ofp_port_config/ofp_port_state).
type PortFlags uint32

const (
	PortDown       PortFlags = 1 << 0 // OFPPC_PORT_DOWN
	PortNoRecv     PortFlags = 1 << 2 // OFPPC_NO_RECV
	PortNoFwd      PortFlags = 1 << 5 // OFPPC_NO_FWD
	PortNoPacketIn PortFlags = 1 << 6 // OFPPC_NO_PACKET_IN
	PortNoFlood    PortFlags = 1 << 4 // OFPPC_NO_FLOOD (OpenFlow 1.0)
)

// Port is one port of a bridge as translation sees it: immutable, the
// bridge publishes a new *Port when anything about it changes.
type Port struct {
	OFPort   uint32 // OpenFlow port number (mf.PortLocal for the bridge's own)
	DPPort   uint32 // datapath port number
	Name     string
	Config   PortFlags // OFPPC_* bits set by port-mod
	LinkDown bool      // OFPPS_LINK_DOWN
	// Live is OpenFlow 1.1's OFPPS_LIVE: fast-failover groups use the
	// port only while it is live (link up and not administratively down).
	Live bool
	// VLAN is the port's NORMAL VLAN behaviour (tag, trunks, vlan_mode);
	// nil means a trunk of every VLAN.
	VLAN *mac.VLANPort
	// Patch is set for a patch port (type=patch): its counters, and
	// its peer once both ends exist and name each other. A patch port
	// has no datapath port (DPPort is NoDPPort). See patch.go.
	Patch *PatchPort
}

// Rule is one OpenFlow rule, as the classifier returns it. The actions
// slice is immutable: a flow mod that changes actions replaces the rule
// (or publishes a new slice) rather than editing it.
type Rule interface {
	TableID() uint8
	Priority() uint16
	Cookie() uint64
	// Match is the rule's match (ofproto/trace prints it).
	Match() *mf.Match
	// Actions are the rule's actions and instructions, in Open vSwitch's
	// ofpacts order (apply-actions..., clear, write-actions, write
	// metadata, goto-table last).
	Actions() []Action
	// Credit adds datapath statistics to the rule's counters (packets,
	// bytes) and moves its used time (idle timeouts) forward. Called from
	// the upcall handlers and the revalidator, concurrently.
	Credit(s Stats)
}

// Stats are statistics credited to a rule, group or bucket.
type Stats struct {
	Packets, Bytes uint64
	Used           time.Time // zero: not used
	TCPFlags       uint16
}

// GroupType is OpenFlow's group type.
type GroupType uint8

const (
	GroupAll GroupType = iota
	GroupSelect
	GroupIndirect
	GroupFastFailover
)

// SelectionMethod is a select group's Open vSwitch selection_method.
type SelectionMethod uint8

const (
	// SelectDefault: a hash of the flow's symmetric five-tuple (Open
	// vSwitch's SEL_METHOD_DEFAULT). Open vSwitch turns a group without
	// selection_method into dp_hash when the datapath can; the bridge
	// decides that, as ofproto-dpif does.
	SelectDefault SelectionMethod = iota
	SelectDPHash
	SelectHash
)

// Bucket is one bucket of a group; immutable.
type Bucket struct {
	ID         uint32
	Weight     uint16
	WatchPort  uint32 // mf.PortNone (OFPP_ANY) if none
	WatchGroup uint32 // GroupAny if none
	Actions    []Action
}

// GroupAny is OFPG_ANY, "no group" for WatchGroup.
const GroupAny uint32 = 0xffffffff

// Group is one OpenFlow group, as the bridge returns it for a version.
type Group interface {
	GroupID() uint32
	GroupType() GroupType
	Buckets() []Bucket
	// Selection is a select group's method, the fields the "hash" method
	// hashes (their bits in a Wildcards; zero value: Open vSwitch's
	// default five-tuple symmetric hash) and the hash basis.
	Selection() (SelectionMethod, *mf.Wildcards, uint64)
	// Credit adds statistics to the group and to bucket index bucket (-1:
	// the group only).
	Credit(bucket int, s Stats)
}

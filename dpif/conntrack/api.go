package conntrack

import (
	"net/netip"
	"time"

	"gvs/packet"
)

// Conntrack is what the datapath and the control plane need of a
// tracker; *Tracker implements it, and a fake may for tests above.
type Conntrack interface {
	// Execute runs one parsed packet (b.Key and b.Offsets valid) through
	// the tracker in req.Zone: looks its connection up, creates it when
	// req.Commit, sets b.Key's conntrack fields, and applies NAT to the
	// bytes and the Key when req.NAT asks. It allocates nothing for a
	// packet of an existing connection. The tracker reads its own
	// coarse clock.
	Execute(b *packet.Buffer, req *Request)

	// Dump calls fn for each connection in zone (AllZones: every zone)
	// until fn returns false.
	Dump(zone int32, fn func(*Entry) bool)
	// Flush deletes the connections of zone (AllZones: all), or only the
	// one whose original tuple is orig when orig is not nil; it returns
	// how many went.
	Flush(zone int32, orig *Tuple) int
	Stats() Stats

	SetMaxConns(n uint32)
	MaxConns() uint32
	// SetZoneLimits sets limits (DefaultZoneLimit for the default);
	// ZoneLimits reports the default and the zones asked for (none:
	// every zone with a limit of its own); DelZoneLimits drops zones'
	// own limits.
	SetZoneLimits(limits []ZoneLimit)
	ZoneLimits(zones []uint16) []ZoneLimit
	DelZoneLimits(zones []uint16)

	// SetTimeoutPolicy defines (or replaces) policy id; ZonePolicy makes
	// it the policy of a zone (CT_Zone.timeout_policy); id 0 is the
	// default policy.
	SetTimeoutPolicy(id uint32, p TimeoutPolicy)
	DelTimeoutPolicy(id uint32)
	SetZonePolicy(zone uint16, id uint32)
}

// AllZones is Dump's and Flush's zone for every zone.
const AllZones int32 = -1

// Conntrack state bits, as Open vSwitch's CS_* (the ct_state field).
const (
	StateNew         uint32 = 1 << 0
	StateEstablished uint32 = 1 << 1
	StateRelated     uint32 = 1 << 2
	StateReply       uint32 = 1 << 3
	StateInvalid     uint32 = 1 << 4
	StateTracked     uint32 = 1 << 5
	StateSrcNAT      uint32 = 1 << 6
	StateDstNAT      uint32 = 1 << 7
)

// Tuple is one direction of a connection as the tracker keys it: the
// addresses (IPv4 as 4-byte netip.Addr), the protocol, and the L4
// identifiers. For ICMP and ICMPv6 echo, SrcPort is the identifier and
// DstPort holds the type and code (type<<8|code) of the request.
type Tuple struct {
	Src, Dst         netip.Addr
	SrcPort, DstPort uint16
	Proto            uint8
	Zone             uint16
}

// NATKind says which side a NAT clause rewrites.
type NATKind uint8

const (
	// NATApply is a bare `nat`: apply the binding a committed connection
	// already has (to replies and related packets), create none.
	NATApply NATKind = iota
	NATSrc           // nat(src=...)
	NATDst           // nat(dst=...)
)

// NAT is the nat(...) clause of a ct action.
type NAT struct {
	Kind NATKind
	// AddrMin..AddrMax is the address range; both invalid means keep the
	// address (port-only NAT). AddrMax invalid means AddrMin alone.
	AddrMin, AddrMax netip.Addr
	// PortMin..PortMax is the port range; zero PortMin means keep the
	// port unless it must change to make the tuple unique.
	PortMin, PortMax uint16
	Persistent       bool
	Hash             bool // choose by hash (Open vSwitch's default)
	Random           bool
}

// Helper is an application-layer gateway (`alg=`).
type Helper uint8

const (
	HelperNone Helper = iota
	HelperFTP
	HelperTFTP
)

// Request is one ct action's arguments, resolved to constants by the
// layer above (a zone taken from a register is the register's value at
// translation, which the megaflow then matches on), as Open vSwitch's
// datapath ct action carries them. Requests are built once per datapath flow
// and shared read-only by every PMD.
type Request struct {
	Zone   uint16
	Commit bool
	Force  bool // a committed connection in the other direction is torn down and restarted
	// SetMark writes Mark under MarkMask into the connection's mark
	// (commit only), SetLabel likewise for the 128-bit label.
	SetMark          bool
	Mark, MarkMask   uint32
	SetLabel         bool
	Label, LabelMask [16]byte
	NAT              *NAT // nil: no nat clause
	Helper           Helper
	TimeoutPolicy    uint32 // 0: the zone's or the default policy
}

// Config sizes a tracker.
type Config struct {
	// MaxConns bounds the number of connections (Open vSwitch's
	// default: 3,000,000); 0 means that default.
	MaxConns uint32
	// TCPLiberal disables window and sequence checks (tcp_liberal).
	TCPLiberal bool
	// Now is the clock (nil: time.Now), injectable for tests.
	Now func() time.Time
}

// Entry is one connection as Dump reports it: the fields of Open
// vSwitch's struct ct_dpif_entry that dpctl/dump-conntrack prints.
type Entry struct {
	Orig, Reply Tuple // Reply as the reply direction is seen, after NAT
	Zone        uint16
	Mark        uint32
	Label       [16]byte
	ID          uint32
	// TCPState is the TCP state name Open vSwitch prints in
	// protoinfo=(state=...) (e.g. "ESTABLISHED"), empty for other protocols.
	TCPState string
	// TCP is the TCP tracker's view of each peer, for the verbose dump
	// (dump-conntrack -m); zero for other protocols.
	TCP TCPInfo
	// Timeout is the time left until expiry.
	Timeout time.Duration
	// Status bits (Open vSwitch's CT_DPIF_STATUS_*: confirmed, seen-reply,
	// assured, src-nat, dst-nat...).
	Status uint32
	Helper Helper
}

// TCPInfo is the TCP part of an Entry's protoinfo as Open vSwitch's
// verbose dump prints it.
type TCPInfo struct {
	StateOrig, StateReply   string // e.g. "ESTABLISHED"
	WScaleOrig, WScaleReply uint8
	FlagsOrig, FlagsReply   uint8 // TCPFlag* bits
}

// TCPInfo flag bits (Open vSwitch's CT_DPIF_TCPF_*).
const (
	TCPFlagWindowScale uint8 = 1 << 0
	TCPFlagSackPerm    uint8 = 1 << 1
	TCPFlagCloseInit   uint8 = 1 << 2
	TCPFlagBeLiberal   uint8 = 1 << 3
)

// Stats are the tracker's counters (dpctl/ct-stats-show, metrics).
type Stats struct {
	Conns        uint32           // connections now
	ConnsByProto map[uint8]uint32 // connections now per IP protocol
	Created      uint64           // connections ever committed
	Expired      uint64
	// DroppedFull counts new connections refused because the table (or
	// the zone) was at its limit.
	DroppedFull uint64
	Invalid     uint64 // packets marked +inv
}

// ZoneLimit is a per-zone connection limit (dpctl/ct-set-limits);
// Zone DefaultZoneLimit names the default for zones without their own.
type ZoneLimit struct {
	Zone  int32 // DefaultZoneLimit for the default
	Limit uint32
	Count uint32 // connections now (ct-get-limits)
}

// DefaultZoneLimit is ZoneLimit.Zone for the default limit.
const DefaultZoneLimit int32 = -1

// TimeoutPolicy holds per-protocol, per-state timeouts (the
// CT_Timeout_Policy table's keys: tcp_syn_sent, tcp_established,
// udp_first, icmp_reply, ...), in seconds; absent keys keep the default.
type TimeoutPolicy map[string]uint32

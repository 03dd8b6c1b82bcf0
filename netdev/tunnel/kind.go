package tunnel

// Kind is a tunnel encapsulation.
type Kind uint8

const (
	KindNone Kind = iota
	Geneve
	VXLAN
	GRE // over IPv4 or IPv6 (an IPv6 underlay is Open vSwitch's ip6gre)
)

// KindOf returns the Kind of an Interface type ("geneve", "vxlan", "gre",
// "ip6gre"), or KindNone.
func KindOf(typ string) Kind {
	switch typ {
	case "geneve":
		return Geneve
	case "vxlan":
		return VXLAN
	case "gre", "ip6gre":
		return GRE
	}
	return KindNone
}

func (k Kind) String() string {
	switch k {
	case Geneve:
		return "geneve"
	case VXLAN:
		return "vxlan"
	case GRE:
		return "gre"
	}
	return "none"
}

// UDP reports whether the encapsulation runs over UDP.
func (k Kind) UDP() bool { return k == Geneve || k == VXLAN }

// Default UDP destination ports (IANA), as Open vSwitch uses.
const (
	GenevePort = 6081
	VXLANPort  = 4789
)

// Tunnel flags in packet.Key.TunFlags: Open vSwitch's FLOW_TNL_F_*.
const (
	FlagOAM          uint16 = 1 << 0
	FlagDontFragment uint16 = 1 << 1
	FlagCsum         uint16 = 1 << 2
	FlagKey          uint16 = 1 << 3
	// FlagUDPIF says TunMetadata holds geneve options in their wire
	// form (Open vSwitch's FLOW_TNL_F_UDPIF), not mapped by a TLV table.
	FlagUDPIF uint16 = 1 << 4
)

// vportType is the type number Open vSwitch prints in tnl_push's
// header(type=N): its OVS_VPORT_TYPE_*.
func vportType(k Kind, ipv6 bool) uint32 {
	switch k {
	case GRE:
		if ipv6 {
			return 109 // OVS_VPORT_TYPE_IP6GRE
		}
		return 3
	case VXLAN:
		return 4
	case Geneve:
		return 5
	}
	return 0
}

// Wire constants.
const (
	ethTypeTEB        = 0x6558 // transparent Ethernet bridging: an Ethernet payload
	ethTypeIPv4       = 0x0800
	ethTypeIPv6       = 0x86dd
	protoUDP          = 17
	protoGRE          = 47
	ethLen            = 14
	ipv4Len           = 20
	ipv6Len           = 40
	udpLen            = 8
	geneveBaseLen     = 8
	vxlanLen          = 8
	greBaseLen        = 4
	greFlagCsum       = 0x8000
	greFlagKey        = 0x2000
	greFlagSeq        = 0x1000
	vxlanFlagVNI      = 0x08000000 // the I flag: the VNI is valid
	vxlanFlagGBP      = 0x80000000 // the G flag: group policy present
	vxlanGBPDontLearn = 0x00400000
	vxlanGBPApplied   = 0x00080000
	ipDF              = 0x4000
	// MaxGeneveOptions is the most option bytes a geneve header carries
	// (opt_len is 6 bits of 4-byte words), as Open vSwitch's
	// TLV_TOT_OPT_SIZE.
	MaxGeneveOptions = 252
	// MaxHeaderLen bounds a Header: Ethernet, IPv6, UDP, geneve with
	// the most options.
	MaxHeaderLen = ethLen + ipv6Len + udpLen + geneveBaseLen + MaxGeneveOptions
)

// Default UDP source port range (ovs-appctl tnl/egress_port_range).
const (
	DefaultSrcPortMin = 32768
	DefaultSrcPortMax = 61000
)

// SourcePort maps a flow hash onto [min, max) as Open vSwitch's
// netdev_tnl_get_src_port does: packets of one inner flow share a port,
// so the underlay's ECMP and RSS keep them together.
func SourcePort(hash uint32, min, max uint16) uint16 {
	return uint16((uint64(hash)*uint64(max-min))>>32) + min
}

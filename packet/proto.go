package packet

// EtherTypes the parser knows.
const (
	EtherTypeIPv4 uint16 = 0x0800
	EtherTypeARP  uint16 = 0x0806
	EtherTypeRARP uint16 = 0x8035
	EtherTypeVLAN uint16 = 0x8100 // 802.1Q customer tag
	EtherTypeQinQ uint16 = 0x88a8 // 802.1ad service tag
	EtherTypeIPv6 uint16 = 0x86dd

	// EtherTypeNone marks an 802.3 frame whose length field is not
	// followed by a SNAP header carrying an EtherType (Open vSwitch's
	// FLOW_DL_TYPE_NONE).
	EtherTypeNone uint16 = 0x05ff
)

// IP protocol numbers (IPv4 protocol, IPv6 next header).
const (
	ProtoHopByHop uint8 = 0
	ProtoICMP     uint8 = 1
	ProtoTCP      uint8 = 6
	ProtoUDP      uint8 = 17
	ProtoRouting  uint8 = 43
	ProtoFragment uint8 = 44
	ProtoESP      uint8 = 50
	ProtoAH       uint8 = 51
	ProtoICMPv6   uint8 = 58
	ProtoNoNext   uint8 = 59
	ProtoDstOpts  uint8 = 60
	ProtoSCTP     uint8 = 132
	ProtoUDPLite  uint8 = 136
	ProtoMobility uint8 = 135
	ProtoHIP      uint8 = 139
	ProtoShim6    uint8 = 140
)

// Header sizes.
const (
	EthHeaderLen  = 14
	VLANHeaderLen = 4
	IPv4MinLen    = 20
	IPv6HeaderLen = 40
	TCPMinLen     = 20
	UDPHeaderLen  = 8
	SCTPMinLen    = 12
	ICMPv4MinLen  = 8 // type, code, checksum and the 4-byte rest of header
	ICMPv6MinLen  = 4 // type, code, checksum
	ARPIPv4Len    = 28
)

// TCP flag bits as stored in Key.TCPFlags.
const (
	TCPFlagFIN uint16 = 1 << 0
	TCPFlagSYN uint16 = 1 << 1
	TCPFlagRST uint16 = 1 << 2
	TCPFlagPSH uint16 = 1 << 3
	TCPFlagACK uint16 = 1 << 4
	TCPFlagURG uint16 = 1 << 5
	TCPFlagECE uint16 = 1 << 6
	TCPFlagCWR uint16 = 1 << 7
	TCPFlagNS  uint16 = 1 << 8
)

// Status says how far Parse got. The packet path counts statuses per port
// (an array indexed by Status) and forwards the packet anyway: the key holds
// every field parsed before the problem, the rest stay zero, as in Open
// vSwitch's miniflow_extract.
type Status uint8

const (
	StatusOK          Status = iota
	StatusTruncatedL2        // shorter than an Ethernet header or a VLAN tag
	StatusTruncatedL3        // IP/ARP header or IPv6 extension header cut short
	StatusMalformedL3        // wrong IP version, header length or total length
	StatusTruncatedL4        // TCP/UDP/SCTP/ICMP header cut short
	StatusMalformedL4        // TCP data offset below 5 words
	NumStatus                // number of statuses, for counter arrays
)

var statusNames = [NumStatus]string{
	StatusOK:          "ok",
	StatusTruncatedL2: "truncated-l2",
	StatusTruncatedL3: "truncated-l3",
	StatusMalformedL3: "malformed-l3",
	StatusTruncatedL4: "truncated-l4",
	StatusMalformedL4: "malformed-l4",
}

// String returns a short stable name, suitable as a metric label.
func (s Status) String() string {
	if s < NumStatus {
		return statusNames[s]
	}
	return "unknown"
}

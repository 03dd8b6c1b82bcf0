package xlate

// Protocol numbers translation consults.
const (
	etherTypeRARP uint16 = 0x8035
	ipProtoICMP   uint8  = 1
	ipProtoTCP    uint8  = 6
	ipProtoUDP    uint8  = 17
	ipProtoICMPv6 uint8  = 58
	ipProtoSCTP   uint8  = 132
	icmp6NS       uint8  = 135
	icmp6NA       uint8  = 136
)

package dpif

import (
	"encoding/binary"
	"math/bits"

	"gvs/packet"
)

// hashL4 is the hash action's hash of the packet's 5-tuple (addresses,
// IP protocol, ports) with basis. With sym, both directions of a
// connection hash alike: source and destination are combined in an order
// that does not depend on which is which. Non-IP packets hash their
// Ethernet addresses and EtherType instead.
func hashL4(k *packet.Key, basis uint32, sym bool) uint32 {
	var a, b uint64 // the two endpoints
	switch k.EtherType {
	case packet.EtherTypeIPv4:
		a = uint64(binary.BigEndian.Uint32(k.SrcIPv4[:]))<<16 | uint64(k.SrcPort)
		b = uint64(binary.BigEndian.Uint32(k.DstIPv4[:]))<<16 | uint64(k.DstPort)
	case packet.EtherTypeIPv6:
		a = binary.BigEndian.Uint64(k.SrcIPv6[:]) ^ bits.RotateLeft64(binary.BigEndian.Uint64(k.SrcIPv6[8:]), 17) ^ uint64(k.SrcPort)
		b = binary.BigEndian.Uint64(k.DstIPv6[:]) ^ bits.RotateLeft64(binary.BigEndian.Uint64(k.DstIPv6[8:]), 17) ^ uint64(k.DstPort)
	default:
		a = uint64(binary.BigEndian.Uint32(k.SrcMAC[:]))<<16 | uint64(binary.BigEndian.Uint16(k.SrcMAC[4:]))
		b = uint64(binary.BigEndian.Uint32(k.DstMAC[:]))<<16 | uint64(binary.BigEndian.Uint16(k.DstMAC[4:]))
	}
	if sym && a > b {
		a, b = b, a
	}
	const m1, m2 = 0xa0761d6478bd642f, 0xe7037ed1a0b428db
	h := uint64(basis) ^ m1
	hi, lo := bits.Mul64(h^a^m1, b^m2)
	h ^= hi ^ lo
	hi, lo = bits.Mul64(h^uint64(k.IPProto)<<32^uint64(k.EtherType)^m2, m1)
	h ^= hi ^ lo
	return uint32(h) ^ uint32(h>>32)
}

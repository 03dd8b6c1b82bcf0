package tunnel

import (
	"encoding/binary"
	"math/bits"

	"gvs/packet"
)

// OVSFlowHash returns the hash Open vSwitch's userspace datapath gives a
// received packet that came without one from its device
// (miniflow_hash_5tuple with basis 0, built with its portable murmur
// hash): addresses, IP protocol and, for TCP, UDP, SCTP, ICMP and ICMPv6,
// the ports (ICMP type and code). Passed to Push, it yields the UDP
// source port ovs-vswitchd would choose for the same inner packet.
// It does not allocate.
func OVSFlowHash(k *packet.Key) uint32 {
	var h uint32
	switch k.EtherType {
	case packet.EtherTypeIPv6:
		for _, a := range [2]*[16]byte{&k.SrcIPv6, &k.DstIPv6} {
			for i := 0; i < 16; i += 8 {
				// The 64-bit word as it lies in memory, low half first
				// (hash_add64 on a little-endian host).
				w := binary.LittleEndian.Uint64(a[i:])
				h = mhashAdd(h, uint32(w))
				h = mhashAdd(h, uint32(w>>32))
			}
		}
	case packet.EtherTypeIPv4, packet.EtherTypeARP:
		h = mhashAdd(h, binary.LittleEndian.Uint32(k.SrcIPv4[:]))
		h = mhashAdd(h, binary.LittleEndian.Uint32(k.DstIPv4[:]))
	default:
		return mhashFinish(h ^ 42)
	}
	h = mhashAdd(h, uint32(k.IPProto))
	var src, dst uint16
	switch k.IPProto {
	case packet.ProtoTCP, packet.ProtoUDP, packet.ProtoSCTP:
		src, dst = k.SrcPort, k.DstPort
	case packet.ProtoICMP, packet.ProtoICMPv6:
		src, dst = uint16(k.ICMPType), uint16(k.ICMPCode)
	default:
		return mhashFinish(h ^ 42)
	}
	// Both ports as one 32-bit word in memory order (network-order
	// halves read little-endian).
	h = mhashAdd(h, uint32(bits.ReverseBytes16(src))|uint32(bits.ReverseBytes16(dst))<<16)
	return mhashFinish(h ^ 42)
}

func mhashAdd(h, data uint32) uint32 {
	if data != 0 {
		data *= 0xcc9e2d51
		data = bits.RotateLeft32(data, 15)
		data *= 0x1b873593
		h ^= data
	}
	h = bits.RotateLeft32(h, 13)
	return h*5 + 0xe6546b64
}

func mhashFinish(h uint32) uint32 {
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

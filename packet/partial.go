package packet

import "encoding/binary"

// Partial-checksum handling for frames that arrive without checksum
// metadata (AF_XDP) from a sender that offloads checksums (a veth with
// default offloads): the TCP or UDP checksum field holds only the folded
// pseudo-header sum. Detecting it costs a pseudo-header sum and a compare;
// completing a checksum that was in fact complete rewrites the same value,
// so a false match is harmless.

// l4Checksum locates the TCP or UDP checksum of a parsed frame: the
// transport segment (from the L4 header to the end of the IP payload,
// excluding Ethernet padding) and the field's offset inside it.
func l4Checksum(frame []byte, k *Key, o Offsets) (seg []byte, field int, ok bool) {
	if k.IPFrag&FragAny != 0 || o.L3 == 0 || o.L4 <= o.L3 || int(o.L4) > len(frame) {
		return nil, 0, false
	}
	switch k.IPProto {
	case ProtoTCP:
		field = 16
	case ProtoUDP:
		field = 6
	default:
		return nil, 0, false
	}
	l3, l4 := int(o.L3), int(o.L4)
	var end int
	switch k.EtherType {
	case EtherTypeIPv4:
		if l3+4 > len(frame) {
			return nil, 0, false
		}
		end = l3 + int(binary.BigEndian.Uint16(frame[l3+2:]))
	case EtherTypeIPv6:
		if l3+6 > len(frame) {
			return nil, 0, false
		}
		end = l3 + IPv6HeaderLen + int(binary.BigEndian.Uint16(frame[l3+4:]))
		if end == l3+IPv6HeaderLen {
			end = len(frame) // jumbogram, as Parse treats it
		}
	default:
		return nil, 0, false
	}
	if end > len(frame) || end < l4+field+2 {
		return nil, 0, false
	}
	return frame[l4:end], field, true
}

// pseudoSum returns the pseudo-header sum for a segment of length n.
func pseudoSum(k *Key, n int) uint16 {
	if k.EtherType == EtherTypeIPv4 {
		return PseudoHeaderSumV4(k.SrcIPv4, k.DstIPv4, k.IPProto, uint16(n))
	}
	return PseudoHeaderSumV6(k.SrcIPv6, k.DstIPv6, k.IPProto, uint32(n))
}

// IsPartialChecksum reports whether the TCP or UDP checksum field of the
// parsed frame (k and o from ParseOffsets) equals the folded pseudo-header
// sum, the mark of a checksum left for offload. It is false for anything
// else, including fragments and frames it cannot locate the field in.
//
// IPv6 routing headers are not followed: the pseudo-header uses the
// destination in the fixed header.
func IsPartialChecksum(frame []byte, k *Key, o Offsets) bool {
	seg, field, ok := l4Checksum(frame, k, o)
	if !ok {
		return false
	}
	return binary.BigEndian.Uint16(seg[field:]) == pseudoSum(k, len(seg))
}

// FixPartialChecksum completes the TCP or UDP checksum of the parsed frame
// if IsPartialChecksum says it is partial, and reports whether it did.
func FixPartialChecksum(frame []byte, k *Key, o Offsets) bool {
	seg, field, ok := l4Checksum(frame, k, o)
	if !ok || binary.BigEndian.Uint16(seg[field:]) != pseudoSum(k, len(seg)) {
		return false
	}
	return CompletePartialChecksum(seg, 0, field)
}

// FixPartialChecksum runs FixPartialChecksum on the buffer's frame with
// the key and offsets of its last Parse.
func (b *Buffer) FixPartialChecksum() bool {
	return FixPartialChecksum(b.Data(), &b.Key, b.Offsets)
}

// CompleteVnetChecksum resolves a virtio NEEDS_CSUM request in software,
// for a frame about to leave on a port that takes no virtio_net_hdr: it
// completes the checksum at Vnet.CsumStart+CsumOffset and turns
// NEEDS_CSUM into DATA_VALID. It reports false if the offsets point
// outside the frame (the frame is left as is). GSO frames must be
// segmented first; this does not do it.
func (b *Buffer) CompleteVnetChecksum() bool {
	if !b.HasVnet || b.Vnet.Flags&VnetNeedsCsum == 0 {
		return true
	}
	if !CompletePartialChecksum(b.Data(), int(b.Vnet.CsumStart), int(b.Vnet.CsumOffset)) {
		return false
	}
	b.Vnet.Flags = b.Vnet.Flags&^VnetNeedsCsum | VnetDataValid
	return true
}

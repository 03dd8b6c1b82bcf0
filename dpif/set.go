package dpif

import (
	"encoding/binary"
	"hash/crc32"

	"gvs/packet"
)

// Set actions rewrite header fields in the frame and the same fields of
// the buffer's key, so a later action (hash, recirc's re-parse, a
// check of the key) sees the packet as it now is. A set for a header the
// packet does not have (per its key and the offsets of the last Parse)
// does nothing, as in Open vSwitch, where translation only emits sets
// the megaflow's match guarantees. Checksums are updated incrementally
// (RFC 1624): the IPv4 header checksum, and TCP, UDP, ICMPv6 checksums
// for the pseudo-header; a UDP checksum of 0 (none) stays 0; a
// partial checksum (virtio NEEDS_CSUM) has its pseudo-header sum updated
// instead; SCTP's CRC32c is recomputed, keeping any error it had.

// castagnoli is the CRC32c table for SCTP; built once, read-only after.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// masked returns old with the bits of mask replaced by those of v.
func masked8(old, v, mask uint8) uint8    { return old&^mask | v&mask }
func masked16(old, v, mask uint16) uint16 { return old&^mask | v&mask }
func masked32(old, v, mask uint32) uint32 { return old&^mask | v&mask }

func maskedBytes(dst, v, mask []byte) {
	for i := range dst {
		dst[i] = dst[i]&^mask[i] | v[i]&mask[i]
	}
}

// applySet carries out an ActSet or ActSetMasked on b.
func applySet(b *packet.Buffer, sf *SetField) {
	k, v, m := &b.Key, &sf.Value, &sf.Mask
	d := b.Data()
	switch sf.Attr {
	case AttrSkbMark:
		k.PktMark = masked32(k.PktMark, v.PktMark, m.PktMark)
	case AttrPriority:
		k.SkbPriority = masked32(k.SkbPriority, v.SkbPriority, m.SkbPriority)
	case AttrEthernet:
		if len(d) < packet.EthHeaderLen {
			return
		}
		maskedBytes(d[0:6], v.DstMAC[:], m.DstMAC[:])
		maskedBytes(d[6:12], v.SrcMAC[:], m.SrcMAC[:])
		k.DstMAC, k.SrcMAC = [6]byte(d[0:6]), [6]byte(d[6:12])
	case AttrIPv4:
		setIPv4(b, d, v, m)
	case AttrIPv6:
		setIPv6(b, d, v, m)
	case AttrTCP, AttrUDP, AttrSCTP:
		setPorts(b, d, sf.Attr, v, m)
	case AttrICMP, AttrICMPv6:
		setICMP(b, d, sf.Attr, v, m)
	case AttrARP:
		setARP(b, d, v, m)
	case AttrND:
		setND(b, d, v, m)
	}
}

// l3 returns the L3 header from the last Parse, at least n bytes, or nil.
func l3(b *packet.Buffer, d []byte, n int) []byte {
	o := int(b.Offsets.L3)
	if o == 0 || o+n > len(d) {
		return nil
	}
	return d[o:]
}

// l4 returns the L4 header, at least n bytes, or nil (none, or a later
// fragment).
func l4(b *packet.Buffer, d []byte, n int) []byte {
	o := int(b.Offsets.L4)
	if o == 0 || o+n > len(d) {
		return nil
	}
	return d[o:]
}

// partialCsum reports whether the frame's L4 checksum is partial (the
// field holds the pseudo-header sum, to be completed on output).
func partialCsum(b *packet.Buffer) bool {
	return b.HasVnet && b.Vnet.Flags&packet.VnetNeedsCsum != 0
}

// l4CsumField returns the 2-byte L4 checksum field that covers the
// pseudo-header (TCP, UDP, ICMPv6), or nil.
func l4CsumField(b *packet.Buffer, d []byte) []byte {
	switch b.Key.IPProto {
	case packet.ProtoTCP:
		if h := l4(b, d, packet.TCPMinLen); h != nil {
			return h[16:18]
		}
	case packet.ProtoUDP, packet.ProtoUDPLite:
		if h := l4(b, d, packet.UDPHeaderLen); h != nil {
			return h[6:8]
		}
	case packet.ProtoICMPv6:
		if b.Key.EtherType == packet.EtherTypeIPv6 {
			if h := l4(b, d, packet.ICMPv6MinLen); h != nil {
				return h[2:4]
			}
		}
	}
	return nil
}

// updateField rewrites a stored checksum after old became new.
func updateField(f []byte, old, new []byte, partial, udp bool) {
	c := binary.BigEndian.Uint16(f)
	if partial {
		binary.BigEndian.PutUint16(f, packet.UpdateSum(c, old, new))
		return
	}
	if udp && c == 0 {
		// UDP without a checksum (IPv4), or one that is wrong anyway
		// (IPv6): left alone, as Open vSwitch does.
		return
	}
	c = packet.UpdateChecksum(c, old, new)
	if udp && c == 0 {
		c = 0xffff
	}
	binary.BigEndian.PutUint16(f, c)
}

// pseudoChanged updates the L4 checksum for an address change in the
// pseudo-header.
func pseudoChanged(b *packet.Buffer, d []byte, old, new []byte) {
	if f := l4CsumField(b, d); f != nil {
		p := b.Key.IPProto
		updateField(f, old, new, partialCsum(b), p == packet.ProtoUDP)
	}
}

func setIPv4(b *packet.Buffer, d []byte, v *packet.Key, m *packet.Mask) {
	h := l3(b, d, packet.IPv4MinLen)
	if h == nil || b.Key.EtherType != packet.EtherTypeIPv4 {
		return
	}
	k := &b.Key
	// One checksum update for all the header's changes, one for the
	// addresses' in the L4 pseudo-header. The checksum field is in
	// both the old and the new bytes, unchanged, so it cancels out.
	var old [packet.IPv4MinLen]byte
	copy(old[:], h[:packet.IPv4MinLen])
	maskedBytes(h[12:16], v.SrcIPv4[:], m.SrcIPv4[:])
	maskedBytes(h[16:20], v.DstIPv4[:], m.DstIPv4[:])
	h[1] = masked8(h[1], v.IPTOS, m.IPTOS)
	h[8] = masked8(h[8], v.IPTTL, m.IPTTL)
	cur := h[:packet.IPv4MinLen]
	if [packet.IPv4MinLen]byte(cur) == old {
		return
	}
	updateField(h[10:12], old[:], cur, false, false)
	if [8]byte(old[12:20]) != [8]byte(cur[12:20]) {
		pseudoChanged(b, d, old[12:20], cur[12:20])
	}
	k.SrcIPv4, k.DstIPv4, k.IPTOS, k.IPTTL = [4]byte(cur[12:16]), [4]byte(cur[16:20]), cur[1], cur[8]
}

func setIPv6(b *packet.Buffer, d []byte, v *packet.Key, m *packet.Mask) {
	h := l3(b, d, packet.IPv6HeaderLen)
	if h == nil || b.Key.EtherType != packet.EtherTypeIPv6 {
		return
	}
	k := &b.Key
	var old [16]byte
	if m.SrcIPv6 != ([16]byte{}) {
		copy(old[:], h[8:24])
		maskedBytes(h[8:24], v.SrcIPv6[:], m.SrcIPv6[:])
		pseudoChanged(b, d, old[:], h[8:24])
		k.SrcIPv6 = [16]byte(h[8:24])
	}
	if m.DstIPv6 != ([16]byte{}) {
		copy(old[:], h[24:40])
		maskedBytes(h[24:40], v.DstIPv6[:], m.DstIPv6[:])
		if !routingPending(h, int(b.Offsets.L4)-int(b.Offsets.L3)) {
			pseudoChanged(b, d, old[:], h[24:40])
		}
		k.DstIPv6 = [16]byte(h[24:40])
	}
	if m.IPTOS != 0 {
		tc := masked8(k.IPTOS, v.IPTOS, m.IPTOS)
		h[0] = h[0]&0xf0 | tc>>4
		h[1] = h[1]&0x0f | tc<<4
		k.IPTOS = tc
	}
	if m.FlowLabel&0xfffff != 0 {
		fl := masked32(k.FlowLabel, v.FlowLabel, m.FlowLabel&0xfffff)
		h[1] = h[1]&0xf0 | byte(fl>>16)&0x0f
		h[2], h[3] = byte(fl>>8), byte(fl)
		k.FlowLabel = fl
	}
	if m.IPTTL != 0 {
		h[7] = masked8(h[7], v.IPTTL, m.IPTTL)
		k.IPTTL = h[7]
	}
}

func setPorts(b *packet.Buffer, d []byte, attr KeyAttr, v *packet.Key, m *packet.Mask) {
	k := &b.Key
	var want uint8
	var n, csumAt int
	switch attr {
	case AttrTCP:
		want, n, csumAt = packet.ProtoTCP, packet.TCPMinLen, 16
	case AttrUDP:
		want, n, csumAt = packet.ProtoUDP, packet.UDPHeaderLen, 6
	default:
		want, n = packet.ProtoSCTP, packet.SCTPMinLen
	}
	h := l4(b, d, n)
	if h == nil || k.IPProto != want && !(attr == AttrUDP && k.IPProto == packet.ProtoUDPLite) {
		return
	}
	var old [4]byte
	copy(old[:], h[0:4])
	sp := masked16(binary.BigEndian.Uint16(h[0:]), v.SrcPort, m.SrcPort)
	dp := masked16(binary.BigEndian.Uint16(h[2:]), v.DstPort, m.DstPort)
	if attr == AttrSCTP {
		// The CRC covers the SCTP packet to the end of the IP payload;
		// the frame may carry Ethernet padding after it.
		seg := h[:l4Len(b, d)]
		if len(seg) < packet.SCTPMinLen {
			return
		}
		stored := binary.BigEndian.Uint32(seg[8:12])
		binary.BigEndian.PutUint32(seg[8:12], 0)
		before := sctpCRC(seg)
		binary.BigEndian.PutUint16(seg[0:], sp)
		binary.BigEndian.PutUint16(seg[2:], dp)
		after := sctpCRC(seg)
		// Keep whatever error the old checksum had.
		binary.BigEndian.PutUint32(seg[8:12], stored^before^after)
	} else {
		binary.BigEndian.PutUint16(h[0:], sp)
		binary.BigEndian.PutUint16(h[2:], dp)
		if !partialCsum(b) { // ports are not in the pseudo-header
			updateField(h[csumAt:csumAt+2], old[:], h[0:4], false, k.IPProto == packet.ProtoUDP)
		}
	}
	k.SrcPort, k.DstPort = sp, dp
}

// sctpCRC returns the SCTP checksum of seg (with its checksum field
// zero) as it is stored: CRC32c, the bytes in little-endian order.
func sctpCRC(seg []byte) uint32 {
	c := crc32.Checksum(seg, castagnoli)
	return c>>24 | c>>8&0xff00 | c<<8&0xff0000 | c<<24
}

// l4Len returns the length of the L4 segment: from the L4 offset to the
// end of the IP payload (without Ethernet padding).
func l4Len(b *packet.Buffer, d []byte) int {
	o3, o4 := int(b.Offsets.L3), int(b.Offsets.L4)
	end := len(d)
	switch b.Key.EtherType {
	case packet.EtherTypeIPv4:
		if o3+4 <= len(d) {
			end = min(end, o3+int(binary.BigEndian.Uint16(d[o3+2:])))
		}
	case packet.EtherTypeIPv6:
		if o3+6 <= len(d) {
			end = min(end, o3+packet.IPv6HeaderLen+int(binary.BigEndian.Uint16(d[o3+4:])))
		}
	}
	return max(end-o4, 0)
}

func setICMP(b *packet.Buffer, d []byte, attr KeyAttr, v *packet.Key, m *packet.Mask) {
	k := &b.Key
	if attr == AttrICMP && (k.IPProto != packet.ProtoICMP || k.EtherType != packet.EtherTypeIPv4) ||
		attr == AttrICMPv6 && (k.IPProto != packet.ProtoICMPv6 || k.EtherType != packet.EtherTypeIPv6) {
		return
	}
	h := l4(b, d, 4)
	if h == nil {
		return
	}
	var old [2]byte
	copy(old[:], h[0:2])
	h[0] = masked8(h[0], v.ICMPType, m.ICMPType)
	h[1] = masked8(h[1], v.ICMPCode, m.ICMPCode)
	if !partialCsum(b) { // type and code are not in the pseudo-header
		updateField(h[2:4], old[:], h[0:2], false, false)
	}
	k.ICMPType, k.ICMPCode = h[0], h[1]
	if attr == AttrICMPv6 {
		// The type decides whether the ND fields exist: parse again
		// (the metadata stays) rather than keep stale ones.
		b.Parse()
	}
}

func setARP(b *packet.Buffer, d []byte, v *packet.Key, m *packet.Mask) {
	k := &b.Key
	if k.EtherType != packet.EtherTypeARP && k.EtherType != packet.EtherTypeRARP {
		return
	}
	h := l3(b, d, packet.ARPIPv4Len)
	if h == nil || binary.BigEndian.Uint16(h[0:]) != 1 || binary.BigEndian.Uint16(h[2:]) != packet.EtherTypeIPv4 || h[4] != 6 || h[5] != 4 {
		return
	}
	op := masked16(binary.BigEndian.Uint16(h[6:]), v.ARPOp, m.ARPOp)
	binary.BigEndian.PutUint16(h[6:], op)
	maskedBytes(h[8:14], v.ARPSHA[:], m.ARPSHA[:])
	maskedBytes(h[14:18], v.SrcIPv4[:], m.SrcIPv4[:])
	maskedBytes(h[18:24], v.ARPTHA[:], m.ARPTHA[:])
	maskedBytes(h[24:28], v.DstIPv4[:], m.DstIPv4[:])
	k.ARPOp, k.ARPSHA, k.SrcIPv4, k.ARPTHA, k.DstIPv4 = op, [6]byte(h[8:14]), [4]byte(h[14:18]), [6]byte(h[18:24]), [4]byte(h[24:28])
}

// setND rewrites the target of a neighbour solicitation or advertisement
// and the link-layer addresses in its SLL and TLL options, when present
// (as Open vSwitch's packet_set_nd: no option is added).
func setND(b *packet.Buffer, d []byte, v *packet.Key, m *packet.Mask) {
	k := &b.Key
	const hdrLen, targetLen = 8, 16
	if k.EtherType != packet.EtherTypeIPv6 || k.IPProto != packet.ProtoICMPv6 || k.ICMPCode != 0 ||
		k.ICMPType != packet.ICMPv6NeighborSolicit && k.ICMPType != packet.ICMPv6NeighborAdvert {
		return
	}
	h := l4(b, d, hdrLen+targetLen)
	if h == nil {
		return
	}
	h = h[:max(l4Len(b, d), hdrLen+targetLen)]
	// Target and options are not in the pseudo-header: a partial
	// checksum has nothing to update.
	csum, partial := h[2:4], partialCsum(b)
	var old [16]byte
	if m.NDTarget != ([16]byte{}) {
		copy(old[:], h[hdrLen:hdrLen+targetLen])
		t := h[hdrLen : hdrLen+targetLen]
		maskedBytes(t, v.NDTarget[:], m.NDTarget[:])
		if !partial {
			updateField(csum, old[:], t, false, false)
		}
		k.NDTarget = [16]byte(t)
	}
	for opts := h[hdrLen+targetLen:]; len(opts) >= 8; {
		n := int(opts[1]) * 8
		if n == 0 || n > len(opts) {
			break
		}
		if n == 8 && (opts[0] == packet.NDOptSourceLinkAddr || opts[0] == packet.NDOptTargetLinkAddr) {
			// The option is 8 bytes at an offset that is a multiple of
			// 8 from the ICMPv6 header: its words are aligned.
			copy(old[:8], opts[:8])
			if opts[0] == packet.NDOptSourceLinkAddr {
				maskedBytes(opts[2:8], v.ARPSHA[:], m.ARPSHA[:])
				k.ARPSHA = [6]byte(opts[2:8])
			} else {
				maskedBytes(opts[2:8], v.ARPTHA[:], m.ARPTHA[:])
				k.ARPTHA = [6]byte(opts[2:8])
			}
			if !partial {
				updateField(csum, old[:8], opts[:8], false, false)
			}
		}
		opts = opts[n:]
	}
}

// routingPending reports whether the IPv6 header h has a routing header
// with segments left before the L4 header at offset l4 (relative to h):
// the pseudo-header then holds the final destination, not the one in
// the IPv6 header, so rewriting that one leaves the L4 checksum alone
// (as Open vSwitch's packet_set_ipv6).
func routingPending(h []byte, l4 int) bool {
	next, off := h[6], packet.IPv6HeaderLen
	for range 8 {
		if off+4 > len(h) || off >= l4 && l4 > 0 {
			return false
		}
		switch next {
		case packet.ProtoRouting:
			return h[off+3] != 0
		case packet.ProtoHopByHop, packet.ProtoDstOpts:
			next, off = h[off], off+(int(h[off+1])+1)*8
		case packet.ProtoAH:
			next, off = h[off], off+(int(h[off+1])+2)*4
		case packet.ProtoFragment:
			next, off = h[off], off+8
		default:
			return false
		}
	}
	return false
}

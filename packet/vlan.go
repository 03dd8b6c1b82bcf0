package packet

import "encoding/binary"

// vlanPos is where a pushed tag goes: right after the two MAC addresses.
const vlanPos = 12

// PushVLAN inserts an 802.1Q tag with the given TCI as the outermost tag.
// See PushVLANTag.
func (b *Buffer) PushVLAN(tci uint16) bool {
	return b.PushVLANTag(VLANTag{TPID: EtherTypeVLAN, TCI: tci})
}

// PushVLANTag inserts t as the outermost tag, in place: the two MAC
// addresses move 4 bytes into the headroom, the payload does not move.
// Offsets and the virtio_net_hdr's CsumStart and HdrLen move with the
// headers behind the tag. The key is left as parsed.
//
// It reports false, changing nothing, if the frame is shorter than an
// Ethernet header or the headroom is too small.
func (b *Buffer) PushVLANTag(t VLANTag) bool {
	if b.Len() < EthHeaderLen || b.Headroom() < VLANHeaderLen {
		return false
	}
	b.Prepend(VLANHeaderLen)
	d := b.Data()
	copy(d[:vlanPos], d[VLANHeaderLen:VLANHeaderLen+vlanPos])
	binary.BigEndian.PutUint16(d[vlanPos:], t.TPID)
	binary.BigEndian.PutUint16(d[vlanPos+2:], t.TCI)
	b.shiftAfterL2(vlanPos, VLANHeaderLen)
	return true
}

// PopVLAN removes the outermost 802.1Q or 802.1ad tag in place and returns
// it. It reports false, changing nothing, if the frame has no such tag.
func (b *Buffer) PopVLAN() (VLANTag, bool) {
	d := b.Data()
	if len(d) < EthHeaderLen+VLANHeaderLen {
		return VLANTag{}, false
	}
	tpid := be16(d[vlanPos:])
	if tpid != EtherTypeVLAN && tpid != EtherTypeQinQ {
		return VLANTag{}, false
	}
	t := VLANTag{TPID: tpid, TCI: be16(d[vlanPos+2:])}
	copy(d[VLANHeaderLen:VLANHeaderLen+vlanPos], d[:vlanPos])
	b.Pull(VLANHeaderLen)
	b.shiftAfterL2(vlanPos+VLANHeaderLen, -VLANHeaderLen)
	return t, true
}

// RestoreVLAN puts back the tag the receiving device stripped (Meta's
// StrippedVLAN), as the outermost tag, and clears StrippedVLAN. It reports
// false if the push failed; true if there was nothing to restore.
func (b *Buffer) RestoreVLAN() bool {
	if !b.StrippedVLAN.Present() {
		return true
	}
	if !b.PushVLANTag(b.StrippedVLAN) {
		return false
	}
	b.StrippedVLAN = VLANTag{}
	return true
}

// shiftAfterL2 moves every recorded offset at or beyond pos by delta bytes,
// after a header was inserted (delta > 0) or removed (delta < 0) at pos.
// Offsets before pos (and unset ones, which are 0) stay.
func (b *Buffer) shiftAfterL2(pos, delta int) {
	shift := func(v *uint16) {
		if int(*v) >= pos {
			*v = uint16(int(*v) + delta)
		}
	}
	shift(&b.Offsets.L3)
	shift(&b.Offsets.L4)
	if b.Vnet.Flags&VnetNeedsCsum != 0 {
		shift(&b.Vnet.CsumStart)
	}
	shift(&b.Vnet.HdrLen)
}

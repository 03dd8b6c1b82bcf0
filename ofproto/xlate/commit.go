package xlate

import (
	"gvs/dpif"
	"gvs/packet"
)

// commit emits the datapath actions that make the packet (as the datapath
// actions so far leave it: ctx.base) what the flow now says (ctx.flow),
// as Open vSwitch's commit_odp_actions: set actions per key attribute,
// then the VLAN tags, then skb_priority and pkt_mark.
//
// A set action writes the bits of its attribute that the wildcards hold
// (every bit an action wrote is there: set_field unwildcards what it
// writes), masked when that is not the whole attribute. Writing consulted
// but unchanged bits is harmless: the megaflow matches them exactly.
func (ctx *context) commit() {
	f, b := &ctx.flow.Key, &ctx.base.Key
	m := (*packet.Key)(&ctx.wc.Masks.Key)

	ctx.commitAttr(dpif.AttrEthernet, f, b, m)
	switch f.EtherType {
	case packet.EtherTypeIPv4:
		ctx.commitAttr(dpif.AttrIPv4, f, b, m)
	case packet.EtherTypeIPv6:
		ctx.commitAttr(dpif.AttrIPv6, f, b, m)
	case packet.EtherTypeARP, etherTypeRARP:
		ctx.commitAttr(dpif.AttrARP, f, b, m)
	}
	if isIP(&ctx.flow) && !f.IsLaterFragment() {
		switch f.IPProto {
		case ipProtoTCP:
			ctx.commitAttr(dpif.AttrTCP, f, b, m)
		case ipProtoUDP:
			ctx.commitAttr(dpif.AttrUDP, f, b, m)
		case ipProtoSCTP:
			ctx.commitAttr(dpif.AttrSCTP, f, b, m)
		case ipProtoICMP:
			if f.EtherType == packet.EtherTypeIPv4 {
				ctx.commitAttr(dpif.AttrICMP, f, b, m)
			}
		case ipProtoICMPv6:
			if f.EtherType == packet.EtherTypeIPv6 {
				ctx.commitAttr(dpif.AttrICMPv6, f, b, m)
				if f.ICMPCode == 0 && (f.ICMPType == icmp6NS || f.ICMPType == icmp6NA) {
					ctx.commitAttr(dpif.AttrND, f, b, m)
				}
			}
		}
	}
	ctx.commitVLANs()
	if f.SkbPriority != b.SkbPriority {
		ctx.emit(dpif.SetSkbPriority(f.SkbPriority, ^uint32(0)))
		b.SkbPriority = f.SkbPriority
	}
	if f.PktMark != b.PktMark {
		m.PktMark = ^uint32(0)
		ctx.emit(dpif.SetPktMark(f.PktMark, ^uint32(0)))
		b.PktMark = f.PktMark
	}
}

// commitAttr emits a set of attr if the flow differs from the base in
// attr's fields, and makes the base agree.
func (ctx *context) commitAttr(attr dpif.KeyAttr, f, b, m *packet.Key) {
	var fv, bv, mv packet.Key
	copyAttr(attr, &fv, f)
	copyAttr(attr, &bv, b)
	copyAttr(attr, &mv, m)
	if fv == bv {
		return
	}
	// Bits that changed are in the mask already (every writer unwildcards
	// what it writes); OR them in anyway so a set never misses one.
	fw, bw, mw := keyWords(&fv), keyWords(&bv), keyWords(&mv)
	for i := range fw {
		mw[i] |= fw[i] ^ bw[i]
	}
	var full packet.Key
	fullMask := packet.FullMask()
	copyAttr(attr, &full, (*packet.Key)(&fullMask))
	clearReadOnly(attr, &full)
	clearReadOnly(attr, &mv)
	if mv == full {
		ctx.emit(dpif.Set(attr, f))
	} else {
		// The value carries only the masked bits, as Open vSwitch's
		// commit_masked_set_action clears the others: two packets of one
		// megaflow then get the same action.
		vw := keyWords(&fv)
		for i := range vw {
			vw[i] &= mw[i]
		}
		ctx.emit(dpif.SetMasked(attr, &fv, (*packet.Mask)(&mv)))
	}
	// The megaflow must match what the set action was decided on.
	copyAttrOr(attr, m, &mv)
	copyAttr(attr, b, f)
}

// clearReadOnly clears the fields of attr a set cannot write (the IP
// protocol and fragment bits), so they never make a set "masked".
func clearReadOnly(attr dpif.KeyAttr, k *packet.Key) {
	if attr == dpif.AttrIPv4 || attr == dpif.AttrIPv6 {
		k.IPProto, k.IPFrag = 0, 0
	}
}

// commitVLANs pops the base's outer tags that differ from the flow's and
// pushes the flow's, as Open vSwitch's commit_vlan_action (the datapath
// has no "set VLAN": a changed tag is popped and pushed again).
func (ctx *context) commitVLANs() {
	f, b := &ctx.flow.Key, &ctx.base.Key
	if f.VLANs == b.VLANs {
		return
	}
	fn, bn := f.NumVLANs(), b.NumVLANs()
	// Skip the common inner tags.
	for fn > 0 && bn > 0 && f.VLANs[fn-1] == b.VLANs[bn-1] {
		fn--
		bn--
	}
	for i := 0; i < bn; i++ {
		ctx.emit(dpif.PopVLAN())
		ctx.wc.Masks.VLANs[i] = packet.VLANTag{TPID: 0xffff, TCI: 0xffff}
	}
	for i := fn - 1; i >= 0; i-- {
		ctx.emit(dpif.PushVLAN(f.VLANs[i].TCI))
	}
	b.VLANs = f.VLANs
}

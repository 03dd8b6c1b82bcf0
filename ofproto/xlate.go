package ofproto

import (
	"gvs/dpif"
	"gvs/packet"
)

// The NORMAL action, after Open vSwitch's xlate_normal: VLAN admission,
// source learning, then output to the learned port or flooding within the
// VLAN, never back out of the input port.
//
// Every decision depends only on in_port, the outer VLAN tag and the two
// MAC addresses, so the megaflow matches exactly those (as Open vSwitch's
// wildcards do). dl_src is part of it for a second reason: a packet from
// a new source misses and gets learned.
//
// A flow is tagged with what it depends on: the bridge (any port change
// flushes it), its source's MAC entry and its destination's MAC entry.
// Learning, moving, expiring or evicting an entry deletes the flows
// tagged with it. Translation and install both happen under the bridge's
// lock, so no flow decided on an old MAC table survives a change.

// normalMask returns the megaflow mask of every NORMAL flow.
func normalMask() packet.Mask {
	return packet.Mask{
		InPort: ^uint32(0),
		DstMAC: [6]byte{255, 255, 255, 255, 255, 255},
		SrcMAC: [6]byte{255, 255, 255, 255, 255, 255},
		VLANs:  [packet.MaxVLANs]packet.VLANTag{{TPID: 0xffff, TCI: 0xffff}},
	}
}

func isMulticast(mac [6]byte) bool { return mac[0]&1 != 0 }

// isReserved reports 01:80:c2:00:00:00 to 01:80:c2:00:00:0f (BPDUs, LACP,
// 802.1X, LLDP...), which a bridge must not forward.
func isReserved(mac [6]byte) bool {
	return mac[0] == 0x01 && mac[1] == 0x80 && mac[2] == 0xc2 && mac[3] == 0 && mac[4] == 0 && mac[5]&0xf0 == 0
}

// upcall translates one miss and installs its megaflow.
func (br *Bridge) upcall(u *dpif.Upcall) dpif.UpcallResult {
	k := u.Key
	br.mu.Lock()
	defer br.mu.Unlock()
	in := br.ports[k.InPort]
	if in == nil { // the port left the bridge after dispatch
		return dpif.UpcallDrop
	}
	vlan, ok := br.admit(in, k)
	if ok && !isMulticast(k.SrcMAC) {
		br.learnLocked(vlan, k.SrcMAC, in.no)
	}
	u.Mask = normalMask()
	u.Tags = append(u.Tags, br.bridgeTag())
	if ok {
		u.Tags = append(u.Tags, br.srcTag(vlan, k.SrcMAC), br.dstTag(vlan, k.DstMAC))
		br.outputs(u, in, vlan)
	}
	// Install here, under the lock, rather than by returning
	// UpcallInstall: see the comment at the top of the file.
	br.dp.Put(dpif.FlowSpec{Key: *k, Mask: u.Mask, Actions: u.Actions, Tags: u.Tags})
	return dpif.UpcallExecute
}

// admit applies the input port's VLAN rules and the reserved-address
// rule; it returns the packet's VLAN or false to drop it.
func (br *Bridge) admit(in *bport, k *packet.Key) (uint16, bool) {
	if !br.cfg.ForwardBPDU && isReserved(k.DstMAC) {
		return 0, false
	}
	var vid uint16
	if k.VLANs[0].Present() {
		vid = k.VLANs[0].VID()
	}
	return in.inputVLAN(vid)
}

// learnLocked updates the MAC table and deletes the flows the change
// makes wrong.
func (br *Bridge) learnLocked(vlan uint16, mac [6]byte, port uint32) {
	out := br.macs.learn(vlan, mac, port, br.cfg.Now())
	switch out.res {
	case learnNew:
		// Flows that flooded to this address must now go to its port.
		br.dp.DelTagged(br.dstTag(vlan, mac))
	case learnMoved:
		br.forgetLocked(vlan, mac)
	}
	if out.didEvict {
		br.forgetLocked(out.evicted.vlan, out.evicted.mac)
	}
}

// forgetLocked deletes the flows to and from an address whose entry
// changed or went away.
func (br *Bridge) forgetLocked(vlan uint16, mac [6]byte) {
	br.dp.DelTagged(br.dstTag(vlan, mac))
	br.dp.DelTagged(br.srcTag(vlan, mac))
}

// outputs appends the actions that send the packet, in VLAN vlan, to the
// learned port or floods it.
func (br *Bridge) outputs(u *dpif.Upcall, in *bport, vlan uint16) {
	k := u.Key
	cur := uint16(0) // the packet's tag as the actions leave it; 0: none
	if k.VLANs[0].Present() {
		cur = k.VLANs[0].TCI
		if cur == 0 {
			cur = 1 << 12 // a VID 0 tag without priority is still a tag
		}
	}
	pcp := k.VLANs[0].PCP()
	emit := func(p *bport) {
		want := p.outputTCI(vlan, pcp)
		switch {
		case want == 0 && cur != 0:
			u.Actions = append(u.Actions, dpif.PopVLAN())
		case want != 0 && cur == 0:
			u.Actions = append(u.Actions, dpif.PushVLAN(want))
		case want != 0 && want != cur:
			u.Actions = append(u.Actions, dpif.SetVLANTCI(want))
		}
		cur = want
		u.Actions = append(u.Actions, dpif.Output(p.no))
	}
	if !isMulticast(k.DstMAC) {
		if no, ok := br.macs.lookup(vlan, k.DstMAC); ok {
			if p := br.ports[no]; p != nil && no != in.no && p.includes(vlan) {
				emit(p)
			}
			return // learned on the input port (or gone): drop
		}
	}
	for _, p := range br.order {
		if p != in && p.includes(vlan) {
			emit(p)
		}
	}
}

// Tags. Collisions only cost extra flow deletions, so a 64-bit mix of
// (bridge, kind, VLAN, MAC) is enough.
const (
	tagBridge = iota + 1
	tagSrc
	tagDst
)

func (br *Bridge) bridgeTag() uint64 { return mixTag(br.id, tagBridge, 0, [6]byte{}) }
func (br *Bridge) srcTag(vlan uint16, mac [6]byte) uint64 {
	return mixTag(br.id, tagSrc, vlan, mac)
}
func (br *Bridge) dstTag(vlan uint16, mac [6]byte) uint64 {
	return mixTag(br.id, tagDst, vlan, mac)
}

func mixTag(bridge uint64, kind uint8, vlan uint16, mac [6]byte) uint64 {
	x := uint64(mac[0])<<40 | uint64(mac[1])<<32 | uint64(mac[2])<<24 | uint64(mac[3])<<16 | uint64(mac[4])<<8 | uint64(mac[5])
	x |= uint64(vlan&0xfff)<<48 | uint64(kind)<<60
	x ^= bridge * 0x9e3779b97f4a7c15
	// splitmix64 finaliser
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

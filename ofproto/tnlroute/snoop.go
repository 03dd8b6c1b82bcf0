package tnlroute

import (
	"gvs/ofproto/mf"
	"gvs/packet"
)

const arpOpReply = 2

var allOnes16 = [16]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

// IsGARP reports whether f is a gratuitous ARP (sender and target
// protocol addresses equal), recording in wc the fields it read (Open
// vSwitch's is_garp).
func IsGARP(f *mf.Flow, wc *mf.Wildcards) bool {
	if f.EtherType != packet.EtherTypeARP {
		return false
	}
	wc.Masks.SrcIPv4 = [4]byte{0xff, 0xff, 0xff, 0xff}
	wc.Masks.DstIPv4 = [4]byte{0xff, 0xff, 0xff, 0xff}
	return f.SrcIPv4 == f.DstIPv4
}

// AddressedTo reports whether f, an ARP or neighbour discovery packet, is
// addressed to addr (an address of the bridge): the ARP target protocol
// address, or the IPv6 destination (addr itself or its solicited-node
// multicast group), as Open vSwitch's is_neighbor_reply_matched decides
// whether a reply is for the bridge.
func AddressedTo(f *mf.Flow, addr [16]byte) bool {
	if isMapped(&addr) {
		return f.EtherType == packet.EtherTypeARP && [4]byte(addr[12:]) == f.DstIPv4
	}
	d := &f.DstIPv6
	solicited := d[0] == 0xff && d[1]&0x0f == 0x02 && // ff02::/16, multicast link-local
		d[11] == 0x01 && d[12] == 0xff && d[13] == addr[13] && d[14] == addr[14] && d[15] == addr[15]
	return solicited || *d == addr
}

// Snoop learns a neighbour from f, a packet seen on bridge, as Open
// vSwitch's tnl_neigh_snoop: an ARP reply or a gratuitous ARP with a
// sender hardware address teaches sender IP → sender MAC; a Neighbour
// Advertisement with a target link-layer address teaches target →
// that address (solicitations and advertisements without the option are
// ignored, as Open vSwitch ignores them). The fields it reads are
// recorded in wc, so the megaflow keeps the decision. With update false
// (ofproto/trace, side-effect-free translation) nothing is stored.
// Snoop reports whether f was a neighbour packet it learns from. It
// allocates nothing unless it adds an entry.
func (c *Cache) Snoop(bridge string, f *mf.Flow, wc *mf.Wildcards, update bool) bool {
	if f.EtherType == packet.EtherTypeARP {
		garp := IsGARP(f, wc)
		ok := garp
		if !garp {
			wc.Masks.ARPOp = 0xffff
			ok = f.ARPOp == arpOpReply
		}
		if ok {
			wc.Masks.ARPSHA = [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
			if f.ARPSHA != ([6]byte{}) {
				wc.Masks.SrcIPv4 = [4]byte{0xff, 0xff, 0xff, 0xff}
				if update {
					c.Set(bridge, mapped4(f.SrcIPv4), f.ARPSHA)
				}
				return true
			}
		}
		return false
	}
	if f.EtherType != packet.EtherTypeIPv6 {
		return false
	}
	wc.Masks.IPProto = 0xff
	if f.IPProto != packet.ProtoICMPv6 {
		return false
	}
	wc.Masks.ICMPCode = 0xff
	if f.ICMPCode != 0 {
		return false
	}
	wc.Masks.ICMPType = 0xff
	if f.ICMPType != packet.ICMPv6NeighborAdvert {
		return false
	}
	wc.Masks.ARPTHA = [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	if f.ARPTHA == ([6]byte{}) {
		return false
	}
	wc.Masks.SrcIPv6 = allOnes16
	wc.Masks.DstIPv6 = allOnes16
	wc.Masks.NDTarget = allOnes16
	if update {
		c.Set(bridge, f.NDTarget, f.ARPTHA)
	}
	return true
}

package tunnel

import (
	"net/netip"

	"gvs/packet"
)

// SetSendFields sets the flow's tunnel fields for output to a tunnel
// port configured by c, as Open vSwitch's tnl_port_send does during
// translation: fixed addresses and key replace the flow's (flow ones
// stay as OpenFlow set them), TTL and DSCP come from the configuration
// or are inherited from an IP packet, ECN is always inherited (CE
// becomes ECT(0)), the DF, checksum and key flags follow the
// configuration (OAM stays as the flow has it), and egress_pkt_mark sets
// pkt_mark. The caller records in its wildcards what it read (nw_tos,
// nw_ttl for an IP flow).
func (c *Config) SetSendFields(k *packet.Key) {
	if !c.LocalFlow {
		k.TunSrc, k.TunIPv6Src = [4]byte{}, [16]byte{}
		if c.Local.Is4() {
			k.TunSrc = c.Local.As4()
		} else if c.Local.IsValid() {
			k.TunIPv6Src = c.Local.As16()
		}
	}
	if !c.RemoteFlow {
		k.TunDst, k.TunIPv6Dst = [4]byte{}, [16]byte{}
		if c.Remote.Is4() {
			k.TunDst = c.Remote.As4()
		} else if c.Remote.IsValid() {
			k.TunIPv6Dst = c.Remote.As16()
		}
	}
	if c.SetEgressPktMark {
		k.PktMark = c.EgressPktMark
	}
	if !c.OutKey.Flow {
		k.TunID = c.OutKey.Value
	}
	isIP := k.EtherType == packet.EtherTypeIPv4 || k.EtherType == packet.EtherTypeIPv6
	if c.TTLInherit && isIP {
		k.TunTTL = k.IPTTL
	} else {
		k.TunTTL = c.TTL
	}
	if c.TOSInherit && isIP {
		k.TunTOS = k.IPTOS & 0xfc
	} else {
		k.TunTOS = c.TOS
	}
	if isIP {
		if k.IPTOS&3 == 3 { // CE
			k.TunTOS |= 2 // ECT(0)
		} else {
			k.TunTOS |= k.IPTOS & 3
		}
	}
	k.TunFlags &^= FlagDontFragment | FlagCsum | FlagKey
	if c.DontFragment {
		k.TunFlags |= FlagDontFragment
	}
	if c.Csum {
		k.TunFlags |= FlagCsum
	}
	if c.OutKey.Present {
		k.TunFlags |= FlagKey
	}
}

// Params returns what Build needs for a packet whose tunnel fields are k
// (after SetSendFields and the flow's own set_field actions), leaving
// through a port configured by c: src is the underlay source (the flow's
// tunnel source if set, else the route's), the MACs are the route's
// next hop and the interface's, geneveOptions the raw options
// (UnmapGeneveOption). It reports false if the flow has no tunnel
// destination.
func (c *Config) Params(k *packet.Key, src netip.Addr, dstMAC, srcMAC [6]byte, geneveOptions []byte) (BuildParams, bool) {
	p := BuildParams{Kind: c.Kind, DstMAC: dstMAC, SrcMAC: srcMAC, Src: src,
		TOS: k.TunTOS, TTL: k.TunTTL, TunID: k.TunID, DstPort: c.DstPort,
		DontFragment: k.TunFlags&FlagDontFragment != 0, Csum: k.TunFlags&FlagCsum != 0, OAM: k.TunFlags&FlagOAM != 0,
		GREKey: c.OutKey.Present, GRESeq: c.Seq, GeneveOptions: geneveOptions}
	if c.Kind == VXLAN && c.GBP {
		p.GBP, p.GBPID, p.GBPFlags = true, k.TunGBPID, k.TunGBPFlags
	}
	switch {
	case k.TunDst != [4]byte{}:
		p.Dst = netip.AddrFrom4(k.TunDst)
	case k.TunIPv6Dst != [16]byte{}:
		p.Dst = netip.AddrFrom16(k.TunIPv6Dst)
	default:
		return p, false
	}
	return p, true
}

package dpif

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"gvs/packet"
)

// String formats a flow like ovs-appctl dpctl/dump-flows: the matched
// fields (value/mask where the mask is partial), statistics, actions.
func (e FlowEntry) String() string {
	return e.Format(time.Now())
}

// Format is String with the "used" age computed against now.
func (e FlowEntry) Format(now time.Time) string {
	var b strings.Builder
	k, m := &e.Key, &e.Mask
	field := func(name string, v, mask any, full bool) {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if full {
			fmt.Fprintf(&b, "%s(%v)", name, v)
		} else {
			fmt.Fprintf(&b, "%s(%v/%v)", name, v, mask)
		}
	}
	if m.InPort != 0 {
		field("in_port", k.InPort, m.InPort, m.InPort == ^uint32(0))
	}
	full6 := [6]byte{255, 255, 255, 255, 255, 255}
	if m.SrcMAC != ([6]byte{}) {
		field("eth_src", net.HardwareAddr(k.SrcMAC[:]), net.HardwareAddr(m.SrcMAC[:]), m.SrcMAC == full6)
	}
	if m.DstMAC != ([6]byte{}) {
		field("eth_dst", net.HardwareAddr(k.DstMAC[:]), net.HardwareAddr(m.DstMAC[:]), m.DstMAC == full6)
	}
	for i := range packet.MaxVLANs {
		if m.VLANs[i] == (packet.VLANTag{}) {
			continue
		}
		if !k.VLANs[i].Present() {
			field("vlan", "none", nil, true)
			continue
		}
		field("vlan", fmt.Sprintf("tpid=0x%04x,vid=%d,pcp=%d", k.VLANs[i].TPID, k.VLANs[i].VID(), k.VLANs[i].PCP()),
			fmt.Sprintf("0x%04x", m.VLANs[i].TCI), m.VLANs[i].TCI == 0xffff)
	}
	if m.EtherType != 0 {
		field("eth_type", fmt.Sprintf("0x%04x", k.EtherType), fmt.Sprintf("0x%04x", m.EtherType), m.EtherType == 0xffff)
	}
	if m.SrcIPv4 != ([4]byte{}) {
		field("ipv4_src", netip.AddrFrom4(k.SrcIPv4), netip.AddrFrom4(m.SrcIPv4), m.SrcIPv4 == [4]byte{255, 255, 255, 255})
	}
	if m.DstIPv4 != ([4]byte{}) {
		field("ipv4_dst", netip.AddrFrom4(k.DstIPv4), netip.AddrFrom4(m.DstIPv4), m.DstIPv4 == [4]byte{255, 255, 255, 255})
	}
	if m.IPProto != 0 {
		field("ip_proto", k.IPProto, m.IPProto, m.IPProto == 0xff)
	}
	if m.SrcPort != 0 {
		field("tp_src", k.SrcPort, m.SrcPort, m.SrcPort == 0xffff)
	}
	if m.DstPort != 0 {
		field("tp_dst", k.DstPort, m.DstPort, m.DstPort == 0xffff)
	}
	if b.Len() == 0 {
		b.WriteString("any")
	}
	used := "never"
	if e.Stats.Packets > 0 {
		used = fmt.Sprintf("%.3fs", now.Sub(e.Stats.Used).Seconds())
	}
	fmt.Fprintf(&b, ", packets:%d, bytes:%d, used:%s", e.Stats.Packets, e.Stats.Bytes, used)
	if e.Stats.TCPFlags != 0 {
		fmt.Fprintf(&b, ", flags:0x%03x", e.Stats.TCPFlags)
	}
	fmt.Fprintf(&b, ", actions:%s", e.Actions)
	return b.String()
}

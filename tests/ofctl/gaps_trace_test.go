package ofctl

import "testing"

// TestTraceFlowSyntaxErrors: ofproto/trace refuses what Open vSwitch's
// parse_ofp_exact_flow refuses, in its words and with its exit status:
// fields whose prerequisites the fields before them do not meet, masked
// or flag-wildcarded values, fields set twice, unknown fields, bad values.
func TestTraceFlowSyntaxErrors(t *testing.T) {
	p := startPair(t, addPortsArgs(2)...)
	p.requireOpenFlow(t)
	p.compare(t,
		"ovs-appctl ofproto/trace br0 'udp,tp_src=53'",
		"ovs-appctl ofproto/trace br0 'tcp,tp_src=53,tp_dst=80' | tail -n 2",
		"ovs-appctl ofproto/trace br0 'tp_src=53,tcp'",
		"ovs-appctl ofproto/trace br0 'in_port=1,ip,nw_dst=198.18.0.0/16'",
		"ovs-appctl ofproto/trace br0 'in_port=1,ct_state=+trk+est'",
		"ovs-appctl ofproto/trace br0 'in_port=1,ct_state=0x22/0xff'",
		"ovs-appctl ofproto/trace br0 'ip,nw_src=198.18.0.1,nw_src=198.18.0.2'",
		"ovs-appctl ofproto/trace br0 'ip,tcp'",
		"ovs-appctl ofproto/trace br0 'udp,tcp'",
		"ovs-appctl ofproto/trace br0 'in_port=1,frobnicate=3'",
		"ovs-appctl ofproto/trace br0 'in_port=1,reg0=xyz'",
		"ovs-appctl ofproto/trace br0 'in_port=1,dl_vlan=5000'",
		"ovs-appctl ofproto/trace br0 'in_port=1,nw_src=198.18.0.1'",
		"ovs-appctl ofproto/trace br0 'arp,arp_op=1,nw_proto=1' | tail -n 2",
		"ovs-appctl ofproto/trace br0 'in_port=nosuch'",
		"ovs-appctl ofproto/trace br0 'in_port=p1,dl_type=0x0800,nw_proto=6,tcp_dst=22' | tail -n 2",
		"ovs-appctl ofproto/trace br0 'in_port=1,priority=5'",
		"ovs-appctl ofproto/trace br0 'in_port=1,reg0[0..3]=1'",
		"ovs-appctl ofproto/trace br0 'in_port=1,ct_state=est'",
		"ovs-appctl ofproto/trace br0 'in_port=1,tcp,tcp_flags=+syn'",
		"ovs-appctl ofproto/trace br0 'in_port=1,dl_dst=01:00:00:00:00:00/01:00:00:00:00:00'",
		"ovs-appctl ofproto/trace br0 'in_port=1,ipv6,ipv6_src=2001:2::/48'",
		"ovs-appctl ofproto/trace br0 'in_port=1,ip,'",
		"ovs-appctl ofproto/trace br0 'in_port=1,nw_src'",
		"ovs-appctl ofproto/trace br0 'in_port=1,dl_type=0x0800,ip'",
		// Exact values of every kind are accepted and traced alike.
		"ovs-appctl ofproto/trace br0 'in_port=p2,dl_vlan=5,dl_vlan_pcp=3,tcp6,ipv6_src=2001:2::1,ipv6_label=0x12345,nw_tos=4,nw_ecn=1,nw_ttl=9,tcp_flags=0x012,tcp_src=7,tcp_dst=8'",
		"ovs-appctl ofproto/trace br0 'ct_state=est|trk,ct_zone=3,ct_mark=0x5,ct_label=0x7,reg3=0x9,xreg4=0x10,metadata=0x11,pkt_mark=0x12,tun_id=0x13,in_port=LOCAL,arp,arp_op=2,arp_spa=198.18.0.1,arp_tha=50:54:00:00:00:01'",
		"ovs-appctl ofproto/trace br0 'in_port=1,icmp,icmp_type=8,icmp_code=0,nw_frag=first,ip_dscp=10'",
		"ovs-appctl ofproto/trace br0 'in_port=1,vlan_tci=0x1005,dl_type=0x0800,nw_proto=17,udp_src=5,udp_dst=6'",
	)
}

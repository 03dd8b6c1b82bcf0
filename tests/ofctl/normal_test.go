package ofctl

import "testing"

// TestOpenFlowStandaloneNormal: without fail-mode secure a bridge with no
// controller gets "priority=0 actions=NORMAL"; MAC learning, flooding
// and the megaflows NORMAL leaves.
func TestOpenFlowStandaloneNormal(t *testing.T) {
	setup := append(addPortsArgs(3), "--", "set", "interface", "p2", "options:tx_pcap=p2-tx.pcap",
		"--", "set", "interface", "p3", "options:tx_pcap=p3-tx.pcap")
	p := startPair(t, setup...)
	p.requireOpenFlow(t)
	arp := "'in_port(1),eth(src=50:54:00:00:00:05,dst=ff:ff:ff:ff:ff:ff),eth_type(0x0806),arp(sip=198.18.0.1,tip=198.18.0.2,op=1,sha=50:54:00:00:00:05,tha=00:00:00:00:00:00)'"
	reply := "'in_port(2),eth(src=50:54:00:00:00:07,dst=50:54:00:00:00:05),eth_type(0x0806),arp(sip=198.18.0.2,tip=198.18.0.1,op=2,sha=50:54:00:00:00:07,tha=50:54:00:00:00:05)'"
	p.compare(t,
		"ovs-vsctl del-fail-mode br0",
		"ovs-ofctl dump-flows br0",
		"ovs-appctl netdev-dummy/receive p1 "+arp,
		"ovs-appctl netdev-dummy/receive p2 "+reply,
		"!for i in $(seq 100); do [ $(stat -c %s $DIR/p3-tx.pcap) -gt 24 ] && break; sleep 0.02; done",
		"sort:ovs-appctl fdb/show br0 | sed 's/ *[0-9]*$//'",
		"ovs-pcap $DIR/p2-tx.pcap",
		"ovs-pcap $DIR/p3-tx.pcap",
		// A flood's outputs come in the order of Open vSwitch's hash
		// table of ports: compared as a set.
		"ovs-appctl dpctl/dump-flows | sort | perl -pe 's/actions:([\\d,]+)$/\"actions:\".join(\",\", sort { $a <=> $b } split(\",\", $1))/e'",
		"ovs-appctl ofproto/trace br0 'in_port=3,dl_src=50:54:00:00:00:09,dl_dst=50:54:00:00:00:05,dl_type=0x0800,nw_src=198.18.0.3,nw_dst=198.18.0.1'",
	)
}

// TestOpenFlowVLANAndRewrites: push/pop VLAN, 1.0 mod_* actions and
// set_field, on packets and in traces.
func TestOpenFlowVLANAndRewrites(t *testing.T) {
	setup := append(addPortsArgs(3), "--", "set", "interface", "p2", "options:tx_pcap=p2-tx.pcap",
		"--", "set", "interface", "p3", "options:tx_pcap=p3-tx.pcap")
	p := startPair(t, setup...)
	p.requireOpenFlow(t)
	tagged := "'in_port(3),eth(src=50:54:00:00:00:09,dst=50:54:00:00:00:05),eth_type(0x8100),vlan(vid=10,pcp=2),encap(eth_type(0x0800),ipv4(src=198.18.0.3,dst=198.18.0.1,proto=17,tos=0,ttl=64,frag=no),udp(src=7,dst=9))'"
	p.compare(t,
		"ovs-ofctl add-flow br0 'in_port=1,ip,actions=mod_vlan_vid:10,mod_vlan_pcp:3,mod_dl_src:02:00:00:00:00:aa,mod_nw_tos:32,output:2'",
		"ovs-ofctl -O OpenFlow13 add-flow br0 'in_port=3,dl_vlan=10,udp,actions=pop_vlan,set_field:198.18.7.7->ip_dst,set_field:99->udp_dst,output:2'",
		"ovs-ofctl -O OpenFlow13 add-flow br0 'in_port=2,actions=push_vlan:0x88a8,set_field:4196->vlan_vid,output:3'",
		"ovs-ofctl -O OpenFlow13 --no-stats --sort dump-flows br0",
		"ovs-appctl netdev-dummy/receive p1 "+icmpFrame,
		"ovs-appctl netdev-dummy/receive p3 "+tagged,
		"!for i in $(seq 100); do [ $(stat -c %s $DIR/p2-tx.pcap) -gt 200 ] && break; sleep 0.02; done",
		"ovs-pcap $DIR/p2-tx.pcap",
		"ovs-appctl dpctl/dump-flows | sort",
		"ovs-appctl ofproto/trace br0 'in_port=2,dl_src=50:54:00:00:00:07,dl_dst=50:54:00:00:00:05,dl_type=0x0800,nw_src=198.18.0.2,nw_dst=198.18.0.1'",
	)
}

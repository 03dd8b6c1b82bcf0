package ofctl

import "testing"

// TestMegaflowPrefixes: the megaflows of packets that miss address-prefix
// and port rules match only the leading bits that told them apart
// (Open vSwitch's prefix tries on nw_dst and nw_src, and its ports trie),
// in ofproto/trace and in the datapath (dpctl/dump-flows, with the new
// flows' counters: packets:0, used:never for a flow whose only packet
// was its upcall's).
func TestMegaflowPrefixes(t *testing.T) {
	p := startPair(t, addPortsArgs(3)...)
	p.requireOpenFlow(t)
	p.compare(t,
		"!printf '%s\\n' "+
			"'priority=30,tcp,tp_dst=80,actions=output:2' "+
			"'priority=20,tcp,tp_src=0x1000/0xf000,actions=output:2' "+
			"'priority=10,ip,nw_dst=198.18.0.0/16,actions=output:3' "+
			"'priority=10,ip,nw_src=10.1.0.0/16,nw_dst=10.2.0.0/24,actions=output:3' "+
			"'priority=0,actions=drop' "+
			"> $DIR/flows.txt",
		"ovs-ofctl add-flows br0 $DIR/flows.txt",
		"ovs-appctl ofproto/trace br0 'in_port=1,tcp,nw_src=10.0.0.1,nw_dst=10.0.0.2,tp_src=1000,tp_dst=5201'",
		"ovs-appctl ofproto/trace br0 'in_port=1,tcp,nw_src=10.0.0.1,nw_dst=198.19.0.2,tp_src=1000,tp_dst=81'",
		"ovs-appctl ofproto/trace br0 'in_port=1,tcp,nw_src=10.1.2.3,nw_dst=10.2.1.1,tp_src=40000,tp_dst=53'",
		"ovs-appctl ofproto/trace br0 'in_port=1,tcp,nw_src=10.1.2.3,nw_dst=10.2.0.1,tp_src=4097,tp_dst=53'",
		"ovs-appctl netdev-dummy/receive p1 'in_port(1),eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.0.0.2,proto=6,tos=0,ttl=64,frag=no),tcp(src=1000,dst=5201)'",
		"ovs-appctl netdev-dummy/receive p1 'in_port(1),eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.0.0.2,proto=6,tos=0,ttl=64,frag=no),tcp(src=1001,dst=5202)'",
		"ovs-appctl netdev-dummy/receive p1 'in_port(1),eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=10.1.2.3,dst=10.2.1.1,proto=6,tos=0,ttl=64,frag=no),tcp(src=40000,dst=53)'",
		"ovs-appctl dpctl/dump-flows | sort",
	)
}

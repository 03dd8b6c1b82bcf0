package ofctl

import "testing"

// TestOpenFlowPipelineTrace: a multi-table pipeline with registers,
// metadata, conjunction, learn and groups; ofproto/trace of packets
// through it, the packets themselves (netdev-dummy/receive), and the
// megaflows the datapath got for them (dpctl/dump-flows: masks included).
func TestOpenFlowPipelineTrace(t *testing.T) {
	setup := append(addPortsArgs(4), "--", "set", "interface", "p2", "options:tx_pcap=p2-tx.pcap",
		"--", "set", "interface", "p3", "options:tx_pcap=p3-tx.pcap")
	p := startPair(t, setup...)
	p.requireOpenFlow(t)
	p.compare(t,
		"!printf '%s\\n' "+
			"'table=0,priority=100,in_port=1,actions=load:0x5->NXM_NX_REG0[],write_metadata:0x10/0xff,goto_table:1' "+
			"'table=0,priority=0,actions=drop' "+
			"'table=1,priority=50,ip,nw_dst=198.18.0.0/16,actions=conjunction(7,1/2)' "+
			"'table=1,priority=50,reg0=5,actions=conjunction(7,2/2)' "+
			"'table=1,priority=50,conj_id=7,ip,actions=set_field:0x2->reg1,resubmit(,2)' "+
			"'table=1,priority=10,actions=learn(table=3,priority=5,NXM_OF_ETH_DST[]=NXM_OF_ETH_SRC[],load:NXM_OF_IN_PORT[]->NXM_NX_REG2[0..15]),resubmit(,2)' "+
			"'table=2,priority=20,reg1=2,icmp,actions=dec_ttl,group:1' "+
			"'table=2,priority=10,actions=output:3' "+
			"> $DIR/pipeline.txt",
		"ovs-ofctl -O OpenFlow13 add-group br0 'group_id=1,type=all,bucket=output:2,bucket=set_field:198.18.9.9->ip_dst,output:3'",
		"ovs-ofctl -O OpenFlow13 add-flows br0 $DIR/pipeline.txt",
		"ovs-ofctl -O OpenFlow13 --no-stats --sort dump-flows br0",
		"ovs-appctl ofproto/trace br0 'in_port=1,icmp,dl_src=50:54:00:00:00:05,dl_dst=50:54:00:00:00:07,nw_src=198.18.0.2,nw_dst=198.18.0.1,nw_ttl=64,icmp_type=8'",
		"ovs-appctl ofproto/trace br0 'in_port=1,tcp,dl_src=50:54:00:00:00:05,dl_dst=50:54:00:00:00:07,nw_src=10.0.0.1,nw_dst=10.0.0.2,tp_src=1000,tp_dst=80'",
		"ovs-appctl ofproto/trace br0 'in_port=2,udp,nw_src=198.18.0.2,nw_dst=198.18.0.1'",
		"ovs-appctl netdev-dummy/receive p1 "+icmpFrame,
		"ovs-appctl netdev-dummy/receive p1 'in_port(1),eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.0.0.2,proto=6,tos=0,ttl=64,frag=no),tcp(src=1000,dst=80)'",
		"!for i in $(seq 100); do [ $(stat -c %s $DIR/p3-tx.pcap) -gt 200 ] && break; sleep 0.02; done",
		"ovs-pcap $DIR/p2-tx.pcap",
		"ovs-pcap $DIR/p3-tx.pcap",
		"ovs-appctl dpctl/dump-flows | sort",
		"ovs-ofctl -O OpenFlow13 --no-stats dump-flows br0 table=3",
	)
}

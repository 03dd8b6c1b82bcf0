package ofctl

import (
	"testing"
)

// The acceptance tests of issue 13: the real ovs-ofctl against gvs and
// against Debian's ovs-vswitchd, same output required. Each skips (only)
// while gvs has no OpenFlow management socket.

// icmpFrame is an ICMP echo request from 198.18.0.2 to 198.18.0.1, hex.
const icmpFrame = "50540000000750540000000508004500005c000000004001ee79c6120002c6120001080013fc00000000000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"

func TestOpenFlowShowAndDescriptions(t *testing.T) {
	p := startPair(t, addPortsArgs(3)...)
	p.requireOpenFlow(t)
	p.compare(t,
		"ovs-ofctl show br0",
		"ovs-ofctl -O OpenFlow13 show br0",
		"ovs-ofctl -O OpenFlow15 show br0",
		"ovs-ofctl dump-desc br0",
		"ovs-ofctl dump-tables br0",
		"ovs-ofctl -O OpenFlow13 dump-tables br0",
		"ovs-ofctl -O OpenFlow15 dump-tables br0",
		"ovs-ofctl -O OpenFlow13 dump-table-features br0",
		"ovs-ofctl -O OpenFlow15 dump-table-features br0",
		"ovs-ofctl -O OpenFlow13 dump-tables-desc br0",
		"ovs-ofctl dump-ports-desc br0",
		"ovs-ofctl -O OpenFlow14 dump-ports-desc br0",
		"ovs-ofctl -O OpenFlow15 dump-ports-desc br0 2",
		"ovs-ofctl get-frags br0",
		"ovs-ofctl set-frags br0 drop",
		"ovs-ofctl get-frags br0",
		"ovs-ofctl set-frags br0 reassemble",
		"ovs-ofctl set-frags br0 bogus",
		"ovs-ofctl set-frags br0 normal",
		"ovs-ofctl queue-stats br0",
		"ovs-ofctl -O OpenFlow13 queue-stats br0 1",
		"ovs-ofctl queue-get-config br0 1",
		"ovs-ofctl show nosuchbridge",
	)
}

func TestOpenFlowFlowMods(t *testing.T) {
	p := startPair(t, addPortsArgs(3)...)
	p.requireOpenFlow(t)
	p.compare(t,
		"ovs-ofctl add-flow br0 'priority=100,in_port=1,actions=output:2'",
		"ovs-ofctl add-flow br0 'cookie=0x10,priority=90,ip,nw_src=198.18.0.0/24,actions=output:3'",
		"ovs-ofctl add-flow br0 'table=1,cookie=0x20,priority=80,tcp,tp_dst=80,actions=drop'",
		"ovs-ofctl add-flow br0 'table=1,priority=70,udp,tp_dst=53,idle_timeout=60,hard_timeout=120,actions=output:1'",
		"ovs-ofctl add-flow br0 'table=2,priority=5,dl_dst=01:00:00:00:00:00/01:00:00:00:00:00,actions=resubmit(,3)'",
		"ovs-ofctl add-flows br0 - <<'EOF'\npriority=1,arp,actions=NORMAL\ntable=3,priority=0,actions=drop\nEOF",
		"ovs-ofctl dump-flows br0",
		"ovs-ofctl --no-stats dump-flows br0",
		"ovs-ofctl -O OpenFlow13 dump-flows br0",
		"ovs-ofctl -O OpenFlow15 dump-flows br0",
		"ovs-ofctl --sort dump-flows br0",
		"ovs-ofctl --rsort dump-flows br0",
		"ovs-ofctl --sort=tp_dst dump-flows br0",
		"ovs-ofctl dump-flows br0 table=1",
		"ovs-ofctl dump-flows br0 in_port=1",
		"ovs-ofctl dump-flows br0 cookie=0x10/-1",
		"ovs-ofctl dump-flows br0 out_port=3",
		"ovs-ofctl dump-flows br0 ip",
		"ovs-ofctl --strict dump-flows br0 'priority=100,in_port=1'",
		"ovs-ofctl dump-aggregate br0",
		"ovs-ofctl dump-aggregate br0 table=1",
		"ovs-ofctl -O OpenFlow13 dump-aggregate br0 cookie=0x20/-1",
		"ovs-ofctl mod-flows br0 'in_port=1,actions=output:3'",
		"ovs-ofctl --strict mod-flows br0 'table=1,priority=80,tcp,tp_dst=80,actions=output:2'",
		"ovs-ofctl mod-flows br0 'cookie=0x10/-1,actions=drop'",
		"ovs-ofctl --sort dump-flows br0",
		"ovs-ofctl --strict del-flows br0 'table=1,priority=70,udp,tp_dst=53'",
		"ovs-ofctl del-flows br0 'table=2'",
		"ovs-ofctl del-flows br0 cookie=0x20/-1",
		"ovs-ofctl --sort dump-flows br0",
		"ovs-ofctl del-flows br0",
		"ovs-ofctl dump-flows br0",
		"ovs-ofctl dump-aggregate br0",
	)
}

func TestOpenFlowErrors(t *testing.T) {
	p := startPair(t, addPortsArgs(2)...)
	p.requireOpenFlow(t)
	p.compare(t,
		// check_overlap: the second, overlapping add fails.
		"ovs-ofctl add-flow br0 'check_overlap,priority=10,ip,actions=drop'",
		"ovs-ofctl add-flow br0 'check_overlap,priority=10,ip,nw_src=198.18.0.1,actions=drop'",
		"ovs-ofctl add-flow br0 'table=255,actions=drop'",
		"ovs-ofctl -O OpenFlow13 add-flow br0 'table=254,actions=drop'",
		"ovs-ofctl -O OpenFlow13 add-flow br0 'actions=group:99'",
		"ovs-ofctl -O OpenFlow13 add-flow br0 'actions=meter:7'",
		"ovs-ofctl add-flow br0 'actions=output:0'",
		"ovs-ofctl -O OpenFlow13 add-flow br0 'table=3,actions=goto_table:2'",
		"ovs-ofctl add-flow br0 'in_port=1,actions=resubmit(,300)'",
		"ovs-ofctl add-flow br0 'ip,actions=set_field:1->tcp_dst'",
		"ovs-ofctl add-flow br0 'actions=load:1->NXM_OF_IN_PORT[40..50]'",
		"ovs-ofctl -O OpenFlow10 add-group br0 'group_id=1,type=all,bucket=output:1'",
		"ovs-ofctl -O OpenFlow13 del-groups br0 group_id=5",
		"ovs-ofctl -O OpenFlow13 mod-group br0 'group_id=5,type=all,bucket=output:1'",
		"ovs-ofctl -O OpenFlow13 del-meter br0 meter=5",
		"ovs-ofctl -O OpenFlow13 mod-meter br0 'meter=5,kbps,band=type=drop,rate=1000'",
		"ovs-ofctl mod-port br0 nosuch up",
		"ovs-ofctl --sort dump-flows br0",
	)
}

func TestOpenFlowReplaceAndDiffFlows(t *testing.T) {
	p := startPair(t, addPortsArgs(3)...)
	p.requireOpenFlow(t)
	p.compare(t,
		"!printf '%s\\n' 'priority=10,in_port=1,actions=output:2' 'priority=10,in_port=2,actions=output:1' 'table=1,priority=1,actions=drop' > $DIR/flows.txt",
		"!printf '%s\\n' 'priority=10,in_port=1,actions=output:3' 'priority=20,in_port=3,actions=output:1' 'table=1,priority=1,actions=drop' > $DIR/flows2.txt",
		"ovs-ofctl add-flow br0 'priority=99,actions=drop'",
		"ovs-ofctl replace-flows br0 $DIR/flows.txt",
		"ovs-ofctl --sort dump-flows br0",
		"ovs-ofctl diff-flows br0 $DIR/flows.txt; echo exit=$?",
		"ovs-ofctl diff-flows br0 $DIR/flows2.txt; echo exit=$?",
		"ovs-ofctl diff-flows $DIR/flows.txt $DIR/flows2.txt; echo exit=$?",
		"ovs-ofctl replace-flows br0 $DIR/flows2.txt",
		"ovs-ofctl --sort dump-flows br0",
		"ovs-ofctl -O OpenFlow14 --bundle replace-flows br0 $DIR/flows.txt",
		"ovs-ofctl --sort dump-flows br0",
	)
}

func TestOpenFlowBundle(t *testing.T) {
	p := startPair(t, addPortsArgs(2)...)
	p.requireOpenFlow(t)
	p.compare(t,
		"!printf '%s\\n' 'priority=10,in_port=1,actions=output:2' 'priority=10,in_port=2,actions=output:1' > $DIR/good.txt",
		// The last line's group does not exist: the whole bundle fails
		// and nothing of it stays.
		"!printf '%s\\n' 'priority=30,in_port=1,actions=drop' 'priority=31,in_port=2,actions=drop' 'priority=32,actions=group:42' > $DIR/bad.txt",
		"ovs-ofctl -O OpenFlow14 --bundle add-flows br0 $DIR/good.txt",
		"ovs-ofctl --sort dump-flows br0",
		"ovs-ofctl -O OpenFlow14 --bundle add-flows br0 $DIR/bad.txt",
		"ovs-ofctl --sort dump-flows br0",
		// The OpenFlow 1.3 ONF extension bundle.
		"ovs-ofctl -O OpenFlow13 --bundle del-flows br0 in_port=2",
		"ovs-ofctl --sort dump-flows br0",
		"ovs-ofctl -O OpenFlow13 --bundle add-flows br0 $DIR/bad.txt",
		"ovs-ofctl -O OpenFlow10 --bundle add-flows br0 $DIR/good.txt",
		"ovs-ofctl --sort dump-flows br0",
	)
}

func TestOpenFlowGroups(t *testing.T) {
	p := startPair(t, addPortsArgs(3)...)
	p.requireOpenFlow(t)
	p.compare(t,
		"ovs-ofctl -O OpenFlow13 add-group br0 'group_id=1,type=all,bucket=output:1,bucket=output:2'",
		"ovs-ofctl -O OpenFlow15 add-group br0 'group_id=2,type=select,selection_method=dp_hash,bucket=weight:100,output:1,bucket=weight:200,output:2'",
		"ovs-ofctl -O OpenFlow15 add-group br0 'group_id=3,type=select,selection_method=hash,fields(ip_src,nw_proto),bucket=output:2,bucket=output:3'",
		"ovs-ofctl -O OpenFlow13 add-group br0 'group_id=4,type=indirect,bucket=output:3'",
		"ovs-ofctl -O OpenFlow13 add-group br0 'group_id=5,type=ff,bucket=watch_port:1,output:1,bucket=watch_port:2,output:2'",
		"ovs-ofctl -O OpenFlow13 add-group br0 'group_id=1,type=all,bucket=output:3'",
		"ovs-ofctl -O OpenFlow13 add-flow br0 'priority=10,in_port=1,actions=group:1'",
		"sort:ovs-ofctl -O OpenFlow13 dump-groups br0",
		"sort:ovs-ofctl -O OpenFlow15 dump-groups br0",
		"ovs-ofctl -O OpenFlow15 dump-groups br0 2",
		"sort:ovs-ofctl -O OpenFlow13 dump-group-stats br0",
		"ovs-ofctl -O OpenFlow13 dump-group-features br0",
		"ovs-ofctl -O OpenFlow13 mod-group br0 'group_id=1,type=all,bucket=output:3'",
		"ovs-ofctl -O OpenFlow15 insert-buckets br0 'group_id=1,command_bucket_id=last,bucket=bucket_id:7,output:1'",
		"ovs-ofctl -O OpenFlow15 remove-buckets br0 'group_id=1,command_bucket_id=first'",
		"ovs-ofctl -O OpenFlow15 dump-groups br0 1",
		"ovs-ofctl -O OpenFlow13 del-groups br0 group_id=1",
		"ovs-ofctl -O OpenFlow13 dump-flows br0",
		"ovs-ofctl -O OpenFlow13 del-groups br0",
		"sort:ovs-ofctl -O OpenFlow13 dump-groups br0",
	)
}

func TestOpenFlowMeters(t *testing.T) {
	p := startPair(t, addPortsArgs(2)...)
	p.requireOpenFlow(t)
	p.compare(t,
		"ovs-ofctl -O OpenFlow13 meter-features br0",
		"ovs-ofctl -O OpenFlow13 add-meter br0 'meter=1,kbps,burst,stats,bands=type=drop,rate=10000,burst_size=1000'",
		"ovs-ofctl -O OpenFlow13 add-meter br0 'meter=2,pktps,bands=type=drop,rate=100'",
		"ovs-ofctl -O OpenFlow13 add-meter br0 'meter=1,kbps,bands=type=drop,rate=1'",
		"ovs-ofctl -O OpenFlow13 add-flow br0 'priority=10,in_port=1,actions=meter:1,output:2'",
		"sort:ovs-ofctl -O OpenFlow13 dump-meters br0",
		"ovs-ofctl -O OpenFlow13 dump-meter br0 meter=2",
		"sort:ovs-ofctl -O OpenFlow13 meter-stats br0",
		"ovs-ofctl -O OpenFlow15 dump-flows br0",
		"ovs-ofctl -O OpenFlow13 mod-meter br0 'meter=2,pktps,bands=type=drop,rate=200'",
		"sort:ovs-ofctl -O OpenFlow13 dump-meters br0",
		"ovs-ofctl -O OpenFlow13 del-meter br0 meter=1",
		"ovs-ofctl -O OpenFlow13 dump-flows br0",
		"ovs-ofctl -O OpenFlow13 del-meters br0",
		"sort:ovs-ofctl -O OpenFlow13 dump-meters br0",
	)
}

func TestOpenFlowPortsAndPacketOut(t *testing.T) {
	setup := append(addPortsArgs(3), "--", "set", "interface", "p2", "options:tx_pcap=p2-tx.pcap")
	p := startPair(t, setup...)
	p.requireOpenFlow(t)
	p.compare(t,
		"ovs-ofctl dump-ports br0",
		"ovs-ofctl dump-ports br0 2",
		"ovs-ofctl -O OpenFlow13 dump-ports br0 1",
		"ovs-ofctl packet-out br0 'in_port=controller packet="+icmpFrame+" actions=output:2'",
		"ovs-ofctl packet-out br0 'in_port=1 packet="+icmpFrame+" actions=output:2,output:3'",
		"ovs-ofctl -O OpenFlow15 packet-out br0 'in_port=controller,packet="+icmpFrame+",actions=output:2'",
		"ovs-ofctl packet-out br0 'in_port=controller packet="+icmpFrame+" actions=group:9'",
		"ovs-ofctl dump-ports br0 2",
		"ovs-ofctl mod-port br0 p1 down",
		"ovs-ofctl mod-port br0 p1 no-flood",
		"ovs-ofctl mod-port br0 2 no-receive",
		// The link state follows the administrative one on the switch's
		// next pass (LINK_DOWN in Open vSwitch a moment later).
		"!sleep 0.5",
		"ovs-ofctl show br0",
		"ovs-ofctl dump-ports-desc br0",
		"ovs-ofctl mod-port br0 p1 up",
		"ovs-ofctl mod-port br0 p1 flood",
		"ovs-ofctl mod-port br0 2 receive",
		"!sleep 0.5",
		"ovs-ofctl show br0",
		"ovs-vsctl get interface p1 admin_state",
		// What p2 transmitted, frame by frame (ovs-pcap prints each as hex).
		"ovs-pcap $DIR/p2-tx.pcap",
	)
}

// TestOpenFlowMonitor: ovs-ofctl monitor sees packet-ins for a flow to the
// controller and flow updates with watch:.
func TestOpenFlowMonitor(t *testing.T) {
	p := startPair(t, addPortsArgs(2)...)
	p.requireOpenFlow(t)
	for _, s := range []*vswitch{p.ref, p.sut} {
		s.extraPidfiles = append(s.extraPidfiles, s.dir+"/ovs-ofctl.pid")
	}
	p.compare(t,
		"ovs-ofctl add-flow br0 'priority=10,in_port=1,actions=controller(max_len=128,userdata=01.02)'",
		"ovs-ofctl monitor br0 65534 -P nxt_packet_in --detach --no-chdir --pidfile 2>$DIR/monitor.log",
		"ovs-appctl netdev-dummy/receive p1 "+icmpFrame,
		"ovs-ofctl packet-out br0 'in_port=controller packet="+icmpFrame+" actions=controller'",
		"ovs-appctl -t ovs-ofctl ofctl/barrier",
		"ovs-appctl -t ovs-ofctl exit; sleep 0.1; cat $DIR/monitor.log",
		"ovs-ofctl monitor br0 watch: --detach --no-chdir --pidfile 2>$DIR/watch.log",
		"ovs-ofctl add-flow br0 'cookie=0x5,priority=20,ip,actions=drop'",
		"ovs-ofctl del-flows br0 cookie=0x5/-1",
		"ovs-appctl -t ovs-ofctl ofctl/barrier",
		"ovs-appctl -t ovs-ofctl exit; sleep 0.1; cat $DIR/watch.log",
	)
}

package ofctl

import (
	"strings"
	"testing"
)

// Patch ports: br0 (p1, patch pa) and br1 (p2, patch pb) on the dummy
// datapath, joined only by the patch pair pa-pb, in Debian's ovs-vswitchd
// and in gvs side by side.

// patchSetup adds br1 beside the harness's br0, the dummy ports p1 (br0)
// and p2 (br1), both ofport 1, and the patch pair pa (br0) - pb (br1),
// both ofport 2.
func patchSetup(extra ...string) []string {
	args := []string{
		"--", "add-br", "br1", "--", "set", "bridge", "br1", "datapath-type=dummy",
		"other-config:datapath-id=fedcba9876543211", "other-config:hwaddr=aa:55:aa:55:00:01",
		"protocols=[OpenFlow10,OpenFlow11,OpenFlow12,OpenFlow13,OpenFlow14,OpenFlow15]", "fail-mode=secure",
		"--", "add-port", "br0", "p1", "--", "set", "interface", "p1", "type=dummy", "ofport_request=1", "options:tx_pcap=p1-tx.pcap",
		"--", "add-port", "br1", "p2", "--", "set", "interface", "p2", "type=dummy", "ofport_request=1", "options:tx_pcap=p2-tx.pcap",
		"--", "add-port", "br0", "pa", "--", "set", "interface", "pa", "type=patch", "options:peer=pb", "ofport_request=2",
		"--", "add-port", "br1", "pb", "--", "set", "interface", "pb", "type=patch", "options:peer=pa", "ofport_request=2",
	}
	return append(args, extra...)
}

// maskPatchMAC hides the random addresses Open vSwitch gives vports (in
// both switches) on the lines of the patch ports.
const maskPatchMAC = ` | sed -E '/\((pa|pb|pf)\)/s/addr:[0-9a-f:]+/addr:<random>/'`

// waitError waits until an interface's error column matches (both
// switches write a patch port's pairing error a moment after the
// transaction that caused it).
func waitError(iface, want string) string {
	return "!for i in $(seq 100); do ovs-vsctl get interface " + iface + " error | grep -q -- '" + want + "' && break; sleep 0.05; done"
}

const sortFlood = ` | perl -pe 's/^(Datapath actions: .*?)((?:\d+,)*\d+)$/$1.join(",", sort { $a <=> $b } split(",", $2))/e'`

const patchColumns = "--columns=name,ofport,error,status,admin_state,link_state,link_resets,mtu,link_speed,duplex,ifindex,lacp_current,type,options"

// TestPatchPortConfig: the Interface columns of a working pair and of
// badly configured patch ports (errors in Open vSwitch's words), pairing
// and unpairing as peers come and go, dpif/show and ovs-ofctl show.
func TestPatchPortConfig(t *testing.T) {
	p := startPair(t, patchSetup()...)
	p.requireOpenFlow(t)
	p.compare(t,
		"ovs-vsctl "+patchColumns+" list interface pa pb",
		"ovs-vsctl get interface pa statistics",
		// A random unicast, locally administered address, as Open vSwitch
		// gives vports.
		"ovs-vsctl get interface pa mac_in_use | grep -Ec '^\"[0-9a-f][26ae](:[0-9a-f]{2}){5}\"$'",
		"ovs-appctl dpif/show",
		"ovs-ofctl show br0"+maskPatchMAC,
		"ovs-ofctl show br1"+maskPatchMAC,
		"ovs-ofctl dump-ports-desc br1"+maskPatchMAC,
		"ovs-ofctl -O OpenFlow13 dump-ports-desc br1"+maskPatchMAC,
		"ovs-ofctl -O OpenFlow15 dump-ports-desc br0"+maskPatchMAC,
		"ovs-vsctl -- add-port br0 pc -- set interface pc type=patch ofport_request=3"+
			" -- add-port br0 pd -- set interface pd type=patch options:peer=pd ofport_request=4"+
			" -- add-port br0 pe -- set interface pe type=patch options:peer=x options:foo=1 ofport_request=5"+
			" -- add-port br0 pf -- set interface pf type=patch options:peer=pa ofport_request=6",
		waitError("pf", "No usable peer"),
		"ovs-vsctl "+patchColumns+" list interface pc pd pe pf",
		"ovs-appctl dpif/show",
		"ovs-ofctl show br0"+maskPatchMAC,
		"ovs-ofctl -O OpenFlow13 dump-ports-desc br0"+maskPatchMAC,
		// pb goes: pa loses its peer; pf still names pa, which names pb.
		"ovs-vsctl del-port br1 pb",
		waitError("pa", "No usable peer"),
		"ovs-vsctl "+patchColumns+" list interface pa pf",
		// pb comes back: the pair is whole again and pa's error goes.
		"ovs-vsctl add-port br1 pb -- set interface pb type=patch options:peer=pa ofport_request=2",
		"!for i in $(seq 100); do [ \"$(ovs-vsctl get interface pa error)\" = '[]' ] && break; sleep 0.05; done",
		"ovs-vsctl "+patchColumns+" list interface pa pb",
		"ovs-appctl dpif/show",
		// Re-pointing a patch port keeps its number; pairing follows.
		"ovs-vsctl set interface pf options:peer=pg -- add-port br1 pg -- set interface pg type=patch options:peer=pf ofport_request=7",
		"!for i in $(seq 100); do [ \"$(ovs-vsctl get interface pf error)\" = '[]' ] && break; sleep 0.05; done",
		"ovs-vsctl "+patchColumns+" list interface pf pg",
		"ovs-appctl dpif/show",
		// The peer's whole bridge goes.
		"ovs-vsctl del-br br1",
		waitError("pa", "No usable peer"),
		"ovs-vsctl "+patchColumns+" list interface pa pf",
		"ovs-appctl dpif/show",
	)
}

// patchFlows are the two bridges' tables: br0 sends p1's traffic over
// the patch and back; br1 tags it with VLAN 10 towards p2, takes VLAN
// 10 off the other way, commits TCP in conntrack (not undoable: a
// datapath clone when br0 goes on after the patch) and leaves UDP to
// NORMAL.
//
// A NORMAL flood's outputs come in the order of Open vSwitch's hash
// table of ports: sortFlood compares the trailing output list as a set.
const patchFlows = "!printf '%s\\n' " +
	"'table=0,priority=100,in_port=1,icmp,actions=load:0x7->NXM_NX_REG0[],set_field:0x5->metadata,output:2' " +
	"'table=0,priority=100,in_port=1,tcp,actions=output:2,mod_nw_tos:0x20,output:LOCAL' " +
	"'table=0,priority=100,in_port=1,udp,actions=mod_dl_src:50:54:00:00:00:09,output:2' " +
	"'table=0,priority=110,in_port=1,tcp,tp_dst=81,actions=output:2,write_actions(output:LOCAL)' " +
	"'table=0,priority=100,in_port=2,actions=output:1' " +
	"> $DIR/br0.txt; printf '%s\\n' " +
	"'table=0,priority=100,in_port=2,icmp,reg0=0,metadata=0,actions=push_vlan:0x8100,set_field:4106->vlan_vid,goto_table:1' " +
	"'table=0,priority=90,in_port=2,icmp,actions=drop' " +
	"'table=0,priority=100,in_port=2,tcp,actions=ct(commit,zone=5),output:1' " +
	"'table=0,priority=100,in_port=2,udp,actions=NORMAL' " +
	"'table=0,priority=100,in_port=1,dl_vlan=10,actions=strip_vlan,output:2' " +
	"'table=0,priority=50,actions=NORMAL' " +
	"'table=1,priority=0,actions=output:1' " +
	"> $DIR/br1.txt"

const (
	patchICMP = "in_port=1,icmp,dl_src=50:54:00:00:00:05,dl_dst=50:54:00:00:00:07,nw_src=198.18.0.2,nw_dst=198.18.0.1,nw_ttl=64,icmp_type=8"
	patchTCP  = "in_port=1,tcp,dl_src=50:54:00:00:00:05,dl_dst=50:54:00:00:00:07,nw_src=198.18.0.2,nw_dst=198.18.0.1,tp_src=1000,tp_dst=80"
	patchUDP  = "in_port=1,udp,dl_src=50:54:00:00:00:05,dl_dst=50:54:00:00:00:07,nw_src=198.18.0.2,nw_dst=198.18.0.1,udp_src=1000,udp_dst=53"
	patchBack = "in_port=1,dl_vlan=10,icmp,dl_src=50:54:00:00:00:07,dl_dst=50:54:00:00:00:05,nw_src=198.18.0.1,nw_dst=198.18.0.2,icmp_type=0"
)

// TestPatchPortTrace: ofproto/trace across the patch pair (both
// pipelines, the bridge crossing as Open vSwitch prints it, the
// megaflow and datapath actions), packets through it (one datapath flow
// on the ingress port; the frame leaves p2 tagged) and the patch ports'
// counters.
func TestPatchPortTrace(t *testing.T) {
	p := startPair(t, patchSetup()...)
	p.requireOpenFlow(t)
	p.compare(t,
		patchFlows,
		"ovs-ofctl -O OpenFlow13 add-flows br0 $DIR/br0.txt",
		"ovs-ofctl -O OpenFlow13 add-flows br1 $DIR/br1.txt",
		"ovs-appctl ofproto/trace br0 '"+patchICMP+"'",
		"ovs-appctl ofproto/trace br0 '"+patchTCP+"'",
		"ovs-appctl ofproto/trace br0 '"+strings.Replace(patchTCP, "tp_dst=80", "tp_dst=81", 1)+"'",
		"ovs-appctl ofproto/trace br0 '"+patchUDP+"'"+sortFlood,
		"ovs-appctl ofproto/trace br1 '"+patchBack+"'",
		// Both ends of a pair on one bridge.
		"ovs-vsctl add-port br1 px -- set interface px type=patch options:peer=py ofport_request=10 -- add-port br1 py -- set interface py type=patch options:peer=px ofport_request=11",
		"ovs-ofctl -O OpenFlow13 add-flow br1 'priority=200,in_port=1,arp,actions=output:10'",
		"ovs-ofctl -O OpenFlow13 add-flow br1 'priority=200,in_port=11,arp,actions=set_field:5->reg3,output:2'",
		"ovs-appctl ofproto/trace br1 'in_port=1,arp,arp_spa=198.18.0.1,arp_tpa=198.18.0.2,arp_op=1'",
		"ovs-appctl netdev-dummy/receive p1 "+icmpFrame,
		"!for i in $(seq 100); do [ $(stat -c %s $DIR/p2-tx.pcap) -gt 100 ] && break; sleep 0.02; done",
		"ovs-pcap $DIR/p2-tx.pcap",
		"ovs-appctl dpctl/dump-flows",
		"ovs-ofctl dump-ports br0 2",
		"ovs-ofctl dump-ports br1 2",
		"ovs-ofctl -O OpenFlow13 dump-flows br1 table=0 | grep -c n_packets=1",
	)
	// The comparison above holds only if the flows went in and the trace
	// crossed the pair: make sure it did, on both sides.
	for _, r := range []result{p.ref.sh(t, "ovs-appctl ofproto/trace br0 '"+patchTCP+"'"), p.sut.sh(t, "ovs-appctl ofproto/trace br0 '"+patchTCP+"'")} {
		if !strings.Contains(r.stdout, `bridge("br1")`) || !strings.Contains(r.stdout, "clone(ct(commit,zone=5),2)") {
			t.Errorf("the TCP trace does not cross the patch into a datapath clone:\n%s", r)
		}
	}
}

// TestPatchPortNormal: NORMAL on both bridges, with the patch ports as
// ordinary ports of each: a frame from p1 floods through the pair (both
// bridges learn its source, br1 on pb), the reply from p2 goes back to
// the learned port only (br0 learns it on pa); the traces then forward
// to learned ports on both sides, and the datapath flows of the frames
// were revalidated to the learned ports.
func TestPatchPortNormal(t *testing.T) {
	p := startPair(t, patchSetup()...)
	p.requireOpenFlow(t)
	const (
		request = "505400000007505400000005123400000000000000000000000000000000000000000000000000000000000000000000"
		reply   = "505400000005505400000007123400000000000000000000000000000000000000000000000000000000000000000000"
	)
	p.compare(t,
		"ovs-ofctl add-flow br0 actions=NORMAL",
		"ovs-ofctl add-flow br1 actions=NORMAL",
		"ovs-appctl netdev-dummy/receive p1 "+request,
		"!for i in $(seq 100); do [ $(stat -c %s $DIR/p2-tx.pcap) -gt 24 ] && break; sleep 0.02; done",
		"ovs-appctl netdev-dummy/receive p2 "+reply,
		"!for i in $(seq 100); do [ $(stat -c %s $DIR/p1-tx.pcap) -gt 24 ] && break; sleep 0.02; done",
		"ovs-pcap $DIR/p1-tx.pcap",
		"ovs-pcap $DIR/p2-tx.pcap",
		"sort:ovs-appctl fdb/show br0 | sed 's/ *[0-9]*$//'",
		"sort:ovs-appctl fdb/show br1 | sed 's/ *[0-9]*$//'",
		"ovs-appctl ofproto/trace br0 'in_port=1,dl_src=50:54:00:00:00:05,dl_dst=50:54:00:00:00:07,dl_type=0x1234'",
		"ovs-appctl ofproto/trace br1 'in_port=1,dl_src=50:54:00:00:00:07,dl_dst=50:54:00:00:00:05,dl_type=0x1234'",
		// The first frame's flow flooded; MAC learning in br1 (behind
		// the patch) revalidates it to the learned port.
		"!for i in $(seq 100); do ovs-appctl dpctl/dump-flows | grep -q 'in_port(1).*actions:2$' && break; sleep 0.05; done",
		"ovs-appctl dpctl/dump-flows | sort | sed 's/packets:.*actions/actions/'",
		"ovs-ofctl dump-ports br0 2",
		"ovs-ofctl dump-ports br1 2",
		// A packet-out to the patch port crosses too (learned: to p2 only).
		"ovs-ofctl packet-out br0 CONTROLLER output:2 "+request,
		"!for i in $(seq 100); do [ $(stat -c %s $DIR/p2-tx.pcap) -gt 100 ] && break; sleep 0.02; done",
		"ovs-pcap $DIR/p2-tx.pcap",
		"ovs-ofctl dump-ports br0 2",
	)
}

// TestPatchPortConntrack: ct(table=N) in the bridge behind the patch:
// the translation freezes in the peer bridge, which the recirculated
// pass resumes in (ofproto/trace follows it with --ct-next); the
// calling bridge's actions after the patch go on with the packet as it
// was; a packet through it reaches the far port.
func TestPatchPortConntrack(t *testing.T) {
	p := startPair(t, patchSetup()...)
	p.requireOpenFlow(t)
	p.compare(t,
		"ovs-ofctl -O OpenFlow13 add-flow br0 'priority=10,in_port=1,ip,actions=set_field:0x3->reg1,output:2,output:LOCAL'",
		"ovs-ofctl -O OpenFlow13 add-flow br1 'table=0,priority=10,in_port=2,ip,actions=ct(zone=7,table=1)'",
		"ovs-ofctl -O OpenFlow13 add-flow br1 'table=1,priority=10,ct_state=+trk+new,ip,actions=ct(commit,zone=7),output:1'",
		"ovs-ofctl -O OpenFlow13 add-flow br1 'table=1,priority=5,actions=drop'",
		"recirc:ovs-appctl ofproto/trace br0 '"+patchICMP+"'",
		"recirc:ovs-appctl ofproto/trace br0 '"+patchICMP+"' --ct-next 'trk,new'",
		"recirc:ovs-appctl ofproto/trace br0 '"+patchICMP+"' --ct-next 'trk,est'",
		"ovs-appctl netdev-dummy/receive p1 "+icmpFrame,
		"!for i in $(seq 100); do [ $(stat -c %s $DIR/p2-tx.pcap) -gt 100 ] && break; sleep 0.02; done",
		"ovs-pcap $DIR/p2-tx.pcap",
		"recirc:ovs-appctl dpctl/dump-flows | sort",
		"ovs-appctl dpctl/dump-conntrack | sort",
	)
}

// TestPatchPortPacketIn: a controller action behind the patch sends its
// packet-in to the controllers of the bridge it ran in (br1), with
// in_port the peer patch port and br1's pipeline fields; a paused
// pipeline resumes there, and the packet reaches p2.
func TestPatchPortPacketIn(t *testing.T) {
	p := startPair(t, patchSetup()...)
	p.requireOpenFlow(t)
	for _, s := range []*vswitch{p.ref, p.sut} {
		s.extraPidfiles = append(s.extraPidfiles, s.dir+"/ovs-ofctl.pid")
	}
	p.compare(t,
		"ovs-ofctl add-flow br0 'in_port=1,actions=load:0x99->NXM_NX_REG2[],output:2'",
		"ovs-ofctl add-flow br1 'in_port=2,actions=load:0x1234->NXM_NX_REG3[],controller(userdata=01.02.03,pause),output:1'",
		"ovs-ofctl monitor br1 resume -P nxt_packet_in2 --detach --no-chdir --pidfile 2>$DIR/monitor.log",
		"ovs-appctl netdev-dummy/receive p1 "+icmpFrame,
		"!for i in $(seq 100); do [ -s $DIR/p2-tx.pcap ] && [ $(stat -c %s $DIR/p2-tx.pcap) -gt 24 ] && break; sleep 0.02; done",
		"ovs-appctl -t ovs-ofctl ofctl/barrier",
		"ovs-appctl -t ovs-ofctl exit; sleep 0.1; cat $DIR/monitor.log",
		"ovs-pcap $DIR/p2-tx.pcap",
		"ovs-ofctl dump-flows br1 | sed 's/ *duration=[^,]*,//'",
	)
}

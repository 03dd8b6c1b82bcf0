package ofctl

import "testing"

// TestConntrackTraceAndFlush: a stateful firewall and a NAT pipeline
// through ofproto/trace, following the ct recirculations (default
// +trk+new, --ct-next, the NAT simulation), --ct-next's errors, and
// ovs-ofctl ct-flush-zone / ct-flush (which print nothing on success).
func TestConntrackTraceAndFlush(t *testing.T) {
	p := startPair(t, addPortsArgs(3)...)
	p.requireOpenFlow(t)
	const tcp = "in_port=1,tcp,dl_src=50:54:00:00:00:05,dl_dst=50:54:00:00:00:07,nw_src=198.18.0.1,nw_dst=198.18.0.2,tp_src=1000,tp_dst=80"
	p.compare(t,
		"!printf '%s\\n' "+
			"'table=0,priority=100,ip,ct_state=-trk,actions=ct(table=1,zone=5)' "+
			"'table=0,priority=0,actions=drop' "+
			"'table=1,priority=100,in_port=1,ct_state=+trk+new,ip,actions=ct(commit,zone=5,exec(set_field:0x1->ct_mark)),output:2' "+
			"'table=1,priority=90,ct_state=+trk+est,ip,in_port=1,actions=output:2' "+
			"'table=1,priority=90,ct_state=+trk+est,ip,in_port=2,actions=output:1' "+
			"'table=1,priority=80,in_port=3,ip,actions=ct(commit,zone=7,nat(dst=198.18.9.9:8080),table=2)' "+
			"'table=2,priority=10,ct_state=+trk+dnat,ip,nw_dst=198.18.9.9,actions=output:1' "+
			"'table=2,priority=5,ip,actions=output:2' "+
			"> $DIR/ct.txt",
		"ovs-ofctl -O OpenFlow15 add-flows br0 $DIR/ct.txt",
		"recirc:ovs-appctl ofproto/trace br0 '"+tcp+"'",
		"recirc:ovs-appctl ofproto/trace br0 '"+tcp+"' --ct-next 'trk,est'",
		"recirc:ovs-appctl ofproto/trace br0 'in_port=3,tcp,nw_src=198.18.0.3,nw_dst=198.18.0.2,tp_src=1000,tp_dst=80' --ct-next 'trk,new,dnat'",
		"recirc:ovs-appctl ofproto/trace br0 'in_port=3,tcp,nw_src=198.18.0.3,nw_dst=198.18.0.2,tp_src=1000,tp_dst=80'",
		"ovs-appctl ofproto/trace br0 '"+tcp+"' --ct-next 'trk,bogus'",
		"ovs-appctl ofproto/trace br0 '"+tcp+"' --ct-next 'new,est,trk'",
		"ovs-appctl ofproto/trace br0 '"+tcp+"' --ct-next 'est'",
		"ovs-appctl ofproto/trace br0 '"+tcp+"' --ct-next",
		// A recirculation id nothing froze: Open vSwitch's error.
		"ovs-appctl ofproto/trace br0 'recirc_id=0x99,ct_state=est|trk,"+tcp+"'",
		"ovs-ofctl ct-flush-zone br0 5",
		"ovs-ofctl ct-flush br0",
		"ovs-ofctl ct-flush br0 zone=5 'ct_nw_src=198.18.0.1,ct_nw_dst=198.18.0.2,ct_nw_proto=6,ct_tp_src=1000,ct_tp_dst=80'",
		"ovs-ofctl ct-flush br0 'ct_nw_src=198.18.0.1'",
	)
}

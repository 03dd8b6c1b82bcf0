package ofctl

import "testing"

// TestOpenFlowPacketIn2AndResume: NXT_PACKET_IN2 with userdata and
// metadata, a pipeline paused by controller(pause) and resumed by
// ovs-ofctl monitor's "resume", after which the rest of the actions run.
func TestOpenFlowPacketIn2AndResume(t *testing.T) {
	setup := append(addPortsArgs(2), "--", "set", "interface", "p2", "options:tx_pcap=p2-tx.pcap")
	p := startPair(t, setup...)
	p.requireOpenFlow(t)
	for _, s := range []*vswitch{p.ref, p.sut} {
		s.extraPidfiles = append(s.extraPidfiles, s.dir+"/ovs-ofctl.pid")
	}
	p.compare(t,
		"ovs-ofctl add-flow br0 'in_port=1,actions=load:0x1234->NXM_NX_REG3[],controller(userdata=01.02.03,pause),output:2'",
		"ovs-ofctl monitor br0 resume -P nxt_packet_in2 --detach --no-chdir --pidfile 2>$DIR/monitor.log",
		"ovs-appctl netdev-dummy/receive p1 "+icmpFrame,
		"!for i in $(seq 100); do [ -s $DIR/p2-tx.pcap ] && [ $(stat -c %s $DIR/p2-tx.pcap) -gt 24 ] && break; sleep 0.02; done",
		"ovs-appctl -t ovs-ofctl ofctl/barrier",
		"ovs-appctl -t ovs-ofctl exit; sleep 0.1; cat $DIR/monitor.log",
		"ovs-pcap $DIR/p2-tx.pcap",
		"ovs-ofctl dump-flows br0",
	)
}

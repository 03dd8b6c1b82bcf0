package ofctl

import "testing"

// TestFinTimeout: fin_timeout (the action, and learn's fin_idle_timeout
// and fin_hard_timeout on the flows it learns) lowers a rule's timeouts
// once a flow using it carries a TCP FIN or RST, both for the packet of
// an upcall and for packets hitting the installed datapath flow.
func TestFinTimeout(t *testing.T) {
	p := startPair(t, addPortsArgs(3)...)
	p.requireOpenFlow(t)
	const (
		syn    = "tcp(src=1000,dst=80),tcp_flags(syn)"
		finAck = "tcp(src=1000,dst=80),tcp_flags(fin|ack)"
		rst    = "tcp(src=2000,dst=80),tcp_flags(rst)"
		ip     = "eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=198.18.0.1,dst=198.18.0.2,proto=6,tos=0,ttl=64,frag=no),"
	)
	waitTimeout := func(want string) string {
		return "!for i in $(seq 60); do ovs-ofctl dump-flows br0 | grep -q '" + want + "' && break; sleep 0.1; done"
	}
	p.compare(t,
		"ovs-ofctl add-flow br0 'table=0,priority=10,in_port=1,tcp,idle_timeout=60,actions=fin_timeout(idle_timeout=5,hard_timeout=20),output:2'",
		"ovs-ofctl add-flow br0 'table=0,priority=10,in_port=3,tcp,actions=learn(table=1,idle_timeout=90,fin_idle_timeout=3,fin_hard_timeout=7,eth_type=0x800,nw_proto=6,NXM_OF_IP_SRC[],NXM_OF_IP_DST[],NXM_OF_TCP_SRC[]),resubmit(,1)'",
		"ovs-ofctl add-flow br0 'table=1,priority=0,actions=output:2'",
		"ovs-appctl netdev-dummy/receive p1 'in_port(1),"+ip+syn+"'",
		"!sleep 1",
		"ovs-ofctl --no-stats --sort dump-flows br0",
		// The FIN hits the datapath flow the SYN installed: the
		// revalidator finds it in the flow's statistics.
		"ovs-appctl netdev-dummy/receive p1 'in_port(1),"+ip+finAck+"'",
		waitTimeout("idle_timeout=5, hard_timeout=20,"),
		"ovs-ofctl --no-stats --sort dump-flows br0",
		// Through a learned flow: the SYN learns it, the RST (its own
		// upcall: another source port) lowers the one it learns.
		"ovs-appctl netdev-dummy/receive p3 'in_port(3),"+ip+syn+"'",
		"!sleep 1",
		"ovs-ofctl --no-stats --sort dump-flows br0 table=1",
		"ovs-appctl netdev-dummy/receive p3 'in_port(3),"+ip+rst+"'",
		"ovs-appctl netdev-dummy/receive p3 'in_port(3),"+ip+finAck+"'",
		waitTimeout("idle_timeout=3, hard_timeout=7,.*tp_src=1000"),
		"ovs-ofctl --no-stats --sort dump-flows br0 table=1",
	)
}

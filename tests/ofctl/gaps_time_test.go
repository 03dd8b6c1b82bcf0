package ofctl

import "testing"

// TestTimeWarp: ovs-appctl time/stop and time/warp (registered with
// --enable-dummy) age rules out by their idle and hard timeouts and MAC
// entries by the aging time, as Open vSwitch's test suites use them;
// their replies and errors as Open vSwitch's.
func TestTimeWarp(t *testing.T) {
	p := startPair(t, append(addPortsArgs(2), "--", "set", "bridge", "br0", "other-config:mac-aging-time=30")...)
	p.requireOpenFlow(t)
	const frame = "'in_port(1),eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=198.18.0.1,dst=198.18.0.2,proto=6,tos=0,ttl=64,frag=no),tcp(src=1000,dst=80)'"
	p.compare(t,
		"ovs-appctl time/stop",
		"ovs-appctl time/warp 0",
		"ovs-appctl time/warp abc",
		"ovs-appctl time/warp -5 10",
		"ovs-appctl time/warp 1 2 3",
		"ovs-ofctl add-flow br0 'priority=5,in_port=2,idle_timeout=10,actions=drop'",
		"ovs-ofctl add-flow br0 'priority=6,in_port=2,hard_timeout=20,actions=drop'",
		"ovs-ofctl add-flow br0 'priority=7,in_port=2,tcp,actions=drop'",
		"ovs-appctl time/warp 5000",
		"ovs-ofctl --no-stats --sort dump-flows br0",
		"ovs-appctl time/warp 6000 1000",
		"ovs-ofctl --no-stats --sort dump-flows br0",
		"ovs-appctl time/warp 10000 1000",
		"ovs-ofctl --no-stats --sort dump-flows br0",
		// MAC aging through NORMAL.
		"ovs-ofctl add-flow br0 'priority=1,actions=NORMAL'",
		"ovs-appctl netdev-dummy/receive p1 "+frame,
		"!sleep 0.5",
		"ovs-appctl fdb/show br0",
		"ovs-appctl time/warp 20000 1000",
		"ovs-appctl fdb/show br0",
		"ovs-appctl time/warp 12000 1000",
		"ovs-appctl fdb/show br0",
		// Traffic refreshes an idle timeout by the warped clock: the
		// packet of an upcall, then one through the datapath flow.
		"ovs-ofctl del-flows br0",
		"ovs-ofctl add-flow br0 'priority=8,in_port=1,tcp,idle_timeout=10,actions=drop'",
		"ovs-appctl time/warp 5000",
		"ovs-appctl netdev-dummy/receive p1 "+frame,
		"!sleep 0.5",
		"ovs-appctl time/warp 6000 1000",
		"ovs-ofctl --no-stats dump-flows br0",
		"ovs-appctl netdev-dummy/receive p1 "+frame,
		"!sleep 1.5",
		"ovs-appctl time/warp 6000 1000",
		"ovs-ofctl --no-stats dump-flows br0",
		"ovs-appctl time/warp 6000 1000",
		"ovs-ofctl --no-stats dump-flows br0",
	)
}

package ofctl

import "testing"

// TestTunnelRoutingAgainstDebian runs the route table and neighbour cache
// commands (ovs/route/*, tnl/neigh/*, tnl/arp/*) on both switches: user
// routes over a dummy bridge's netdev-dummy/ip4addr and ip6addr
// addresses, IPv4 and IPv6, with pkt_mark, lookups, deletions, and every
// error Open vSwitch 3.1 gives for bad arguments. Show commands are
// sorted: Open vSwitch lists routes of one prefix length and neighbours
// in hash order.
func TestTunnelRoutingAgainstDebian(t *testing.T) {
	p := startPair(t, addPortsArgs(1)...)
	p.compare(t,
		"ovs-appctl list-commands | grep -E 'ovs/route|tnl/(neigh|arp)'",
		"ovs-appctl ovs/route/show",
		// No address on br0 yet: no source address, nothing inserted.
		"ovs-appctl ovs/route/add 198.18.2.0/24 br0 198.18.1.254",
		"ovs-appctl netdev-dummy/ip4addr br0 198.18.1.1/24",
		"ovs-appctl netdev-dummy/ip6addr br0 2001:2:0:1::1/64",
		"ovs-appctl ovs/route/add 198.18.2.0/24 br0 198.18.1.254",
		"ovs-appctl ovs/route/add 198.18.1.1/24 br0 pkt_mark=123",
		"ovs-appctl ovs/route/add 198.18.2.200/24 br0 198.18.1.250 pkt_mark=1234",
		"ovs-appctl ovs/route/add 198.18.1.77 br0",
		"ovs-appctl ovs/route/add 198.18.0.0/255.254.0.0 br0 pkt_mark=0x10",
		"ovs-appctl ovs/route/add 0.0.0.0/0 br0 198.18.1.254",
		"ovs-appctl ovs/route/add 2001:2:0:2::/64 br0 2001:2:0:1::2",
		"ovs-appctl ovs/route/add 2001:2:0:2::/64 br0 2001:2:0:1::3 pkt_mark=321",
		"ovs-appctl ovs/route/add 2001:2:0:1::/64 br0",
		"ovs-appctl ovs/route/add ::/0 br0 2001:2:0:1::fe",
		// A device without addresses, one unknown, a network neither the
		// address nor the gateway is in.
		"ovs-appctl ovs/route/add 198.18.9.0/24 p1",
		"ovs-appctl ovs/route/add 198.18.9.0/24 nosuchdev",
		"ovs-appctl ovs/route/add 192.0.2.0/24 br0",
		"ovs-appctl ovs/route/add 192.0.2.0/24 br0 192.0.2.1",
		// Bad arguments.
		"ovs-appctl ovs/route/add",
		"ovs-appctl ovs/route/add 198.18.3.0/24",
		"ovs-appctl ovs/route/add bogus br0",
		"ovs-appctl ovs/route/add 198.18.3.0/33 br0",
		"ovs-appctl ovs/route/add 198.18.3.0/255.0.255.0 br0",
		"ovs-appctl ovs/route/add 198.18.3.0/24 br0 bogus",
		"ovs-appctl ovs/route/add 198.18.3.0/24 br0 198.18.1.2 bogus",
		"ovs-appctl ovs/route/add 198.18.3.0/24 br0 pkt_mark=5 pkt_mark=6",
		"ovs-appctl ovs/route/add 2001:2:0:3::/64 br0 198.18.1.2",
		"ovs-appctl ovs/route/add 2001:2:0:3::/129 br0",
		"ovs-appctl ovs/route/add 198.18.3.0/24 br0 198.18.1.2 pkt_mark=1 extra",
		"sort:ovs-appctl ovs/route/show",
		"ovs-appctl ovs/route/lookup 198.18.2.1",
		"ovs-appctl ovs/route/lookup 198.18.2.1 pkt_mark=1234",
		"ovs-appctl ovs/route/lookup 198.18.1.7 pkt_mark=123",
		"ovs-appctl ovs/route/lookup 198.18.1.77",
		"ovs-appctl ovs/route/lookup 198.18.1.77/32",
		"ovs-appctl ovs/route/lookup 198.19.200.1 pkt_mark=16",
		"ovs-appctl ovs/route/lookup 203.0.113.9",
		"ovs-appctl ovs/route/lookup 203.0.113.9 pkt_mark=99",
		"ovs-appctl ovs/route/lookup 2001:2:0:2::1eaf",
		"ovs-appctl ovs/route/lookup 2001:2:0:2::1eaf pkt_mark=321",
		"ovs-appctl ovs/route/lookup 2001:2:0:1::9",
		"ovs-appctl ovs/route/lookup 2001:db8::1",
		"ovs-appctl ovs/route/lookup 198.18.2.0/24",
		"ovs-appctl ovs/route/lookup 198.18.2.1 mark=3",
		"ovs-appctl ovs/route/lookup bogus",
		"ovs-appctl ovs/route/del 198.18.2.0/24 pkt_mark=1234",
		"ovs-appctl ovs/route/del 198.18.2.0/24 pkt_mark=1234",
		"ovs-appctl ovs/route/del 198.18.2.0/24 pkt_mark=x",
		"ovs-appctl ovs/route/del bogus",
		"ovs-appctl ovs/route/del 2001:2:0:2::/64 pkt_mark=321",
		"ovs-appctl ovs/route/del 0.0.0.0/0",
		"sort:ovs-appctl ovs/route/show",
		"ovs-appctl ovs/route/lookup 203.0.113.9",

		"ovs-appctl tnl/neigh/show",
		"ovs-appctl tnl/neigh/set br0 198.18.1.2 aa:bb:cc:00:00:01",
		"ovs-appctl tnl/neigh/set br0 2001:2:0:1::2 aa:bb:cc:00:00:02",
		"ovs-appctl tnl/arp/set br0 198.18.1.3 AA:BB:CC:0:0:3",
		"ovs-appctl tnl/neigh/set br0 198.18.1.2 aa:bb:cc:00:00:04",
		"ovs-appctl tnl/neigh/set br0 bogus aa:bb:cc:00:00:01",
		"ovs-appctl tnl/neigh/set br0 2001:::1 aa:bb:cc:00:00:01",
		"ovs-appctl tnl/neigh/set br0 198.18.1.9 aa:bb:cc:00:00",
		"ovs-appctl tnl/neigh/set br0 198.18.1.9 aa:bb:cc:00:00:01:02",
		"ovs-appctl tnl/neigh/set br0 198.18.1.9",
		"sort:ovs-appctl tnl/neigh/show",
		"sort:ovs-appctl tnl/arp/show",
		"ovs-appctl tnl/neigh/aging",
		"ovs-appctl tnl/neigh/aging 0",
		"ovs-appctl tnl/neigh/aging 3601",
		"ovs-appctl tnl/neigh/aging bogus",
		"ovs-appctl tnl/neigh/aging 3600",
		"ovs-appctl tnl/arp/aging 5",
		"ovs-appctl tnl/neigh/aging",
		"ovs-appctl tnl/neigh/flush",
		"ovs-appctl tnl/neigh/show",
		"ovs-appctl tnl/arp/flush",
	)
}

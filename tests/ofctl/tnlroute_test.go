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
		// Later Open vSwitch's src=, which 3.1 does not know.
		"ovs-appctl ovs/route/add 198.18.3.0/24 br0 src=198.18.1.1",
		"ovs-appctl ovs/route/add 198.18.3.0/24 br0 198.18.1.254 src=198.18.1.1",
		// Open vSwitch's scanf: spaces, signs, bases, trailing text after
		// a mark.
		"ovs-appctl ovs/route/add ' 198.18.4.0/ 24' br0 pkt_mark=-1",
		"ovs-appctl ovs/route/add 198.18.5.0/24 br0 'pkt_mark= 0x1f'",
		"ovs-appctl ovs/route/add 198.18.6.0/24 br0 pkt_mark=017junk",
		"ovs-appctl ovs/route/add 198.18.01.0/24 br0 198.18.01.1",
		"ovs-appctl ovs/route/add 198.18.7.0/24 br0 198.18.01.1",
		"ovs-appctl ovs/route/add 2001:2:0:5::/ffff:ffff:ffff:ffff:: br0",
		"ovs-appctl ovs/route/add 2001:2:0:6::/ffff::ffff br0",
		"ovs-appctl ovs/route/add ::ffff:198.18.8.0/120 br0",
		"ovs-appctl ovs/route/add 2001:2:0:7::/64 br0 ::ffff:198.18.1.254",
		"ovs-appctl ovs/route/lookup ::ffff:198.18.8.1",
		"ovs-appctl ovs/route/lookup 198.18.6.1 pkt_mark=15",
		"ovs-appctl ovs/route/lookup 198.18.4.1 pkt_mark=4294967295",
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
		"ovs-appctl tnl/neigh/set br0 198.18.01.9 aa:bb:cc:00:00:01",
		"ovs-appctl tnl/neigh/set br0 ::ffff:198.18.1.10 0xaa:bb:cc:00:00:0x1",
		"ovs-appctl tnl/neigh/set br0 198.18.1.11 '-1:bb:cc:00:00:01'",
		"ovs-appctl tnl/neigh/set br0 198.18.1.12 'aa: bb:cc:00:00:100'",
		"ovs-appctl tnl/neigh/set a-bridge-name-longer-than-15 198.18.1.13 aa:bb:cc:00:00:05",
		"sort:ovs-appctl tnl/neigh/show",
		"sort:ovs-appctl tnl/arp/show",
		"ovs-appctl tnl/neigh/aging",
		"ovs-appctl tnl/neigh/aging 0",
		"ovs-appctl tnl/neigh/aging 3601",
		"ovs-appctl tnl/neigh/aging bogus",
		"ovs-appctl tnl/neigh/aging 3600",
		"ovs-appctl tnl/neigh/aging ' +7x'",
		"ovs-appctl tnl/neigh/aging 4294967297",
		"ovs-appctl tnl/arp/aging 5",
		"ovs-appctl tnl/neigh/aging",
		"ovs-appctl tnl/neigh/flush",
		"ovs-appctl tnl/neigh/show",
		"ovs-appctl tnl/arp/flush",
	)
}

// TestRouteShowOrderAgainstDebian compares ovs/route/show unsorted where
// Open vSwitch's order is defined: one entry per prefix length, listed by
// priority.
func TestRouteShowOrderAgainstDebian(t *testing.T) {
	p := startPair(t, addPortsArgs(1)...)
	p.compare(t,
		"ovs-appctl netdev-dummy/ip4addr br0 198.18.1.1/24",
		"ovs-appctl netdev-dummy/ip6addr br0 2001:2:0:1::1/64",
		"ovs-appctl ovs/route/add 0.0.0.0/0 br0 198.18.1.254",
		"ovs-appctl ovs/route/add 198.18.0.0/16 br0 198.18.1.254",
		"ovs-appctl ovs/route/add ::/0 br0 2001:2:0:1::fe",
		"ovs-appctl ovs/route/add 198.18.1.77/32 br0",
		"ovs-appctl ovs/route/add 2001:2:0:1::/64 br0",
		"ovs-appctl ovs/route/add 198.18.1.0/24 br0 pkt_mark=7",
		"ovs-appctl ovs/route/show",
	)
}

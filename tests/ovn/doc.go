// Package ovn holds gvs's OVN chassis end-to-end tests (issue 17): Debian's
// OVN 23.03 (ovn-northd, ovn-controller, ovn-nbctl from ovn-central and
// ovn-host) runs unchanged with gvs-vswitchd as its integration switch.
// Every scenario is one test with the subtests "ovs" (first: Debian's
// ovs-vswitchd 3.1 with its netdev datapath as the chassis, which proves
// the test), "gvs" (gvs-vswitchd) and "gvs-ovsdb" (gvs-vswitchd, and
// gvs-ovsdb-server instead of Debian's ovsdb-server serving the
// northbound and southbound databases to ovn-northd, ovn-controller and
// ovn-nbctl), each with a control plane and namespaces of its own; at each
// step the gvs runs must give the outcome the reference gave (recorder),
// besides the scenario's own checks.
//
// The chassis (chassis, startSwitch, startControlPlane): the vswitchd runs
// in a namespace of its own (gvs-vswitchd with its embedded database;
// Debian's ovs-vswitchd with Debian's ovsdb-server); Debian's ovsdb-server
// serves the northbound and southbound databases (schemas from
// /usr/share/ovn); ovn-northd joins them; Open_vSwitch external_ids give
// ovn-controller its system-id, ovn-remote, a Geneve encapsulation and
// ovn-bridge-datapath-type=netdev, and ovn-controller, started in the
// switch's namespace as on a host, creates br-int itself. A host is a namespace whose veth peer is added to br-int with
// external_ids:iface-id naming its logical switch port; a port counts as
// up once the logical switch port has up=true and the Interface has
// external_ids:ovn-installed="true", then ovn-nbctl --wait=hv sync must
// return.
//
// Scenarios (addresses in 198.18.0.0/15 and 2001:2::/48):
//   - TestLogicalSwitch: one logical switch, two ports: ports up, ping and
//     TCP both ways over IPv4, ping and TCP over IPv6.
//   - TestRouterACL: a logical router between two switches: ping to the
//     router and across it, TCP across it, over IPv4 and IPv6 (the router
//     resolves neighbours through ovn-controller); then to-lport ACLs on
//     the second switch, allow-related for ICMP and drop (logged, with a
//     meter) for other IPv4 to vm2: ping passes, TCP to vm2 does not
//     connect (a timeout with Open vSwitch: the SYN is dropped), TCP from
//     vm2 still does (its replies are established in conntrack), and
//     ovn-controller's log shows the drop (acl_log, name and verdict).
//   - TestNativeDHCP: OVN's native DHCPv4 (pinctrl: packet-in, then
//     NXT_RESUME with the result in reg0[3]) leases the port's address to
//     busybox udhcpc, with router and lease time; IPv6 router
//     advertisements (ipv6_ra_configs:address_mode=slaac) answer the
//     host's router solicitation: SLAAC address, default route via the
//     router's link-local address, ping6 to the router.
//   - TestGatewaySNAT: a gateway router (options:chassis) with SNAT joins
//     an internal switch to an external network through a localnet port:
//     ovn-controller patches br-int to the provider bridge br-phys
//     (ovn-bridge-mappings), where a namespace outside OVN, with no route
//     back, answers ping, and its TCP server sees the router's address.
//     TestGatewaySNATOnSwitch: the same with the external host on a port of
//     the external logical switch (no localnet, no provider bridge).
//   - TestTwoChassis: a second chassis (addChassis: its own switch
//     namespace, directory, switch and ovn-controller, the same control
//     plane), the two joined by an underlay veth between their br-phys
//     bridges holding the Geneve addresses: a logical switch spanning both
//     and a router to a switch on the second carry ping and TCP over
//     Geneve. gvs has no tunnel ports yet: its subtests skip, saying so,
//     unless GVS_OVN_TUNNELS=1.
//   - TestLoadBalancer: OVN load balancers on the client's switch, VIPs
//     198.18.6.100:80 and [2001:2:0:6::100]:80, three backends behind a
//     logical router: 30 TCP connections to each VIP reach all three
//     backends, each connection's exchanges are answered by one backend.
//
// TestPerfOVN (GVS_OVN_PERF=1, not part of make test) logs figures with
// each switch: iperf3 TCP between two logical ports, and the time until
// 100 logical ports added at once are up.
//
// After each scenario ovn-controller must have stayed quiet
// (checkControllerLog): no OpenFlow connection to br-int.mgmt lost (an
// OpenFlow error makes it reconnect) and no warning or error in its log
// besides those expected at start.
//
// On failure a subtest logs the number of br-int's OpenFlow flows,
// dpctl/dump-flows, ofproto/trace of the scenario's key packets,
// ovn-sbctl show, ovn-controller's warnings (an OpenFlow error makes it
// reconnect) and the switch's log; GVS_OVN_KEEP=DIR keeps the whole
// directory (databases, logs, the full br-int dump) under DIR
// (GVS_OVN_KEEP_ALL=1: of every subtest, passed or not).
//
// Isolation and cleanup: namespaces are named
// gvon<pid>-<n>-<scenario>-<kind>-<name>; every daemon runs in the
// foreground from a private directory (OVS_RUNDIR, OVN_RUNDIR and friends
// point there; never the packaged services), dies with the test binary
// (Pdeathsig) and is stopped at cleanup, which also deletes the
// namespaces and the directory, on failure too. No traffic leaves the
// namespaces.
//
// The tests need root and Debian's openvswitch-switch, ovn-central,
// ovn-host, busybox, iproute2 and ethtool (make test installs them); they
// skip, saying what is missing, otherwise. GVS_E2E_RACE=1 builds
// gvs-vswitchd with -race.
//
// inNetns is a copy of tests/bridge's unexported helper; the harness
// follows tests/conntrack's (no code shared with it).
package ovn

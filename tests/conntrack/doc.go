// Package conntrack holds gvs's end-to-end tests of connection tracking
// and NAT (issue 15's acceptance scenarios), each run side by side against
// Debian's ovs-vswitchd with its netdev (userspace) datapath, the
// reference, and gvs-vswitchd: every scenario is one test with the
// subtests "ovs" (first) and "gvs", each in a topology of its own, with
// flows, groups and settings installed by the real ovs-vsctl, ovs-ofctl
// (-O OpenFlow15) and ovs-appctl.
//
// Scenarios (IPv4 and IPv6 in each, addresses in 198.18.0.0/15 and
// 2001:2::/48; IPv6 neighbour discovery passes before the ct stage):
//   - TestFirewall: the stateful firewall in zones 1 (immediate) and 2
//     (from a register) at once, two pairs of hosts with the same
//     addresses: A opens TCP, UDP and ICMP to B, replies pass as +est, B
//     opens nothing to A, and the ICMP port unreachable for UDP to a closed
//     port reaches A as +rel (A's socket gets ECONNREFUSED). Commits set
//     ct_mark (and ct_label in zone 2) through exec(set_field:...) and
//     established packets pass only with their zone's mark and label;
//     then ovs-ofctl ct-flush-zone 1 and dpctl/flush-conntrack zone=2
//     empty one zone after the other.
//   - TestSNAT: 200 concurrent TCP connections from a private host, from
//     source ports 40000-40199, through nat(src=ADDR:20000-20255); the
//     server sees ADDR and ports in range, dump-conntrack distinct reply
//     ports in range.
//   - TestLoadBalancer: a select group whose buckets do
//     ct(commit,nat(dst=backend:80)): connections to the VIP spread over
//     three backends, a long connection stays on one.
//   - TestFTP: active (PORT/EPRT) and passive (PASV/EPSV) downloads
//     through alg=ftp, data connections admitted only as +rel.
//   - TestFragments: with dpctl/ipf-set-enabled, TCP over IPv4 fragments
//     (a router namespace with a small-MTU link fragments a sender with
//     path MTU discovery off) and UDP over IPv4 and IPv6 fragments. TCP
//     over IPv6 fragments cannot be produced by Linux endpoints (TCP sizes
//     segments to the path MTU and IPv6 routers never fragment), so IPv6
//     fragments are UDP's.
//
// Comparison: at each checkpoint the scenario dumps
// `ovs-appctl dpctl/dump-conntrack`, `dump-conntrack -s` and
// `dpctl/ct-stats-show` (compared exactly: counts only); the ovs
// subtest records them and the gvs subtest must match them after
// normalisation (normalise, normaliseStats: ports of 10000 and above
// become E, timeouts are compared within a few seconds, lines are
// sorted; the load-balancing scenario also hides which backend a
// connection went to, which it counts separately). Debian's userspace
// conntrack prints no packet counters with -s, so -s adds only timeouts.
// The scenarios also check the dumps on their own (entry counts, zones,
// NAT addresses and ports, helper=ftp, ipf-get-status counters), so a gvs
// run reports what is wrong even without a reference.
//
// When a subtest fails it logs ovs-ofctl dump-flows and dump-groups,
// dpctl/dump-flows, dpctl/dump-conntrack -s, ofproto/trace of the
// scenario's key packets and the end of the daemon's log.
//
// Isolation and cleanup: each run creates its own namespaces
// (gvct<pid>-<n>-<scenario>-<kind>-<name>): one for the switch, whose
// daemon (gvs-vswitchd, or Debian's ovs-vswitchd with ovsdb-server in a
// private directory, never the packaged service) runs inside it with the
// switch's veth ends, so its bridge and ovs-netdev tap devices never meet
// another test's; one per host, holding the other veth end (tx checksum
// offload off, as Open vSwitch asks for its userspace datapath). Veths are
// created directly in those namespaces. t.Cleanup stops the daemons (they
// also die with the test binary: Pdeathsig) and deletes the namespaces
// and the private directories, also on failure. No traffic leaves the
// namespaces.
//
// The tests need root and Debian's openvswitch-switch, iproute2 and
// ethtool (make test installs them); they skip, saying what is missing,
// otherwise. GVS_CT_SELFCHECK=1 runs Debian's ovs-vswitchd in the gvs
// subtests too, which checks the normalisation (two reference runs must
// compare equal); GVS_E2E_RACE=1 builds gvs-vswitchd with -race.
//
// inNetns is a copy of tests/bridge's unexported helper; the harness
// follows tests/ofctl and bench/setups (no code shared with them).
package conntrack

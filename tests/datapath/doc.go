// Package datapathtest holds the end-to-end acceptance tests of gvs's
// userspace datapath (issue 4): real traffic between network namespaces
// through a dpif.Datapath switching with ofproto's NORMAL, built directly
// from the netdev backends, with no database and no bridge package.
//
// # Topology
//
// Every test creates its own namespaces, named gvsdp<pid>-<n>-<role>: one
// "switch" namespace holding the switch-side ends of veth pairs (and the
// tap of an internal port), and one namespace per host holding the other
// ends, addressed in 198.18.0.0/15. Veths are created directly inside the
// namespaces (ip -n), so nothing is added to the root namespace. Offloads
// are left at the kernel's defaults everywhere. t.Cleanup stops the
// processes, deletes the veths and then the namespaces, also when a test
// fails; TestMain also removes namespaces left by a killed earlier run
// (only ours: the pid in the name is no longer alive).
//
// # Processes
//
// The datapath runs in a child process, the test binary itself started
// with `ip netns exec SWITCH` in helper mode (GVSDP_HELPER=switch): every
// thread of it lives in the switch namespace, so AF_PACKET, AF_XDP and
// rtnetlink calls from any goroutine see the switch's devices, and a PMD
// that panics takes the process down, which the test notices. The child
// reads commands on stdin ("stats", "quit") and answers with one JSON line
// each (see switch_test.go). The 300 MB transfer runs the same way
// (GVSDP_HELPER=sink and =source, one in each host namespace). ICMP probes
// and raw-frame injection use sockets created by a thread that entered the
// host's namespace.
//
// # What is tested
//
//   - TestPortTypes: for "system" (afpacket), "afxdp" (generic and native
//     XDP, each with private UMEMs and with one UMEM shared by both ports)
//     and "internal" (a tap in the switch namespace with an address)
//     ports: ICMP reachability, iperf3 TCP (3 s, no stalled interval),
//     iperf3 UDP 1400 B at 200 Mbit/s (loss measured from both ends), and
//     300 MB over TCP with matching SHA-256. With a shared UMEM, the
//     ports' tx_zero_copy counters must show the frames crossed as
//     descriptors (under 1% copied).
//   - TestJumboTCP: the same with MTU 9000 on every link: 9000-byte DF
//     pings, TCP of jumbo segments, 300 MB with matching SHA-256.
//   - TestVLANIsolation: access ports tagged 10, 10, 20 and a trunk (raw
//     802.1Q frames: the kernel here has no VLAN devices). Same-VLAN hosts
//     reach each other, cross-VLAN pings get zero replies and the far
//     host's kernel sees zero echo requests; trunk replies come back with
//     the right tag.
//   - TestMalformedFrames: truncated, malformed, oversized, jumbo and
//     random frames injected with AF_PACKET: each is counted under the
//     parse status packet.Parse gives it (a VLAN tag cut short never
//     reaches an AF_PACKET socket: the kernel drops it in skb_vlan_untag,
//     so "system" ports are held to what a tap on the port saw), frames
//     over the output port's MTU are counted as its TxDrops and do not
//     wedge it, valid 4000- and 9014-byte frames arrive, the switch keeps
//     forwarding and its PMDs keep running. Malformed frames are
//     forwarded, as Open vSwitch's NORMAL does; the test logs how many.
//   - TestUpcallBurst: 20,000 frames in one second, each from a new
//     source MAC (a new megaflow each): no upcall lost, every frame
//     delivered.
//   - TestManyIdlePorts: one PMD polls 40 system ports, 38 idle, more
//     than it reads one by one while busy: 100 echoes between the two
//     hosts, with pauses that let the PMD sleep, all come back, and again
//     after three idle ports flapped.
//
// Failures are reported with where the packets went: the switch's port
// and PMD drop counters, the veths' kernel counters and the receiver's
// UDP counters (RcvbufErrors) are logged around each measurement.
//
// Everything needs root, ip(8) and (for throughput) iperf3; a test skips
// and says why when something is missing. Run with
// `sudo go test ./tests/datapath/ -v` (about 70 s).
package datapathtest

// Package tunnel holds the tunnel encapsulations of the userspace
// datapath as pure code: geneve, vxlan (with the GBP extension) and gre
// (key, checksum and sequence number as Open vSwitch supports them; gre
// over an IPv6 underlay is ip6gre), each over an IPv4 or IPv6 underlay.
// The datapath's tnl_push and tnl_pop actions call it; it does no I/O,
// no routing and no neighbour resolution.
//
//   - ParseConfig turns an Interface's options map into a Config, with the
//     error text Open vSwitch's ovs-vswitchd writes to Interface.error.
//   - Build makes a Header: the outer header bytes for one destination
//     (Ethernet, IPv4 or IPv6, then UDP and geneve/vxlan, or GRE), built
//     once per destination on the slow path, with what is left to fill per
//     packet.
//   - Push prepends a Header to a packet and fills the per-packet fields:
//     IP total or payload length, IPv4 header checksum, UDP length, UDP
//     source port from the inner flow hash (Open vSwitch's mapping onto
//     32768-61000 by default), the UDP or GRE checksum when the header
//     asks for one, and the GRE sequence number.
//   - Pop validates and strips the outer headers and fills the packet's
//     Key tunnel metadata as Open vSwitch's netdev-native-tnl does; a bad
//     packet yields a Drop reason for the caller to count and drop.
//   - Header.AppendFormat and FormatPush print the header as
//     ovs-appctl dpctl/dump-flows prints tnl_push(...); ParseHeader and
//     ParsePush read that text back.
//   - Config.SetSendFields and Config.Params are the translation side
//     (Open vSwitch's tnl_port_send): the flow's tunnel fields for output
//     to a port, and the BuildParams for them. OVSFlowHash is Open
//     vSwitch's 5-tuple hash of the inner packet: with it, Push picks the
//     UDP source port ovs-vswitchd picks.
//   - MapGeneveOptions and UnmapGeneveOption convert between the raw
//     options Pop leaves (FlagUDPIF) and the TLV-mapped tun_metadata0
//     value the OpenFlow layer reads (right-aligned in TunMetadata).
//   - Config.Args/DpifShow, DatapathPortName and ListeningPortLine give
//     the pieces of ovs-appctl dpif/show and tnl/ports/show.
//
// Compatibility is checked against Debian's ovs-vswitchd (ovs_test.go)
// and Linux's tunnel devices in a namespace (linux_test.go). Known
// differences: with csum=true and seq=true Open vSwitch computes the GRE
// checksum before writing the sequence number (so it is wrong for every
// sequence number but 0); Push checksums what it sends. Open vSwitch
// 3.1's userspace datapath leaves the vxlan GBP extension out of what it
// sends and drops what carries it; Params puts it in when the port has
// exts=gbp, as Linux's vxlan device and the kernel datapath do. Pop skips
// IPv6 extension headers but drops fragments (reassemble first), and takes
// only Ethernet payloads (legacy_l3 GRE and VXLAN-GPE: DropPayloadType).
//
// # Goroutines and ownership
//
// Nothing here locks or keeps state between calls. A Header is a value
// (a fixed array, no pointers): build it on the slow path, publish it to
// the PMDs (for example behind an atomic pointer), and never modify a
// published one. Push and Pop act on a packet.Buffer its caller owns.
// The GRE sequence counter belongs to the port; the caller passes the
// next number to Push.
//
// # Allocation
//
// Push and Pop never allocate (alloc_test.go); Pop never panics and
// never reads past the frame on any input (FuzzPop).
//
// # Metadata
//
// Pop zeroes the Key's tunnel fields, then fills TunID, TunSrc/TunDst or
// TunIPv6Src/TunIPv6Dst, TunTOS, TunTTL, TunTpSrc/TunTpDst (UDP kinds),
// TunFlags (FlagKey, FlagCsum, FlagOAM, FlagUDPIF for geneve, as Open
// vSwitch's FLOW_TNL_F_*; the userspace datapath does not report
// FlagDontFragment on receive, and neither does Pop), the geneve
// options as raw TLVs in TunMetadata/TunMetaLen, and the vxlan GBP id
// and flags. The Key's TunMetadata has room for 16 bytes of options:
// a packet with more is dropped with DropOptionsUnsupported (Open
// vSwitch accepts 252 bytes).
package tunnel

// Package tnlroute is native tunnelling's view of the underlay, after Open
// vSwitch's lib/ovs-router.c, lib/route-table.c and lib/tnl-neigh-cache.c:
//
//   - Table, the route table: routes learned from the kernel (Kernel, over
//     rtnetlink: every table, IPv4 and IPv6, as Open vSwitch 3.1 dumps
//     them) plus the user's (ovs/route/add). A lookup is a longest-prefix
//     match by priority as Open vSwitch's classifier orders the entries:
//     a kernel route has its prefix length as priority (IPv4 prefixes
//     count from 96, as v4-mapped IPv6), a local one (RTN_LOCAL) that plus
//     64, a user route that plus 32; a route matches only its own
//     pkt_mark. IPv4 destinations are v4-mapped, so one without an IPv4
//     route matches ::/0, as in Open vSwitch. Each entry carries the source address chosen as Open
//     vSwitch chooses it: the output device's address whose network holds
//     the destination (else the gateway) with the longest mask; a route
//     whose device has none is not installed.
//   - Cache, the tunnel neighbour cache: (bridge, IP) to MAC, filled by
//     Snoop from ARP replies, gratuitous ARP and Neighbour Advertisements
//     with a target link-layer address seen on a bridge, and by
//     tnl/neigh/set; an entry not looked up for the aging time
//     (DefaultAging, tnl/neigh/aging) expires.
//
// The appctl commands over them (ovs/route/*, tnl/neigh/*, tnl/arp/*) are
// in package appctl (tnlroute.go), which uses this package's parsers
// (ParseRouteAdd, ParseRouteDel, ParseRouteLookup, ParseNeighSet,
// ParseAging) and formatters (FormatAddr).
//
// # Goroutines and locks
//
// Lookups are what translation does per upcall: Table.Lookup and
// Cache.Lookup take no lock and allocate nothing. Each structure is an
// immutable snapshot behind an atomic pointer, replaced whole by writers,
// which serialise on the structure's own mutex (a leaf: nothing is called
// with it held except the AddrSource while computing source addresses).
// Kernel.Run is the route table's kernel writer, one goroutine; commands
// on unixctl goroutines are the user's writers. Cache entries' expiry
// times are atomics refreshed by Lookup (when they move by more than
// 100 ms), so a neighbour in use never expires; Cache.Expire (run by
// Cache.Run's ticker) removes the others.
//
// Translation's use, as Open vSwitch's terminate_native_tunnel and
// tnl_route_lookup_flow: a packet output to a bridge port with an
// address and matching no tunnel port goes to Cache.Snoop when it is
// addressed to one of the bridge's addresses (AddressedTo) or is a
// gratuitous ARP (IsGARP), with update false under ofproto/trace;
// encapsulation asks Table.Lookup(pkt_mark, tunnel destination, local_ip)
// for the output bridge, gateway and source, then Cache.Lookup(bridge,
// gateway or destination) for the next hop's MAC. Table.Seq and
// Cache.Seq move on every change (Open vSwitch's tnl_conf_seq), for
// revalidation.
// Snoop adds an entry only when it is new or its MAC changed, so the
// per-packet path takes the writer mutex only for a new neighbour.
package tnlroute

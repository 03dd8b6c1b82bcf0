// Package topo builds and removes the network namespaces and veth pairs the
// benchmark runs in.
//
// A Topo owns the namespaces named from a unique prefix (gb<pid>): the
// client, the server, the switch and FlowSenders-1 extra senders
// (gb<pid>f1, f2, ...) that, with the client, send the new-flow test's
// traffic from several hosts, MACs and switch ports at once. Links are
// created per setup, either veth pairs straight to the server (Direct: the
// client's pair, plus one pair per extra sender, each in a subnet of its
// own, since there is no switch to join them) or one pair from each host
// into the switch namespace (Switched), where a switch (Linux bridge, Open
// vSwitch, gvs) joins the outer ends (SwitchPorts). Addresses come from
// 198.18.0.0/15 only.
//
// Ports is the scale test's topology, apart from Topo: N veth pairs from a
// switch namespace (gb<pid>k) to one host namespace (gb<pid>h) plus a sink
// pair, created with ip(8) in batch mode, no addresses, IPv6 off.
// RemoveStale knows both names.
//
// A Topo is used from one goroutine. Destroy removes every link (outer ends
// explicitly, since namespace deletion is asynchronous) and every namespace,
// and is safe to call more than once and after a partial Create.
package topo

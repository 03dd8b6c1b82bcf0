// Package topo builds and removes the network namespaces and veth pairs the
// benchmark runs in.
//
// A Topo owns three namespaces named from a unique prefix (gb<pid>): the
// client, the server and the switch. Links are created per setup, either a
// veth pair straight from client to server (Direct) or one pair from each
// end host into the switch namespace (Switched), where a switch (Linux
// bridge, Open vSwitch, gvs) joins the two outer ends. Addresses come from
// 198.18.0.0/15 only.
//
// A Topo is used from one goroutine. Destroy removes every link (outer ends
// explicitly, since namespace deletion is asynchronous) and every namespace,
// and is safe to call more than once and after a partial Create.
package topo

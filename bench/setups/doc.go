// Package setups holds the switches the benchmark compares, each behind the
// Setup interface: a direct veth pair (the box's limit), the Linux bridge,
// Debian's Open vSwitch netdev datapath in several configurations, and gvs.
//
// A Setup is started on a topo.Topo whose namespaces exist and stopped
// before the next setup starts. A switch joins every port of
// Topo.SwitchPorts (client, server and the extra senders of the new-flow
// test; idle outside that test); the direct pair links each extra sender
// straight to the server instead. Start returns only once a ping from every
// sender passes through the switch. A setup that cannot run here (software missing, a
// feature refused, gvs not forwarding yet) returns a *SkipError, which the
// runner reports as "skipped: reason" and never as a failure. Setups are
// used from one goroutine.
//
// ScaleSwitch is the scale test's view of the Open vSwitch and gvs setups
// (ScaleSwitches): started in a namespace with an empty bridge, driven with
// ovs-vsctl and ovs-appctl, restarted with `ovs-appctl exit`, all their
// processes reported for memory and CPU.
//
// The "-ovn" variants (OpenFlowSetups) put only the client's and server's
// ports on a bridge with fail-mode=secure and OpenFlow 1.5 and load the
// saved OVN two-port pipeline (Env.OVN) with Debian's ovs-ofctl, rewritten
// for the hosts' MACs; their new-flow test uses the client alone
// (FlowSenders). FlowTableSwitch is the flow-table test's view: a switch
// with one empty OpenFlow bridge, loaded with ovs-ofctl. A gvs-vswitchd
// without a management socket, or refusing the flows, is a *SkipError.
//
// Daemons are started privately: their own database, run, log and control
// files in a temporary directory, stopped by their own pid, never the
// packaged service.
//
// RaiseSocketBufferMax raises the global net.core.rmem_max/wmem_max for
// the session (the UDP tests' iperf3 -w needs it); none of the switches
// asks for a socket buffer capped by them (gvs forces its sizes, Open
// vSwitch's netdev ports keep the defaults), so it changes only the hosts'
// iperf3 sockets.
package setups

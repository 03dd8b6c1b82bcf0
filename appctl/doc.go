// Package appctl implements gvs-vswitchd's ovs-appctl commands, with Open
// vSwitch's names, arguments, output formats and error texts where Open
// vSwitch has the command, registered on a unixctl.Server:
//
//	dpif/show                      datapath hit/missed, bridges, ofport/dp port, type
//	dpctl/show [-s] [dp]           lookups, flows, ports (and their counters with -s)
//	dpctl/dump-flows [-m] [dp] [type=..] [pmd=..]
//	dpctl/del-flows [dp]           flush every datapath flow
//	dpctl/dump-conntrack [-m] [-s] [dp] [zone=N]
//	dpctl/flush-conntrack [dp] [zone=N] [ct-orig-tuple] [ct-reply-tuple]
//	dpctl/ct-stats-show [dp] [zone=N] [verbose], dpctl/ct-bkts [dp] [gt=N]
//	dpctl/ct-set-maxconns [dp] N, ct-get-maxconns [dp], ct-get-nconns [dp]
//	dpctl/ct-set-limits [dp] [default=L] [zone=N,limit=L]...,
//	dpctl/ct-get-limits [dp] [zone=N1[,N2]...], ct-del-limits [dp] zone=N1[,N2]...
//	dpctl/ct-enable-tcp-seq-chk, ct-disable-tcp-seq-chk, ct-get-tcp-seq-chk [dp]
//	dpif-netdev/pmd-stats-show [-pmd N] [dp]
//	dpif-netdev/pmd-stats-clear [-pmd N] [dp]
//	dpif-netdev/pmd-rxq-show [-pmd N] [-secs S] [dp]
//	dpif-netdev/pmd-rxq-rebalance [dp]
//	fdb/show BRIDGE, fdb/flush [BRIDGE], fdb/stats-show BRIDGE
//	bridge/dump-flows [--offload-stats] BRIDGE
//	memory/show, coverage/show     memory/show adds the receive rings:
//	                               rx-ring-kB, rx-rings, rx-ring-budget-kB,
//	                               rx-ring-reserved-kB, and rx-ring-kB(PORT)
//	                               for the eight largest
//	gvs/sock-buf-show [BRIDGE]     gvs only: requested and effective socket
//	                               buffers and kernel drops per port
//	ovs/route/add|del|show|lookup  native tunnelling's route table, and
//	tnl/neigh/show|set|flush|aging its neighbour cache (also tnl/arp/*):
//	                               RegisterTunnelRouting (tnlroute.go)
//
// Where gvs differs from Open vSwitch, the output says so rather than
// inventing figures:
//   - PMDs are named "pmd thread numa_id N core_id C" when pinned and
//     "pmd thread pmd_id I (not pinned)" otherwise; -pmd selects by core
//     (pinned) or index (unpinned).
//   - pmd-stats-show reports time in nanoseconds ("idle ns",
//     "processing ns"), not TSC cycles; counters of features gvs lacks
//     (recirculation, SMC, offloads) are truly 0; "avg. subtable lookups
//     per megaflow hit" is counted as Open vSwitch counts it (the
//     matching subtable's position per megaflow hit, dpif
//     PMDStats.SubtableLookups). pmd-stats-clear records a baseline in
//     this package: the datapath's counters, which metrics export, never
//     go back.
//   - pmd-rxq-show: a queue's usage is its busy time over the window
//     (-secs, rounded up to whole datapath sampling intervals) as the
//     datapath measures it (dpif.RxQueueStatsOver). The datapath counts
//     from the moment a port is added, so there is a figure from the
//     start where Open vSwitch says NOT AVAIL until its first interval
//     closes. overhead is NOT AVAIL (the PMD's and the queues' windows
//     differ); an extra "busy (all queues)" line per PMD gives the PMD's
//     busy share over the window from this package's sampled history.
//   - pmd-rxq-rebalance reassigns the queues by measured load
//     (dpif.RebalanceRxQueues, pmd-rxq-assign algorithm) at once and
//     replies "pmd rxq rebalance requested." like Open vSwitch, followed
//     by one line per queue moved (port, queue, from and to PMD index,
//     usage, algorithm).
//   - dpctl/dump-flows: megaflows are shared by every PMD, so there are
//     no per-PMD sections (with only dummy bridges, the flows are titled
//     "flow-dump from the main thread:", which polls dummy ports in Open
//     vSwitch); filter= is refused; --names is accepted but ports print
//     as numbers.
//   - bridge/dump-flows: a bridge has one rule, priority=0,actions=NORMAL;
//     its n_packets/n_bytes are the packets received on the bridge's
//     ports.
//   - coverage/show: event totals are built from the published counters
//     (per port and PMD, so a port leaving never makes a total go back)
//     plus events this package causes (dpif_flow_flush, fdb_flush). The
//     periodic sampler takes the devices' kernel counters
//     (netdev_rx_kernel_drop) from the statistics timer's read when it is
//     younger than 1.2 intervals (netdev.StatsWithin), so a port costs one
//     such read per interval, not two; coverage/show itself reads fresh.
//   - The conntrack commands follow Open vSwitch 3.1 (Debian's), with
//     one difference: flush-conntrack skips a leading datapath name, which
//     3.1 tries to parse as a tuple. ct-bkts reports one bucket holding
//     every connection, as Open vSwitch's userspace tracker (a cmap) does.
//     The TCP sequence checking commands need a tracker implementing
//     TCPSeqChecker; otherwise they fail with "Operation not supported".
//
// The switch is read through source.Switch, which the bridge layer
// implements: the datapath may be replaced at any time, so every command
// asks for it afresh.
//
// Goroutines: commands run on unixctl connection goroutines, concurrently;
// New starts one sampler goroutine (coverage rates, PMD busy history),
// stopped by Close. Locks: Commands.mu and the coverage mutex are leaves,
// never held while calling into the datapath except for reading the PMD
// counters (atomic loads, no lock); MAC tables are read under their
// bridge's mutex by ofproto.
package appctl

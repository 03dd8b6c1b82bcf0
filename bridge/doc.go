// Package bridge is the reconciler between the Open_vSwitch database and
// the datapath, gvs's counterpart of Open vSwitch's vswitchd/bridge.c.
//
// A Reconciler follows the database through libovsdb's client and cache
// (models in gvs/schema/vswitchd), monitoring Open_vSwitch, Bridge, Port,
// Interface, Datapath, Mirror and QoS. Every cache event only sets a dirty
// flag (a one-slot channel); one worker goroutine then reads the whole
// desired state from the cache (never from the events, which libovsdb drops
// past its 65,536-entry buffer), diffs it with what it applied to the
// Datapath, applies the difference, and writes the results back in one
// transaction: cur_cfg = next_cfg (so `ovs-vsctl` without --no-wait returns
// once the change is live), Interface ofport, error, admin_state,
// link_state, link_speed, link_resets, mac_in_use, mtu, ifindex, status
// and statistics (with the device's custom counters, afxdp's xsk_*, as
// Open vSwitch appends them), Bridge datapath_id and datapath_version, the
// Open_vSwitch version and type columns, and the "netdev" Datapath row
// with its capabilities. Only columns whose values differ are written, so
// a pass that changes nothing sends nothing.
//
// The Datapath interface (datapath.go) is all the reconciler knows of the
// switching side; bridge/dpadapter implements it on dpif, ofproto and the
// netdev backends (and, with OFPorts, the source.Switch view that metrics
// and ovs-appctl read), bridge/bridgetest fakes it for tests. Each pass is
// counted in Config.Metrics (source.Reconciler) when set.
//
// Behaviour worth knowing:
//   - Bridge.datapath_type "", "system" and "netdev" all mean gvs's one
//     userspace datapath. Interface types: system (or ""), internal, tap,
//     afxdp; anything else is an Interface.error in Open vSwitch's words
//     ("could not open network device X (Address family not supported by
//     protocol)"), as is a missing device ("... (No such device)"); a
//     failed interface has ofport -1 and never stops the other ports.
//     Options: n_rxq (system, afxdp), rx-mode (system), xdp-mode and
//     tx-batch-size (afxdp), as the netdev backends read them.
//     Devices that appear later are picked up on the next pass: Kick
//     (called on netlink link events) or the statistics timer.
//   - ofports survive restarts: the number already assigned (in memory,
//     else in the database) is kept, ofport_request wins when free, new
//     interfaces (and ones whose device came back) get numbers as Open
//     vSwitch's alloc_ofp_port hands them out: round robin from the last
//     one given, below 32768, never one freed less than an hour ago
//     while another is free (old flows may still name it); the bridge's
//     own port is LOCAL (65534).
//   - Open_vSwitch.other_config: userspace-sock-buf-size (explicit only,
//     clamped, applied to open ports at once), pmd-cpu-mask, pmd-maxsleep
//     and pmd-rxq-assign (applied live by Datapath.SetConfig: ports,
//     flows and MAC tables stay, as in Open vSwitch), gvs-rx-ring-budget
//     (gvs's own: bytes for all receive rings together, 0 or unset for
//     1/16 of the machine's memory within 64 MiB to 4 GiB; applied live
//     by SetConfig without touching the PMDs), stats-update-interval (ms,
//     at least 5000 as in Open vSwitch). Bad values (not a number, below
//     zero) are logged once and ignored.
//   - Mirrors, QoS and bonds are reported as unsupported (a log line; an
//     Interface.error for a bond's interfaces), never half-applied.
//   - The connection is re-established with exponential backoff, with a
//     fresh client and cache each time; meanwhile the datapath keeps
//     forwarding with what it has.
//
// Contract: New, then Run once (it blocks until its context ends); Kick
// from any goroutine. The Datapath is called only from Run's worker
// goroutine, never concurrently; Run leaves it configured and the caller
// closes it. Lock order: Reconciler.mu (the current client) is a leaf.
package bridge

// Package bridge is the reconciler between the Open_vSwitch database and
// the datapath, gvs's counterpart of Open vSwitch's vswitchd/bridge.c.
//
// A Reconciler follows the database through libovsdb's client and cache
// (models in gvs/schema/vswitchd), monitoring Open_vSwitch, Bridge, Port,
// Interface, Datapath, CT_Zone, CT_Timeout_Policy, Mirror, QoS and
// Controller. Every cache event only sets a dirty
// flag (a one-slot channel), except an update of only the columns the
// reconciler writes itself (its own write-back coming back, echo.go); the
// worker takes the rest of a burst of kicks (up to 5 ms) before a pass,
// so one database update makes one pass. The worker goroutine then reads the whole
// desired state from the cache (never from the events, which libovsdb drops
// past its 65,536-entry buffer; shallow copies, not libovsdb's List, which
// clones every row through JSON; listed again when next_cfg moved
// meanwhile, so one pass sees a whole ovs-vsctl transaction), diffs it
// in memory with the state it applied and keeps (bridges, ports, failed
// interfaces, and per port the PortState it last read), and calls the
// Datapath only for the difference: the ports added or removed in a pass
// go in one AddPorts or DelPorts call (the datapath opens and closes
// their devices concurrently), and a port's state is read only when it
// was added or set, or when PortsChanged names it. So a change to one
// port costs one port's datapath work, whatever the number of ports; the
// in-memory diff and write-back comparison stay proportional to the
// ports, as does the cache. It then writes the results back in one
// transaction: cur_cfg = next_cfg (so `ovs-vsctl` without --no-wait returns
// once the change is live), Interface ofport, error, admin_state,
// link_state, link_speed, link_resets, mac_in_use, mtu, ifindex, status
// and statistics (with the device's custom counters, afxdp's xsk_*, as
// Open vSwitch appends them), Bridge datapath_id (other_config:datapath-id
// when set) and datapath_version, Controller is_connected, role and status
// (openflow.go), the
// Open_vSwitch version and type columns, and the "netdev" Datapath row
// with its capabilities. Only columns whose values differ are written, so
// a pass that changes nothing sends nothing. Statistics (PortStats) are
// read only on the statistics timer (stats-update-interval, default 5 s
// as in Open vSwitch), whose pass also re-reads every port's state and
// writes all of it in one transaction; a new port starts with zeroes.
//
// The Datapath interface (datapath.go) is all the reconciler knows of the
// switching side; bridge/dpadapter implements it on dpif, ofproto and the
// netdev backends (and, with OFPorts, the source.Switch view that metrics
// and ovs-appctl read), bridge/bridgetest fakes it for tests. Each pass is
// counted in Config.Metrics (source.Reconciler) when set.
//
// Behaviour worth knowing:
//   - Bridge.datapath_type "", "system" and "netdev" all mean gvs's one
//     userspace datapath; "dummy" (gvs-vswitchd --enable-dummy, passed
//     on as BridgeConfig.DatapathType) is a bridge whose internal port is
//     a dummy device, in the same datapath. Interface types: system (or
//     ""), internal, tap, afxdp, and with Config.DummyTypes dummy,
//     dummy-internal, dummy-pmd; anything else is an Interface.error in Open vSwitch's words
//     ("could not open network device X (Address family not supported by
//     protocol)"), as is a missing device ("... (No such device)"); a
//     failed interface has ofport -1 and never stops the other ports.
//     Options: n_rxq (system, afxdp), rx-mode (system), xdp-mode and
//     tx-batch-size (afxdp), as the netdev backends read them. Type
//     patch (options:peer) has no device: its configuration errors are
//     the datapath's words (InterfaceError, written unchanged), a
//     working patch port without its peer carries PortState.Error, and
//     every patch port's state is read again when a pass adds, removes
//     or re-points one (its peer's pairing changed); its statistics are
//     packets and bytes only (PortStats.PacketsOnly).
//     A failed interface is tried again when its configuration changes
//     or a link event names its device (PortsChanged: a device that
//     appears later is picked up then), not on every pass. A port whose
//     device went away or was replaced (PortState wraps
//     netdev.ErrNoDevice once a link event told the datapath) is
//     deleted and re-added when the device is back. ResyncPorts (the
//     link-event stream was lost) re-reads every port and retries every
//     failed interface once; so does a new userspace-sock-buf-size,
//     whose sizes show in every port's status. link_resets is the
//     datapath's count of carrier transitions (PortState.CarrierResets),
//     which it takes from every link event, not from the states read.
//   - ofports are the datapath's (its OpenFlow bridges number their
//     ports, ofproto.PortNumbers) and survive restarts: the reconciler
//     passes each new port its ofport_request and the number it had (in
//     memory, else in the database) in PortSpec; the request wins when
//     free, then the old number; new interfaces (and ones whose device
//     came back) get numbers as Open vSwitch's alloc_ofp_port hands them
//     out: round robin from the last one given, below 32768, never one
//     freed less than an hour ago while another is free (old flows may
//     still name it); the bridge's own port is LOCAL (65534). The
//     reconciler writes back the number PortState reports.
//   - Open_vSwitch.other_config: userspace-sock-buf-size (explicit only,
//     clamped, applied to open ports at once), pmd-cpu-mask, pmd-maxsleep
//     and pmd-rxq-assign (applied live by Datapath.SetConfig: ports,
//     flows and MAC tables stay, as in Open vSwitch), gvs-rx-ring-budget
//     (gvs's own: bytes for all receive rings together, 0 or unset for
//     1/16 of the machine's memory within 64 MiB to 4 GiB; applied live
//     by SetConfig without touching the PMDs), stats-update-interval (ms,
//     at least 5000 as in Open vSwitch). Bad values (not a number, below
//     zero) are logged once and ignored.
//   - Conntrack zones: Datapath.ct_zones of the "netdev" (and "system")
//     row, each CT_Zone's timeout_policy and its CT_Timeout_Policy
//     timeouts (ovs-vsctl add-zone-tp / del-zone-tp) go, whole, to a
//     Datapath that is also a ConntrackDatapath whenever they change;
//     dpadapter applies the difference to the datapath's tracker
//     (SetTimeoutPolicy, SetZonePolicy, DelTimeoutPolicy). The schema has
//     no CT_Zone limit column: zone limits are dpctl's.
//   - Mirrors, QoS and bonds are reported as unsupported (a log line; an
//     Interface.error for a bond's interfaces), never half-applied.
//   - With a Datapath that is also a FlowSyncer, each pass ends with
//     SyncFlows, so cached flows follow a VLAN or bridge setting before
//     cur_cfg says the change is applied.
//   - With a Datapath that is also an OpenFlowDatapath, each bridge has a
//     connmgr.Manager (openflow.go): <RunDir>/<bridge>.mgmt and .snoop,
//     the Controller rows (target, type, max_backoff, inactivity_probe,
//     enable_async_messages, controller_queue_size,
//     controller_rate_limit/burst_limit; in-band is served out-of-band,
//     with a warning for a remote controller), Bridge.protocols, fail_mode and
//     other_config:datapath-id, applied when they change. Controller
//     is_connected, role and status are written on the statistics timer
//     and whenever a controller connects, disconnects or changes role;
//     passive targets have none, as in Open vSwitch.
//   - The connection is re-established with exponential backoff, with a
//     fresh client and cache each time; meanwhile the datapath keeps
//     forwarding with what it has.
//
// Contract: New, then Run once (it blocks until its context ends); Kick,
// PortsChanged and ResyncPorts from any goroutine (they never block). The
// Datapath is called only from Run's worker goroutine, never concurrently;
// Run leaves it configured and the caller closes it. Lock order:
// Reconciler.mu (the current client) and changedMu (the names link events
// reported) are leaves.
package bridge

// Package dpadapter is the real bridge.Datapath: gvs's userspace datapath
// (package dpif) with OpenFlow bridges (package ofproto: one
// ofproto.Switch per datapath, one ofproto.Bridge per bridge) between
// ports opened by the netdev backends: afpacket for "system" ports, tap
// for "internal" and "tap" ports (the bridge's own port among them),
// afxdp for "afxdp" ports, and with Config.Dummy (--enable-dummy)
// netdev/dummy for "dummy" ports, the internal ports of
// datapath_type=dummy bridges ("dummy-internal", datapath port numbers as
// Open vSwitch's dummy datapath picks them) and, at the system and
// override levels, the types they replace; Dummies is their registry, for
// the netdev-dummy/* commands, and reports their set-admin-state to
// Watch's watcher. Close removes every port (exit --cleanup, signals);
// Detach leaves the tap devices in the kernel (plain exit, as
// ovs-vswitchd). It also offers the switch to package metrics and package
// appctl as a source.Switch (View).
//
// Patch ports (type patch, patch.go) open no device and take no datapath
// port: the adapter checks their options as Open vSwitch's
// set_patch_config, gives them a random address and adds them to their
// bridge, which the switch pairs; their state and counters come from the
// bridge. dpif/show lists them with datapath port "none".
//
// The bridges number their ports (ofproto.PortNumbers, from PortSpec's
// OFPortRequest and PreviousOFPort); PortState reports each port's number
// for the reconciler to write back. A new bridge is standalone (the
// default NORMAL flow) until the reconciler hands it to a connection
// manager (bridge.OpenFlowDatapath: OpenFlowBridge empties it and the
// manager installs what the fail mode wants). Carrier changes reach the
// bridge (OFPPS_LINK_DOWN, liveness); Capabilities reports what the
// datapath and translation do for Datapath.capabilities.
//
// Link state comes from the kernel's link events, not from queries per
// call: WatchLinks turns RTM_NEWLINK/RTM_DELLINK into typed LinkUpdates;
// Datapath.Watch feeds them to LinkEvents, which keeps each port's admin
// and carrier state, MTU and MAC (read from the device once when the port
// is added; the speed again when the carrier changes) and marks a port
// gone when its device is deleted, renamed or replaced by another under
// the same name (another ifindex), and hands each MTU reported to a
// device that keeps one for its size check (netdev.MTUFollower), so no
// device reads its MTU on a timer; PortState then answers from that (and
// the device's Status) and PortStats reads the counters. Watch tells the
// reconciler which device names changed (PortsChanged: a port's, or one
// an interface waits for). At every subscription, and again after the
// netlink socket failed or overflowed (ENOBUFS), it resubscribes,
// brings every port up to date from one link dump and asks for a full
// resync (ResyncPorts), so a lost event is never missed for long.
//
// AddPorts opens the devices of a batch concurrently (at most
// dpif.MaxParallelDeviceOps at a time: socket, ring and bind are kernel
// work, much of it waiting for RCU grace periods), without holding the
// adapter's lock, then adds the ones that opened with one
// dpif.PortsAdd; a spec that fails opened nothing. DelPorts, and Close
// for all ports, remove them with one dpif.PortsDel, which closes the
// devices concurrently.
//
// Every afxdp port shares one afxdp.UMEMGroup (made with the first such
// port, closed by Close), so frames forwarded between afxdp ports move as
// descriptors without a copy; options:xdp-shared-umem=false gives a port
// its own UMEM, and a port the group cannot take (full, jumbo MTU,
// zero-copy) falls back to one by itself (Interface status shows
// shared-umem and the reason).
//
// Every system (afpacket) port's receive rings reserve from one
// netdev.MemoryBudget, made by New with the default limit and changed
// live by SetConfig (DatapathConfig.RxRingBudget, other_config:
// gvs-rx-ring-budget); View reports it (source.RxRingBudgeter). While
// the adapter has system ports it keeps an afpacket.SparePool (made by
// AddPorts with the first system port, closed when the last one goes and
// by Close; its rings reserve from the same budget), so that a system
// port of the common shape opens from a ready socket without waiting
// for the kernel's RCU grace period.
//
// All bridges share one dpif.Datapath, as all of Open vSwitch's netdev
// bridges share the one "ovs-netdev" datapath; datapath port numbers are
// allocated here and are not the OpenFlow port numbers the reconciler
// writes to the database. SetConfig changes the PMDs of the running
// datapath in place (dpif.Datapath.SetPMDConfig) when they differ from
// those in effect: ports, flows and MAC tables stay; a CPU mask dpif
// refuses leaves the PMDs unpinned and is returned as an error for the
// reconciler to report.
//
// Contract: the bridge.Datapath methods are called from one goroutine at a
// time (the reconciler's worker); Datapath's own lock makes them safe from
// any goroutine anyway, and View's methods run on any goroutine
// (ovs-appctl connections, scrapes) under that lock. WatchLinks (and
// Watch) run on their caller's goroutine and only call the function (or
// the PortWatcher) they are given; LinkEvents takes Datapath.mu. Lock
// order: Datapath.mu -> the dpif and ofproto locks taken inside their
// calls. Devices are opened outside Datapath.mu.
package dpadapter

// Package dpadapter is the real bridge.Datapath: gvs's userspace datapath
// (package dpif) switching with NORMAL (package ofproto) between ports
// opened by the netdev backends: afpacket for "system" ports, tap for
// "internal" and "tap" ports (the bridge's own port among them), afxdp for
// "afxdp" ports. It also watches the kernel's link events (WatchLinks) so
// the reconciler notices devices that appear, disappear or change, and
// offers the switch to package metrics and package appctl as a
// source.Switch (View).
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
// gvs-rx-ring-budget); View reports it (source.RxRingBudgeter).
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
// (ovs-appctl connections, scrapes) under that lock. WatchLinks runs on its own goroutine and only
// calls the function it is given. Lock order: Datapath.mu -> the dpif and
// ofproto locks taken inside their calls.
package dpadapter

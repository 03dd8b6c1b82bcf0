// Package dpif is the userspace datapath: ports, PMD goroutines that poll
// them, the flow caches (a per-PMD exact-match cache in front of a
// megaflow classifier), action execution, and upcalls to the layer above
// for packets that match no flow. Like Open vSwitch's lib/dpif.h says of
// its datapaths, it has no intelligence of its own: what to do with a
// packet is decided by the UpcallHandler (ofproto's translation of its
// OpenFlow tables) and cached here as megaflows.
//
// # Packet path (per PMD goroutine, no locks, no allocations)
//
// Each PMD is a goroutine locked to its OS thread (pinned to one CPU
// when Config.PMDCPUMask or SetPMDConfig's CPUMask is set). Per
// iteration it polls the receive queues assigned to it (all, or those
// ready: see below): netdev Recv into a batch from its own packet.Pool,
// then per packet: restore a VLAN tag the device stripped, Parse into
// the buffer's Key, hash, EMC lookup, megaflow lookup on an EMC miss,
// upcall on a megaflow miss, update the flow's statistics, execute the
// actions. Outputs accumulate in one batch per output port and are sent
// when full and at the end of the receive batch. alloc_test.go proves the
// path from Recv to Send allocates nothing once flows are installed, and
// epoll_test.go the same of polling through epoll and sleeping.
//
// A frame that came with a virtio_net_hdr and leaves on a port whose
// device takes none (Capabilities.VnetHdr false: AF_XDP) has the
// header's requests carried out first (offload.go): a GSO frame is cut
// into segments by packet.Segmenter (TCP over IPv4/IPv6, USO, UFO), the
// segments from the PMD's pool, the last made in place; a partial
// checksum (NEEDS_CSUM) is completed. Ports with vnet headers get the
// frame untouched. This allocates nothing either (offload_test.go).
//
// Receive queues are assigned round-robin to the PMD with the fewest
// queues when a port is added. They move only on RebalanceRxQueues
// (pmd-rxq-rebalance) and SetPMDConfig, which reassign them all by
// measured load with the RxqAssign algorithm (roundrobin, cycles,
// group): a moving queue is first taken from every plan and given to its
// new PMD only once the old one has stopped polling it, so one queue is
// never polled by two PMDs. A port's transmit queue q is PMD q's own
// when the device has more transmit queues than PMDs (the last is for
// non-PMD execution); otherwise PMDs share them, each under its own
// mutex.
//
// An idle PMD spins for Config.SpinTime (DefaultSpinTime: 2 µs, about
// one empty pass; see there for why so short) after its last packet, then
// sleeps in epoll_wait(2). Each PMD owns one epoll set holding its
// queues' PollFDs and a wake-up eventfd (new plan, stop, new max-sleep);
// a registration's event data is the descriptor itself, so taking a new
// plan adds and removes only the queues that came or went, on the PMD
// goroutine, before PortDel closes a device. A device whose PollFD may
// come to name another socket under the same number inside Recv
// (netdev.PollFDRenewer: an AF_PACKET ring resize) has its generation
// checked after each Recv, and the descriptor is registered again when it
// moved, before the PMD can sleep on it. Registrations are
// level-triggered: a queue left with packets is reported again. A packet
// wakes the PMD at once, and it then polls only the queues epoll
// reported (a queue reported but found empty costs one Recv) and those
// it polls every time, so the cost of a wake-up does not grow with the
// number of idle ports. Polled every time are queues without a PollFD
// (or whose descriptor epoll refused) and queues whose Recv also pushes
// out transmits an earlier Send left queued (Capabilities.RecvFlushesTx:
// AF_XDP), so a quiet flow's last frames do not wait for traffic that may
// never come. And once a second (sweepInterval) a PMD polls every queue
// anyway, asleep or busy, because Recv also does a device's housekeeping
// (an AF_PACKET ring resize waiting for the ring to drain, a socket error
// to clear), and calls Housekeep on every queue whose device has upkeep
// that Recv does only every so many calls (netdev.Housekeeper: the
// AF_PACKET ring size), so an idle ring still shrinks and follows a new
// budget or userspace-sock-buf-size within a sweep or two. Queues without a PollFD bound the sleep to Config.MaxSleep
// (pmd-maxsleep, default 1 ms); otherwise a PMD wakes at least every
// IdleWakeup (100 ms) to publish statistics, and such a wake-up polls
// only the queues polled every time (and the sweep, when due). An idle
// switch uses close to no CPU, and a packet reaching a sleeping PMD is
// forwarded about 0.2 ms later.
//
// A busy PMD with at most directPollMax (32) queues polls every one of
// them each iteration: an empty ring costs a memory read, less than the
// system call that would say which are ready. With more, it polls the
// queues epoll reported and not yet found empty, and asks epoll without
// blocking once per iteration for more, so idle ports cost it nothing
// either. Of the queues it polls every iteration, it polls those whose
// Recv is a system call even when empty (Capabilities.RecvSyscall: tap,
// recvmmsg) less often while they stay empty: the skip doubles per empty
// poll up to 31 iterations and ends at the first packet (see
// maxIdleShift); after a sleep every queue starts without a skip.
//
// # Changing the PMDs at run time
//
// SetPMDConfig applies pmd-cpu-mask, the number of unpinned PMDs,
// pmd-maxsleep and pmd-rxq-assign with ports, devices and flows in
// place. Max-sleep is an atomic the PMDs read before each sleep; a new
// assignment algorithm alone moves queues as RebalanceRxQueues does. A
// new set of PMDs is a switch-over under portMu: every PMD and
// slow-upcall goroutine is stopped and waited for (devices stay open and
// keep arriving packets queued); with no PMD running, the non-PMD mutex
// and flowMu are taken (in lock order) to give flows and ports counter
// slots for the new PMD count (ports are republished as new immutable
// objects with their totals carried over; a flow's slot slice is
// replaced behind its atomic pointer) and to decide again which ports'
// transmit queues are shared; every receive queue is assigned anew by
// load; then the PMDs start on new plans and SetPMDConfig returns once
// each runs its plan. Because the old PMDs have all stopped before any
// new plan is published, no receive queue is ever polled by two PMDs. A
// PMD whose index and CPU stay is kept (pool, EMC, counters); others
// are retired: their counters go to RetiredPMDStats (and Stats), and
// packets left in their slow-upcall queues are dropped and counted as
// lost upcalls. All new PMDs are made before any stops, so an invalid
// configuration or a failed allocation leaves the old ones running.
//
// # Flows: one writer, lock-free readers
//
// Flow changes (Put, Del, FlowModify, FlowDelete, Flush, idle expiry,
// installs from upcalls) are serialised by one mutex. PMDs read the
// classifier without locks: the list of subtables is an immutable slice behind an atomic
// pointer; each subtable is an open-addressing table of atomic flow
// pointers, filled by single atomic stores, emptied by marking a flow dead
// (it stays as a tombstone), and rebuilt by publishing a new table. A
// dead flow is never used: the classifier and the EMC check the mark.
// Subtables are searched in the order their masks appeared, which makes
// the result deterministic even for overlapping megaflows (the older mask
// wins). Flow statistics have one cache-line slot per PMD, written only
// by that PMD; readers sum them.
//
// Revalidation is by re-translation, as in Open vSwitch: the layer above
// walks Dump, whose entries carry a FlowHandle and the full key the
// flow was installed for (FlowEntry.Unmasked: what re-translation starts
// from, and what dump-flows prints with the mask), or Handles and
// FlowGet one flow at a time; Actions.Equal says whether re-translation
// changed anything; FlowModify swaps a flow's actions (one atomic store:
// PMDs see the old list or the new) and FlowDelete removes it.
// Statistics deltas are the caller's business. The revalidator
// goroutine deletes flows idle for Config.MaxIdle (10 s). Every megaflow
// matches recirc_id exactly (the datapath forces it), as in Open
// vSwitch.
//
// # Actions
//
// Actions (actions.go) are Open vSwitch's datapath actions, formatted as
// its netdev datapath prints them (format.go, with the megaflow keys):
// output, push/pop VLAN, set and masked set of one key attribute (eth,
// ipv4, ipv6, tcp, udp, sctp, icmp, icmpv6, arp, nd, skb_mark,
// skb_priority; set.go rewrites the frame and the buffer's key, with
// incremental checksums), recirc, hash, userspace, clone, check_pkt_len,
// meter, trunc, ct and ct_clear. A list is immutable once built; what does not fit in
// an Action (set values, a userspace cookie, nested lists) hangs off
// pointers built with it, so executing allocates nothing. Nested lists
// run recursively on the same execution context: the original packet
// goes to the last action that needs it, the earlier ones get copies.
//
// # Connection tracking
//
// The datapath owns one connection tracker (dpif/conntrack), made and
// started by New and closed by Close after the PMDs have stopped
// (Config.Tracker substitutes one the caller owns, for tests);
// Conntrack returns it to the control plane. The ct action hands the
// parsed packet (key and header offsets valid) and the action's
// conntrack.Request to its Execute: the request is built once with the
// flow's actions and only read, by every PMD at once. The tracker sets
// the key's conntrack fields (and, under NAT, rewrites the packet and
// its key); they are metadata, so the recirculation that normally
// follows keeps them for the next pass's lookup. ct_clear zeroes them.
// A received packet has none. IP fragments reaching a ct action go
// through the datapath's fragment reassembler (dpif/ipf, ct_ipf.go)
// first: held until their set is complete, tracked reassembled, then
// sent on as the original fragments with the conntrack fields and NAT
// of the whole.
//
// Packet metadata (in_port, recirc_id, dp_hash, pkt_mark, skb_priority,
// conntrack, tunnel: the Key's fields before EtherType) lives in the
// buffer's key. A received packet starts with all of it zero; Execute
// starts from zero too, ExecuteKey from the caller's. Recirculation
// keeps it: the packet is parsed again (metadata kept), gets the new
// recirc_id and is classified again on the same context (PMD: EMC,
// megaflows, upcall; non-PMD: megaflows, upcall), at most
// maxRecircDepth (6) times per packet, with one Upcall per depth. Slow
// upcalls and userspace packets carry the key with them.
//
// A userspace action copies the packet, with its cookie and key, into
// the PMD's slow queue (or, from Execute, delivers it after the call's
// locks are released); the upcall handler gets it in UserspaceAction if
// it implements UserspaceHandler.
//
// Datapath meters (meter.go: MeterSet, MeterDel, MeterStats) are shared
// by every PMD without locks: each band is a token bucket held in one
// atomic (its theoretical arrival time), charged with one
// compare-and-swap per packet; counters are atomic adds.
//
// # Upcalls
//
// The handler runs synchronously on the PMD that missed, concurrently on
// several PMDs, and must not block. It answers with a megaflow (mask,
// actions, tags) to install plus execute, actions to execute only, drop,
// or UpcallSlow: then the packet is copied into the PMD's bounded slow
// queue and the handler's SlowUpcall runs on that PMD's slow goroutine,
// where it may block (Close waits for it). A full slow queue, or no
// handler at all, drops the packet and counts a lost upcall.
//
// # Ownership of packets
//
//   - A buffer received by a PMD comes from that PMD's pool and stays on
//     that PMD: it is executed and either sent (Send takes ownership and
//     returns it to the pool on the same goroutine) or put back. Copies
//     for all but the last output come from the same pool.
//   - The handler sees Upcall.Key and Upcall.Packet read-only, only during
//     the call; it must not keep the Upcall.
//   - Execute copies the caller's frame into the non-PMD pool; the caller
//     keeps its slice. Slow upcalls likewise work on copies.
//   - After PortAdd (or PortsAdd, for the devices it added) the datapath
//     owns the device: PortDel, PortsDel and Close close it, after every
//     PMD has stopped using it. A device PortsAdd reports an error for
//     stays the caller's.
//
// # Port changes in bulk
//
// PortsAdd and PortsDel change many ports in one step: one new immutable
// port table, one plan per PMD, one wait for every PMD to take it (and,
// for PortsDel, one pass over the flows), instead of one each per port.
// PortsDel and Close close the devices concurrently (CloseDevices, at
// most MaxParallelDeviceOps at a time; closing a packet socket waits for
// an RCU grace period in the kernel); PortsDel does so after releasing
// portMu, since no PMD, sender or table refers to them any more. Parallel
// is the same bounded pool for callers opening devices in bulk.
//
// # Counters
//
// Nothing on the packet path takes a lock to count. PMD counters are
// private and published with atomic stores (PMDStats). Per port, each PMD
// and the non-PMD context has its own cache-line slot of drop and offload
// counters, added to atomically where the (rare) event happens, summed by
// PortStats and Ports (PortInfo.DatapathStats): pool exhaustion on
// receive, lost upcalls and output to a missing port are charged to the
// input port; missing copies, unresolvable offloads and segmentation to
// the output port. Per receive queue, the polling PMD adds each batch's
// packets and busy time (one clock read per non-empty batch); the
// revalidator samples busy time every Config.RxqInterval, and a queue's
// load is its share of the last RxqIntervals samples (RxQueueStats, for
// pmd-rxq-show, and RebalanceRxQueues).
//
// # Goroutines and lock order
//
// Every exported method is safe from any goroutine. Locks, outermost
// first: portMu (port changes, Close, rx queue moves) -> the non-PMD
// mutex (Execute, slow upcall execution) -> flowMu (the flow writer) -> a
// shared transmit queue's mutex (held only around Send). The rx queue
// load mutex (load.mu) is taken after portMu, and nothing is taken under
// it; nor under the meter mutex (meter changes), taken alone. The
// non-PMD context runs the upcall handler for recirculated misses under
// its mutex (Execute's packets), so a handler must not call Execute
// from Upcall. PMDs hold no lock while classifying and call the upcall handler
// holding none, so a handler may call Put, FlowModify and FlowDelete.
// SetPMDConfig and Close hold portMu while they wait for the slow-upcall
// goroutines: a SlowUpcall handler must not call them, nor anything else
// that takes portMu (PortAdd, PortsAdd, PortDel, PortsDel, Ports, the rx
// queue methods).
package dpif

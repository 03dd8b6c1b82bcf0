// Package upcall is the datapath's upcall handler and revalidator for
// OpenFlow bridges, after Open vSwitch's ofproto-dpif-upcall.
//
// A Handler is the dpif.UpcallHandler of one datapath. For a miss it maps
// the datapath input port to the bridge and OpenFlow port through a
// Ports snapshot published atomically (no lock per upcall), translates
// the flow (ofproto/xlate) and answers UpcallInstall with the megaflow
// (the translation's wildcards, in_port exact), or UpcallSlow when the
// translation learned flows (the slow path applies them). A flow that
// must be handled in userspace (ICMP/ARP/ND rewrites, as Open vSwitch)
// is installed with a userspace(slow_path)
// action: each of its packets is translated and executed from the
// userspace hook.
//
// The revalidator goroutine keeps the installed flows right without tags:
// when a bridge's tables, groups, ports or MAC table change (Handler.Changed,
// or a MAC table's Seq) and every RevalidateInterval anyway, it dumps the
// datapath's flows one handle at a time, translates each again (only the
// flows whose translation may have changed), changes the actions of the
// flows whose actions changed, deletes those whose new translation needs
// bits their mask lacks, failed or must be slow-pathed, and credits each
// flow's statistics delta to the rules and groups its translation hit
// (rule counters and used times, for idle timeouts; NORMAL's MAC
// entries, for aging and for learning from traffic that causes no
// upcall).
//
// A controller action is a userspace datapath action naming a frozen state
// (xlate.RecircTable, one per Handler): the megaflow stays cached and
// UserspaceAction turns each packet that takes it into a packet-in. A
// recirculated packet (recirc_id set) resumes its frozen state: after
// ct(table=N), with the conntrack fields the datapath's tracker set in
// its key, which the resumed translation's lookups read (and so the
// megaflow of the second pass matches them, with the recirc_id).
//
// # Wiring (the ofproto core)
//
//	h := upcall.New(dp, upcall.Config{})
//	dp.SetUpcallHandler(h)
//	h.SetPorts(ports)  // after every port change: datapath port -> bridge, port
//	h.Changed()        // after every flow, group, meter or setting change
//	h.PacketOut(dp, br, inPort, frame, actions)
//	h.Resume(dp, br, continuation, frame)
//	h.Close()
//
// The revalidator also ages each bridge's MAC table (after crediting the
// traffic of installed flows to its entries): the bridge need not.
//
// # Goroutines
//
// Upcall runs on PMD goroutines, concurrently; SlowUpcall on the PMDs'
// slow-path goroutines; the revalidator on its own goroutine. Each keeps
// its own xlate.Translator (from a sync.Pool). SetPorts and Changed may
// be called from any goroutine and never block. An upcall takes no lock
// of the handler's: the port map is an atomic snapshot; NORMAL takes its
// MAC table's lock, and a controller action or a recirculation the frozen
// state table's. Revalidate (a round, on the caller's goroutine) calls
// Bridge.Learn and the datapath's flow functions: do not call it holding
// a lock those take.
package upcall

package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"gvs/dpif"
	"gvs/metrics/source"
	"gvs/netdev"
	"gvs/packet"
)

// SwitchCollector exports the datapath, its ports' devices, its PMDs and
// the bridges' MAC tables. Collect reads published counters only: the
// PMDs' atomic statistics, the devices' Stats/Link/Status (safe from any
// goroutine by the netdev contract) and the MAC tables' counters (under
// each bridge's mutex, briefly, as fdb/show does); it never takes a lock a
// PMD takes.
type SwitchCollector struct {
	sw    source.Switch
	descs descSet

	ifRxPackets, ifRxBytes, ifTxPackets, ifTxBytes *prometheus.Desc
	ifDrops, ifErrors, ifDatapathDrops, ifXDPDrops *prometheus.Desc
	ifSegmented, ifSegments, ifCsumCompleted       *prometheus.Desc
	ifSockBuf, ifSockBufRequest                    *prometheus.Desc
	ifLinkUp, ifAdminUp, ifSpeed, ifMTU, ifRxQs    *prometheus.Desc
	ifRxRing, ringBudget, ringReserved             *prometheus.Desc

	pmdBusy, pmdIdle, pmdSleep, pmdIterations        *prometheus.Desc
	pmdRxPackets, pmdRxBatches, pmdTxPackets         *prometheus.Desc
	pmdTxBatches, pmdEMCHits, pmdMegaflowHits        *prometheus.Desc
	pmdSubtableLookups                               *prometheus.Desc
	pmdMisses, pmdUpcalls, pmdLostUpcalls, pmdDrops  *prometheus.Desc
	pmdParsed, pmdRxQueues, pmdPoolFree, pmdPoolSize *prometheus.Desc

	dpUp, dpFlows, dpSubtables, dpPMDs, dpUptime *prometheus.Desc

	ctConns, ctMaxConns, ctCreated, ctExpired, ctDroppedFull, ctInvalid *prometheus.Desc

	macEntries, macMax, macLearned, macExpired, macEvicted, macMoved *prometheus.Desc
}

// NewSwitchCollector returns a collector reading sw on every scrape.
func NewSwitchCollector(sw source.Switch) *SwitchCollector {
	c := &SwitchCollector{sw: sw}
	d := &c.descs
	il := interfaceLabels
	c.ifRxPackets = d.add("interface_rx_packets_total", "Packets the datapath received from the interface's device.", il)
	c.ifRxBytes = d.add("interface_rx_bytes_total", "Bytes the datapath received from the interface's device.", il)
	c.ifTxPackets = d.add("interface_tx_packets_total", "Packets the datapath transmitted on the interface's device.", il)
	c.ifTxBytes = d.add("interface_tx_bytes_total", "Bytes the datapath transmitted on the interface's device.", il)
	c.ifDrops = d.add("interface_drops_total",
		"Packets lost at the interface, by where: kernel_rx = dropped by the kernel before gvs read them "+
			"(AF_PACKET tp_drops: socket buffer or ring full; AF_XDP: no fill ring chunk, rx ring full, which "+
			"gvs_interface_xdp_drops_total splits by reason); "+
			"tx = frames the transmit path could not queue (ring or socket buffer full, too large); "+
			"datapath_rx = packets received on the interface that the datapath dropped (no buffer, lost upcall, "+
			"output to a missing port); datapath_tx = packets for the interface the datapath dropped before "+
			"transmit (no buffer for a copy or segment, unresolvable offload). "+
			"gvs_interface_datapath_drops_total splits the datapath ones by reason.", il, "where")
	c.ifDatapathDrops = d.add("interface_datapath_drops_total",
		"Datapath drops charged to the interface, by reason: rx_no_buffer = receive calls that found the PMD's "+
			"buffer pool empty; rx_invalid = received packets dropped before classification; lost_upcall = misses "+
			"with no handler or a full slow-path queue; no_port = outputs to a port that no longer exists "+
			"(charged to the input interface); tx_no_buffer = copies or GSO segments for the interface that found "+
			"the pool empty; tx_offload = frames whose GSO or checksum request could not be done in software.", il, "reason")
	c.ifXDPDrops = d.add("interface_xdp_drops_total",
		"AF_XDP interfaces only: the kernel's XDP_STATISTICS summed over the interface's sockets, by reason: "+
			"rx_dropped = frames the kernel could not place (no fill ring chunk, frame larger than a chunk); "+
			"rx_ring_full = frames dropped because the rx ring was full (gvs did not drain it in time); "+
			"fill_ring_empty = times the kernel found the fill ring empty (in copy and generic mode the frames "+
			"lost then are also in rx_dropped); rx_invalid_descs, tx_invalid_descs = descriptors the kernel rejected. "+
			"rx_dropped and rx_ring_full (and fill_ring_empty in zero-copy mode) make up the interface's where=\"kernel_rx\" drops.", il, "reason")
	c.ifSegmented = d.add("interface_tx_segmented_packets_total", "GSO frames cut into segments in software for the interface.", il)
	c.ifSegments = d.add("interface_tx_segments_total", "Segments made in software from GSO frames for the interface.", il)
	c.ifCsumCompleted = d.add("interface_tx_checksums_completed_total", "Partial checksums completed in software for the interface.", il)
	c.ifErrors = d.add("interface_errors_total", "Malformed or oversized frames (rx) and transmit failures (tx).", il, "direction")
	c.ifSockBuf = d.add("interface_socket_buffer_bytes", "Effective socket buffer size as read back from the kernel (SO_RCVBUF, SO_SNDBUF).", il, "direction")
	c.ifSockBufRequest = d.add("interface_socket_buffer_request_bytes", "userspace-sock-buf-size requested for the interface; 0 means kernel defaults.", il)
	c.ifLinkUp = d.add("interface_link_up", "1 when the device has carrier.", il)
	c.ifAdminUp = d.add("interface_admin_up", "1 when the device is administratively up.", il)
	c.ifSpeed = d.add("interface_link_speed_bytes", "Link speed in bytes per second, when the device reports one.", il)
	c.ifMTU = d.add("interface_mtu_bytes", "Device MTU.", il)
	c.ifRxQs = d.add("interface_rx_queues", "Receive queues the datapath polls on the device.", il)
	c.ifRxRing = d.add("interface_rx_ring_bytes",
		"Memory of the interface's receive rings in effect, summed over its queues (AF_PACKET system ports only: "+
			"they start small, grow under pressure and shrink when idle, within gvs_rx_ring_budget_bytes).", il)
	c.ringBudget = d.add("rx_ring_budget_bytes", "Budget for all receive rings together (other_config:gvs-rx-ring-budget, "+
		"or 1/16 of the machine's memory within 64 MiB to 4 GiB).", nil)
	c.ringReserved = d.add("rx_ring_reserved_bytes", "Receive ring memory reserved from the budget: every ring's minimum "+
		"(always granted, so it may exceed the budget) and the growth granted within it.", nil)

	pl := pmdLabels
	c.pmdBusy = d.add("pmd_busy_seconds_total", "Time the PMD spent in poll iterations that received packets.", pl)
	c.pmdIdle = d.add("pmd_idle_seconds_total", "Time the PMD spent in iterations that received nothing, sleeping included.", pl)
	c.pmdSleep = d.add("pmd_sleep_seconds_total", "Part of the idle time the PMD slept in epoll_wait(2).", pl)
	c.pmdIterations = d.add("pmd_iterations_total", "Poll loop iterations.", pl)
	c.pmdRxPackets = d.add("pmd_rx_packets_total", "Packets the PMD received.", pl)
	c.pmdRxBatches = d.add("pmd_rx_batches_total", "Non-empty receive batches; rx_packets/rx_batches is the average batch size.", pl)
	c.pmdTxPackets = d.add("pmd_tx_packets_total", "Packets the PMD handed to devices.", pl)
	c.pmdTxBatches = d.add("pmd_tx_batches_total", "Transmit batches the PMD handed to devices.", pl)
	c.pmdEMCHits = d.add("pmd_emc_hits_total", "Packets that hit the exact-match cache.", pl)
	c.pmdMegaflowHits = d.add("pmd_megaflow_hits_total", "Packets that missed the EMC and hit a megaflow.", pl)
	c.pmdSubtableLookups = d.add("pmd_subtable_lookups_total",
		"Megaflow classifier subtables probed for the megaflow hits (a hit in the n-th subtable counts n); "+
			"divided by gvs_pmd_megaflow_hits_total it is ovs-appctl's avg. subtable lookups per megaflow hit.", pl)
	c.pmdMisses = d.add("pmd_misses_total", "Packets that matched no flow.", pl)
	c.pmdUpcalls = d.add("pmd_upcalls_total", "Misses handed to the upcall handler.", pl)
	c.pmdLostUpcalls = d.add("pmd_lost_upcalls_total", "Misses dropped: no handler, or the slow-path queue was full.", pl)
	c.pmdDrops = d.add("pmd_drops_total",
		"Packets the datapath dropped, by where: rx = received and dropped before classification; "+
			"tx = outputs dropped (missing port, no buffer for a copy, unsupported offload).", pl, "where")
	c.pmdParsed = d.add("pmd_parsed_packets_total", "Received packets by how far the parser got.", pl, "status")
	c.pmdRxQueues = d.add("pmd_rx_queues", "Receive queues assigned to the PMD.", pl)
	c.pmdPoolFree = d.add("pmd_pool_free_buffers", "Free buffers in the PMD's packet pool.", pl)
	c.pmdPoolSize = d.add("pmd_pool_buffers", "Size of the PMD's packet pool.", pl)

	c.dpUp = d.add("datapath_up", "1 when the datapath is running.", nil)
	c.dpFlows = d.add("datapath_flows", "Megaflows installed in the datapath.", nil)
	c.dpSubtables = d.add("datapath_subtables", "Megaflow classifier subtables (distinct masks).", nil)
	c.dpPMDs = d.add("datapath_pmds", "PMD threads.", nil)
	c.dpUptime = d.add("datapath_uptime_seconds", "Time since the datapath (re)started.", nil)

	c.ctConns = d.add("conntrack_connections", "Connections the datapath's connection tracker holds (ct-get-nconns).", nil)
	c.ctMaxConns = d.add("conntrack_max_connections", "The tracker's maximum number of connections (ct-set-maxconns).", nil)
	c.ctCreated = d.add("conntrack_created_total", "Connections committed (created) by the ct action.", nil)
	c.ctExpired = d.add("conntrack_expired_total", "Connections removed because their timeout passed.", nil)
	c.ctDroppedFull = d.add("conntrack_dropped_full_total",
		"New connections refused because the table (ct-set-maxconns) or their zone (ct-set-limits) was at its limit: "+
			"under a flood of new connections this grows while established ones keep working.", nil)
	c.ctInvalid = d.add("conntrack_invalid_total", "Packets the tracker marked +inv (malformed, out of window, refused).", nil)

	bl := bridgeLabels
	c.macEntries = d.add("mac_table_entries", "Addresses in the bridge's MAC table.", bl)
	c.macMax = d.add("mac_table_max_entries", "The bridge's mac-table-size.", bl)
	c.macLearned = d.add("mac_learned_total", "Addresses learned.", bl)
	c.macExpired = d.add("mac_expired_total", "Addresses aged out after mac-aging-time.", bl)
	c.macEvicted = d.add("mac_evicted_total", "Addresses evicted because the table was full.", bl)
	c.macMoved = d.add("mac_moved_total", "Addresses seen moving to another port.", bl)
	return c
}

// Describe implements prometheus.Collector.
func (c *SwitchCollector) Describe(ch chan<- *prometheus.Desc) { c.descs.describe(ch) }

// Collect implements prometheus.Collector.
func (c *SwitchCollector) Collect(ch chan<- prometheus.Metric) {
	bridges := c.sw.Bridges()
	for _, br := range bridges {
		if br.OpenFlow != nil {
			c.collectMACs(ch, br)
		}
	}
	if b, ok := source.RxRingBudgetOf(c.sw); ok {
		ch <- gauge(c.ringBudget, float64(b.Limit))
		ch <- gauge(c.ringReserved, float64(b.Reserved))
	}
	dp := c.sw.Datapath()
	if dp == nil {
		ch <- boolGauge(c.dpUp, false)
		return
	}
	ch <- boolGauge(c.dpUp, true)
	st := dp.Stats()
	ch <- gauge(c.dpFlows, float64(st.Flows))
	ch <- gauge(c.dpSubtables, float64(st.Subtables))
	ch <- gauge(c.dpPMDs, float64(dp.NumPMDs()))
	ch <- gauge(c.dpUptime, st.Uptime.Seconds())
	if ct := dp.Conntrack(); ct != nil {
		cs := ct.Stats()
		ch <- gauge(c.ctConns, float64(cs.Conns))
		ch <- gauge(c.ctMaxConns, float64(ct.MaxConns()))
		ch <- counter(c.ctCreated, cs.Created)
		ch <- counter(c.ctExpired, cs.Expired)
		ch <- counter(c.ctDroppedFull, cs.DroppedFull)
		ch <- counter(c.ctInvalid, cs.Invalid)
	}
	for _, p := range dp.PMDStats() {
		c.collectPMD(ch, p)
	}
	names := portNames(bridges)
	for _, p := range dp.Ports() {
		n := names[p.No] // zero for a port no bridge claims
		c.collectInterface(ch, p, n.bridge, n.port)
	}
}

// namedPort is a datapath port's names in the database.
type namedPort struct {
	port   source.Port
	bridge string
}

// portNames maps datapath port numbers to the database's names.
func portNames(bridges []source.Bridge) map[uint32]namedPort {
	m := map[uint32]namedPort{}
	for _, br := range bridges {
		for _, p := range br.Ports {
			if p.InDatapath {
				m[p.DPPort] = namedPort{port: p, bridge: br.Name}
			}
		}
	}
	return m
}

func (c *SwitchCollector) collectInterface(ch chan<- prometheus.Metric, p dpif.PortInfo, bridge string, n source.Port) {
	typ := n.Type
	if typ == "" {
		typ = p.Type
	}
	iface := n.Interface
	if iface == "" {
		iface = p.Name
	}
	port := n.Port
	if port == "" {
		port = iface
	}
	l := []string{bridge, port, iface, typ}
	dev := p.Device
	s := dev.Stats()
	ch <- counter(c.ifRxPackets, s.RxPackets, l...)
	ch <- counter(c.ifRxBytes, s.RxBytes, l...)
	ch <- counter(c.ifTxPackets, s.TxPackets, l...)
	ch <- counter(c.ifTxBytes, s.TxBytes, l...)
	ch <- counter(c.ifDrops, s.RxKernelDrops, with(l, "kernel_rx")...)
	ch <- counter(c.ifDrops, s.TxDrops, with(l, "tx")...)
	ds := p.DatapathStats
	ch <- counter(c.ifDrops, ds.RxNoBuffer+ds.RxDrops+ds.LostUpcalls+ds.TxNoPort, with(l, "datapath_rx")...)
	ch <- counter(c.ifDrops, ds.TxNoBuffer+ds.TxOffloadDrops, with(l, "datapath_tx")...)
	for _, r := range []struct {
		reason string
		v      uint64
	}{
		{"rx_no_buffer", ds.RxNoBuffer}, {"rx_invalid", ds.RxDrops}, {"lost_upcall", ds.LostUpcalls},
		{"no_port", ds.TxNoPort}, {"tx_no_buffer", ds.TxNoBuffer}, {"tx_offload", ds.TxOffloadDrops},
	} {
		ch <- counter(c.ifDatapathDrops, r.v, with(l, r.reason)...)
	}
	c.collectXDPDrops(ch, dev, l)
	ch <- counter(c.ifSegmented, ds.TxSegmented, l...)
	ch <- counter(c.ifSegments, ds.TxSegments, l...)
	ch <- counter(c.ifCsumCompleted, ds.TxCsumCompleted, l...)
	ch <- counter(c.ifErrors, s.RxErrors, with(l, "rx")...)
	ch <- counter(c.ifErrors, s.TxErrors, with(l, "tx")...)

	bufs := source.SocketBuffersOf(dev, n.SocketBufferRequest)
	if bufs.Receive > 0 {
		ch <- gauge(c.ifSockBuf, float64(bufs.Receive), with(l, "receive")...)
	}
	if bufs.Send > 0 {
		ch <- gauge(c.ifSockBuf, float64(bufs.Send), with(l, "send")...)
	}
	ch <- gauge(c.ifSockBufRequest, float64(bufs.Requested), l...)

	link := dev.Link()
	ch <- boolGauge(c.ifLinkUp, link.CarrierUp, l...)
	ch <- boolGauge(c.ifAdminUp, link.AdminUp, l...)
	if link.SpeedMbps > 0 {
		ch <- gauge(c.ifSpeed, float64(link.SpeedMbps)*1e6/8, l...)
	}
	ch <- gauge(c.ifMTU, float64(dev.MTU()), l...)
	ch <- gauge(c.ifRxQs, float64(len(p.RxQueuePMDs)), l...)
	if b, ok := source.RxRingBytesOf(dev); ok {
		ch <- gauge(c.ifRxRing, float64(b), l...)
	}
}

// xdpDropReasons maps the AF_XDP custom statistics that count lost frames
// or rejected descriptors to gvs_interface_xdp_drops_total's reason.
// (xsk_tx_ring_empty_descs is left out: every transmit call ends with the
// ring empty, it is no drop.)
var xdpDropReasons = [...]struct{ stat, reason string }{
	{"xsk_rx_dropped", "rx_dropped"},
	{"xsk_rx_ring_full", "rx_ring_full"},
	{"xsk_rx_fill_ring_empty_descs", "fill_ring_empty"},
	{"xsk_rx_invalid_descs", "rx_invalid_descs"},
	{"xsk_tx_invalid_descs", "tx_invalid_descs"},
}

// collectXDPDrops exports the XDP drop counters of a device that has
// them (source.CustomStatsOf); other devices get no such series.
func (c *SwitchCollector) collectXDPDrops(ch chan<- prometheus.Metric, dev netdev.Device, l []string) {
	cs := source.CustomStatsOf(dev)
	for _, r := range xdpDropReasons {
		if v, ok := cs[r.stat]; ok {
			ch <- counter(c.ifXDPDrops, v, with(l, r.reason)...)
		}
	}
}

func (c *SwitchCollector) collectPMD(ch chan<- prometheus.Metric, p dpif.PMDStats) {
	cpu := ""
	if p.CPU >= 0 {
		cpu = strconv.Itoa(p.CPU)
	}
	l := []string{strconv.Itoa(p.PMD), cpu}
	secs := func(ns uint64) float64 { return float64(ns) / 1e9 }
	ch <- prometheus.MustNewConstMetric(c.pmdBusy, prometheus.CounterValue, secs(p.BusyNs), l...)
	ch <- prometheus.MustNewConstMetric(c.pmdIdle, prometheus.CounterValue, secs(p.IdleNs), l...)
	ch <- prometheus.MustNewConstMetric(c.pmdSleep, prometheus.CounterValue, secs(p.SleepNs), l...)
	ch <- counter(c.pmdIterations, p.Iterations, l...)
	ch <- counter(c.pmdRxPackets, p.Packets, l...)
	ch <- counter(c.pmdRxBatches, p.Batches, l...)
	ch <- counter(c.pmdTxPackets, p.TxPackets, l...)
	ch <- counter(c.pmdTxBatches, p.TxBatches, l...)
	ch <- counter(c.pmdEMCHits, p.EMCHits, l...)
	ch <- counter(c.pmdMegaflowHits, p.MegaflowHits, l...)
	ch <- counter(c.pmdSubtableLookups, p.SubtableLookups, l...)
	ch <- counter(c.pmdMisses, p.Misses, l...)
	ch <- counter(c.pmdUpcalls, p.Upcalls, l...)
	ch <- counter(c.pmdLostUpcalls, p.LostUpcalls, l...)
	ch <- counter(c.pmdDrops, p.RxDrops, with(l, "rx")...)
	ch <- counter(c.pmdDrops, p.TxDrops, with(l, "tx")...)
	for st := range packet.NumStatus {
		ch <- counter(c.pmdParsed, p.Parse[st], with(l, packet.Status(st).String())...)
	}
	ch <- gauge(c.pmdRxQueues, float64(p.RxQueues), l...)
	ch <- gauge(c.pmdPoolFree, float64(p.PoolFree), l...)
	ch <- gauge(c.pmdPoolSize, float64(p.PoolSize), l...)
}

func (c *SwitchCollector) collectMACs(ch chan<- prometheus.Metric, br source.Bridge) {
	s := br.OpenFlow.MACStats()
	ch <- gauge(c.macEntries, float64(s.Entries), br.Name)
	ch <- gauge(c.macMax, float64(s.Max), br.Name)
	ch <- counter(c.macLearned, s.Learned, br.Name)
	ch <- counter(c.macExpired, s.Expired, br.Name)
	ch <- counter(c.macEvicted, s.Evicted, br.Name)
	ch <- counter(c.macMoved, s.Moved, br.Name)
}

// with returns labels plus one more, never sharing labels' array.
func with(labels []string, v string) []string {
	return append(labels[:len(labels):len(labels)], v)
}

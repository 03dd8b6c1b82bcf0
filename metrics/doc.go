// Package metrics exports gvs's counters to Prometheus (client_golang):
//
//   - SwitchCollector: per interface (labels bridge, port, interface,
//     type) packets and bytes, drops split by where they happened
//     (gvs_interface_drops_total{where="kernel_rx"|"tx"|"datapath_rx"|
//     "datapath_tx"}: kernel socket or ring drops, which Open vSwitch
//     users never saw, transmit queue drops, and the datapath's own drops
//     of packets received on or meant for the interface, from
//     dpif.PortInfo.DatapathStats; gvs_interface_datapath_drops_total
//     splits the latter by reason; AF_XDP interfaces also get
//     gvs_interface_xdp_drops_total{reason="rx_dropped"|"rx_ring_full"|
//     "fill_ring_empty"|"rx_invalid_descs"|"tx_invalid_descs"} from the
//     device's custom statistics, source.CustomStatsOf), software
//     segmentation and checksum
//     counters, errors, effective and requested socket buffers, receive
//     ring memory (gvs_interface_rx_ring_bytes, system ports), link
//     state, MTU; the receive-ring budget (gvs_rx_ring_budget_bytes) and
//     what is reserved from it (gvs_rx_ring_reserved_bytes); per PMD (labels pmd, cpu) busy/idle/sleep seconds,
//     packets, batches, EMC hits, megaflow hits (and the classifier
//     subtables probed for them), misses, upcalls, lost
//     upcalls, datapath drops (gvs_pmd_drops_total{where="rx"|"tx"}),
//     parse results, assigned receive queues, buffer pool; datapath flows
//     and subtables; the datapath's connection tracker
//     (gvs_conntrack_connections, _max_connections, _created_total,
//     _expired_total, _dropped_full_total: new connections refused at the
//     table's or a zone's limit, _invalid_total: packets marked +inv);
//     MAC table size and learned/expired/evicted/moved per
//     bridge.
//   - ReconcilerCollector: reconciler passes, errors, pass durations
//     (source.Reconciler, which the bridge reconciler updates).
//   - OVSDBCollector: connections, monitors, transactions by result,
//     commit durations (server.Server.Stats) and database file sizes.
//   - NewRegistry adds Go runtime and process metrics; Serve serves
//     /metrics for --metrics-address (PORT or :PORT mean loopback only).
//
// grafana-dashboard.json is an importable dashboard over these metrics
// (per-port throughput and drops, PMD load, datapath, receive rings and
// their budget, OVSDB).
//
// Collection never takes a lock on the packet path: collectors read what
// components publish (the PMDs' atomic counters, device Stats, atomic
// server and reconciler counters) when Prometheus scrapes. Collectors
// may run concurrently (parallel scrapes); they keep no state.
//
// Prometheus conventions: names start with gvs_, counters end in _total,
// units are base units in the name (_seconds, _bytes); `promtool check
// metrics` passes on the output (tested).
package metrics

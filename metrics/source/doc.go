// Package source holds what components publish for observability, with no
// dependency on Prometheus, so the packet path, the OVSDB server and the
// bridge reconciler can publish without importing a metrics library:
//
//   - Histogram: fixed-bucket duration histogram updated with atomic adds
//     (OVSDB commit durations, reconciler passes).
//   - Reconciler: the bridge reconciler's pass counters.
//   - Switch: the read-only view of the switch (datapath, bridges, the
//     database's port names) that package metrics and package appctl read;
//     CustomStatsOf reads a device's counters beyond netdev.Stats (afxdp:
//     XDP_STATISTICS) for metrics and the bridge's Interface.statistics.
//
// Contract: writers (Observe, RecordPass) and readers (Snapshot) may run on
// any goroutines at once; none takes a lock. A snapshot is a copy.
package source

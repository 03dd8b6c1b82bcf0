package metrics

import (
	"sort"

	"github.com/prometheus/client_golang/prometheus"

	"gvs/metrics/source"
	"gvs/ovsdb/server"
)

// OVSDBStats is what the OVSDB collector reads: *server.Server.
type OVSDBStats interface {
	Stats() server.Stats
}

// OVSDBCollector exports an OVSDB server's sessions, monitors,
// transactions and commit durations, and the on-disk size of its
// databases.
type OVSDBCollector struct {
	srv   OVSDBStats
	sizes map[string]func() int64
	descs descSet

	conns, accepted, monitors, txns, commit, size *prometheus.Desc
}

// NewOVSDBCollector reads srv on every scrape. sizes maps a database name
// to a function returning its file's size in bytes (negative: unknown, not
// exported); it may be nil. The functions run on the scraping goroutine.
func NewOVSDBCollector(srv OVSDBStats, sizes map[string]func() int64) *OVSDBCollector {
	c := &OVSDBCollector{srv: srv, sizes: sizes}
	d := &c.descs
	c.conns = d.add("ovsdb_connections", "Open client connections (sessions).", nil)
	c.accepted = d.add("ovsdb_connections_accepted_total", "Client connections served since start.", nil)
	c.monitors = d.add("ovsdb_monitors", "Active monitors, over all databases.", nil)
	c.txns = d.add("ovsdb_transactions_total",
		"Completed transactions by result: committed (changed the database), unchanged (succeeded without change), "+
			"error (an operation or the commit failed), canceled.", nil, "result")
	c.commit = d.add("ovsdb_commit_duration_seconds", "Duration of transactions that committed, storage write included.", nil)
	c.size = d.add("ovsdb_database_size_bytes", "Size of the database's file on disk.", nil, "database")
	return c
}

// Describe implements prometheus.Collector.
func (c *OVSDBCollector) Describe(ch chan<- *prometheus.Desc) { c.descs.describe(ch) }

// Collect implements prometheus.Collector.
func (c *OVSDBCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.srv.Stats()
	ch <- gauge(c.conns, float64(st.Sessions))
	ch <- counter(c.accepted, st.Accepted)
	ch <- gauge(c.monitors, float64(st.Monitors))
	ch <- counter(c.txns, st.Committed, "committed")
	ch <- counter(c.txns, st.Unchanged, "unchanged")
	ch <- counter(c.txns, st.Failed, "error")
	ch <- counter(c.txns, st.Canceled, "canceled")
	ch <- histogram(c.commit, st.CommitDuration)
	names := make([]string, 0, len(c.sizes))
	for name := range c.sizes {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if n := c.sizes[name](); n >= 0 {
			ch <- gauge(c.size, float64(n), name)
		}
	}
}

func histogram(d *prometheus.Desc, s source.HistogramSnapshot, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstHistogram(d, s.Count, s.Sum, s.Buckets, labels...)
}

// ReconcilerCollector exports the bridge reconciler's pass counters.
type ReconcilerCollector struct {
	r     *source.Reconciler
	descs descSet

	runs, errors, duration, lastSuccess *prometheus.Desc
}

// NewReconcilerCollector reads r on every scrape.
func NewReconcilerCollector(r *source.Reconciler) *ReconcilerCollector {
	c := &ReconcilerCollector{r: r}
	d := &c.descs
	c.runs = d.add("reconciler_runs_total", "Reconciliation passes (database to datapath).", nil)
	c.errors = d.add("reconciler_errors_total", "Passes that ended with an error.", nil)
	c.duration = d.add("reconciler_run_duration_seconds", "Duration of reconciliation passes.", nil)
	c.lastSuccess = d.add("reconciler_last_success_timestamp_seconds", "Unix time of the end of the last pass without error.", nil)
	return c
}

// Describe implements prometheus.Collector.
func (c *ReconcilerCollector) Describe(ch chan<- *prometheus.Desc) { c.descs.describe(ch) }

// Collect implements prometheus.Collector.
func (c *ReconcilerCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.r.Snapshot()
	ch <- counter(c.runs, s.Runs)
	ch <- counter(c.errors, s.Errors)
	ch <- histogram(c.duration, s.Duration)
	if !s.LastSuccess.IsZero() {
		ch <- gauge(c.lastSuccess, float64(s.LastSuccess.UnixNano())/1e9)
	}
}

package server

import (
	"sync/atomic"
	"time"

	"gvs/metrics/source"
	"gvs/ovsdb/db"
)

// Stats is a snapshot of the server's activity counters, for metrics.
// Counters count since New; gauges are the state at the call.
type Stats struct {
	// Sessions is the number of open client connections; Accepted counts
	// every connection served since New.
	Sessions int
	Accepted uint64
	// Monitors is the number of active monitors over all databases.
	Monitors int
	// Transactions by outcome: Committed changed the database;
	// Unchanged succeeded without changing anything (reads, no-op
	// updates, a wait that became true); Failed ended with an error
	// (including "abort" and constraint violations); Canceled blocked
	// transactions answered "canceled".
	Committed, Unchanged, Failed, Canceled uint64
	// CommitDuration: time from the start of the last run of a
	// committing transaction to the end of its commit, including what
	// the database's commit hook does (storage: the log write).
	CommitDuration source.HistogramSnapshot
}

// serverCounters are updated with atomic adds by session goroutines.
type serverCounters struct {
	accepted                               atomic.Uint64
	committed, unchanged, failed, canceled atomic.Uint64
	commitDuration                         *source.Histogram
}

func newServerCounters() serverCounters {
	return serverCounters{commitDuration: source.NewHistogram(nil)}
}

// countTxn records the outcome of a transaction that completed (not
// blocked) after running for d.
func (c *serverCounters) countTxn(res db.TxnResult, d time.Duration) {
	for _, r := range res.Results {
		if _, isErr := r.(*db.Error); isErr {
			c.failed.Add(1)
			return
		}
	}
	if res.Commit == nil {
		c.unchanged.Add(1)
		return
	}
	c.commitDuration.Observe(d)
	c.committed.Add(1)
}

// Stats returns the server's counters. It takes Server.mu and then, one at
// a time after releasing it, each database's registry lock briefly.
func (s *Server) Stats() Stats {
	st := Stats{
		Accepted:       s.counters.accepted.Load(),
		Committed:      s.counters.committed.Load(),
		Unchanged:      s.counters.unchanged.Load(),
		Failed:         s.counters.failed.Load(),
		Canceled:       s.counters.canceled.Load(),
		CommitDuration: s.counters.commitDuration.Snapshot(),
	}
	s.mu.Lock()
	st.Sessions = len(s.sessions)
	dbs := make([]*served, 0, len(s.dbs))
	for _, sdb := range s.dbs {
		dbs = append(dbs, sdb)
	}
	s.mu.Unlock()
	for _, sdb := range dbs {
		sdb.mu.Lock()
		st.Monitors += len(sdb.monitors)
		sdb.mu.Unlock()
	}
	return st
}

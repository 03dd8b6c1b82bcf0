package server

import (
	"fmt"
	"sort"
	"strings"

	"gvs/ovsdb/db"
)

// Reconnect drops every session, as ovsdb-server/reconnect does; clients
// reconnect on their own. comment is logged for each session.
func (s *Server) Reconnect(comment string) { s.reconnect(true, comment) }

// DisableMonitorCond makes "monitor_cond" and "monitor_cond_since" unknown
// methods from now on and drops every session, so that clients fall back
// to "monitor" (ovsdb-server/disable-monitor-cond). It cannot be undone,
// as in Open vSwitch.
func (s *Server) DisableMonitorCond() {
	s.monitorCondOff.Store(true)
	s.reconnect(true, "user ran ovsdb-server/disable-monitor-cond")
}

// monitorCondEnabled reports whether the conditional monitor methods are
// served.
func (s *Server) monitorCondEnabled() bool { return !s.monitorCondOff.Load() }

// MemoryUsage is memory/show's report in Open vSwitch's terms: "cells"
// (rows times columns, counting _uuid and _version), "atoms" (values in
// all rows), "monitors", "sessions" and "n-weak-refs", over every served
// database including _Server. Keys whose count is zero are left out, as
// ovsdb-server's simap_increase leaves them out, except "monitors" and
// "n-weak-refs", which it always puts.
func (s *Server) MemoryUsage() map[string]int {
	s.mu.Lock()
	dbs := make([]*served, 0, len(s.dbs))
	for _, sdb := range s.dbs {
		dbs = append(dbs, sdb)
	}
	nSessions := len(s.sessions)
	s.mu.Unlock()
	usage := map[string]int{"monitors": 0, "n-weak-refs": 0}
	cells, atoms, monitors := 0, 0, 0
	for _, sdb := range dbs {
		c, a := countCells(sdb.db)
		cells += c
		atoms += a
		sdb.mu.Lock()
		monitors += len(sdb.monitors)
		sdb.mu.Unlock()
	}
	increase := func(key string, n int) {
		if n != 0 {
			usage[key] += n
		}
	}
	increase("cells", cells)
	increase("atoms", atoms)
	increase("sessions", nSessions)
	usage["monitors"] = monitors
	return usage
}

// countCells counts a database's cells and atoms as ovsdb_get_memory_usage
// does: a row has a cell per schema column plus _uuid and _version, and an
// atom per key and per value in them.
func countCells(d *db.Database) (cells, atoms int) {
	schema := d.Schema()
	d.View(func(v db.View) {
		for name, t := range schema.Tables {
			nColumns := len(t.Columns) + 2
			v.Rows(name, func(r *db.Row) bool {
				cells += nColumns
				atoms += 2
				for _, datum := range r.Columns {
					atoms += len(datum.Keys) + len(datum.Values)
				}
				return true
			})
		}
	})
	return cells, atoms
}

// FormatMemoryUsage writes a usage report as Open vSwitch's memory module
// does: "key:value" pairs sorted by key, separated by spaces.
func FormatMemoryUsage(usage map[string]int) string {
	keys := make([]string, 0, len(usage))
	for k := range usage {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s:%d", k, usage[k])
	}
	return strings.Join(parts, " ")
}

// Schema returns the schema of the database served under name, or nil.
func (s *Server) Schema(name string) *db.Schema {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sdb := s.dbs[name]; sdb != nil {
		return sdb.schema
	}
	return nil
}

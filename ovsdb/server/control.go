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
// all rows), "monitors" (distinct shapes, as ovsdb-server shares them),
// "sessions" and "n-weak-refs", over every served database including
// _Server. Keys whose count is zero are left out, as
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
	usage := map[string]int{}
	cells, atoms, weakRefs := 0, 0, 0
	// ovsdb-server shares one monitor among sessions that monitor the
	// same tables, columns and selections, whatever the method and the
	// conditions: count those.
	monitors := map[string]struct{}{}
	for _, sdb := range dbs {
		c, a, w := countCells(sdb.db)
		cells += c
		atoms += a
		weakRefs += w
		sdb.mu.Lock()
		for m := range sdb.monitors {
			shape := m.shape
			if i := strings.IndexByte(shape, '|'); i >= 0 {
				shape = shape[i:] // without the version
			}
			monitors[sdb.name+shape] = struct{}{}
		}
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
	usage["monitors"] = len(monitors)
	usage["n-weak-refs"] = weakRefs
	return usage
}

// countCells counts a database's cells, atoms and weak references as
// ovsdb_get_memory_usage does: a row has a cell per schema column plus
// _uuid and _version, an atom per key and per value in them, and a weak
// reference per row it refers to weakly from each column.
func countCells(d *db.Database) (cells, atoms, weakRefs int) {
	schema := d.Schema()
	d.View(func(v db.View) {
		for name, t := range schema.Tables {
			nColumns := len(t.Columns) + 2
			var weak []*db.Column
			for _, c := range t.Columns {
				if isWeak(&c.Type.Key) || c.Type.Value != nil && isWeak(c.Type.Value) {
					weak = append(weak, c)
				}
			}
			v.Rows(name, func(r *db.Row) bool {
				cells += nColumns
				atoms += 2
				for _, datum := range r.Columns {
					atoms += len(datum.Keys) + len(datum.Values)
				}
				for _, c := range weak {
					weakRefs += distinctRefs(c, r.Columns[c.Index])
				}
				return true
			})
		}
	})
	return cells, atoms, weakRefs
}

func isWeak(b *db.BaseType) bool { return b.RefTable != "" && b.RefType == db.RefWeak }

// distinctRefs counts the distinct rows a column's value refers to weakly.
func distinctRefs(c *db.Column, d db.Datum) int {
	seen := map[db.Atom]struct{}{}
	if isWeak(&c.Type.Key) {
		for _, a := range d.Keys {
			seen[a] = struct{}{}
		}
	}
	if c.Type.Value != nil && isWeak(c.Type.Value) {
		for _, a := range d.Values {
			seen[a] = struct{}{}
		}
	}
	return len(seen)
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

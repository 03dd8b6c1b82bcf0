package db

import (
	"errors"
	"log/slog"
	"sync"
	"time"
)

// Database is an in-memory OVSDB database. See doc.go for the concurrency
// contract.
type Database struct {
	mu     sync.RWMutex
	schema *Schema
	logger *slog.Logger
	tables map[string]*tableState

	// inbound counts references between rows, target -> source -> count,
	// so that commits find who refers to a row without scanning tables.
	// Self references are not recorded (they never keep a row alive).
	inbound map[rowKey]map[rowKey]refCount

	subscribers  []*subscriber
	beforeCommit func(*Commit) error
}

// rowKey names a row: UUIDs are unique within a table.
type rowKey struct {
	table *tableState
	uuid  UUID
}

type refCount struct{ strong, weak int }

type tableState struct {
	schema *Table
	rows   map[UUID]*Row
	// indexes[i] maps the encoded values of schema.Indexes[i] to the row
	// holding them.
	indexes []map[string]UUID
}

type subscriber struct{ fn func(*Commit) }

// New returns an empty database for schema.
func New(schema *Schema, logger *slog.Logger) *Database {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	d := &Database{
		schema:  schema,
		logger:  logger,
		tables:  make(map[string]*tableState, len(schema.Tables)),
		inbound: map[rowKey]map[rowKey]refCount{},
	}
	for name, t := range schema.Tables {
		ts := &tableState{schema: t, rows: map[UUID]*Row{}}
		for range t.Indexes {
			ts.indexes = append(ts.indexes, map[string]UUID{})
		}
		d.tables[name] = ts
	}
	return d
}

// Schema returns the database's schema, which never changes.
func (d *Database) Schema() *Schema { return d.schema }

// View calls fn with a consistent read-only view of the database, holding
// the read lock for the duration of the call.
func (d *Database) View(fn func(View)) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	fn(dbView{d})
}

// Subscribe registers fn to be called, in commit order and with the write
// lock held, after each commit is applied. cancel unregisters it; after
// cancel returns fn is not called again. Neither Subscribe nor cancel may
// be called from within a subscriber.
func (d *Database) Subscribe(fn func(*Commit)) (cancel func()) {
	return d.ViewAndSubscribe(nil, fn)
}

// ViewAndSubscribe is View followed by Subscribe with no commit in between:
// fn sees exactly the commits made after the state view saw. view may be
// nil.
func (d *Database) ViewAndSubscribe(view func(View), fn func(*Commit)) (cancel func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if view != nil {
		view(dbView{d})
	}
	s := &subscriber{fn: fn}
	d.subscribers = append(d.subscribers, s)
	var once sync.Once
	return func() {
		once.Do(func() {
			d.mu.Lock()
			defer d.mu.Unlock()
			for i, x := range d.subscribers {
				if x == s {
					d.subscribers = append(d.subscribers[:i:i], d.subscribers[i+1:]...)
					break
				}
			}
		})
	}
}

// SetBeforeCommit installs fn to be called, with the write lock held, with
// each Commit before it is applied; if fn fails the transaction fails with
// an "I/O error" (or fn's *Error) and nothing changes. Storage uses this to
// write the commit to disk first. nil removes the hook.
func (d *Database) SetBeforeCommit(fn func(*Commit) error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.beforeCommit = fn
}

// dbView is the committed state, read under the database's lock.
type dbView struct{ d *Database }

func (v dbView) Rows(table string, fn func(*Row) bool) {
	ts := v.d.tables[table]
	if ts == nil {
		return
	}
	for _, r := range ts.rows {
		if !fn(r) {
			return
		}
	}
}

func (v dbView) Row(table string, uuid UUID) *Row {
	ts := v.d.tables[table]
	if ts == nil {
		return nil
	}
	return ts.rows[uuid]
}

// hasRefs reports whether the table has any reference column.
func hasRefs(t *Table) bool {
	for _, c := range t.Columns {
		if c.Type.Key.RefTable != "" || c.Type.Value != nil && c.Type.Value.RefTable != "" {
			return true
		}
	}
	return false
}

// strongRefsTo counts committed strong references to key.
func (d *Database) strongRefsTo(key rowKey) int {
	n := 0
	for _, c := range d.inbound[key] {
		n += c.strong
	}
	return n
}

// addInbound records delta references from src to target.
func (d *Database) addInbound(target, src rowKey, weak bool, delta int) {
	m := d.inbound[target]
	if m == nil {
		m = map[rowKey]refCount{}
		d.inbound[target] = m
	}
	c := m[src]
	if weak {
		c.weak += delta
	} else {
		c.strong += delta
	}
	if c.strong == 0 && c.weak == 0 {
		delete(m, src)
		if len(m) == 0 {
			delete(d.inbound, target)
		}
	} else {
		m[src] = c
	}
}

// apply makes a checked transaction's changes visible. Called with the
// write lock held.
func (d *Database) apply(rows []*txnRow) {
	for _, tr := range rows {
		if hasRefs(tr.ts.schema) {
			src := rowKey{tr.ts, tr.uuid}
			refChanges(tr.ts, d.tables, tr.old, tr.new, func(target rowKey, _ *Column, weak bool, delta int) {
				d.addInbound(target, src, weak, delta)
			})
		}
		if tr.old == nil {
			continue
		}
		for i, idx := range tr.ts.schema.Indexes {
			k := indexKey(tr.old, idx)
			if tr.ts.indexes[i][k] == tr.uuid {
				delete(tr.ts.indexes[i], k)
			}
		}
		if tr.new == nil {
			delete(tr.ts.rows, tr.uuid)
		}
	}
	for _, tr := range rows {
		if tr.new == nil {
			continue
		}
		for i, idx := range tr.ts.schema.Indexes {
			tr.ts.indexes[i][indexKey(tr.new, idx)] = tr.uuid
		}
		tr.ts.rows[tr.uuid] = tr.new
	}
}

// commitError turns a BeforeCommit failure into the error object reported
// to the client.
func commitError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Name: "I/O error", Details: err.Error()}
}

// farFuture is RetryAt for a "wait" without a timeout: only a commit can
// unblock it.
func farFuture(from time.Time) time.Time { return from.Add(100 * 365 * 24 * time.Hour) }

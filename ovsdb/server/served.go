package server

import (
	"bytes"
	"encoding/json"
	"sync"

	"gvs/ovsdb/db"
)

// served is one database as the server sees it: a replica of its committed
// rows (immutable *db.Row pointers, kept in step by the commit subscriber so
// that monitors see one consistent order of events), the recent commit
// history for monitor_cond_since, and the monitors and blocked transactions
// that commits concern.
//
// mu is the "monitor registry" lock: the db's subscriber takes it with the
// db's write lock held, and a session's queue lock may be taken under it.
type served struct {
	name        string
	db          *db.Database
	schema      *db.Schema
	schemaJSON  string // compact, keys sorted: the _Server "schema" column
	historyLen  int
	unsubscribe func()

	mu        sync.Mutex
	rows      map[string]map[db.UUID]*db.Row
	history   []*db.Commit // oldest first, at most historyLen
	lastTxnID db.UUID
	monitors  map[*monitor]struct{}
	waiters   map[*session]struct{} // sessions with blocked transactions here
	removed   bool

	// writeMu serialises the server's own updates of _Server.
	writeMu sync.Mutex

	// gate is held shared by each client transaction while it runs and
	// exclusively while the database is converted or removed, so that no
	// transaction commits on a database being replaced.
	gate sync.RWMutex
}

func newServed(d *db.Database, historyLen int) *served {
	schema := d.Schema()
	s := &served{
		name:       schema.Name,
		db:         d,
		schema:     schema,
		schemaJSON: canonicalJSON(schema.Raw),
		historyLen: historyLen,
		lastTxnID:  db.ZeroUUID,
		monitors:   map[*monitor]struct{}{},
		waiters:    map[*session]struct{}{},
	}
	// The replica starts from a view taken atomically with the
	// subscription, so it sees every commit exactly once.
	s.unsubscribe = d.ViewAndSubscribe(func(v db.View) {
		s.rows = make(map[string]map[db.UUID]*db.Row, len(schema.Tables))
		for name := range schema.Tables {
			table := map[db.UUID]*db.Row{}
			v.Rows(name, func(r *db.Row) bool {
				table[r.UUID] = r
				return true
			})
			s.rows[name] = table
		}
	}, s.onCommit)
	return s
}

func (s *served) apply(c *db.Commit) {
	for name, changes := range c.Tables {
		table := s.rows[name]
		if table == nil {
			table = map[db.UUID]*db.Row{}
			s.rows[name] = table
		}
		for uuid, ch := range changes {
			if ch.New == nil {
				delete(table, uuid)
			} else {
				table[uuid] = ch.New
			}
		}
	}
}

// onCommit runs with the database's write lock held, in commit order.
func (s *served) onCommit(c *db.Commit) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.removed {
		return
	}
	s.apply(c)
	if s.historyLen > 0 {
		// Without a history (standalone, as in Open vSwitch) the last
		// transaction id stays all zeros: nothing could resume from it.
		s.history = append(s.history, c)
		if len(s.history) > s.historyLen {
			s.history = s.history[len(s.history)-s.historyLen:]
		}
		if c.TxnID != "" {
			s.lastTxnID = c.TxnID
		}
	}
	s.dispatch(c)
	for sess := range s.waiters {
		sess.wakeUp()
	}
}

// dispatch queues each monitor's notification for commit c. Unconditional
// monitors of the same shape share one encoding.
func (s *served) dispatch(c *db.Commit) {
	shared := map[string][]byte{}
	for m := range s.monitors {
		var body []byte
		if m.conditional() {
			body = marshalUpdates(m.commitUpdates(c))
		} else if b, ok := shared[m.shape]; ok {
			body = b
		} else {
			body = marshalUpdates(m.commitUpdates(c))
			shared[m.shape] = body
		}
		if body != nil {
			m.sess.enqueue(updateMessage(m, s.lastTxnID, body))
		}
	}
}

func marshalUpdates(u tableUpdates) []byte {
	if len(u) == 0 {
		return nil
	}
	return u.AppendJSON(nil)
}

// updateMessage encodes an update, update2 or update3 notification.
func updateMessage(m *monitor, lastTxnID db.UUID, body []byte) []byte {
	var b bytes.Buffer
	b.WriteString(`{"id":null,"method":"`)
	b.WriteString(m.version.notification())
	b.WriteString(`","params":[`)
	b.Write(m.id)
	if m.version == monitorV3 {
		b.WriteString(`,"`)
		b.WriteString(string(lastTxnID))
		b.WriteByte('"')
	}
	b.WriteByte(',')
	b.Write(body)
	b.WriteString(`]}`)
	return b.Bytes()
}

// startMonitor registers m and computes its first contents without a commit
// slipping in between. since is monitor_cond_since's last-txn-id ("" for the
// other methods). reply runs with the registry lock held, so that the reply
// it queues precedes every later notification for m. It returns false when
// the database has been removed.
func (s *served) startMonitor(m *monitor, since db.UUID, reply func(found bool, last db.UUID, u tableUpdates)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.removed {
		return false
	}
	found := false
	var u tableUpdates
	if since != "" && since != db.ZeroUUID {
		if changes, ok := s.changesSince(since); ok {
			found = true
			u = m.changeUpdates(changes)
		}
	}
	if !found {
		u = m.initialUpdates(s.rows)
	}
	m.sess.addMonitor(m)
	s.monitors[m] = struct{}{}
	reply(found, s.lastTxnID, u)
	return true
}

// changesSince merges the history after commit txn into net row changes.
func (s *served) changesSince(txn db.UUID) (map[string]map[db.UUID]rowChange, bool) {
	start := -1
	for i, c := range s.history {
		if c.TxnID == txn {
			start = i + 1
			break
		}
	}
	if start < 0 {
		return nil, false
	}
	merged := map[string]map[db.UUID]rowChange{}
	for _, c := range s.history[start:] {
		for name, changes := range c.Tables {
			table := merged[name]
			if table == nil {
				table = map[db.UUID]rowChange{}
				merged[name] = table
			}
			for uuid, ch := range changes {
				prev, seen := table[uuid]
				if !seen {
					prev.old = ch.Old
				}
				prev.new = ch.New
				if prev.old == nil && prev.new == nil {
					delete(table, uuid)
				} else {
					table[uuid] = prev
				}
			}
		}
	}
	return merged, true
}

// changeConditions replaces conditions of m's tables (and possibly its id)
// and reports, through notify, the rows that enter or leave; notify and
// reply run with the registry lock held so they stay in order with commits.
func (s *served) changeConditions(m *monitor, conds map[string]*monCondition, newID json.RawMessage, notify func(u tableUpdates, last db.UUID), reply func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(newID) > 0 {
		m.sess.rekeyMonitor(m, newID)
	}
	u := tableUpdates{}
	for name, cond := range conds {
		mt := m.tables[name]
		old := mt.cond
		mt.cond = cond
		if old.canonical == cond.canonical {
			continue
		}
		for uuid, row := range s.rows[name] {
			if ru := mt.condChangeUpdate(row, old); ru != nil {
				u.add(name, uuid, ru)
			}
		}
	}
	if len(u) > 0 {
		notify(u, s.lastTxnID)
	}
	reply()
}

func (s *served) removeMonitor(m *monitor) {
	s.mu.Lock()
	delete(s.monitors, m)
	s.mu.Unlock()
}

func (s *served) addWaiter(sess *session) {
	s.mu.Lock()
	s.waiters[sess] = struct{}{}
	s.mu.Unlock()
}

func (s *served) removeWaiter(sess *session) {
	s.mu.Lock()
	delete(s.waiters, sess)
	s.mu.Unlock()
}

func (s *served) isRemoved() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.removed
}

// snapshotRows returns the rows of one table (for the _Server bookkeeping).
func (s *served) snapshotRows(table string) []*db.Row {
	s.mu.Lock()
	defer s.mu.Unlock()
	rows := make([]*db.Row, 0, len(s.rows[table]))
	for _, r := range s.rows[table] {
		rows = append(rows, r)
	}
	return rows
}

// transact runs a transaction from a client. The db refuses clients'
// writes to databases whose names begin with "_", such as _Server. ok is
// false, and nothing is done, when the database has been converted or
// removed.
func (s *served) transact(ops []json.RawMessage, env db.TxnEnv) (res db.TxnResult, ok bool) {
	s.gate.RLock()
	defer s.gate.RUnlock()
	if s.isRemoved() {
		return db.TxnResult{}, false
	}
	return s.db.Transact(ops, env), true
}

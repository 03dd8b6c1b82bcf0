package server

import (
	"encoding/json"
	"sync"

	"gvs/ovsdb/jsonrpc"
)

// lockWaiter is one session's "lock" or "steal" of one lock name, from the
// request until its "unlock" (or the end of the session).
type lockWaiter struct {
	sess   *session
	name   string
	steal  bool
	inLine bool // still in the lock's queue (a stolen "steal" is not)
}

// lockTable is the server's named locks. Each lock has a queue of waiters;
// the first owns it. Its mutex may be taken with a db write lock held (by
// TxnEnv.HasLock) and is taken before session queue locks.
type lockTable struct {
	mu      sync.Mutex
	queues  map[string][]*lockWaiter
	waiters map[*session]map[string]*lockWaiter
}

func newLockTable() *lockTable {
	return &lockTable{queues: map[string][]*lockWaiter{}, waiters: map[*session]map[string]*lockWaiter{}}
}

// acquire adds s to the lock's queue, at the front for a steal, and calls
// reply with whether s now owns the lock; reply runs under the table's
// mutex so that it is queued before any later "locked" notification. It
// returns false when s already has a request outstanding for the name.
func (lt *lockTable) acquire(s *session, name string, steal bool, reply func(locked bool)) bool {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	mine := lt.waiters[s]
	if mine[name] != nil {
		return false
	}
	if mine == nil {
		mine = map[string]*lockWaiter{}
		lt.waiters[s] = mine
	}
	w := &lockWaiter{sess: s, name: name, steal: steal, inLine: true}
	mine[name] = w
	queue := lt.queues[name]
	var victim *lockWaiter
	if steal && len(queue) > 0 {
		victim = queue[0]
		queue = append([]*lockWaiter{w}, queue...)
	} else {
		queue = append(queue, w)
	}
	if victim != nil && victim.steal {
		// A stolen "steal" does not get back in line (Open vSwitch's
		// ovsdb_server_lock()); its session must still "unlock".
		queue = removeWaiter(queue, victim)
		victim.inLine = false
	}
	lt.queues[name] = queue
	if victim != nil {
		victim.sess.notify("stolen", []string{name})
	}
	reply(queue[0] == w)
	return true
}

// release drops s's request for name; false if it had none.
func (lt *lockTable) release(s *session, name string) bool {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	w := lt.waiters[s][name]
	if w == nil {
		return false
	}
	delete(lt.waiters[s], name)
	if len(lt.waiters[s]) == 0 {
		delete(lt.waiters, s)
	}
	lt.leaveLine(w)
	return true
}

func (lt *lockTable) leaveLine(w *lockWaiter) {
	if !w.inLine {
		return
	}
	queue := removeWaiter(lt.queues[w.name], w)
	w.inLine = false
	if len(queue) == 0 {
		delete(lt.queues, w.name)
		return
	}
	lt.queues[w.name] = queue
	// Like ovsdb-server, tell the owner "locked" whenever a waiter leaves,
	// even if it already owned the lock; clients treat it as idempotent.
	queue[0].sess.notify("locked", []string{w.name})
}

func (lt *lockTable) unlockAll(s *session) {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	for _, w := range lt.waiters[s] {
		lt.leaveLine(w)
	}
	delete(lt.waiters, s)
}

func (lt *lockTable) owns(s *session, name string) bool {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	w := lt.waiters[s][name]
	queue := lt.queues[name]
	return w != nil && w.inLine && len(queue) > 0 && queue[0] == w
}

func removeWaiter(queue []*lockWaiter, w *lockWaiter) []*lockWaiter {
	for i, x := range queue {
		if x == w {
			return append(queue[:i:i], queue[i+1:]...)
		}
	}
	return queue
}

// parseLockName mirrors ovsdb_jsonrpc_session_parse_lock_name().
func parseLockName(m *jsonrpc.Message, params []json.RawMessage) (string, *ovsdbError) {
	if len(params) == 1 {
		if name, ok := decodeString(params[0]); ok && isID(name) {
			return name, nil
		}
	}
	return "", syntaxError(m.Params, "", "%s request params must be <id>", m.Method)
}

func (s *session) lock(m *jsonrpc.Message, params []json.RawMessage, steal bool) {
	name, err := parseLockName(m, params)
	if err != nil {
		s.replyError(m.ID, err)
		return
	}
	ok := s.srv.locks.acquire(s, name, steal, func(locked bool) {
		s.reply(m.ID, map[string]bool{"locked": locked})
	})
	if !ok {
		s.replyError(m.ID, syntaxError(m.Params, "", "must issue \"unlock\" before new \"%s\"", m.Method))
	}
}

func (s *session) unlock(m *jsonrpc.Message, params []json.RawMessage) {
	name, err := parseLockName(m, params)
	if err != nil {
		s.replyError(m.ID, err)
		return
	}
	if !s.srv.locks.release(s, name) {
		s.replyError(m.ID, syntaxError(m.Params, "", "%s: \"unlock\" without \"lock\" or \"steal\"", m.Method))
		return
	}
	s.reply(m.ID, json.RawMessage("{}"))
}

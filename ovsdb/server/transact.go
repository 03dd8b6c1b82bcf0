package server

import (
	"encoding/json"
	"time"

	"gvs/ovsdb/jsonrpc"
)

// trigger is a transaction waiting for a "wait" operation to be satisfied.
// Every transaction starts as one; most complete at once.
type trigger struct {
	id      json.RawMessage
	key     string
	sdb     *served
	ops     []json.RawMessage
	started time.Time
	retryAt time.Time
}

func (s *session) transact(m *jsonrpc.Message, params []json.RawMessage) {
	sdb, oerr := s.srv.lookupDB(m.Method, m.Params, params)
	if oerr != nil {
		s.replyError(m.ID, oerr)
		return
	}
	key := canonicalJSON(m.ID)
	for _, t := range s.triggers {
		if t.key == key {
			s.replyError(m.ID, syntaxError(m.Params, "", "%s: duplicate request ID", m.Method))
			return
		}
	}
	t := &trigger{id: m.ID, key: key, sdb: sdb, ops: params[1:], started: time.Now()}
	// Register for wake-ups before the first try, so that a commit landing
	// between a blocked try and the registration cannot be missed.
	sdb.addWaiter(s)
	if s.try(t) {
		s.dropWaiterIfIdle(sdb)
		return
	}
	s.triggers = append(s.triggers, t)
}

// try runs t once and replies if it completed.
func (s *session) try(t *trigger) bool {
	tried := time.Now()
	res, ok := t.sdb.transact(t.ops, s.txnEnv(t.started))
	if !ok {
		// Converted or removed while this waited: canceled, like the
		// transactions Open vSwitch has pending when that happens.
		s.srv.counters.canceled.Add(1)
		s.replyError(t.id, "canceled")
		return true
	}
	if res.Blocked {
		t.retryAt = res.RetryAt
		return false
	}
	s.srv.counters.countTxn(res, time.Since(tried))
	results := res.Results
	if results == nil {
		results = []any{}
	}
	s.reply(t.id, results)
	return true
}

// retryTriggers re-runs every blocked transaction, in arrival order.
func (s *session) retryTriggers() {
	if len(s.triggers) == 0 {
		return
	}
	pending := s.triggers[:0]
	touched := map[*served]bool{}
	for _, t := range s.triggers {
		touched[t.sdb] = true
		if t.sdb.isRemoved() {
			if s.dbChangeAware.Load() {
				s.srv.counters.canceled.Add(1)
				s.replyError(t.id, "canceled")
			}
			continue
		}
		if !s.try(t) {
			pending = append(pending, t)
		}
	}
	s.triggers = pending
	for sdb := range touched {
		s.dropWaiterIfIdle(sdb)
	}
}

func (s *session) dropWaiterIfIdle(sdb *served) {
	for _, t := range s.triggers {
		if t.sdb == sdb {
			return
		}
	}
	sdb.removeWaiter(s)
}

// cancel handles the "cancel" notification: a blocked transaction with that
// request id is answered with the error "canceled".
func (s *session) cancel(raw json.RawMessage) {
	params, ok := decodeArray(raw)
	if !ok || len(params) != 1 {
		return
	}
	key := canonicalJSON(params[0])
	for i, t := range s.triggers {
		if t.key == key {
			s.triggers = append(s.triggers[:i], s.triggers[i+1:]...)
			s.srv.counters.canceled.Add(1)
			s.replyError(t.id, "canceled")
			s.dropWaiterIfIdle(t.sdb)
			return
		}
	}
}

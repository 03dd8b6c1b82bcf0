package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gvs/ovsdb/db"
	"gvs/ovsdb/jsonrpc"
	"gvs/ovsdb/storage"
)

// ConvertFunc converts the served database named name to schema (whose
// name is name) and returns the converted database, which the server then
// serves in place of the old one. It must make the conversion durable
// before it returns (rewriting the database's file, as ovsdb-server does)
// and change nothing when it fails. The server calls it with no
// transaction of clients in progress on that database and none starting
// until the swap is done; it is never called for two conversions at once.
type ConvertFunc func(name string, schema *db.Schema) (*db.Database, error)

// SetConverter installs how the "convert" method converts a database: the
// server does not own storage, so a daemon that keeps databases in files
// passes a function that converts them there. Without one (nil), convert
// works on an in-memory copy (storage.Convert) and nothing is written.
func (s *Server) SetConverter(fn ConvertFunc) {
	s.mu.Lock()
	s.converter = fn
	s.mu.Unlock()
}

// convert handles the "convert" method (ovsdb-server(7), "Schema
// Conversion"): params [<db-name>, <database-schema>]. Errors are the ones
// ovsdb-server's trigger gives, in its order.
func (s *session) convert(m *jsonrpc.Message, params []json.RawMessage) {
	sdb, oerr := s.srv.lookupDB(m.Method, m.Params, params)
	if oerr != nil {
		s.replyError(m.ID, oerr)
		return
	}
	if sdb == s.srv.serverDB {
		s.replyError(m.ID, &ovsdbError{Name: "not allowed",
			Details: "conversion is not allowed for read-only database " + sdb.name})
		return
	}
	if len(params) != 2 {
		s.replyError(m.ID, syntaxError(m.Params, "", "array expected"))
		return
	}
	schema, err := db.ParseSchema(params[1])
	if err != nil {
		s.replyError(m.ID, errorObject(err))
		return
	}
	if schema.Name != sdb.name {
		s.replyError(m.ID, &ovsdbError{Name: "invalid parameters",
			Details: fmt.Sprintf("new schema name (%s) does not match database name (%s)", schema.Name, sdb.name)})
		return
	}
	if err := s.srv.convertDatabase(sdb.name, schema); err != nil {
		s.replyError(m.ID, convertErrorObject(err))
		return
	}
	s.reply(m.ID, json.RawMessage("{}"))
	// Like ovsdb-server, disconnect the clients that did not say they
	// understand databases changing under them. This one first gets its
	// reply.
	s.srv.reconnectExcept(s, fmt.Sprintf("committed %s database schema conversion", sdb.name))
	if !s.dbChangeAware.Load() {
		s.flush(flushBeforeClose)
		s.close(fmt.Sprintf("committed %s database schema conversion", sdb.name))
	}
}

// flushBeforeClose bounds how long a session that is about to be
// disconnected waits for its last reply to be written.
const flushBeforeClose = 5 * time.Second

// errNotServed is convertDatabase's answer when the database went away.
var errNotServed = errors.New("database is no longer served")

// convertErrorObject is the error a failed conversion replies with: the
// db's error object (a value that does not fit the new schema, a
// constraint or reference the converted data break), else an "I/O error"
// (the file could not be rewritten).
func convertErrorObject(err error) any {
	var de *db.Error
	if errors.As(err, &de) {
		return de
	}
	if errors.Is(err, errNotServed) {
		return &ovsdbError{Name: "unknown database", Details: err.Error()}
	}
	return &ovsdbError{Name: "I/O error", Details: err.Error()}
}

// convertDatabase converts the database served as name to schema and
// serves the result in its place. While it runs no client transaction
// commits on the old database (its gate is held), so none is lost; those
// that arrive meanwhile are answered "canceled" afterwards, as Open
// vSwitch cancels transactions pending when a database is replaced.
// Monitors of the old database are canceled: change-aware sessions get a
// "monitor_canceled" notification for each (the caller disconnects the
// others).
func (s *Server) convertDatabase(name string, schema *db.Schema) error {
	s.convertMu.Lock()
	defer s.convertMu.Unlock()
	s.mu.Lock()
	old, convert := s.dbs[name], s.converter
	s.mu.Unlock()
	if old == nil || old == s.serverDB {
		return errNotServed
	}
	old.gate.Lock()
	defer old.gate.Unlock()
	if old.isRemoved() {
		return errNotServed
	}
	var converted *db.Database
	var err error
	if convert != nil {
		converted, err = convert(name, schema)
	} else {
		converted, err = storage.Convert(old.db, schema, s.logger)
	}
	if err != nil {
		return err
	}
	replacement := newServed(converted, s.historyLen)
	s.mu.Lock()
	s.dbs[name] = replacement
	s.mu.Unlock()
	// The replacement is in place before the cancellations are queued, so
	// a client that reacts to "monitor_canceled" finds the new schema.
	old.retire()
	s.logger.Info("converted database to a new schema", "db", name,
		"from_version", old.schema.Version, "to_version", schema.Version)
	s.updateServerDB()
	return nil
}

// retire stops old from following its database and tells its monitors and
// blocked transactions that it is gone: change-aware sessions get a
// "monitor_canceled" notification per monitor and a "canceled" error per
// blocked transaction (from their loop, woken here); the caller
// disconnects the other sessions.
func (sdb *served) retire() {
	sdb.unsubscribe()
	sdb.mu.Lock()
	defer sdb.mu.Unlock()
	sdb.removed = true
	for m := range sdb.monitors {
		if m.sess.dropMonitor(m) && m.sess.dbChangeAware.Load() {
			m.sess.notify("monitor_canceled", []any{m.id})
		}
	}
	sdb.monitors = map[*monitor]struct{}{}
	for sess := range sdb.waiters {
		sess.wakeUp() // the loop answers its triggers on the retired database
	}
}

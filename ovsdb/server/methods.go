package server

import (
	"encoding/json"

	"gvs/ovsdb/jsonrpc"
)

// handle processes one message from the client, on the loop goroutine.
func (s *session) handle(m *jsonrpc.Message) {
	switch {
	case m.IsRequest():
		s.handleRequest(m)
	case m.IsNotification():
		if m.Method == "cancel" {
			s.cancel(m.Params)
		}
	default:
		// A reply to our own inactivity probe is expected; any other reply
		// is a protocol error that Open vSwitch answers by disconnecting.
		if id, ok := decodeString(m.ID); ok && id == "echo" {
			return
		}
		s.log.Warn("received unexpected reply message, disconnecting")
		s.close("")
	}
}

func (s *session) handleRequest(m *jsonrpc.Message) {
	params, ok := decodeArray(m.Params)
	if !ok {
		params = nil
	}
	switch m.Method {
	case "transact":
		s.transact(m, params)
	case "convert":
		s.convert(m, params)
	case "monitor":
		s.monitor(m, params, monitorV1)
	case "monitor_cond":
		if !s.srv.monitorCondEnabled() {
			s.replyError(m.ID, "unknown method")
			return
		}
		s.monitor(m, params, monitorV2)
	case "monitor_cond_since":
		if !s.srv.monitorCondEnabled() {
			s.replyError(m.ID, "unknown method")
			return
		}
		s.monitor(m, params, monitorV3)
	case "monitor_cond_change":
		s.monitorCondChange(m, params)
	case "monitor_cancel":
		s.monitorCancel(m, params)
	case "get_schema":
		if sdb, err := s.srv.lookupDB(m.Method, m.Params, params); err != nil {
			s.replyError(m.ID, err)
		} else {
			s.reply(m.ID, sdb.schema.Raw)
		}
	case "list_dbs":
		s.reply(m.ID, s.srv.Databases())
	case "get_server_id":
		s.reply(m.ID, s.srv.id)
	case "lock":
		s.lock(m, params, false)
	case "steal":
		s.lock(m, params, true)
	case "unlock":
		s.unlock(m, params)
	case "set_db_change_aware":
		if len(params) != 1 || jsonKind(params[0]) != 'b' {
			s.replyError(m.ID, syntaxError(m.Params, "", "%s: true or false parameter expected", m.Method))
			return
		}
		s.dbChangeAware.Store(string(params[0]) == "true")
		s.reply(m.ID, json.RawMessage("{}"))
	case "echo":
		s.reply(m.ID, m.Params)
	default:
		s.replyError(m.ID, "unknown method")
	}
}

// lookupDB mirrors ovsdb_jsonrpc_lookup_db(): params must begin with the
// name of a database this server serves.
func (srv *Server) lookupDB(method string, raw json.RawMessage, params []json.RawMessage) (*served, *ovsdbError) {
	var name string
	ok := len(params) > 0
	if ok {
		name, ok = decodeString(params[0])
	}
	if !ok {
		return nil, syntaxError(raw, "", "%s request params must begin with <db-name>", method)
	}
	srv.mu.Lock()
	sdb := srv.dbs[name]
	srv.mu.Unlock()
	if sdb == nil {
		return nil, syntaxError(raw, "unknown database", "%s request specifies unknown database %s", method, name)
	}
	return sdb, nil
}

// servedAs returns the database served under name, or nil.
func (srv *Server) servedAs(name string) *served {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	return srv.dbs[name]
}

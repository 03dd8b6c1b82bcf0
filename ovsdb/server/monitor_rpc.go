package server

import (
	"encoding/json"
	"sort"

	"gvs/ovsdb/db"
	"gvs/ovsdb/jsonrpc"
)

// monitor handles "monitor", "monitor_cond" and "monitor_cond_since".
func (s *session) monitor(m *jsonrpc.Message, params []json.RawMessage, version monitorVersion) {
	sdb, oerr := s.srv.lookupDB(m.Method, m.Params, params)
	if oerr != nil {
		s.replyError(m.ID, oerr)
		return
	}
	if version == monitorV1 && len(params) < 3 ||
		version == monitorV2 && len(params) != 3 ||
		version == monitorV3 && len(params) != 4 {
		s.replyError(m.ID, syntaxError(m.Params, "", "invalid parameters"))
		return
	}
	id, requests := params[1], params[2]
	if jsonKind(requests) != '{' {
		s.replyError(m.ID, syntaxError(requests, "", "monitor-requests must be object"))
		return
	}
	if s.findMonitor(id) != nil {
		s.replyError(m.ID, syntaxError(id, "", "duplicate monitor ID"))
		return
	}
	tables, err := parseMonitorRequests(sdb.schema, version, requests)
	if err != nil {
		s.replyError(m.ID, errorObject(err))
		return
	}
	var since db.UUID
	if version == monitorV3 {
		str, ok := decodeString(params[3])
		if !ok {
			s.replyError(m.ID, syntaxError(params[3], "", "last-txn-id must be string"))
			return
		}
		if since, ok = db.ParseUUID(str); !ok {
			s.replyError(m.ID, syntaxError(params[3], "", "last-txn-id must be UUID format."))
			return
		}
	}
	names := make([]string, 0, len(tables))
	for name := range tables {
		names = append(names, name)
	}
	sort.Strings(names)
	canonicalID := json.RawMessage(canonicalJSON(id))
	mon := &monitor{
		id:      canonicalID,
		key:     string(canonicalID),
		version: version,
		sess:    s,
		sdb:     sdb,
		tables:  tables,
		names:   names,
		shape:   shapeOf(version, tables, names),
	}
	started := sdb.startMonitor(mon, since, func(found bool, last db.UUID, u tableUpdates) {
		if version == monitorV3 {
			s.reply(m.ID, []any{found, last, u})
		} else {
			s.reply(m.ID, u)
		}
	})
	if !started {
		if cur := s.srv.servedAs(sdb.name); cur != nil && cur != sdb {
			// Converted meanwhile: monitor the new database instead.
			s.monitor(m, params, version)
			return
		}
		s.replyError(m.ID, syntaxError(m.Params, "unknown database", "%s request specifies unknown database %s", m.Method, sdb.name))
	}
}

func (s *session) monitorCondChange(m *jsonrpc.Message, params []json.RawMessage) {
	if len(params) != 3 {
		s.replyError(m.ID, syntaxError(m.Params, "", "invalid parameters"))
		return
	}
	mon := s.findMonitor(params[0])
	if mon == nil {
		s.replyError(m.ID, syntaxError(params[0], "", "unknown monitor session"))
		return
	}
	newID := params[1]
	var rekey json.RawMessage
	if canonicalJSON(newID) != mon.key {
		if s.findMonitor(newID) != nil {
			s.replyError(m.ID, syntaxError(newID, "", "duplicate monitor ID"))
			return
		}
		rekey = newID
	}
	requests, ok := decodeObject(params[2])
	if !ok {
		s.replyError(m.ID, syntaxError(nil, "", "monitor-cond-change-requests must be object"))
		return
	}
	names := make([]string, 0, len(requests))
	for name := range requests {
		names = append(names, name)
	}
	sort.Strings(names)
	conds := map[string]*monCondition{}
	for _, name := range names {
		t := mon.sdb.schema.Tables[name]
		if t == nil {
			s.replyError(m.ID, syntaxError(nil, "", "no table named %s", name))
			return
		}
		mt := mon.tables[name]
		if mt == nil {
			s.replyError(m.ID, syntaxError(nil, "", "no table named %s in monitor session", name))
			return
		}
		elems, isArray := decodeArray(requests[name])
		if !isArray {
			s.replyError(m.ID, syntaxError(nil, "", "table %s no monitor-cond-change JSON array", name))
			return
		}
		for _, elem := range elems {
			p := newObjectParser(elem, "table "+name)
			columns := p.member("columns", '[')
			where := p.member("where", '[')
			if err := p.finish(); err != nil {
				s.replyError(m.ID, err)
				return
			}
			if columns != nil {
				s.replyError(m.ID, syntaxError(elem, "", "changing columns is unsupported"))
				return
			}
			if mt.cond == nil {
				continue // a "monitor" (version 1) has no conditions
			}
			cond, err := parseMonCondition(t, where)
			if err != nil {
				s.replyError(m.ID, errorObject(err))
				return
			}
			conds[name] = cond
		}
	}
	mon.sdb.changeConditions(mon, conds, rekey,
		func(u tableUpdates, last db.UUID) {
			if body := marshalUpdates(u); body != nil {
				s.enqueue(updateMessage(mon, last, body))
			}
		},
		func() { s.reply(m.ID, json.RawMessage("{}")) })
}

func (s *session) monitorCancel(m *jsonrpc.Message, params []json.RawMessage) {
	if len(params) != 1 {
		s.replyError(m.ID, "invalid parameters")
		return
	}
	mon := s.findMonitor(params[0])
	if mon == nil || !s.dropMonitor(mon) {
		s.replyError(m.ID, "unknown monitor")
		return
	}
	mon.sdb.removeMonitor(mon)
	s.reply(m.ID, json.RawMessage("{}"))
}

package server

import (
	"encoding/json"
	"net"
	"sync"
	"time"

	"gvs/ovsdb/internal/fastjson"
	"gvs/ovsdb/jsonrpc"
)

// enqueue queues one encoded message. Callers may hold the registry or lock
// table locks; enqueue only takes the queue lock.
func (s *session) enqueue(msg []byte) {
	s.qmu.Lock()
	if s.closed() {
		s.qmu.Unlock()
		return
	}
	if s.backlog > s.srv.maxBacklog {
		backlog := s.backlog
		s.qmu.Unlock()
		s.log.Warn("backlog exceeds maximum, disconnecting", "backlog", backlog, "max", s.srv.maxBacklog)
		s.close("")
		return
	}
	s.queue = append(s.queue, msg)
	s.backlog += len(msg)
	s.qmu.Unlock()
	select {
	case s.qsignal <- struct{}{}:
	default:
	}
}

// send encodes and queues a message.
func (s *session) send(m *jsonrpc.Message) {
	b, err := m.AppendJSON(nil)
	if err != nil {
		s.log.Error("cannot encode message", "err", err)
		return
	}
	s.enqueue(b)
}

// reply, replyError and notify queue what jsonrpc.NewResult, NewError
// and NewRequest would build, written straight into one buffer: a large
// result is encoded once, not encoded and then compacted again.
func (s *session) reply(id json.RawMessage, result any) {
	b, err := fastjson.AppendValue(append(make([]byte, 0, 256), `{"result":`...), result)
	if err == nil {
		b, err = appendID(append(b, `,"error":null`...), id)
	}
	if err != nil {
		s.log.Error("cannot encode reply", "err", err)
		return
	}
	s.enqueue(b)
}

func (s *session) replyError(id json.RawMessage, errObj any) {
	b, err := fastjson.AppendValue([]byte(`{"result":null,"error":`), errObj)
	if err == nil {
		b, err = appendID(b, id)
	}
	if err != nil {
		s.log.Error("cannot encode error", "err", err)
		return
	}
	s.enqueue(b)
}

func (s *session) notify(method string, params any) {
	b := fastjson.AppendString([]byte(`{"method":`), method)
	b, err := fastjson.AppendValue(append(b, `,"params":`...), params)
	if err != nil {
		s.log.Error("cannot encode notification", "err", err)
		return
	}
	s.enqueue(append(b, `,"id":null}`...))
}

// appendID ends a message with its "id" member, compacted as
// jsonrpc.Message.AppendJSON compacts it (null when absent).
func appendID(b []byte, id json.RawMessage) ([]byte, error) {
	b = append(b, `,"id":`...)
	if len(id) == 0 {
		return append(b, "null}"...), nil
	}
	b, err := fastjson.AppendCompact(b, id)
	return append(b, '}'), err
}

func (s *session) writer(wg *sync.WaitGroup) {
	defer wg.Done()
	for {
		select {
		case <-s.done:
			return
		case <-s.qsignal:
		}
		for {
			s.qmu.Lock()
			batch := s.queue
			s.queue = nil
			s.qmu.Unlock()
			if len(batch) == 0 {
				break
			}
			size := 0
			for _, msg := range batch {
				size += len(msg)
			}
			bufs := net.Buffers(batch)
			if _, err := bufs.WriteTo(s.conn); err != nil {
				s.close("")
				return
			}
			s.qmu.Lock()
			s.backlog -= size
			more := s.backlog > 0
			s.qmu.Unlock()
			select {
			case s.flushed <- struct{}{}:
			default:
			}
			if more {
				// Draining a backlog is a sign of life, like Open vSwitch's
				// jsonrpc_session_run().
				s.touch()
			}
		}
	}
}

// backlogBytes is how much is queued and not yet written.
func (s *session) backlogBytes() int {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	return s.backlog
}

// flush waits, at most timeout, until everything queued has been written.
func (s *session) flush(timeout time.Duration) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		s.qmu.Lock()
		empty := s.backlog == 0
		s.qmu.Unlock()
		if empty {
			return
		}
		select {
		case <-s.flushed:
		case <-timer.C:
			return
		case <-s.done:
			return
		}
	}
}

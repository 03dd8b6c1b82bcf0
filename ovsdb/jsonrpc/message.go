package jsonrpc

import (
	"bytes"
	"encoding/json"

	"gvs/ovsdb/internal/fastjson"
)

// Message is a request (Method set, ID not null), a notification (Method
// set, ID null) or a response (Method empty, Result or Error set).
type Message struct {
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
	ID     json.RawMessage `json:"id"`
}

var null = json.RawMessage("null")

// IsRequest reports whether m expects a response.
func (m *Message) IsRequest() bool { return m.Method != "" && !isNull(m.ID) }

// IsNotification reports whether m is a method call without an id.
func (m *Message) IsNotification() bool { return m.Method != "" && isNull(m.ID) }

// IsResponse reports whether m answers an earlier request.
func (m *Message) IsResponse() bool { return m.Method == "" }

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || bytes.Equal(bytes.TrimSpace(raw), null)
}

// wireMessage is what goes on the wire: JSON-RPC 1.0 as Open vSwitch writes
// it always carries "id", and a response always carries both "result" and
// "error", one of them null.
type wireRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	ID     json.RawMessage `json:"id"`
}

type wireResponse struct {
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
	ID     json.RawMessage `json:"id"`
}

// MarshalJSON writes m in the shape Open vSwitch's peers expect.
func (m Message) MarshalJSON() ([]byte, error) { return m.AppendJSON(nil) }

// AppendJSON appends what MarshalJSON returns, without reflection: the raw
// members are compacted as json.Marshal compacts a json.RawMessage.
func (m *Message) AppendJSON(dst []byte) ([]byte, error) {
	orNull := func(r json.RawMessage) json.RawMessage {
		if len(r) == 0 {
			return null
		}
		return r
	}
	var err error
	if m.Method != "" {
		params := m.Params
		if len(params) == 0 {
			params = json.RawMessage("[]")
		}
		dst = append(dst, `{"method":`...)
		dst = fastjson.AppendString(dst, m.Method)
		dst = append(dst, `,"params":`...)
		if dst, err = fastjson.AppendCompact(dst, params); err != nil {
			return nil, err
		}
		dst = append(dst, `,"id":`...)
		if dst, err = fastjson.AppendCompact(dst, orNull(m.ID)); err != nil {
			return nil, err
		}
		return append(dst, '}'), nil
	}
	dst = append(dst, `{"result":`...)
	if dst, err = fastjson.AppendCompact(dst, orNull(m.Result)); err != nil {
		return nil, err
	}
	dst = append(dst, `,"error":`...)
	if dst, err = fastjson.AppendCompact(dst, orNull(m.Error)); err != nil {
		return nil, err
	}
	dst = append(dst, `,"id":`...)
	if dst, err = fastjson.AppendCompact(dst, orNull(m.ID)); err != nil {
		return nil, err
	}
	return append(dst, '}'), nil
}

// NewRequest builds a request or, with a nil id, a notification.
func NewRequest(method string, params any, id any) (*Message, error) {
	p, err := fastjson.Marshal(params)
	if err != nil {
		return nil, err
	}
	i, err := fastjson.Marshal(id)
	if err != nil {
		return nil, err
	}
	return &Message{Method: method, Params: p, ID: i}, nil
}

// NewResult builds a successful response to the request with this id.
func NewResult(id json.RawMessage, result any) (*Message, error) {
	r, err := fastjson.Marshal(result)
	if err != nil {
		return nil, err
	}
	return &Message{Result: r, ID: id}, nil
}

// NewError builds an error response to the request with this id. errObj is
// encoded as is: OVSDB sends {"error": NAME, "details": ...}, unixctl a
// string.
func NewError(id json.RawMessage, errObj any) (*Message, error) {
	e, err := fastjson.Marshal(errObj)
	if err != nil {
		return nil, err
	}
	return &Message{Error: e, Result: null, ID: id}, nil
}

package jsonrpc

import (
	"bytes"
	"encoding/json"
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
func (m Message) MarshalJSON() ([]byte, error) {
	orNull := func(r json.RawMessage) json.RawMessage {
		if len(r) == 0 {
			return null
		}
		return r
	}
	if m.Method != "" {
		params := m.Params
		if len(params) == 0 {
			params = json.RawMessage("[]")
		}
		return json.Marshal(wireRequest{Method: m.Method, Params: params, ID: orNull(m.ID)})
	}
	return json.Marshal(wireResponse{Result: orNull(m.Result), Error: orNull(m.Error), ID: orNull(m.ID)})
}

// NewRequest builds a request or, with a nil id, a notification.
func NewRequest(method string, params any, id any) (*Message, error) {
	p, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	i, err := json.Marshal(id)
	if err != nil {
		return nil, err
	}
	return &Message{Method: method, Params: p, ID: i}, nil
}

// NewResult builds a successful response to the request with this id.
func NewResult(id json.RawMessage, result any) (*Message, error) {
	r, err := json.Marshal(result)
	if err != nil {
		return nil, err
	}
	return &Message{Result: r, ID: id}, nil
}

// NewError builds an error response to the request with this id. errObj is
// encoded as is: OVSDB sends {"error": NAME, "details": ...}, unixctl a
// string.
func NewError(id json.RawMessage, errObj any) (*Message, error) {
	e, err := json.Marshal(errObj)
	if err != nil {
		return nil, err
	}
	return &Message{Error: e, Result: null, ID: id}, nil
}

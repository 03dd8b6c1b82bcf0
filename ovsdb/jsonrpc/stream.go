package jsonrpc

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// MaxMessageSize bounds one incoming message, so a peer cannot make us buffer
// without limit.
const MaxMessageSize = 64 << 20

// ErrTooLarge is returned by Reader.Read for a message over MaxMessageSize.
var ErrTooLarge = errors.New("jsonrpc: message too large")

// Reader decodes consecutive messages from a stream.
type Reader struct {
	limited *limitReader
	dec     *json.Decoder
}

// NewReader reads messages from r.
func NewReader(r io.Reader) *Reader {
	lr := &limitReader{r: bufio.NewReaderSize(r, 64<<10)}
	dec := json.NewDecoder(lr)
	dec.UseNumber()
	return &Reader{limited: lr, dec: dec}
}

// Read returns the next message. A value that is not a JSON object, or an
// object that is neither a request nor a response, is an error; the stream
// cannot be resynchronised after one, so callers close the connection.
func (r *Reader) Read() (*Message, error) {
	r.limited.n = MaxMessageSize
	var raw json.RawMessage
	if err := r.dec.Decode(&raw); err != nil {
		if r.limited.n <= 0 {
			return nil, ErrTooLarge
		}
		return nil, err
	}
	return Parse(raw)
}

// Parse decodes one message and checks its JSON-RPC shape.
func Parse(raw []byte) (*Message, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, fmt.Errorf("jsonrpc: message is not a JSON object: %w", err)
	}
	m := &Message{ID: fields["id"], Params: fields["params"], Result: fields["result"], Error: fields["error"]}
	if method, ok := fields["method"]; ok {
		if err := json.Unmarshal(method, &m.Method); err != nil || m.Method == "" {
			return nil, errors.New("jsonrpc: \"method\" is not a non-empty string")
		}
		if len(m.Params) == 0 || m.Params[0] != '[' {
			if len(m.Params) != 0 && m.Params[0] == '{' {
				return nil, errors.New("jsonrpc: \"params\" must be an array")
			}
			if len(m.Params) != 0 && !isNull(m.Params) {
				return nil, errors.New("jsonrpc: \"params\" must be an array")
			}
			m.Params = json.RawMessage("[]")
		}
		if len(m.Result) != 0 || len(m.Error) != 0 {
			return nil, errors.New("jsonrpc: request has \"result\" or \"error\"")
		}
		return m, nil
	}
	if _, ok := fields["id"]; !ok {
		return nil, errors.New("jsonrpc: response without \"id\"")
	}
	if len(m.Result) == 0 && len(m.Error) == 0 {
		return nil, errors.New("jsonrpc: response without \"result\" or \"error\"")
	}
	return m, nil
}

type limitReader struct {
	r *bufio.Reader
	n int64
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, ErrTooLarge
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

// Writer encodes messages onto a stream. It is safe for concurrent use.
type Writer struct {
	mu sync.Mutex
	w  io.Writer
}

// NewWriter writes messages to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write encodes and writes one message in a single write call.
func (w *Writer) Write(m *Message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err = w.w.Write(b)
	return err
}

package jsonrpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"gvs/ovsdb/internal/fastjson"
)

// MaxMessageSize bounds one incoming message, so a peer cannot make us buffer
// without limit.
const MaxMessageSize = 64 << 20

// ErrTooLarge is returned by Reader.Read for a message over MaxMessageSize.
var ErrTooLarge = errors.New("jsonrpc: message too large")

// Reader decodes consecutive messages from a stream.
//
// A message that is a JSON object is framed by a light scan (strings,
// escapes and nesting only), then validated and split in one pass; the
// bytes are not run through encoding/json's scanner unless they are bad,
// when its error is the one returned, as before. Anything else at the top
// level (never a valid message) is handed to a json.Decoder over the rest
// of the stream, so its error is also encoding/json's.
type Reader struct {
	r   io.Reader
	buf []byte // buf[start:] is read and not yet returned
	// start is where the next message begins; scanned is how far the
	// current frame has been scanned, with the scan state below.
	start, scanned int
	depth          int
	inString       bool
	escaped        bool
	err            error // from the underlying reader, returned once buf is used up

	fallback *json.Decoder // once the stream held a non-object message
	limited  *limitReader
}

// NewReader reads messages from r.
func NewReader(r io.Reader) *Reader { return &Reader{r: r} }

const readChunk = 64 << 10

// fill reads more of the stream into buf.
func (r *Reader) fill() bool {
	if r.err != nil {
		return false
	}
	if r.start > 0 && r.start == len(r.buf) {
		r.buf, r.scanned, r.start = r.buf[:0], r.scanned-r.start, 0
	} else if r.start > cap(r.buf)/2 {
		n := copy(r.buf, r.buf[r.start:])
		r.buf, r.scanned, r.start = r.buf[:n], r.scanned-r.start, 0
	}
	if cap(r.buf)-len(r.buf) < readChunk {
		grown := make([]byte, len(r.buf), 2*cap(r.buf)+readChunk)
		copy(grown, r.buf)
		r.buf = grown
	}
	n, err := r.r.Read(r.buf[len(r.buf):cap(r.buf)])
	r.buf = r.buf[:len(r.buf)+n]
	if err != nil {
		r.err = err
	}
	return n > 0 || err == nil
}

// Read returns the next message. A value that is not a JSON object, or an
// object that is neither a request nor a response, is an error; the stream
// cannot be resynchronised after one, so callers close the connection.
func (r *Reader) Read() (*Message, error) {
	if r.fallback != nil {
		return r.readFallback()
	}
	// Skip the whitespace before the message.
	for {
		for r.start < len(r.buf) && isSpace(r.buf[r.start]) {
			r.start++
		}
		if r.start < len(r.buf) {
			break
		}
		if !r.fill() {
			return nil, r.err
		}
	}
	if r.buf[r.start] != '{' {
		return r.startFallback()
	}
	r.scanned, r.depth, r.inString, r.escaped = r.start, 0, false, false
	for {
		if end, ok := r.scan(); ok {
			if end-r.start > MaxMessageSize {
				return nil, ErrTooLarge
			}
			var raw []byte
			if end-r.start < readChunk/2 {
				raw = append([]byte(nil), r.buf[r.start:end]...)
				r.start = end
			} else {
				// A large message keeps the buffer it was read into;
				// what follows it moves to a new one.
				raw = r.buf[r.start:end:end]
				rest := make([]byte, len(r.buf)-end, max(readChunk, len(r.buf)-end))
				copy(rest, r.buf[end:])
				r.buf, r.start = rest, 0
			}
			fields, ok := fastjson.SplitObject(raw)
			if !ok {
				var v json.RawMessage
				if err := json.NewDecoder(bytes.NewReader(raw)).Decode(&v); err != nil {
					return nil, err
				}
				return Parse(raw)
			}
			return parseFields(fields)
		}
		if r.scanned-r.start > MaxMessageSize {
			return nil, ErrTooLarge
		}
		if !r.fill() {
			if r.err == io.EOF {
				// Report a syntax error in the part received first.
				var v json.RawMessage
				if err := json.NewDecoder(bytes.NewReader(r.buf[r.start:])).Decode(&v); err != io.ErrUnexpectedEOF && err != nil {
					return nil, err
				}
				return nil, io.ErrUnexpectedEOF
			}
			return nil, r.err
		}
	}
}

// scan continues framing the object at buf[start:]; it returns the index
// just past its closing brace once there is one.
func (r *Reader) scan() (int, bool) {
	buf := r.buf
	for i := r.scanned; i < len(buf); i++ {
		c := buf[i]
		if r.inString {
			switch {
			case r.escaped:
				r.escaped = false
			case c == '\\':
				r.escaped = true
			case c == '"':
				r.inString = false
			}
			continue
		}
		switch c {
		case '"':
			r.inString = true
		case '{', '[':
			r.depth++
		case '}', ']':
			r.depth--
			if r.depth == 0 {
				r.scanned = i + 1
				return i + 1, true
			}
		}
	}
	r.scanned = len(buf)
	return 0, false
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// startFallback switches to encoding/json for the rest of the stream.
func (r *Reader) startFallback() (*Message, error) {
	rest := io.Reader(bytes.NewReader(r.buf[r.start:]))
	if r.err == nil {
		rest = io.MultiReader(rest, r.r)
	} else if r.err != io.EOF {
		rest = io.MultiReader(rest, errReader{r.err})
	}
	r.limited = &limitReader{r: bufio.NewReaderSize(rest, readChunk)}
	r.fallback = json.NewDecoder(r.limited)
	r.fallback.UseNumber()
	r.buf = nil
	return r.readFallback()
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func (r *Reader) readFallback() (*Message, error) {
	r.limited.n = MaxMessageSize
	var raw json.RawMessage
	if err := r.fallback.Decode(&raw); err != nil {
		if r.limited.n <= 0 {
			return nil, ErrTooLarge
		}
		return nil, err
	}
	return Parse(raw)
}

// Parse decodes one message and checks its JSON-RPC shape.
func Parse(raw []byte) (*Message, error) {
	fields, ok := fastjson.SplitObject(raw)
	if !ok {
		var members map[string]json.RawMessage
		if err := json.Unmarshal(raw, &members); err != nil {
			return nil, fmt.Errorf("jsonrpc: message is not a JSON object: %w", err)
		}
		fields = make(map[string][]byte, len(members))
		for k, v := range members {
			fields[k] = v
		}
	}
	return parseFields(fields)
}

// parseFields checks the members of a message object.
func parseFields(fields map[string][]byte) (*Message, error) {
	m := &Message{ID: fields["id"], Params: fields["params"], Result: fields["result"], Error: fields["error"]}
	if method, ok := fields["method"]; ok {
		v, _ := fastjson.Decode(method)
		if m.Method, _ = v.(string); m.Method == "" {
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
	b, err := m.AppendJSON(nil)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err = w.w.Write(b)
	return err
}

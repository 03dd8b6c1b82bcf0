package ovsdbbench

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// callTimeout bounds every request.
const callTimeout = 10 * time.Second

type message struct {
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
	ID     json.RawMessage `json:"id"`
}

// client is a minimal JSON-RPC 1.0 client: requests, responses by id,
// echo answered, notifications delivered on notes.
type client struct {
	conn    net.Conn
	mu      sync.Mutex // guards enc, nextID, pending
	enc     *json.Encoder
	nextID  int
	pending map[string]chan message
	notes   chan message
	done    chan struct{}
	err     error
}

func dial(sock string) (*client, error) {
	conn, err := net.DialTimeout("unix", sock, callTimeout)
	if err != nil {
		return nil, err
	}
	c := &client{conn: conn, enc: json.NewEncoder(conn), pending: map[string]chan message{},
		notes: make(chan message, 1024), done: make(chan struct{})}
	go c.read()
	return c, nil
}

func (c *client) close() { c.conn.Close(); <-c.done }

func (c *client) read() {
	defer close(c.done)
	dec := json.NewDecoder(bufio.NewReaderSize(c.conn, 1<<16))
	for {
		var m message
		if err := dec.Decode(&m); err != nil {
			c.mu.Lock()
			c.err = err
			for _, ch := range c.pending {
				close(ch)
			}
			c.pending = nil
			c.mu.Unlock()
			return
		}
		switch {
		case m.Method == "echo":
			c.mu.Lock()
			c.enc.Encode(map[string]any{"result": m.Params, "error": nil, "id": m.ID})
			c.mu.Unlock()
		case m.Method != "":
			select {
			case c.notes <- m:
			default: // a slow consumer loses notes rather than stall the reader
			}
		default:
			c.mu.Lock()
			ch := c.pending[string(m.ID)]
			delete(c.pending, string(m.ID))
			c.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		}
	}
}

// send issues a request and returns the channel its response arrives on.
func (c *client) send(method string, params ...any) (chan message, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending == nil {
		return nil, fmt.Errorf("connection closed: %v", c.err)
	}
	c.nextID++
	id := fmt.Sprint(c.nextID)
	ch := make(chan message, 1)
	c.pending[id] = ch
	if params == nil {
		params = []any{}
	}
	if err := c.enc.Encode(map[string]any{"method": method, "params": params, "id": c.nextID}); err != nil {
		delete(c.pending, id)
		return nil, err
	}
	return ch, nil
}

func await(ch chan message) (json.RawMessage, error) {
	select {
	case m, ok := <-ch:
		if !ok {
			return nil, errors.New("connection closed")
		}
		if len(m.Error) > 0 && string(m.Error) != "null" {
			return nil, fmt.Errorf("error %s", m.Error)
		}
		return m.Result, nil
	case <-time.After(callTimeout):
		return nil, errors.New("no response")
	}
}

func (c *client) call(method string, params ...any) (json.RawMessage, error) {
	ch, err := c.send(method, params...)
	if err != nil {
		return nil, err
	}
	return await(ch)
}

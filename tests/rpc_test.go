package tests

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"gvs/ovsdb/jsonrpc"
)

// rpcClient is a minimal OVSDB client over gvs/ovsdb/jsonrpc, for the
// benchmarks: one reader goroutine routes responses to their callers by id,
// answers the server's echo probes and queues notifications.
type rpcClient struct {
	conn    net.Conn
	w       *jsonrpc.Writer
	mu      sync.Mutex
	pending map[string]chan *jsonrpc.Message
	nextID  int
	notes   chan *jsonrpc.Message // "update", "update2", "update3", "locked", ...
	readErr error
	closed  chan struct{} // closed when the reader stops; readErr is set then
}

const rpcTimeout = 10 * time.Second

func dialRPC(tb testing.TB, sock string) *rpcClient {
	tb.Helper()
	conn, err := net.Dial("unix", sock)
	if err != nil {
		tb.Fatal(err)
	}
	c := &rpcClient{
		conn:    conn,
		w:       jsonrpc.NewWriter(conn),
		pending: map[string]chan *jsonrpc.Message{},
		notes:   make(chan *jsonrpc.Message, 1024),
		closed:  make(chan struct{}),
	}
	go c.readLoop(jsonrpc.NewReader(conn))
	tb.Cleanup(func() {
		conn.Close()
		<-c.closed
	})
	return c
}

func (c *rpcClient) readLoop(r *jsonrpc.Reader) {
	defer close(c.closed)
	for {
		m, err := r.Read()
		if err != nil {
			c.readErr = err
			return
		}
		switch {
		case m.IsResponse():
			c.mu.Lock()
			ch := c.pending[string(m.ID)]
			delete(c.pending, string(m.ID))
			c.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		case m.IsRequest() && m.Method == "echo":
			reply, _ := jsonrpc.NewResult(m.ID, json.RawMessage(m.Params))
			c.w.Write(reply)
		case m.IsNotification():
			c.notes <- m
		}
	}
}

// send writes a request and returns the channel its response will arrive on.
func (c *rpcClient) send(method string, params ...any) (<-chan *jsonrpc.Message, error) {
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	ch := make(chan *jsonrpc.Message, 1)
	c.pending[strconv.Itoa(id)] = ch
	c.mu.Unlock()
	req, err := jsonrpc.NewRequest(method, params, id)
	if err != nil {
		return nil, err
	}
	return ch, c.w.Write(req)
}

// await waits for a response and returns its result, or its error as a Go
// error.
func (c *rpcClient) await(ch <-chan *jsonrpc.Message) (json.RawMessage, error) {
	select {
	case m := <-ch:
		if len(m.Error) != 0 && string(m.Error) != "null" {
			return nil, fmt.Errorf("server error: %s", m.Error)
		}
		return m.Result, nil
	case <-c.closed:
		return nil, fmt.Errorf("connection closed: %v", c.readErr)
	case <-time.After(rpcTimeout):
		return nil, errors.New("no response within " + rpcTimeout.String())
	}
}

func (c *rpcClient) call(method string, params ...any) (json.RawMessage, error) {
	ch, err := c.send(method, params...)
	if err != nil {
		return nil, err
	}
	return c.await(ch)
}

// opResult is one operation's result in a transact reply.
type opResult struct {
	UUID    []any  `json:"uuid"`
	Count   *int   `json:"count"`
	Error   string `json:"error"`
	Details string `json:"details"`
}

// transact runs one transaction and fails on any operation error.
func (c *rpcClient) transact(ops ...any) ([]opResult, error) {
	raw, err := c.call("transact", append([]any{"Open_vSwitch"}, ops...)...)
	if err != nil {
		return nil, err
	}
	return checkTransact(raw)
}

func checkTransact(raw json.RawMessage) ([]opResult, error) {
	var results []opResult
	if err := json.Unmarshal(raw, &results); err != nil {
		return nil, fmt.Errorf("transact reply %s: %v", raw, err)
	}
	for i, r := range results {
		if r.Error != "" {
			return nil, fmt.Errorf("operation %d: %s: %s", i, r.Error, r.Details)
		}
	}
	return results, nil
}

// uuidOf is the UUID string of an insert's result (["uuid","..."]).
func (r opResult) uuidOf() string {
	if len(r.UUID) == 2 {
		if s, ok := r.UUID[1].(string); ok {
			return s
		}
	}
	return ""
}

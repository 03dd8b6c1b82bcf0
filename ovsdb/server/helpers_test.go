package server

import (
	"encoding/json"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"gvs/ovsdb/db"
	"gvs/ovsdb/jsonrpc"
)

const testSchema = `{"name":"Test","version":"1.0.0","tables":{
 "Item":{"columns":{
   "name":{"type":"string"},
   "count":{"type":"integer"},
   "tags":{"type":{"key":"string","min":0,"max":"unlimited"}},
   "opts":{"type":{"key":"string","value":"string","min":0,"max":"unlimited"}}},
  "isRoot":true},
 "Other":{"columns":{"x":{"type":"integer"}},"isRoot":true}}}`

func testLogger(t testing.TB) *slog.Logger {
	if os.Getenv("SERVER_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

func newTestDB(t testing.TB, schemaJSON string) *db.Database {
	t.Helper()
	schema, err := db.ParseSchema([]byte(schemaJSON))
	if err != nil {
		t.Fatalf("schema: %v", err)
	}
	return db.New(schema, testLogger(t))
}

// newTestServer serves a fresh Test database.
func newTestServer(t testing.TB) (*Server, *db.Database) {
	t.Helper()
	srv := New(testLogger(t))
	d := newTestDB(t, testSchema)
	if err := srv.AddDatabase(d); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv, d
}

// client is a test JSON-RPC peer that records everything it receives.
type client struct {
	t    testing.TB
	conn net.Conn
	w    *jsonrpc.Writer

	mu     sync.Mutex
	cond   *sync.Cond
	log    []*jsonrpc.Message
	closed bool
	nextID int
	// answerEcho makes the reader answer the server's echo requests.
	answerEcho bool
}

func newClient(t testing.TB, conn net.Conn) *client {
	c := &client{t: t, conn: conn, w: jsonrpc.NewWriter(conn), answerEcho: true}
	c.cond = sync.NewCond(&c.mu)
	go c.readLoop()
	t.Cleanup(func() { conn.Close() })
	return c
}

// pipeClient connects a client to srv through net.Pipe.
func pipeClient(t testing.TB, srv *Server) *client {
	a, b := net.Pipe()
	go srv.ServeConn(b)
	return newClient(t, a)
}

func (c *client) readLoop() {
	r := jsonrpc.NewReader(c.conn)
	for {
		m, err := r.Read()
		c.mu.Lock()
		if err != nil {
			c.closed = true
			c.cond.Broadcast()
			c.mu.Unlock()
			return
		}
		c.log = append(c.log, m)
		echo := c.answerEcho && m.IsRequest() && m.Method == "echo"
		c.cond.Broadcast()
		c.mu.Unlock()
		if echo {
			reply, _ := jsonrpc.NewResult(m.ID, m.Params)
			c.w.Write(reply)
		}
	}
}

// waitFor waits until pred holds for some received message at or after
// index from, and returns that message and its index.
func (c *client) waitFor(from int, timeout time.Duration, pred func(*jsonrpc.Message) bool) (*jsonrpc.Message, int) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	timer := time.AfterFunc(timeout, func() {
		c.mu.Lock()
		c.cond.Broadcast()
		c.mu.Unlock()
	})
	defer timer.Stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		for i := from; i < len(c.log); i++ {
			if pred(c.log[i]) {
				return c.log[i], i
			}
		}
		if c.closed || time.Now().After(deadline) {
			return nil, -1
		}
		c.cond.Wait()
	}
}

func (c *client) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

func (c *client) send(method string, id any, params ...any) {
	c.t.Helper()
	if params == nil {
		params = []any{}
	}
	m, err := jsonrpc.NewRequest(method, params, id)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := c.w.Write(m); err != nil {
		c.t.Fatalf("write %s: %v", method, err)
	}
}

// call sends a request and waits for its response.
func (c *client) call(method string, params ...any) *jsonrpc.Message {
	c.t.Helper()
	m, _ := c.callIndex(method, params...)
	return m
}

func (c *client) callIndex(method string, params ...any) (*jsonrpc.Message, int) {
	c.t.Helper()
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	c.mu.Unlock()
	c.send(method, id, params...)
	return c.response(id, 5*time.Second)
}

func (c *client) response(id int, timeout time.Duration) (*jsonrpc.Message, int) {
	c.t.Helper()
	want := []byte(strings.TrimSpace(string(mustJSON(id))))
	m, i := c.waitFor(0, timeout, func(m *jsonrpc.Message) bool {
		return m.IsResponse() && string(m.ID) == string(want)
	})
	if m == nil {
		c.t.Fatalf("no response to request %d", id)
	}
	return m, i
}

// result decodes a successful response's result into v.
func (c *client) result(m *jsonrpc.Message, v any) {
	c.t.Helper()
	if len(m.Error) > 0 && string(m.Error) != "null" {
		c.t.Fatalf("error response: %s", m.Error)
	}
	if err := json.Unmarshal(m.Result, v); err != nil {
		c.t.Fatalf("decode %s: %v", m.Result, err)
	}
}

// note waits for a notification with this method at or after index from.
func (c *client) note(from int, method string) (*jsonrpc.Message, int) {
	c.t.Helper()
	return c.waitFor(from, 5*time.Second, func(m *jsonrpc.Message) bool {
		return m.IsNotification() && m.Method == method
	})
}

func (c *client) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.log)
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }

// errorName returns the "error" member of an error response, or the error
// itself when it is a string.
func errorName(t testing.TB, m *jsonrpc.Message) string {
	t.Helper()
	var s string
	if json.Unmarshal(m.Error, &s) == nil {
		return s
	}
	var obj struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(m.Error, &obj); err != nil || obj.Error == "" {
		t.Fatalf("not an error response: %+v", m)
	}
	return obj.Error
}

// transactOK runs a transaction and fails the test on any error in it.
func (c *client) transactOK(dbName string, ops ...string) []map[string]any {
	c.t.Helper()
	params := []any{dbName}
	for _, op := range ops {
		params = append(params, raw(op))
	}
	m := c.call("transact", params...)
	var results []map[string]any
	c.result(m, &results)
	for _, r := range results {
		if r != nil && r["error"] != nil {
			c.t.Fatalf("transaction failed: %s", m.Result)
		}
	}
	return results
}

func insertItem(name string, count int) string {
	return string(mustJSON(map[string]any{"op": "insert", "table": "Item",
		"row": map[string]any{"name": name, "count": count}}))
}

// updates decodes the table-updates in an update notification's last param.
func updatesOf(t testing.TB, m *jsonrpc.Message) map[string]map[string]map[string]map[string]any {
	t.Helper()
	var params []json.RawMessage
	if err := json.Unmarshal(m.Params, &params); err != nil || len(params) < 2 {
		t.Fatalf("bad update params %s", m.Params)
	}
	var u map[string]map[string]map[string]map[string]any
	if err := json.Unmarshal(params[len(params)-1], &u); err != nil {
		t.Fatalf("bad table-updates %s: %v", params[len(params)-1], err)
	}
	return u
}

// onlyRow returns the single row update of a table in u.
func onlyRow(t testing.TB, u map[string]map[string]map[string]map[string]any, table string) (string, map[string]map[string]any) {
	t.Helper()
	rows := u[table]
	if len(rows) != 1 {
		t.Fatalf("want 1 row update in %s, got %v", table, u)
	}
	for uuid, r := range rows {
		return uuid, r
	}
	return "", nil
}

func mustMessage(s string) *jsonrpc.Message {
	m, err := jsonrpc.Parse([]byte(s))
	if err != nil {
		panic(err)
	}
	return m
}

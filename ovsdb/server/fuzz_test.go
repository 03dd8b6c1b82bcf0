package server

import (
	"io"
	"net"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"gvs/ovsdb/jsonrpc"
)

// socketPair returns the two ends of a connected unix stream socket pair.
func socketPair(t testing.TB) (*net.UnixConn, *net.UnixConn) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	conn := func(fd int) *net.UnixConn {
		f := os.NewFile(uintptr(fd), "socketpair")
		defer f.Close()
		c, err := net.FileConn(f)
		if err != nil {
			t.Fatal(err)
		}
		return c.(*net.UnixConn)
	}
	return conn(fds[0]), conn(fds[1])
}

var fuzzSeeds = []string{
	`{"method":"list_dbs","params":[],"id":1}`,
	`{"method":"transact","params":["Test",{"op":"insert","table":"Item","row":{"name":"a","count":1},"uuid-name":"x"},{"op":"comment","comment":"hi"}],"id":2}`,
	`{"method":"monitor_cond_since","params":["Test",["m"],{"Item":[{"columns":["name"],"where":[["count",">",0],true]}]},"00000000-0000-0000-0000-000000000000"],"id":3}`,
	`{"method":"monitor","params":["Test",null,{"Item":{"select":{"initial":false}},"Other":[{}]}],"id":4}{"method":"monitor_cancel","params":[null],"id":5}`,
	`{"method":"monitor_cond","params":["_Server","s",{"Database":[{"columns":["name"]}]}],"id":6}{"method":"monitor_cond_change","params":["s","t",{"Database":[{"where":[["name","==","Test"]]}]}],"id":7}`,
	`{"method":"transact","params":["Test",{"op":"wait","table":"Item","where":[],"columns":["count"],"until":"==","rows":[{"count":9}],"timeout":100000}],"id":"w"}{"method":"cancel","params":["w"],"id":null}`,
	`{"method":"lock","params":["L"],"id":8}{"method":"steal","params":["L"],"id":9}{"method":"unlock","params":["L"],"id":10}`,
	`{"method":"echo","params":[1,{"a":[]}],"id":11}{"id":"echo","result":[],"error":null}{"method":"set_db_change_aware","params":[true],"id":12}`,
	`{"method":"get_schema","params":["Nope"],"id":13}{"method":"get_server_id","params":null,"id":14}{"method":"bogus","id":15}`,
	`{"id":99,"result":1,"error":null}`,
	`{"method":"set_db_change_aware","params":[true],"id":20}{"method":"monitor_cond","params":["Test","m",{"Item":[{}]}],"id":21}{"method":"convert","params":["Test",{"name":"Test","version":"2.0.0","tables":{"Item":{"columns":{"name":{"type":"string"},"new":{"type":"integer"}},"isRoot":true}}}],"id":22}{"method":"transact","params":["Test",{"op":"insert","table":"Item","row":{"new":1}}],"id":23}`,
	`{"method":"convert","params":["Test",{"name":"Test","tables":{}}],"id":24}{"method":"convert","params":["_Server",{}],"id":25}`,
	`[1,2,3]`,
	`{"method":"transact","params":["Test",{"op":"insert","table":"Item","row":{"tags":["set",["a","b"]],"opts":["map",[["k","v"]]]}}],"id":16}{"method":"transact","params":["Test",{"op":"mutate","table":"Item","where":[],"mutations":[["count","+=",1]]}],"id":17}`,
}

// FuzzServeMessages feeds arbitrary bytes to a session. The session must
// neither panic nor hang: once the client half-closes, the server must
// answer what it received and end the session.
func FuzzServeMessages(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		began := time.Now()
		defer func() {
			if d := time.Since(began); d > time.Second && os.Getenv("FUZZ_SLOW_LOG") != "" {
				fh, _ := os.OpenFile(os.Getenv("FUZZ_SLOW_LOG"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
				fh.Write([]byte(d.String() + " " + strconv.Quote(string(data)) + "\n"))
				fh.Close()
			}
		}()
		srv := New(testLogger(t))
		defer srv.Close()
		if err := srv.AddDatabase(newTestDB(t, testSchema)); err != nil {
			t.Fatal(err)
		}
		clientEnd, serverEnd := socketPair(t)
		defer clientEnd.Close()
		served := make(chan struct{})
		go func() {
			srv.ServeConn(serverEnd)
			close(served)
		}()
		drained := make(chan struct{})
		go func() {
			io.Copy(io.Discard, clientEnd)
			close(drained)
		}()
		clientEnd.Write(data)
		clientEnd.CloseWrite()
		select {
		case <-drained:
		case <-time.After(10 * time.Second):
			t.Fatalf("session did not end after the client half-closed; input %q", data)
		}
		select {
		case <-served:
		case <-time.After(10 * time.Second):
			t.Fatalf("ServeConn did not return; input %q", data)
		}
	})
}

func TestRepliesFlushedAfterClientHalfCloses(t *testing.T) {
	srv, _ := newTestServer(t)
	clientEnd, serverEnd := socketPair(t)
	defer clientEnd.Close()
	go srv.ServeConn(serverEnd)
	clientEnd.Write([]byte(`{"method":"transact","params":["Test",{"op":"insert","table":"Item","row":{"name":"x"}}],"id":1}` +
		`{"method":"list_dbs","params":[],"id":2}`))
	clientEnd.CloseWrite()
	clientEnd.SetReadDeadline(time.Now().Add(5 * time.Second))
	r := jsonrpc.NewReader(clientEnd)
	for _, id := range []string{"1", "2"} {
		m, err := r.Read()
		if err != nil || string(m.ID) != id || string(m.Error) != "null" {
			t.Fatalf("reply %s: %+v %v", id, m, err)
		}
	}
	if _, err := r.Read(); err != io.EOF {
		t.Fatalf("want EOF after the replies, got %v", err)
	}
}

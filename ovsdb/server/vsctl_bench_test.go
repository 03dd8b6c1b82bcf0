package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gvs/ovsdb/db"
	"gvs/ovsdb/jsonrpc"
	"gvs/ovsdb/storage"
)

// BenchmarkVsctlAddPort runs the real ovs-vsctl against an in-process
// server whose database is a file (as gvs-ovsdb-server and gvs-vswitchd
// serve it): each op is one `ovs-vsctl --no-wait add-port` followed by
// `del-port` of the same port, on a bridge that already has ports/ ports.
// ns/op is dominated by ovs-vsctl itself; run it with -cpuprofile to see
// only the server's share (the tool runs in its own process). The
// reconciler's monitor is stood in for by a session monitoring Bridge,
// Port and Interface, so that the update fan-out is paid too.
func BenchmarkVsctlAddPort(b *testing.B) {
	for _, ports := range []int{10, 1000} {
		b.Run(fmt.Sprintf("ports=%d", ports), func(b *testing.B) {
			sock, _ := vsctlBenchServer(b)
			remote := "--db=unix:" + sock
			vsctl := func(args ...string) {
				b.Helper()
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				cmd := exec.CommandContext(ctx, "/usr/bin/ovs-vsctl", append([]string{remote, "--no-wait"}, args...)...)
				cmd.Env = append(os.Environ(), "OVS_RUNDIR="+b.TempDir())
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("ovs-vsctl %s: %v\n%s", strings.Join(args, " "), err, out)
				}
			}
			vsctl("init")
			vsctl("add-br", "br0")
			args := []string{}
			for i := 0; i < ports; i++ {
				args = append(args, "--", "add-port", "br0", fmt.Sprintf("p%d", i))
			}
			vsctl(args[1:]...)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				vsctl("add-port", "br0", "x", "--", "set", "Interface", "x", "type=internal")
				vsctl("del-port", "br0", "x")
			}
		})
	}
}

// vsctlBenchServer serves the Open_vSwitch database from a file in a
// temporary directory, with one other session monitoring it the way the
// reconciler does.
func vsctlBenchServer(b *testing.B) (sock string, srv *Server) {
	b.Helper()
	needBinary(b, "/usr/bin/ovs-vsctl")
	schemaJSON, err := os.ReadFile(vswitchSchemaPath)
	if err != nil {
		b.Skipf("no vswitch schema: %v", err)
	}
	dir := b.TempDir()
	path := filepath.Join(dir, "conf.db")
	if err := storage.Create(path, schemaJSON); err != nil {
		b.Fatal(err)
	}
	st, err := storage.Open(path, testLogger(b), storage.Options{})
	if err != nil {
		b.Fatal(err)
	}
	srv = New(testLogger(b))
	b.Cleanup(func() {
		srv.Close()
		st.Close()
	})
	if err := srv.AddDatabase(st.Database()); err != nil {
		b.Fatal(err)
	}
	sock = filepath.Join(dir, "db.sock")
	if err := srv.AddRemote("punix:" + sock); err != nil {
		b.Fatal(err)
	}
	mon := pipeClient(b, srv)
	var u map[string]any
	mon.result(mon.call("monitor_cond", "Open_vSwitch", "reconciler", map[string]any{
		"Open_vSwitch": []any{map[string]any{}},
		"Bridge":       []any{map[string]any{}},
		"Port":         []any{map[string]any{}},
		"Interface":    []any{map[string]any{}},
	}), &u)
	return sock, srv
}

// vsctlState is a database of ports ports on br0, as ovs-vsctl sees it.
type vsctlState struct {
	root, bridge db.UUID
	ports        []db.UUID // Port rows, br0's own first
	ifaces       []db.UUID // their Interface rows
}

func uuidJSON(u db.UUID) []any { return []any{"uuid", string(u)} }

// populateVswitch adds br0 and ports ports to an empty Open_vSwitch db.
func populateVswitch(b *testing.B, d *db.Database, ports int) *vsctlState {
	b.Helper()
	ops := []any{
		map[string]any{"op": "insert", "table": "Open_vSwitch", "row": map[string]any{"bridges": []any{"named-uuid", "br"}}},
	}
	portRefs := []any{}
	for i := 0; i <= ports; i++ {
		name := fmt.Sprintf("p%d", i)
		if i == 0 {
			name = "br0"
		}
		ops = append(ops,
			map[string]any{"op": "insert", "table": "Interface", "row": map[string]any{"name": name}, "uuid-name": fmt.Sprintf("i%d", i)},
			map[string]any{"op": "insert", "table": "Port", "row": map[string]any{"name": name, "interfaces": []any{"named-uuid", fmt.Sprintf("i%d", i)}}, "uuid-name": fmt.Sprintf("p%d", i)})
		portRefs = append(portRefs, []any{"named-uuid", fmt.Sprintf("p%d", i)})
	}
	ops = append(ops, map[string]any{"op": "insert", "table": "Bridge", "uuid-name": "br", "row": map[string]any{"name": "br0", "ports": []any{"set", portRefs}}})
	res := d.Transact(rawOps(b, ops), db.TxnEnv{})
	if res.Commit == nil {
		b.Fatalf("populating: %v", res.Results)
	}
	uuidOf := func(i int) db.UUID {
		return db.UUID(res.Results[i].(map[string]any)["uuid"].([]any)[1].(string))
	}
	st := &vsctlState{root: uuidOf(0), bridge: uuidOf(len(ops) - 1)}
	for i := 0; i <= ports; i++ {
		st.ifaces = append(st.ifaces, uuidOf(1+2*i))
		st.ports = append(st.ports, uuidOf(2+2*i))
	}
	return st
}

func rawOps(b *testing.B, ops []any) []json.RawMessage {
	out := make([]json.RawMessage, len(ops))
	for i, op := range ops {
		raw, err := json.Marshal(op)
		if err != nil {
			b.Fatal(err)
		}
		out[i] = raw
	}
	return out
}

// transaction is what ovs-vsctl sends for add-port x (add) or del-port x:
// a wait on everything it read (every port's interfaces, the bridge's
// ports, the root's bridges), then the change. Port x gets UUID x, so that
// both transactions can be encoded once.
func (st *vsctlState) transaction(add bool, x db.UUID) []any {
	params := []any{"Open_vSwitch",
		map[string]any{"op": "wait", "table": "Open_vSwitch", "timeout": 0, "until": "==", "columns": []string{"bridges"},
			"where": []any{[]any{"_uuid", "==", uuidJSON(st.root)}}, "rows": []any{map[string]any{"bridges": uuidJSON(st.bridge)}}}}
	current := []any{}
	for i, p := range st.ports {
		params = append(params, map[string]any{"op": "wait", "table": "Port", "timeout": 0, "until": "==", "columns": []string{"interfaces"},
			"where": []any{[]any{"_uuid", "==", uuidJSON(p)}}, "rows": []any{map[string]any{"interfaces": uuidJSON(st.ifaces[i])}}})
		current = append(current, uuidJSON(p))
	}
	if !add {
		current = append(current, uuidJSON(x))
	}
	params = append(params, map[string]any{"op": "wait", "table": "Bridge", "timeout": 0, "until": "==", "columns": []string{"ports"},
		"where": []any{[]any{"_uuid", "==", uuidJSON(st.bridge)}}, "rows": []any{map[string]any{"ports": []any{"set", current}}}})
	next := []any{}
	for _, p := range st.ports {
		next = append(next, uuidJSON(p))
	}
	if add {
		params = append(params,
			map[string]any{"op": "insert", "table": "Interface", "uuid-name": "rowi", "row": map[string]any{"name": "x", "type": "internal"}},
			map[string]any{"op": "insert", "table": "Port", "uuid-name": "rowp", "uuid": string(x), "row": map[string]any{"name": "x", "interfaces": []any{"named-uuid", "rowi"}}})
		next = append(next, []any{"named-uuid", "rowp"})
	}
	return append(params,
		map[string]any{"op": "update", "table": "Bridge", "where": []any{[]any{"_uuid", "==", uuidJSON(st.bridge)}}, "row": map[string]any{"ports": []any{"set", next}}},
		map[string]any{"op": "mutate", "table": "Open_vSwitch", "where": []any{[]any{"_uuid", "==", uuidJSON(st.root)}}, "mutations": []any{[]any{"next_cfg", "+=", 1}}},
		map[string]any{"op": "comment", "comment": "ovs-vsctl: ovs-vsctl --no-wait add-port br0 x"})
}

// rawClient is a bare JSON-RPC peer for benchmarks: it keeps nothing.
type rawClient struct {
	conn net.Conn
	r    *jsonrpc.Reader
}

func (c *rawClient) call(b *testing.B, method string, params []any) *jsonrpc.Message {
	req, err := jsonrpc.NewRequest(method, params, 1)
	if err != nil {
		b.Fatal(err)
	}
	raw, err := req.AppendJSON(nil)
	if err != nil {
		b.Fatal(err)
	}
	return c.callRaw(b, raw)
}

// callRaw sends an encoded request and waits for its reply.
func (c *rawClient) callRaw(b *testing.B, req []byte) *jsonrpc.Message {
	if _, err := c.conn.Write(req); err != nil {
		b.Fatal(err)
	}
	for {
		m, err := c.r.Read()
		if err != nil {
			b.Fatal(err)
		}
		if m.IsResponse() {
			if string(m.Error) != "null" {
				b.Fatalf("%s: %s", req[:min(len(req), 60)], m.Error)
			}
			return m
		}
	}
}

// BenchmarkVsctlCallServerSide is the server's share of one ovs-vsctl
// add-port at 1,000 ports, without ovs-vsctl: "monitor" is the
// monitor_cond_since ovs-vsctl starts with (its initial reply lists every
// port and interface), "transact" its add-port transaction followed by the
// matching del-port (1,000 waits and the whole Bridge.ports set each), with
// another session monitoring as the reconciler does.
func BenchmarkVsctlCallServerSide(b *testing.B) {
	schemaJSON, err := os.ReadFile(vswitchSchemaPath)
	if err != nil {
		b.Skipf("no vswitch schema: %v", err)
	}
	setup := func(b *testing.B) (*rawClient, *vsctlState) {
		srv := New(testLogger(b))
		b.Cleanup(func() { srv.Close() })
		d := newTestDB(b, string(schemaJSON))
		if err := srv.AddDatabase(d); err != nil {
			b.Fatal(err)
		}
		st := populateVswitch(b, d, 1000)
		dial := func() *rawClient {
			a, z := net.Pipe()
			go srv.ServeConn(z)
			b.Cleanup(func() { a.Close() })
			return &rawClient{conn: a, r: jsonrpc.NewReader(a)}
		}
		reconciler := dial()
		reconciler.call(b, "monitor_cond", []any{"Open_vSwitch", "r", map[string]any{
			"Open_vSwitch": []any{map[string]any{}}, "Bridge": []any{map[string]any{}},
			"Port": []any{map[string]any{}}, "Interface": []any{map[string]any{}}}})
		go func() {
			for {
				if _, err := reconciler.r.Read(); err != nil {
					return
				}
			}
		}()
		return dial(), st
	}
	b.Run("monitor", func(b *testing.B) {
		c, _ := setup(b)
		requests := map[string]any{
			"Port":         []any{map[string]any{"columns": []string{"fake_bridge", "interfaces", "name", "tag"}}},
			"Interface":    []any{map[string]any{"columns": []string{"error", "name", "ofport", "type"}}},
			"Controller":   []any{map[string]any{"columns": []string{}}},
			"Bridge":       []any{map[string]any{"columns": []string{"controller", "fail_mode", "name", "ports"}}},
			"Open_vSwitch": []any{map[string]any{"columns": []string{"bridges"}}},
		}
		id := []any{"monid", "Open_vSwitch"}
		b.ReportAllocs()
		for b.Loop() {
			c.call(b, "monitor_cond_since", []any{"Open_vSwitch", id, requests, "00000000-0000-0000-0000-000000000000"})
			c.call(b, "monitor_cancel", []any{id})
		}
	})
	b.Run("transact", func(b *testing.B) {
		c, st := setup(b)
		const x = db.UUID("0d3ee0a2-4cb4-4b6a-9d59-6a1c2b3d4e5f")
		encode := func(params []any) []byte {
			req, err := jsonrpc.NewRequest("transact", params, 1)
			if err != nil {
				b.Fatal(err)
			}
			raw, err := req.AppendJSON(nil)
			if err != nil {
				b.Fatal(err)
			}
			return raw
		}
		add, del := encode(st.transaction(true, x)), encode(st.transaction(false, x))
		b.ReportAllocs()
		for b.Loop() {
			c.callRaw(b, add)
			c.callRaw(b, del)
		}
	})
}

package tests

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkOVSDB compares our server with Debian's on an ovs-vsctl-like
// workload over a raw JSON-RPC client: each op is one transaction that adds
// port p to br0 or removes it again, built the way ovs-vsctl builds
// add-port/del-port (a wait on what it read, inserts linked by uuid-name,
// the whole Bridge.ports set, next_cfg += 1, a comment).
//
//	transact/<server>:        ns/op and txn/s of back-to-back transactions
//	monitor-latency/<server>: with a second session monitoring Bridge and
//	                          Port, ns/update is the time from sending the
//	                          transaction until that session has the update
//
// No assertion depends on timing.
func BenchmarkOVSDB(b *testing.B) {
	refKind, oursKind := sides(b)
	for _, kind := range []serverKind{oursKind, refKind} {
		s := startServer(b, kind)
		w := newPortWorkload(b, s)
		b.Run("transact/"+kind.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if err := w.toggle(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "txn/s")
		})
		b.Run("monitor-latency/"+kind.name, func(b *testing.B) {
			mon := dialRPC(b, s.sock)
			if _, err := mon.call("monitor", "Open_vSwitch", "bench",
				map[string]any{"Bridge": map[string]any{"columns": []string{"ports"}}, "Port": map[string]any{"columns": []string{"name"}}}); err != nil {
				b.Fatal(err)
			}
			var total time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				reply, err := w.client.send("transact", w.nextTransaction()...)
				if err != nil {
					b.Fatal(err)
				}
				select {
				case <-mon.notes:
					total += time.Since(start)
				case <-time.After(rpcTimeout):
					b.Fatalf("no monitor update within %v", rpcTimeout)
				}
				raw, err := w.client.await(reply)
				if err != nil {
					b.Fatal(err)
				}
				res, err := checkTransact(raw)
				if err != nil {
					b.Fatal(err)
				}
				w.record(res)
			}
			b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "ns/update")
		})
	}
}

// portWorkload alternately adds and removes port p on br0.
type portWorkload struct {
	client      *rpcClient
	root        string // Open_vSwitch row
	bridge      string // br0
	bridgePort  string // br0's own port
	addedPort   string // p's Port row while it is on br0, else ""
	pendingPort bool   // the transaction in flight adds p
}

func newPortWorkload(tb testing.TB, s *server) *portWorkload {
	tb.Helper()
	c := dialRPC(tb, s.sock)
	res, err := c.transact(
		map[string]any{"op": "insert", "table": "Open_vSwitch", "row": map[string]any{"bridges": namedUUID("br")}, "uuid-name": "root"},
		map[string]any{"op": "insert", "table": "Interface", "row": map[string]any{"name": "br0", "type": "internal"}, "uuid-name": "i"},
		map[string]any{"op": "insert", "table": "Port", "row": map[string]any{"name": "br0", "interfaces": namedUUID("i")}, "uuid-name": "p"},
		map[string]any{"op": "insert", "table": "Bridge", "row": map[string]any{"name": "br0", "ports": namedUUID("p")}, "uuid-name": "br"},
	)
	if err != nil {
		tb.Fatalf("%s: setting up br0: %v", s.kind.name, err)
	}
	return &portWorkload{client: c, root: res[0].uuidOf(), bridgePort: res[2].uuidOf(), bridge: res[3].uuidOf()}
}

func namedUUID(name string) []any { return []any{"named-uuid", name} }
func uuidRef(u string) []any      { return []any{"uuid", u} }

func whereUUID(u string) []any { return []any{[]any{"_uuid", "==", uuidRef(u)}} }

// nextTransaction is the operations of the next add or remove.
func (w *portWorkload) nextTransaction() []any {
	current := []any{uuidRef(w.bridgePort)}
	if w.addedPort != "" {
		current = append(current, uuidRef(w.addedPort))
	}
	ops := []any{"Open_vSwitch",
		map[string]any{"op": "wait", "timeout": 0, "table": "Bridge", "where": whereUUID(w.bridge),
			"columns": []string{"ports"}, "until": "==", "rows": []any{map[string]any{"ports": []any{"set", current}}}},
	}
	comment := "ovs-vsctl: ovs-vsctl del-port br0 p"
	if w.addedPort == "" {
		w.pendingPort = true
		comment = "ovs-vsctl: ovs-vsctl add-port br0 p"
		ops = append(ops,
			map[string]any{"op": "insert", "table": "Interface", "row": map[string]any{"name": "p"}, "uuid-name": "rowi"},
			map[string]any{"op": "insert", "table": "Port", "row": map[string]any{"name": "p", "interfaces": namedUUID("rowi")}, "uuid-name": "rowp"},
			map[string]any{"op": "update", "table": "Bridge", "where": whereUUID(w.bridge),
				"row": map[string]any{"ports": []any{"set", []any{uuidRef(w.bridgePort), namedUUID("rowp")}}}},
		)
	} else {
		w.pendingPort = false
		ops = append(ops, map[string]any{"op": "update", "table": "Bridge", "where": whereUUID(w.bridge),
			"row": map[string]any{"ports": []any{"set", []any{uuidRef(w.bridgePort)}}}})
	}
	return append(ops,
		map[string]any{"op": "mutate", "table": "Open_vSwitch", "where": whereUUID(w.root), "mutations": []any{[]any{"next_cfg", "+=", 1}}},
		map[string]any{"op": "comment", "comment": comment},
	)
}

// toggle runs one add or remove synchronously.
func (w *portWorkload) toggle() error {
	ops := w.nextTransaction()
	raw, err := w.client.call("transact", ops...)
	if err != nil {
		return err
	}
	res, err := checkTransact(raw)
	if err != nil {
		return err
	}
	w.record(res)
	return nil
}

// record updates the workload's view after a successful transaction.
func (w *portWorkload) record(res []opResult) {
	if w.pendingPort {
		w.addedPort = res[2].uuidOf() // ops: wait, insert Interface, insert Port, ...
	} else {
		w.addedPort = ""
	}
}

// BenchmarkVsctlAddPort1000 runs the real ovs-vsctl against our server and
// Debian's, each with 1,000 ports on br0: one op is `ovs-vsctl --no-wait
// add-port br0 x -- set Interface x type=internal` then `del-port br0 x`,
// so ns/op covers two calls. server-ms/op is the CPU time the server
// process spent per op (user+system from /proc), the part that is the
// server's and not ovs-vsctl's. No assertion depends on timing.
func BenchmarkVsctlAddPort1000(b *testing.B) {
	refKind, oursKind := sides(b, vsctlPath)
	for _, kind := range []serverKind{oursKind, refKind} {
		b.Run(kind.name, func(b *testing.B) {
			s := startServer(b, kind)
			vsctl := func(args ...string) {
				b.Helper()
				if r := s.vsctl(b, append([]string{"--no-wait"}, args...)...); r.exit != 0 {
					b.Fatalf("ovs-vsctl %s: %s", strings.Join(args, " "), r)
				}
			}
			vsctl("init")
			vsctl("add-br", "br0")
			args := []string{}
			for i := 0; i < 1000; i++ {
				args = append(args, "--", "add-port", "br0", fmt.Sprintf("p%d", i))
			}
			vsctl(args[1:]...)
			cpu0 := processCPU(b, s.cmd.Process.Pid)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				vsctl("add-port", "br0", "x", "--", "set", "Interface", "x", "type=internal")
				vsctl("del-port", "br0", "x")
			}
			b.StopTimer()
			cpu := processCPU(b, s.cmd.Process.Pid) - cpu0
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "server-ms/op")
		})
	}
}

// processCPU is the user+system CPU time process pid has used.
func processCPU(tb testing.TB, pid int) time.Duration {
	tb.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		tb.Fatal(err)
	}
	// Fields after the command name, which is in parentheses.
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		tb.Fatalf("/proc/%d/stat: %q", pid, stat)
	}
	const ticksPerSecond = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / ticksPerSecond
}

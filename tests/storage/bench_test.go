package storagetest

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// servers are the two sides every benchmark runs, in the same run.
func servers(b *testing.B) map[string]string {
	needTools(b, debianServer, ovsdbTool, ovsAppctl)
	return map[string]string{"gvs": bin.server, "debian": debianServer}
}

// BenchmarkCommit measures committed transactions per second of one client
// inserting rows, with and without fsync ("commit" "durable": true), for
// gvs-ovsdb-server and Debian's ovsdb-server.
func BenchmarkCommit(b *testing.B) {
	for _, name := range []string{"gvs", "debian"} {
		for _, durable := range []bool{false, true} {
			mode := "nosync"
			if durable {
				mode = "durable"
			}
			b.Run(name+"/"+mode, func(b *testing.B) {
				binary := servers(b)[name]
				dir := newDir(b)
				dbFile := filepath.Join(dir, "bench.db")
				os.WriteFile(filepath.Join(dir, "s.ovsschema"), []byte(killSchema), 0o644)
				run(b, nil, ovsdbTool, "create", dbFile, filepath.Join(dir, "s.ovsschema"))
				s := startServer(b, binary, dir, dbFile)
				c, err := dial(s.sock)
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					ops := []any{map[string]any{"op": "insert", "table": "Item", "row": map[string]any{"client": 1, "n": i, "pad": "some padding text"}}}
					if durable {
						ops = append(ops, map[string]any{"op": "commit", "durable": true})
					}
					if _, err := c.transact("kill", ops...); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "txn/s")
				s.stop(b)
			})
		}
	}
}

// makeTenThousandPorts writes an Open_vSwitch database with one bridge of
// 10,000 ports (each with its interface), added 100 at a time through a
// gvs server, so the file is a log of 100 such transactions.
func makeTenThousandPorts(b *testing.B, dir string) string {
	dbFile := filepath.Join(dir, "conf.db")
	run(b, nil, ovsdbTool, "create", dbFile, vswitchSchema)
	s := startServer(b, bin.server, dir, dbFile)
	c, err := dial(s.sock)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if _, err := c.transact("Open_vSwitch",
		map[string]any{"op": "insert", "table": "Bridge", "row": map[string]any{"name": "br0"}, "uuid-name": "br"},
		map[string]any{"op": "insert", "table": "Open_vSwitch", "row": map[string]any{"bridges": []any{"named-uuid", "br"}}}); err != nil {
		b.Fatal(err)
	}
	for batch := 0; batch < 100; batch++ {
		var ops []any
		var ports []any
		for i := 0; i < 100; i++ {
			n := batch*100 + i
			ops = append(ops,
				map[string]any{"op": "insert", "table": "Interface", "uuid-name": fmt.Sprintf("i%d", n),
					"row": map[string]any{"name": fmt.Sprintf("p%d", n), "type": "internal",
						"external_ids": []any{"map", []any{[]any{"iface-id", fmt.Sprintf("vif-%d", n)}}}}},
				map[string]any{"op": "insert", "table": "Port", "uuid-name": fmt.Sprintf("p%d", n),
					"row": map[string]any{"name": fmt.Sprintf("p%d", n), "interfaces": []any{"named-uuid", fmt.Sprintf("i%d", n)}, "tag": n%4094 + 1}})
			ports = append(ports, []any{"named-uuid", fmt.Sprintf("p%d", n)})
		}
		ops = append(ops, map[string]any{"op": "mutate", "table": "Bridge", "where": []any{[]any{"name", "==", "br0"}},
			"mutations": []any{[]any{"ports", "insert", []any{"set", ports}}}})
		if _, err := c.transact("Open_vSwitch", ops...); err != nil {
			b.Fatal(err)
		}
	}
	s.stop(b)
	return dbFile
}

func copyTo(b testing.TB, src, dst string) {
	in, err := os.Open(src)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		b.Fatal(err)
	}
	out.Close()
}

// BenchmarkOpen10kPorts measures a server's restart: from exec until it
// answers a transaction, for a database of 10,000 ports, both as a log of
// 100 transactions and compacted.
func BenchmarkOpen10kPorts(b *testing.B) {
	needTools(b, debianServer, ovsdbTool, ovsAppctl, vswitchSchema)
	base := newDir(b)
	logFile := makeTenThousandPorts(b, base)
	compacted := filepath.Join(base, "compacted.db")
	run(b, nil, ovsdbTool, "compact", logFile, compacted)
	for _, layout := range []struct{ name, file string }{{"log", logFile}, {"compacted", compacted}} {
		for _, name := range []string{"gvs", "debian"} {
			b.Run(layout.name+"/"+name, func(b *testing.B) {
				binary := servers(b)[name]
				dir := newDir(b)
				dbFile := filepath.Join(dir, "conf.db")
				copyTo(b, layout.file, dbFile)
				st, _ := os.Stat(dbFile)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					started := time.Now()
					s, err := startServerErr(binary, dir, dbFile)
					if err != nil {
						b.Fatal(err)
					}
					c, err := dial(s.sock)
					if err != nil {
						b.Fatal(err)
					}
					res, err := c.transact("Open_vSwitch", map[string]any{"op": "select", "table": "Bridge", "where": []any{}, "columns": []string{"name"}})
					c.Close()
					if err != nil || len(res) != 1 {
						b.Fatal(err)
					}
					_ = started
					b.StopTimer()
					s.kill()
					b.StartTimer()
				}
				b.ReportMetric(float64(st.Size())/1e6, "MB-file")
			})
		}
	}
}

// BenchmarkRestartLargeLog measures a server's restart on a 57 MB log (a
// bridge of 200 ports whose statistics were rewritten about a thousand
// times: the size the issue reports for a daemon killed often) and on the
// same database compacted: from exec until it answers a transaction. The
// log is copied afresh before every start, since gvs compacts it at start.
func BenchmarkRestartLargeLog(b *testing.B) {
	needTools(b, debianServer, ovsdbTool, ovsAppctl, vswitchSchema)
	base := newDir(b)
	logFile := filepath.Join(base, "large.db")
	makeLargeLog(b, logFile, 57<<20, 200)
	compacted := filepath.Join(base, "compacted.db")
	run(b, nil, ovsdbTool, "compact", logFile, compacted)
	for _, layout := range []struct{ name, file string }{{"log", logFile}, {"compacted", compacted}} {
		for _, name := range []string{"gvs", "debian"} {
			b.Run(layout.name+"/"+name, func(b *testing.B) {
				binary := servers(b)[name]
				dir := newDir(b)
				dbFile := filepath.Join(dir, "conf.db")
				st, _ := os.Stat(layout.file)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					copyTo(b, layout.file, dbFile)
					b.StartTimer()
					s, err := startServerErr(binary, dir, dbFile)
					if err != nil {
						b.Fatal(err)
					}
					c, err := dial(s.sock)
					if err != nil {
						b.Fatal(err)
					}
					res, err := c.transact("Open_vSwitch", map[string]any{"op": "select", "table": "Interface", "where": []any{}, "columns": []string{"name"}})
					c.Close()
					if err != nil || len(res) != 1 {
						b.Fatal(err)
					}
					b.StopTimer()
					s.kill()
					b.StartTimer()
				}
				b.ReportMetric(float64(st.Size())/1e6, "MB-file")
			})
		}
	}
}

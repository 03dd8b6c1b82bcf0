package storage

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gvs/ovsdb/db"
)

// tenThousandPorts writes an Open_vSwitch database with a bridge of 10,000
// ports and interfaces, added 100 per transaction, and returns its path.
func tenThousandPorts(b *testing.B) string {
	schema, err := os.ReadFile("/usr/share/openvswitch/vswitch.ovsschema")
	if err != nil {
		b.Skip("vswitch schema not installed")
	}
	path := filepath.Join(b.TempDir(), "conf.db")
	if err := Create(path, schema); err != nil {
		b.Fatal(err)
	}
	s := open(b, path, Options{})
	transact(b, s.Database(), `[{"op":"insert","table":"Bridge","row":{"name":"br0"},"uuid-name":"br"},
		{"op":"insert","table":"Open_vSwitch","row":{"bridges":["named-uuid","br"]}}]`)
	for batch := 0; batch < 100; batch++ {
		var ops, ports []string
		for i := 0; i < 100; i++ {
			n := batch*100 + i
			ops = append(ops, fmt.Sprintf(`{"op":"insert","table":"Interface","uuid-name":"i%d","row":{"name":"p%d","type":"internal","external_ids":["map",[["iface-id","vif-%d"]]]}}`, n, n, n),
				fmt.Sprintf(`{"op":"insert","table":"Port","uuid-name":"p%d","row":{"name":"p%d","interfaces":["named-uuid","i%d"],"tag":%d}}`, n, n, n, n%4094+1))
			ports = append(ports, fmt.Sprintf(`["named-uuid","p%d"]`, n))
		}
		ops = append(ops, `{"op":"mutate","table":"Bridge","where":[["name","==","br0"]],"mutations":[["ports","insert",["set",[`+strings.Join(ports, ",")+`]]]]}`)
		transact(b, s.Database(), "["+strings.Join(ops, ",")+"]")
	}
	s.Close()
	return path
}

// BenchmarkOpen10kPorts measures loading a 10,000-port database, as a log
// of 100 transactions and compacted.
func BenchmarkOpen10kPorts(b *testing.B) {
	path := tenThousandPorts(b)
	for _, layout := range []string{"log", "compacted"} {
		b.Run(layout, func(b *testing.B) {
			if layout == "compacted" {
				s := open(b, path, Options{})
				if err := s.Compact(); err != nil {
					b.Fatal(err)
				}
				s.Close()
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s := open(b, path, Options{})
				s.Close()
			}
		})
	}
}

// BenchmarkCommit measures the storage's cost per commit: the same insert
// transaction on a database in memory only, stored without fsync, and
// stored with fsync.
func BenchmarkCommit(b *testing.B) {
	for _, mode := range []string{"memory", "nosync", "sync"} {
		b.Run(mode, func(b *testing.B) {
			var d *db.Database
			if mode == "memory" {
				schema, _ := db.ParseSchema([]byte(richSchema))
				d = db.New(schema, nil)
			} else {
				s := open(b, create(b, richSchema), Options{Sync: mode == "sync"})
				defer s.Close()
				d = s.Database()
			}
			op := []json.RawMessage{json.RawMessage(`{"op":"insert","table":"Root","row":{"name":"a row","tags":["map",[["k","v"]]],"nums":["set",[1,2]]}}`)}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if r := d.Transact(op, db.TxnEnv{}); r.Commit == nil {
					b.Fatal(r.Results)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "txn/s")
		})
	}
}

package server

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

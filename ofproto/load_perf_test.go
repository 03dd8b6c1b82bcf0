package ofproto

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"testing"
	"time"

	"gvs/bench/openflow"
	"gvs/ofproto/connmgr"
	"gvs/ofproto/mf"
	"gvs/ofproto/pipeline"
)

// TestPerfLoadTable loads the benchmark's generated table of 100,000
// flows into a bridge through its connection manager with the real
// ovs-ofctl, plain and as one bundle (what gvs-bench -only openflow
// times), and logs the wall time and the live heap per rule:
// GVS_PERF=1 go test -run PerfLoadTable -v ./ofproto (add -cpuprofile).
func TestPerfLoadTable(t *testing.T) {
	if os.Getenv("GVS_PERF") == "" {
		t.Skip("set GVS_PERF=1")
	}
	ofctlBin, err := exec.LookPath("ovs-ofctl")
	if err != nil {
		t.Skip("no ovs-ofctl")
	}
	const n = 100_000
	var buf bytes.Buffer
	if err := openflow.Generate(&buf, n); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "flows")
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"add", "bundle"} {
		if only := os.Getenv("GVS_PERF_MODE"); only != "" && only != mode {
			continue
		}
		b := NewBridge("br0", BridgeConfig{})
		m, err := connmgr.New(connmgr.Config{Name: "br0", RunDir: dir, Bridge: NewConnBridge(b)})
		if err != nil {
			t.Fatal(err)
		}
		b.SetEvents(connEvents{m, b})
		time.Sleep(500 * time.Millisecond) // the previous mode's goroutines end
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		args := []string{"-O", "OpenFlow15", "add-flows", "unix:" + m.MgmtPath(), file}
		if mode == "bundle" {
			args = append([]string{"--bundle"}, args...)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		start := time.Now()
		out, err := exec.CommandContext(ctx, ofctlBin, args...).CombinedOutput()
		elapsed := time.Since(start)
		cancel()
		if err != nil {
			t.Fatalf("%s: %v\n%s", mode, err, out)
		}
		if rules, err := b.Pipeline().Flows(&pipeline.FlowQuery{TableID: pipeline.TableAll, OutPort: mf.PortNone, OutGroup: pipeline.GroupAny}); err != nil || len(rules) != n {
			t.Fatalf("%s: %d flows (%v)", mode, len(rules), err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		t.Logf("%s: %v, live heap %d B/rule, allocated %d B/rule", mode, elapsed,
			int64(after.HeapAlloc-before.HeapAlloc)/n, int64(after.TotalAlloc-before.TotalAlloc)/n)
		if hp := os.Getenv("GVS_PERF_HEAP"); hp != "" {
			f, err := os.Create(hp + "." + mode)
			if err == nil {
				pprof.Lookup("heap").WriteTo(f, 0)
				f.Close()
			}
		}
		m.Close()
		b.Close()
	}
}

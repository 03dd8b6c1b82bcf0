package connmgr

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPerfAddFlows times ovs-ofctl add-flows of 100,000 flows through the
// connection layer alone (the fake bridge stores nothing), with and
// without --bundle: GVS_PERF=1 go test -run PerfAddFlows -v.
func TestPerfAddFlows(t *testing.T) {
	if os.Getenv("GVS_PERF") == "" {
		t.Skip()
	}
	br := newFakeBridge()
	m := newTestManager(t, br)
	var sb strings.Builder
	for i := range 100000 {
		fmt.Fprintf(&sb, "table=1,priority=%d,ip,nw_dst=10.%d.%d.%d,actions=output:1\n", i%1000, i>>16&255, i>>8&255, i&255)
	}
	f := filepath.Join(t.TempDir(), "flows")
	os.WriteFile(f, []byte(sb.String()), 0o644)
	for _, args := range [][]string{{"-O", "OpenFlow13", "add-flows", f}, {"-O", "OpenFlow13", "--bundle", "add-flows", f}} {
		start := time.Now()
		mustOfctl(t, m, args...)
		t.Logf("%v: %v", args[2:], time.Since(start))
	}
}

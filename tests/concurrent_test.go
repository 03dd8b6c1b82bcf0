package tests

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestVsctlConcurrent runs many ovs-vsctl add-port (and then del-port) at
// once against each server. Each reads br0's ports, then commits with a
// wait operation on them, so most collide; ovs-vsctl retries on "try
// again" and all must succeed, leaving the same ports on both servers.
func TestVsctlConcurrent(t *testing.T) {
	const writers = 12
	p := startPair(t, vsctlPath)
	var final [2]result
	for side, s := range p.both() {
		if r := s.vsctl(t, "--no-wait", "init", "--", "add-br", "br0"); r.exit != 0 {
			t.Fatalf("%s: setup: %s", s.kind.name, r)
		}
		for _, cmd := range []string{"add-port", "del-port"} {
			results := make([]result, writers)
			var wg sync.WaitGroup
			for i := range results {
				wg.Add(1)
				go func() {
					defer wg.Done()
					// s.run may only t.Fatal from the test goroutine:
					// runTool reports instead.
					results[i] = runTool(s, vsctlPath, "--db="+s.remote, "--timeout=10", "--no-wait", cmd, "br0", fmt.Sprintf("p%02d", i))
				}()
			}
			wg.Wait()
			for i, r := range results {
				if r.exit != 0 {
					t.Errorf("%s: concurrent ovs-vsctl %s br0 p%02d: %s", s.kind.name, cmd, i, r)
				}
			}
			if cmd == "add-port" {
				final[side] = s.vsctl(t, "list-ports", "br0")
				if got := strings.Count(final[side].stdout, "\n"); got != writers {
					t.Errorf("%s: %d ports after %d concurrent add-port, want %d:\n%s", s.kind.name, got, writers, writers, final[side])
				}
			}
		}
		if r := s.vsctl(t, "list-ports", "br0"); r.stdout != "" {
			t.Errorf("%s: ports left after concurrent del-port:\n%s", s.kind.name, r)
		}
	}
	compareResults(t, "list-ports br0 after concurrent add-port", final[0], final[1])
}

package appctl

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gvs/metrics/source/sourcetest"
	"gvs/netdev"
	"gvs/netdev/afpacket"
)

// TestMemoryShowRxRings: memory/show reports the receive rings of system
// ports (total, count, the largest by port) and the budget they reserve
// from, read from the devices and the budget, not from Interface.status.
func TestMemoryShowRxRings(t *testing.T) {
	needAppctl(t)
	v := newVethTopo(t)
	e := &env{sw: sourcetest.New(t, 1)}
	e.sw.Budget = netdev.NewMemoryBudget(64 << 20)
	e.sw.AddBridge("br0")
	for i, name := range []string{v.rootA, v.rootB} {
		dev, err := afpacket.Open(afpacket.Config{Name: name, Budget: e.sw.Budget})
		if err != nil {
			t.Fatal(err)
		}
		e.sw.AddPort("br0", dev, i+1)
	}
	e.serve(t)
	mem := e.ok(t, "memory/show")
	minKB := afpacket.DefaultMinRingSize / 1024
	for _, want := range []string{
		" rx-ring-budget-kB:65536 ", " rx-rings:2 ",
		" rx-ring-kB(" + v.rootA + "):" + itoa(minKB) + " ",
		" rx-ring-kB(" + v.rootB + "):" + itoa(minKB) + " ",
		" rx-ring-kB:" + itoa(2*minKB) + " ",
		" rx-ring-reserved-kB:" + itoa(2*minKB) + " ",
	} {
		if !strings.Contains(" "+strings.TrimSpace(mem)+" ", want) {
			t.Errorf("memory/show lacks %q: %q", strings.TrimSpace(want), mem)
		}
	}
	if !regexp.MustCompile(`^(\S+:\d+ )*\S+:\d+\n$`).MatchString(mem) {
		t.Errorf("memory/show is not name:count pairs: %q", mem)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

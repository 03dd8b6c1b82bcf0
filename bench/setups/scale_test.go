package setups

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"gvs/bench/measure"
	"gvs/bench/topo"
)

// Open vSwitch as the scale test drives it, for real: an empty bridge in
// a namespace of this test, a port added with ovs-vsctl, both processes
// reported, a restart that replaces ovs-vswitchd only, and a stop that
// leaves nothing behind.
func TestScaleSwitchOVS(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (network namespaces)")
	}
	o := ScaleSwitches(Env{})[0]
	if ok, why := o.Available(); !ok {
		t.Skip(why)
	}
	ctx := context.Background()
	ports := topo.NewPorts(2)
	t.Cleanup(func() { ports.Destroy() })
	if err := ports.Create(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Stop() })
	if err := o.StartBridge(ctx, ports.Switch, []string{topo.SinkPort}); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Vsctl(ctx, "--timeout=20", "add-port", "br0", ports.Port(0)); err != nil {
		t.Fatal(err)
	}
	if out, err := o.Vsctl(ctx, "list-ports", "br0"); err != nil || out != ports.Port(0)+"\n"+topo.SinkPort {
		t.Errorf("list-ports: %q, %v", out, err)
	}
	pids := o.Processes()
	if len(pids) != 2 {
		t.Fatalf("processes %v, want ovs-vswitchd and ovsdb-server", pids)
	}
	if rss, err := measure.RSSBytes(pids); err != nil || rss < 1<<20 {
		t.Errorf("RSS %d, %v", rss, err)
	}
	rt, err := o.Restart(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !(rt.Asked.Before(rt.Exited) && !rt.Started.Before(rt.Exited)) {
		t.Errorf("restart times out of order: %+v", rt)
	}
	after := o.Processes()
	if after[0] == pids[0] || after[1] != pids[1] {
		t.Errorf("processes %v after a restart, were %v: want a new ovs-vswitchd, the same ovsdb-server", after, pids)
	}
	var show string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		// Open vSwitch answers with nothing until it has counted once.
		if show, err = o.Appctl(ctx, "memory/show"); err == nil && show != "" {
			break
		}
	}
	if !strings.Contains(show, "ports:") {
		t.Errorf("memory/show after the restart: %q, %v", show, err)
	}
	if err := o.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range after {
		if syscall.Kill(pid, 0) == nil {
			t.Errorf("pid %d still runs after Stop", pid)
		}
	}
}

package scale

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"gvs/bench/probe"
	"gvs/bench/topo"
)

// TestMain lets the test binary stand in for gvs-bench's probe
// sub-commands, so ProbeChecker runs the real _l2check.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && probe.IsCommand(os.Args[1]) {
		os.Exit(probe.Main(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// The probe against real veth pairs in namespaces of this test, joined by
// a Linux bridge (a learning switch, as NORMAL is): nothing arrives before
// the ports are bridged, every port's frame arrives once they are, and a
// port taken off the bridge is reported missing by Forwarding and silent
// by Silence.
func TestProbeCheckerWithLinuxBridge(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (network namespaces)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("no ip(8)")
	}
	ctx := context.Background()
	ports := topo.NewPorts(6)
	t.Cleanup(func() {
		if err := ports.Destroy(); err != nil {
			t.Errorf("destroy: %v", err)
		}
	})
	if err := ports.Create(ctx); err != nil {
		t.Fatal(err)
	}
	c := ProbeChecker{Self: os.Args[0], Ports: ports}

	res, err := c.Forwarding(ctx, 0, 6, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if res.Seen != 0 || res.MissingCount != 6 || res.AllSeenUnixNano != 0 {
		t.Errorf("with no switch: %+v, want nothing seen", res)
	}

	ipn := func(args ...string) {
		t.Helper()
		if _, err := topo.Run(ctx, "", append([]string{"ip", "-n", ports.Switch}, args...)...); err != nil {
			t.Fatal(err)
		}
	}
	ipn("link", "add", "br0", "type", "bridge")
	ipn("link", "set", "br0", "up")
	for _, p := range append(ports.PortNames(0, 6), topo.SinkPort) {
		ipn("link", "set", p, "master", "br0")
	}
	start := time.Now()
	res, err = c.Forwarding(ctx, 0, 6, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if res.Seen != 6 || res.MissingCount != 0 || res.AllSeenUnixNano < start.UnixNano() || res.AllSeenUnixNano > time.Now().UnixNano() {
		t.Errorf("bridged: %+v, want all 6 seen at a time within the check", res)
	}

	ipn("link", "set", ports.Port(4), "nomaster")
	res, err = c.Forwarding(ctx, 2, 4, 500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if res.Seen != 3 || res.MissingCount != 1 || fmt.Sprint(res.Missing) != "[4]" {
		t.Errorf("port 4 off the bridge, checking 2..5: %+v, want 4 missing", res)
	}
	res, err = c.Silence(ctx, 4, 1, 300*time.Millisecond)
	if err != nil || res.Seen != 0 {
		t.Errorf("silence of the removed port: %+v, %v", res, err)
	}
	res, err = c.Silence(ctx, 0, 2, 300*time.Millisecond)
	if err != nil || res.Seen != 2 {
		t.Errorf("silence of two bridged ports: %+v, %v; want both seen", res, err)
	}
	if _, err := c.Forwarding(ctx, 0, 7, time.Second); err == nil || !strings.Contains(err.Error(), "no device h6") {
		t.Errorf("a port that does not exist: %v", err)
	}
}

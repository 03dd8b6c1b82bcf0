package appctl

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"gvs/metrics/source/sourcetest"
	"gvs/netdev/afpacket"
)

// vethTopo is two namespaces, each with one end of a veth pair whose other
// end is in the root namespace for the switch: gvsmx<pid>a and
// gvsmx<pid>b, addresses 198.18.77.1 and .2.
type vethTopo struct {
	nsA, nsB     string
	rootA, rootB string
}

func mustRun(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func newVethTopo(t *testing.T) *vethTopo {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root for namespaces and veths")
	}
	for _, tool := range []string{"ip", "iperf3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	p := fmt.Sprintf("gvsmx%d", os.Getpid())
	v := &vethTopo{nsA: p + "a", nsB: p + "b", rootA: p + "ra", rootB: p + "rb"}
	t.Cleanup(func() {
		for _, l := range []string{v.rootA, v.rootB} {
			exec.Command("ip", "link", "del", l).Run()
		}
		for _, ns := range []string{v.nsA, v.nsB} {
			exec.Command("ip", "netns", "del", ns).Run()
		}
	})
	for i, side := range []struct{ ns, root, addr string }{{v.nsA, v.rootA, "198.18.77.1/24"}, {v.nsB, v.rootB, "198.18.77.2/24"}} {
		mustRun(t, "ip", "netns", "add", side.ns)
		mustRun(t, "ip", "link", "add", side.root, "type", "veth", "peer", "name", "eth0", "netns", side.ns)
		mustRun(t, "ip", "-n", side.ns, "link", "set", "lo", "up")
		mustRun(t, "ip", "-n", side.ns, "link", "set", "eth0", "address", fmt.Sprintf("02:00:00:00:77:0%d", i+1))
		mustRun(t, "ip", "-n", side.ns, "addr", "add", side.addr, "dev", "eth0")
		mustRun(t, "ip", "-n", side.ns, "link", "set", "eth0", "up")
		mustRun(t, "ip", "link", "set", side.root, "up")
	}
	return v
}

// TestFiguresMoveDuringRealTraffic: iperf3 UDP between two namespaces
// through a bridge of two AF_PACKET ports; every counting command shows
// larger figures on its second call.
func TestFiguresMoveDuringRealTraffic(t *testing.T) {
	needAppctl(t)
	v := newVethTopo(t)
	e := &env{sw: sourcetest.New(t, 1)}
	e.sw.AddBridge("br0")
	for i, name := range []string{v.rootA, v.rootB} {
		dev, err := afpacket.Open(afpacket.Config{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		e.sw.AddPort("br0", dev, i+1)
	}
	e.serve(t)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	server := exec.CommandContext(ctx, "ip", "netns", "exec", v.nsB, "iperf3", "-s", "-1", "-B", "198.18.77.2")
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	defer server.Wait()
	time.Sleep(500 * time.Millisecond)
	client := exec.CommandContext(ctx, "ip", "netns", "exec", v.nsA, "iperf3", "-c", "198.18.77.2", "-u", "-b", "20M", "-t", "5")
	var clientOut strings.Builder
	client.Stdout, client.Stderr = &clientOut, &clientOut
	if err := client.Start(); err != nil {
		t.Fatal(err)
	}
	clientDone := make(chan error, 1)
	go func() { clientDone <- client.Wait() }()
	defer func() { cancel(); <-clientDone }()

	// Wait until traffic flows through the switch.
	deadline := time.Now().Add(10 * time.Second)
	for number(t, e.ok(t, "dpif/show"), "hit:") < 100 {
		if time.Now().After(deadline) {
			t.Fatalf("no traffic through the switch:\n%s\n%s", e.ok(t, "dpif/show"), clientOut.String())
		}
		time.Sleep(100 * time.Millisecond)
	}

	type probe struct {
		args  []string
		label string
	}
	probes := []probe{
		{[]string{"dpif/show"}, "hit:"},
		{[]string{"dpctl/show", "-s"}, "RX packets:"},
		{[]string{"dpctl/dump-flows"}, "packets:"},
		{[]string{"dpif-netdev/pmd-stats-show"}, "packets received:"},
		{[]string{"bridge/dump-flows", "br0"}, "n_packets="},
	}
	first := map[string]uint64{}
	for _, p := range probes {
		first[p.args[0]] = number(t, e.ok(t, p.args...), p.label)
	}
	cov1 := covTotal(t, e.ok(t, "coverage/show"), "netdev_received")
	time.Sleep(1 * time.Second)
	for _, p := range probes {
		out := e.ok(t, p.args...)
		if n := number(t, out, p.label); n <= first[p.args[0]] {
			t.Errorf("%s: %s %d then %d during traffic\n%s", p.args[0], p.label, first[p.args[0]], n, out)
		}
	}
	if cov2 := covTotal(t, e.ok(t, "coverage/show"), "netdev_received"); cov2 <= cov1 {
		t.Errorf("coverage netdev_received %d then %d", cov1, cov2)
	}

	fdb := e.ok(t, "fdb/show", "br0")
	for _, m := range []string{"02:00:00:00:77:01", "02:00:00:00:77:02"} {
		if !strings.Contains(fdb, m) {
			t.Errorf("fdb/show lacks %s:\n%s", m, fdb)
		}
	}
	sb := e.ok(t, "gvs/sock-buf-show")
	// AF_PACKET sockets report their effective buffer sizes.
	if !regexp.MustCompile(`(?m)^br0 +` + v.rootA + ` +system +default +\d+ +\d+ +\d+ +\d+$`).MatchString(sb) {
		t.Errorf("gvs/sock-buf-show:\n%s", sb)
	}
	rxq := e.ok(t, "dpif-netdev/pmd-rxq-show")
	if !strings.Contains(rxq, "  port: "+v.rootA) || !regexp.MustCompile(`busy \(all queues\): +\d+ %`).MatchString(rxq) {
		t.Errorf("pmd-rxq-show:\n%s", rxq)
	}
}

// covTotal returns an event's total from coverage/show output, 0 if absent.
func covTotal(t *testing.T, text, event string) uint64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + event + ` .* total: (\d+)$`).FindStringSubmatch(text)
	if m == nil {
		return 0
	}
	var n uint64
	fmt.Sscan(m[1], &n)
	return n
}

package bridge

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestPatchPortTraffic: namespace A on bridge gvpbr0, namespace B on
// gvpbr1, joined only by the patch pair gvpa-gvpb. Standalone (NORMAL on
// both bridges), then secure with OpenFlow flows on both that carry the
// traffic across the pair in VLAN 100 (pushed on one side of the pair,
// popped on the other): ping and TCP pass, each direction is one
// datapath flow on its ingress port, ofproto/trace shows both
// pipelines, the patch ports count the crossings, and deleting one end
// stops the traffic.
func TestPatchPortTraffic(t *testing.T) {
	requireEnv(t, ofctlPath, iperfPath)
	s := newSwitchd(t, modes[0])
	h1 := newHost(t, "gvpt-a", "gvpta", "198.18.47.1")
	h2 := newHost(t, "gvpt-b", "gvptb", "198.18.47.2")
	s.vsctl("add-br", "gvpbr0", "--", "add-br", "gvpbr1",
		"--", "add-port", "gvpbr0", h1.Port, "--", "set", "interface", h1.Port, "ofport_request=1",
		"--", "add-port", "gvpbr1", h2.Port, "--", "set", "interface", h2.Port, "ofport_request=1",
		"--", "add-port", "gvpbr0", "gvpa", "--", "set", "interface", "gvpa", "type=patch", "options:peer=gvpb", "ofport_request=2",
		"--", "add-port", "gvpbr1", "gvpb", "--", "set", "interface", "gvpb", "type=patch", "options:peer=gvpa", "ofport_request=2")
	if e := s.get("Interface", "gvpa", "error"); e != "[]" {
		t.Fatalf("gvpa error %s", e)
	}
	// NORMAL on both bridges.
	mustPing(t, h1, h2)
	mustPing(t, h2, h1)

	s.vsctl("set", "bridge", "gvpbr0", "fail-mode=secure", "--", "set", "bridge", "gvpbr1", "fail-mode=secure")
	s.ofctl("del-flows", "gvpbr0")
	s.ofctl("del-flows", "gvpbr1")
	mustNotPing(t, h1, h2)
	dir := t.TempDir()
	addFlows := func(br string, flows ...string) {
		file := filepath.Join(dir, br)
		if err := os.WriteFile(file, []byte(strings.Join(flows, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		s.ofctl("-O", "OpenFlow13", "add-flows", br, file)
	}
	// gvpbr0 tags what goes into the pair and untags what comes out;
	// gvpbr1 does the same on its side: the tag lives only between.
	addFlows("gvpbr0",
		"priority=10,in_port=1,actions=push_vlan:0x8100,set_field:4196->vlan_vid,output:2",
		"priority=10,in_port=2,dl_vlan=100,actions=pop_vlan,output:1")
	addFlows("gvpbr1",
		"priority=10,in_port=2,dl_vlan=100,actions=pop_vlan,output:1",
		"priority=10,in_port=1,actions=push_vlan:0x8100,set_field:4196->vlan_vid,output:2")
	mustPing(t, h1, h2)
	mustPing(t, h2, h1)
	res := iperf(t, h2, h1, "-t", "2")
	if res.End.SumReceived.BitsPerSecond <= 0 {
		t.Fatalf("TCP over the patch pair: %+v", res)
	}
	t.Logf("TCP across the patch pair: %s", mbps(res.End.SumReceived.BitsPerSecond))

	dp1, dp2 := s.dpPort(h1.Port), s.dpPort(h2.Port)
	trace := s.appctl("ofproto/trace", "gvpbr0", fmt.Sprintf("in_port=1,icmp,dl_src=%s,dl_dst=%s,nw_src=%s,nw_dst=%s",
		h1.peerMAC(t), h2.peerMAC(t), h1.IP, h2.IP))
	if !strings.Contains(trace, "bridge(\"gvpbr1\")") {
		t.Errorf("trace does not cross into gvpbr1:\n%s", trace)
	}
	if got := lastField(t, trace, "Datapath actions: "); got != dp2 {
		t.Errorf("trace: datapath actions %q, want %q (the tag is pushed and popped in one pass):\n%s", got, dp2, trace)
	}
	// One datapath flow per direction, on its ingress port, straight to
	// the other namespace's port.
	flows := s.appctl("dpctl/dump-flows")
	for in, out := range map[string]string{dp1: dp2, dp2: dp1} {
		re := regexp.MustCompile(`in_port\(` + in + `\),.*eth_type\(0x0800\).*actions:(\S+)`)
		m := re.FindAllStringSubmatch(flows, -1)
		if len(m) == 0 {
			t.Errorf("no IPv4 datapath flow from port %s:\n%s", in, flows)
		}
		for _, mm := range m {
			if mm[1] != out {
				t.Errorf("flow from port %s has actions %s, want %s:\n%s", in, mm[1], out, flows)
			}
		}
	}
	// The patch ports count what crossed, from the datapath flows'
	// statistics (credited by the revalidator).
	eventually(t, "patch port counters", func() bool {
		out := s.ofctl("dump-ports", "gvpbr0", "2")
		m := regexp.MustCompile(`tx pkts=(\d+)`).FindStringSubmatch(out)
		r := regexp.MustCompile(`rx pkts=(\d+)`).FindStringSubmatch(out)
		if m == nil || r == nil {
			return false
		}
		tx, _ := strconv.Atoi(m[1])
		rx, _ := strconv.Atoi(r[1])
		return tx > 1000 && rx > 2
	})

	// Interface.statistics too (written on the statistics timer).
	eventually(t, "gvpa's Interface statistics", func() bool {
		m := regexp.MustCompile(`tx_packets=(\d+)`).FindStringSubmatch(s.get("Interface", "gvpa", "statistics"))
		n := 0
		if m != nil {
			n, _ = strconv.Atoi(m[1])
		}
		return n > 1000
	})

	// Without gvpb, gvpa has no peer: the error says so and nothing
	// crosses.
	s.vsctl("del-port", "gvpbr1", "gvpb")
	eventually(t, "gvpa's error", func() bool {
		return strings.Contains(s.get("Interface", "gvpa", "error"), "No usable peer 'gvpb'")
	})
	mustNotPing(t, h1, h2)
}

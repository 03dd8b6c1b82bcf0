package bridge

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const ofctlPath = "/usr/bin/ovs-ofctl"

// ofctl runs the real ovs-ofctl against gvs-vswitchd (it finds
// <rundir>/<bridge>.mgmt through OVS_RUNDIR).
func (s *switchd) ofctl(args ...string) string {
	s.t.Helper()
	out, err := s.ofctlErr(args...)
	if err != nil {
		s.t.Fatalf("ovs-ofctl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (s *switchd) ofctlErr(args ...string) (string, error) {
	cmd := exec.Command(ofctlPath, append([]string{"--timeout=10"}, args...)...)
	cmd.Env = s.env()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// setMAC gives the host's interface a fixed MAC address.
func (h *host) setMAC(t *testing.T, mac string) {
	t.Helper()
	run(t, ipPath, "-n", h.NS, "link", "set", h.Peer, "address", mac)
}

// ovnPorts reads tests/testdata/ovn-two-port.ports: ofport, MAC, IPv4 of
// the two logical ports the recorded pipeline serves.
type ovnPort struct{ ofport, mac, ip string }

func ovnPorts(t *testing.T) []ovnPort {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", "ovn-two-port.ports"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ports []ovnPort
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 5 || strings.HasPrefix(fs[0], "#") {
			continue
		}
		ports = append(ports, ovnPort{ofport: fs[1], mac: fs[3], ip: fs[4]})
	}
	if len(ports) != 2 {
		t.Fatalf("ovn-two-port.ports: %d ports, want 2", len(ports))
	}
	return ports
}

// TestOpenFlowOVNPipeline loads the pipeline Debian's OVN installs for one
// logical switch with two ports (recorded by scripts/ovn-two-port-flows.sh)
// into gvs with the real ovs-ofctl, and sends ping and TCP between two
// namespaces through it: about 140 flows in 44 tables, every packet
// crossing some 40 of them, all of it collapsed into megaflows.
func TestOpenFlowOVNPipeline(t *testing.T) {
	requireEnv(t, iperfPath, ofctlPath)
	s := newSwitchd(t, modes[0])
	ports := ovnPorts(t)
	var hosts []*host
	for i, p := range ports {
		h := newHost(t, fmt.Sprintf("gvof-ovn%d", i), fmt.Sprintf("gvofovn%d", i), p.ip)
		h.setMAC(t, p.mac)
		hosts = append(hosts, h)
	}
	s.vsctl("add-br", "br-int", "--", "set", "bridge", "br-int", "fail-mode=secure", "protocols=OpenFlow15")
	for i, h := range hosts {
		s.vsctl("add-port", "br-int", h.Port, "--", "set", "interface", h.Port, "ofport_request="+ports[i].ofport)
	}
	s.ofctl("-O", "OpenFlow15", "add-tlv-map", "br-int", "{class=0x102,type=0x80,len=4}->tun_metadata0")
	s.ofctl("-O", "OpenFlow15", "add-flows", "br-int", filepath.Join("..", "testdata", "ovn-two-port.flows"))
	n := strings.Count(s.ofctl("-O", "OpenFlow15", "dump-flows", "br-int", "--no-stats"), "\n")
	if n < 140 {
		t.Fatalf("dump-flows shows %d flows after add-flows of the OVN pipeline", n)
	}
	mustPing(t, hosts[0], hosts[1])
	mustPing(t, hosts[1], hosts[0])
	res := iperf(t, hosts[1], hosts[0], "-t", "2")
	if res.End.SumReceived.BitsPerSecond == 0 {
		t.Fatal("no TCP throughput through the OVN pipeline")
	}
	t.Logf("TCP through the OVN pipeline: %s", mbps(res.End.SumReceived.BitsPerSecond))

	// ofproto/trace agrees with what the datapath does for the ping.
	trace := s.appctl("ofproto/trace", "br-int", fmt.Sprintf(
		"in_port=%s,icmp,dl_src=%s,dl_dst=%s,nw_src=%s,nw_dst=%s,nw_ttl=64,icmp_type=8",
		ports[0].ofport, ports[0].mac, ports[1].mac, ports[0].ip, ports[1].ip))
	dpActions := lastField(t, trace, "Datapath actions: ")
	dpPort := s.dpPort(hosts[1].Port)
	if dpActions != dpPort {
		t.Errorf("ofproto/trace says %q, want output to %s's datapath port %s:\n%s", dpActions, hosts[1].Port, dpPort, trace)
	}
	if !strings.Contains(trace, "resubmit(,8)") {
		t.Errorf("trace does not show the pipeline's resubmits:\n%s", trace)
	}
	flows := s.appctl("dpctl/dump-flows")
	if !strings.Contains(flows, "actions:"+dpPort) {
		t.Errorf("no megaflow outputs to %s:\n%s", dpPort, flows)
	}
}

// dpPort returns the datapath port number of an interface.
func (s *switchd) dpPort(name string) string {
	s.t.Helper()
	out := s.appctl("dpctl/show")
	re := regexp.MustCompile(`port (\d+): ` + regexp.QuoteMeta(name) + `\b`)
	m := re.FindStringSubmatch(out)
	if m == nil {
		s.t.Fatalf("dpctl/show has no port %s:\n%s", name, out)
	}
	return m[1]
}

func lastField(t *testing.T, text, prefix string) string {
	t.Helper()
	for _, l := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(l, prefix); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no %q line in:\n%s", prefix, text)
	return ""
}

// TestOpenFlowMultiTable drives a small multi-table pipeline with
// registers, metadata, goto_table and resubmit, VLAN push/pop and field
// rewrites that undo each other, and checks traffic, per-flow counters and
// ofproto/trace.
func TestOpenFlowMultiTable(t *testing.T) {
	requireEnv(t, ofctlPath)
	s := newSwitchd(t, modes[0])
	h1 := newHost(t, "gvof-mt1", "gvofmt1", "198.18.40.1")
	h2 := newHost(t, "gvof-mt2", "gvofmt2", "198.18.40.2")
	s.vsctl("add-br", "gvofbr", "--", "set", "bridge", "gvofbr", "fail-mode=secure")
	s.vsctl("add-port", "gvofbr", h1.Port, "--", "set", "interface", h1.Port, "ofport_request=1")
	s.vsctl("add-port", "gvofbr", h2.Port, "--", "set", "interface", h2.Port, "ofport_request=2")
	// Secure mode: no NORMAL flow, nothing forwards.
	mustNotPing(t, h1, h2)

	flows := strings.Join([]string{
		"table=0,priority=10,in_port=1,actions=load:0x1->NXM_NX_REG0[],write_metadata:0x10,goto_table:1",
		"table=0,priority=10,in_port=2,actions=load:0x2->NXM_NX_REG0[],write_metadata:0x20,goto_table:1",
		// Tag on the way through (vlan_vid values carry OFPVID_PRESENT, 0x1000), rewrite the destination MAC to a dummy and back.
		"table=1,priority=10,reg0=0x1,metadata=0x10,actions=push_vlan:0x8100,set_field:4196->vlan_vid,mod_dl_dst:02:00:00:00:00:99,resubmit(,2)",
		"table=1,priority=10,reg0=0x2,metadata=0x20,actions=push_vlan:0x8100,set_field:4296->vlan_vid,mod_dl_dst:02:00:00:00:00:99,resubmit(,2)",
		"table=2,priority=10,dl_vlan=100,actions=pop_vlan,move:NXM_NX_REG1[0..47]->NXM_OF_ETH_DST[],resubmit(,3)",
		"table=2,priority=10,dl_vlan=200,actions=pop_vlan,move:NXM_NX_REG1[0..47]->NXM_OF_ETH_DST[],resubmit(,3)",
		"table=3,priority=10,reg0=0x1,actions=output:2",
		"table=3,priority=10,reg0=0x2,actions=output:1",
	}, "\n")
	// reg1's 48 bits hold the real destination MAC: load it per source.
	flows = strings.ReplaceAll(flows, "actions=load:0x1->NXM_NX_REG0[],", "actions=load:0x1->NXM_NX_REG0[],move:NXM_OF_ETH_DST[]->NXM_NX_XXREG0[0..47],")
	flows = strings.ReplaceAll(flows, "actions=load:0x2->NXM_NX_REG0[],", "actions=load:0x2->NXM_NX_REG0[],move:NXM_OF_ETH_DST[]->NXM_NX_XXREG0[0..47],")
	flows = strings.ReplaceAll(flows, "NXM_NX_REG1[0..47]", "NXM_NX_XXREG0[0..47]")
	file := filepath.Join(t.TempDir(), "flows")
	if err := os.WriteFile(file, []byte(flows+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.ofctl("-O", "OpenFlow13", "add-flows", "gvofbr", file)
	mustPing(t, h1, h2)
	mustPing(t, h2, h1)

	// Counters come from the datapath's flows, credited by the
	// revalidator: wait for a round.
	var dump string
	eventually(t, "table 3 counters", func() bool {
		dump = s.ofctl("-O", "OpenFlow13", "dump-flows", "gvofbr", "table=3")
		return strings.Count(dump, "priority=10") == 2 && !strings.Contains(dump, "n_packets=0,")
	})
	trace := s.appctl("ofproto/trace", "gvofbr", fmt.Sprintf("in_port=1,icmp,dl_src=%s,dl_dst=%s,nw_src=%s,nw_dst=%s",
		h1.peerMAC(t), h2.peerMAC(t), h1.IP, h2.IP))
	if got, want := lastField(t, trace, "Datapath actions: "), s.dpPort(h2.Port); got != want {
		t.Errorf("trace: datapath actions %q, want %q (the VLAN and MAC rewrites cancel out):\n%s", got, want, trace)
	}

	// Deleting table 3's flow for port 1's traffic stops it one way.
	s.ofctl("-O", "OpenFlow13", "--strict", "del-flows", "gvofbr", "table=3,priority=10,reg0=0x1")
	mustNotPing(t, h1, h2)
}

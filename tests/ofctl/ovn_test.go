package ofctl

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// testdata returns the path of a file in tests/testdata.
func testdata(t *testing.T, name string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	path := filepath.Join(filepath.Dir(file), "..", "testdata", name)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%s: %v (scripts/ovn-two-port-flows.sh writes it)", path, err)
	}
	return path
}

// TestOVNPipelineLoads installs the pipeline Debian's OVN installed for
// two ports (tests/testdata/ovn-two-port.*, from
// scripts/ovn-two-port-flows.sh) on br-int-like br0 with the same ports
// and TLV mapping, with ovs-ofctl add-flows, and compares the tables.
func TestOVNPipelineLoads(t *testing.T) {
	flows := testdata(t, "ovn-two-port.flows")
	portsText, err := os.ReadFile(testdata(t, "ovn-two-port.ports"))
	if err != nil {
		t.Fatal(err)
	}
	var setup []string
	var ports [][]string // iface ofport logical_port mac ipv4
	for _, line := range strings.Split(string(portsText), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 || strings.HasPrefix(line, "#") {
			continue
		}
		iface, ofport := f[0], f[1]
		if _, err := strconv.Atoi(ofport); err != nil {
			t.Fatalf("ports file: %q", line)
		}
		setup = append(setup, "--", "add-port", "br0", iface, "--", "set", "interface", iface, "type=dummy", "ofport_request="+ofport,
			"external-ids:iface-id="+f[2], "options:tx_pcap="+iface+"-tx.pcap")
		ports = append(ports, f)
	}
	p := startPair(t, setup...)
	p.requireOpenFlow(t)
	want := 0
	for _, line := range strings.Split(readFile(t, flows), "\n") {
		if strings.Contains(line, "actions=") && !strings.HasPrefix(line, "#") {
			want++
		}
	}
	p.compare(t,
		"ovs-ofctl -O OpenFlow15 add-tlv-map br0 '{class=0x102,type=0x80,len=4}->tun_metadata0'",
		"ovs-ofctl -O OpenFlow15 dump-tlv-map br0",
		"ovs-ofctl -O OpenFlow15 add-flows br0 "+flows,
		"ovs-ofctl -O OpenFlow15 --no-stats --sort dump-flows br0 | wc -l",
		"ovs-ofctl -O OpenFlow15 --no-stats --rsort dump-flows br0",
		"ovs-ofctl -O OpenFlow15 dump-aggregate br0",
		"ovs-ofctl -O OpenFlow15 dump-tables br0 | grep -v ': active=0'",
	)
	// A ping from the first port to the second, through the pipeline.
	a, b := ports[0], ports[1]
	flow := "in_port(" + a[1] + "),eth(src=" + a[3] + ",dst=" + b[3] + "),eth_type(0x0800),ipv4(src=" + a[4] + ",dst=" + b[4] +
		",proto=1,tos=0,ttl=64,frag=no),icmp(type=8,code=0)"
	ofFlow := "in_port=" + a[1] + ",icmp,dl_src=" + a[3] + ",dl_dst=" + b[3] + ",nw_src=" + a[4] + ",nw_dst=" + b[4] + ",nw_ttl=64,icmp_type=8"
	p.compare(t,
		"ovs-appctl ofproto/trace br0 '"+ofFlow+"'",
		"ovs-appctl netdev-dummy/receive "+a[0]+" '"+flow+"'",
		"!for i in $(seq 100); do [ -s $DIR/"+b[0]+"-tx.pcap ] && [ $(stat -c %s $DIR/"+b[0]+"-tx.pcap) -gt 24 ] && break; sleep 0.02; done",
		"ovs-pcap $DIR/"+b[0]+"-tx.pcap",
		"ovs-pcap $DIR/"+a[0]+"-tx.pcap",
		"ovs-ofctl -O OpenFlow15 --sort dump-flows br0",
	)
	ref, _ := p.both(t, "ovs-ofctl -O OpenFlow15 --no-stats dump-flows br0 | grep -c actions=")
	if strings.TrimSpace(ref.stdout) != strconv.Itoa(want) {
		t.Errorf("%s holds %s flows, the file %d", p.ref.kind.name, strings.TrimSpace(ref.stdout), want)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

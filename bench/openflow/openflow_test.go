package openflow

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "tests", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestParsePortsOVNFile(t *testing.T) {
	ports, err := ParsePorts(readTestdata(t, "ovn-two-port.ports"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Port{
		{Iface: "vif1", OFPort: 1, Logical: "lp1", MAC: "00:00:00:00:01:01", IP: "198.18.0.1"},
		{Iface: "vif2", OFPort: 2, Logical: "lp2", MAC: "00:00:00:00:01:02", IP: "198.18.0.2"},
	}
	if len(ports) != len(want) {
		t.Fatalf("got %+v", ports)
	}
	for i := range want {
		if ports[i] != want[i] {
			t.Errorf("port %d: got %+v, want %+v", i, ports[i], want[i])
		}
	}
}

func TestParsePortsErrors(t *testing.T) {
	for _, text := range []string{"", "# only a comment\n", "vif1 1 lp1 00:00:00:00:01:01\n",
		"vif1 x lp1 00:00:00:00:01:01 198.18.0.1\n", "vif1 1 lp1 zz 198.18.0.1\n", "vif1 1 lp1 00:00:00:00:01:01 ::1\n"} {
		if _, err := ParsePorts(text); err == nil {
			t.Errorf("ParsePorts(%q): no error", text)
		}
	}
}

func TestRewriteOVNFile(t *testing.T) {
	flows := readTestdata(t, "ovn-two-port.flows")
	ports, err := ParsePorts(readTestdata(t, "ovn-two-port.ports"))
	if err != nil {
		t.Fatal(err)
	}
	to := []Endpoint{{MAC: "aa:bb:cc:00:00:01", IP: "198.18.1.1"}, {MAC: "AA:BB:CC:00:00:02", IP: "198.18.1.2"}}
	out, err := Rewrite(flows, ports, to)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ports {
		if strings.Contains(out, p.MAC) || strings.Contains(out, p.IP) {
			t.Errorf("%s's address left in the rewritten flows", p.Logical)
		}
	}
	// Every occurrence moved over, nothing else changed.
	for i, p := range ports {
		for _, pair := range [][2]string{{p.MAC, strings.ToLower(to[i].MAC)}, {p.IP, to[i].IP}} {
			if a, b := strings.Count(flows, pair[0]), strings.Count(out, pair[1]); a == 0 || a != b {
				t.Errorf("%s: %d occurrences before, %d of %s after", pair[0], a, b, pair[1])
			}
		}
	}
	if strings.Count(out, "\n") != strings.Count(flows, "\n") {
		t.Error("line count changed")
	}
	back, err := Rewrite(out, []Port{{Logical: "a", MAC: "aa:bb:cc:00:00:01", IP: "198.18.1.1"}, {Logical: "b", MAC: "aa:bb:cc:00:00:02", IP: "198.18.1.2"}},
		[]Endpoint{{MAC: ports[0].MAC, IP: ports[0].IP}, {MAC: ports[1].MAC, IP: ports[1].IP}})
	if err != nil || back != flows {
		t.Errorf("rewriting back does not give the file again (err %v)", err)
	}
}

func TestRewriteWholeAddressesAndSwap(t *testing.T) {
	ports := []Port{{Logical: "a", MAC: "00:00:00:00:01:01", IP: "198.18.0.1"}, {Logical: "b", MAC: "00:00:00:00:01:02", IP: "198.18.0.2"}}
	in := "arp_tpa=198.18.0.1,nw_dst=198.18.0.10,nw_src=198.18.0.2 actions=set_field:00:00:00:00:01:01->eth_src,set_field:00:00:00:00:01:02->eth_dst,set_field:198.18.0.1->arp_spa\n" +
		"dl_dst=00:00:00:00:01:010 reg=198.18.0.1.5 nat(dst=198.18.0.1:80)\n"
	// Swapped: a's address goes to b and the other way round.
	out, err := Rewrite(in, ports, []Endpoint{{MAC: ports[1].MAC, IP: ports[1].IP}, {MAC: ports[0].MAC, IP: ports[0].IP}})
	if err != nil {
		t.Fatal(err)
	}
	want := "arp_tpa=198.18.0.2,nw_dst=198.18.0.10,nw_src=198.18.0.1 actions=set_field:00:00:00:00:01:02->eth_src,set_field:00:00:00:00:01:01->eth_dst,set_field:198.18.0.2->arp_spa\n" +
		"dl_dst=00:00:00:00:01:010 reg=198.18.0.1.5 nat(dst=198.18.0.2:80)\n"
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

func TestRewriteRefusesOtherForms(t *testing.T) {
	ports := []Port{{Logical: "a", MAC: "00:00:00:00:01:01", IP: "198.18.0.1"}}
	to := []Endpoint{{MAC: "02:00:00:00:00:01", IP: "198.18.0.1"}}
	for _, flows := range []string{
		"reg0=0xc6120001 actions=drop",
		"actions=set_field:0x000000000101->eth_dst",
		"ip,nw_dst=198.18.0.0/24 actions=drop",
		"ip,nw_dst=198.18.0.0/255.255.0.0 actions=drop",
		"dl_dst=00:00:00:00:01:01 actions=set_field:00:00:00:00:01:01->eth_src", // fine: no error expected
	} {
		_, err := Rewrite(flows, ports, to)
		if strings.HasPrefix(flows, "dl_dst") {
			if err != nil {
				t.Errorf("%q: %v", flows, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%q: no error", flows)
		}
	}
	if _, err := Rewrite("x", ports, nil); err == nil {
		t.Error("endpoint count mismatch accepted")
	}
	if _, err := Rewrite("x", ports, []Endpoint{{MAC: "nope", IP: "198.18.0.1"}}); err == nil {
		t.Error("bad MAC accepted")
	}
}

func TestGenerate(t *testing.T) {
	for _, n := range []int{5, 1000, 100000} {
		var buf bytes.Buffer
		if err := Generate(&buf, n); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
		if len(lines) != n {
			t.Fatalf("n=%d: %d lines", n, len(lines))
		}
		matches := map[string]bool{}
		tables := map[string]int{}
		for _, l := range lines {
			match, _, ok := strings.Cut(l, " actions=")
			if !ok {
				t.Fatalf("no actions: %q", l)
			}
			if matches[match] {
				t.Fatalf("n=%d: match repeated: %q", n, match)
			}
			matches[match] = true
			tables[match[:len("table=0")]]++
		}
		if len(tables) != 3 {
			t.Errorf("n=%d: tables %v", n, tables)
		}
	}
	var a, b bytes.Buffer
	Generate(&a, 500)
	Generate(&b, 500)
	if a.String() != b.String() {
		t.Error("not deterministic")
	}
	if err := Generate(&a, 4); err == nil {
		t.Error("4 flows accepted")
	}
}

// TestGenerateParsesWithOvsOfctl: Open vSwitch's own parser accepts every
// generated flow as OpenFlow 1.5 and prints back the same matches.
func TestGenerateParsesWithOvsOfctl(t *testing.T) {
	ofctl, err := exec.LookPath("ovs-ofctl")
	if err != nil {
		t.Skip("ovs-ofctl not installed")
	}
	var buf bytes.Buffer
	if err := Generate(&buf, 2000); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "flows")
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(ofctl, "-O", "OpenFlow15", "parse-flows", file).CombinedOutput()
	if err != nil {
		t.Fatalf("ovs-ofctl parse-flows: %v: %s", err, out)
	}
	if n := strings.Count(string(out), "OFPT_FLOW_MOD (OF1.5)"); n != 2000 {
		t.Errorf("ovs-ofctl parsed %d flow mods, want 2000", n)
	}
	if !strings.Contains(string(out), "ADD table:1 priority=100,ip,metadata=0x1,nw_dst=198.18.0.0 actions=set_field:06:00:00:00:00:01->eth_dst,set_field:0x1->reg0,dec_ttl,resubmit(,2)") {
		t.Errorf("first route not printed back as generated:\n%s", firstLines(string(out), 5))
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

func TestParseFlowCount(t *testing.T) {
	n, err := ParseFlowCount("OFPST_AGGREGATE reply (OF1.5) (xid=0x2): packet_count=0 byte_count=0 flow_count=100000\n")
	if err != nil || n != 100000 {
		t.Errorf("got %d, %v", n, err)
	}
	if _, err := ParseFlowCount("ovs-ofctl: connection refused"); err == nil {
		t.Error("no error")
	}
	if got := MemoryPerRule(1000, 5000, 4); got != 1000 {
		t.Errorf("MemoryPerRule = %v", got)
	}
}

func TestParseTLVMap(t *testing.T) {
	got, err := ParseTLVMap(readTestdata(t, "ovn-two-port.tlv"))
	if err != nil || got != "{class=0x102,type=0x80,len=4}->tun_metadata0" {
		t.Errorf("got %q, %v", got, err)
	}
	got, err = ParseTLVMap("NXT_TLV_TABLE_REPLY (xid=0x2):\n mapping table:\n  class  type  length  match field\n ------  ----  ------  --------------\n  0x102  0x80       4  tun_metadata0\n  0xffff  0x1       8  tun_metadata3\n")
	if err != nil || got != "{class=0x102,type=0x80,len=4}->tun_metadata0,{class=0xffff,type=0x1,len=8}->tun_metadata3" {
		t.Errorf("got %q, %v", got, err)
	}
	if _, err := ParseTLVMap("ovs-ofctl: error"); err == nil {
		t.Error("no error without a mapping table")
	}
}

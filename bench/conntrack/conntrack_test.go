package conntrack

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestFlowsParse: Debian's ovs-ofctl takes both flow tables as they are
// written (what add-flows will be given).
func TestFlowsParse(t *testing.T) {
	if _, err := exec.LookPath("ovs-ofctl"); err != nil {
		t.Skip("ovs-ofctl not installed")
	}
	for name, flows := range map[string]string{"firewall": FirewallFlows(), "plain": PlainFlows()} {
		file := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(file, []byte(flows), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("ovs-ofctl", "-O", "OpenFlow15", "parse-flows", file).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
		want := strings.Count(flows, "\n")
		if got := strings.Count(string(out), "OFPT_FLOW_MOD"); got != want {
			t.Errorf("%s: %d flow mods parsed, want %d:\n%s", name, got, want, out)
		}
	}
	if !strings.Contains(FirewallFlows(), "ct(commit)") || strings.Contains(PlainFlows(), "ct(") {
		t.Error("the firewall must commit through ct and the plain table must not use it")
	}
}

func TestCountConnections(t *testing.T) {
	dump := `tcp,orig=(src=198.18.0.1,dst=198.18.0.2,sport=40000,dport=7003),reply=(src=198.18.0.2,dst=198.18.0.1,sport=7003,dport=40000),protoinfo=(state=ESTABLISHED)
tcp,orig=(src=198.18.0.1,dst=198.18.0.2,sport=40001,dport=7003),reply=(src=198.18.0.2,dst=198.18.0.1,sport=7003,dport=40001),protoinfo=(state=ESTABLISHED)
tcp,orig=(src=198.18.0.1,dst=198.18.0.2,sport=7003,dport=5201),reply=(src=198.18.0.2,dst=198.18.0.1,sport=5201,dport=7003),protoinfo=(state=ESTABLISHED)
tcp,orig=(src=198.18.0.1,dst=198.18.0.2,sport=40002,dport=7003),reply=(src=198.18.0.2,dst=198.18.0.1,sport=7003,dport=40002),protoinfo=(state=TIME_WAIT)
icmp,orig=(src=198.18.0.1,dst=198.18.0.2,id=1,type=8,code=0),reply=(src=198.18.0.2,dst=198.18.0.1,id=1,type=0,code=0)
`
	if n := CountConnections(dump, 7003); n != 2 {
		t.Errorf("counted %d established connections to 7003, want 2", n)
	}
	if n := CountConnections("", 7003); n != 0 {
		t.Errorf("empty dump: %d", n)
	}
	if v := BytesPerConnection(1000, 5000, 4); v != 1000 {
		t.Errorf("per connection %v", v)
	}
	if v := BytesPerConnection(1000, 5000, 0); v != 0 {
		t.Errorf("no connections: %v", v)
	}
}

func TestMemoryShowValue(t *testing.T) {
	out := "bridges:1 flows:3 go-heap-kB:2048 goroutines:40 ports:3\n"
	if v, ok := MemoryShowValue(out, "go-heap-kB"); !ok || v != 2048 {
		t.Errorf("go-heap-kB = %d, %v", v, ok)
	}
	if _, ok := MemoryShowValue(out, "handlers"); ok {
		t.Error("found a key that is not there")
	}
}

package ofproto

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gvs/ofproto/mf"
	"gvs/ofproto/ofpact"
	"gvs/ofproto/pipeline"
	"gvs/ofproto/xlate"
)

// loadFlows adds the flows of an ovs-ofctl dump-flows style file
// ("cookie=..., table=N, priority=P,match actions=...") to b.
func loadFlows(t *testing.T, b *Bridge, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.Index(line, " actions=")
		if i < 0 {
			t.Fatalf("no actions: %s", line)
		}
		head, acts := line[:i], line[i+len(" actions="):]
		var cookie uint64
		table := uint8(0)
		var rest []string
		for _, kv := range strings.Split(strings.ReplaceAll(head, ", ", ","), ",") {
			switch {
			case strings.HasPrefix(kv, "cookie="):
				cookie, _ = strconv.ParseUint(strings.TrimPrefix(kv, "cookie="), 0, 64)
			case strings.HasPrefix(kv, "table="):
				v, _ := strconv.Atoi(strings.TrimPrefix(kv, "table="))
				table = uint8(v)
			default:
				rest = append(rest, kv)
			}
		}
		m, prio, err := mf.ParseMatch(strings.Join(rest, ","))
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		a, err := ofpact.Parse(acts)
		if err != nil {
			t.Fatalf("%s: %v", acts, err)
		}
		pa := make([]pipeline.Action, len(a))
		for i := range a {
			pa[i] = a[i]
		}
		if err := b.Pipeline().FlowMod(&pipeline.FlowMod{Command: pipeline.FlowAdd, Match: m, Priority: prio, TableID: table,
			Cookie: cookie, NewCookie: cookie, BufferID: pipeline.BufferNone, OutPort: mf.PortNone, OutGroup: pipeline.GroupAny,
			Actions: pa}); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		n++
	}
	return n
}

// TestOVNPipelineTranslates loads the pipeline OVN installs for two ports
// on one logical switch and translates a ping from the first port to the
// second: it leaves on the second port's datapath port, and the megaflow
// needs nothing beyond the packet (skips when translation of actions is
// not built).
func TestOVNPipelineTranslates(t *testing.T) {
	if !translates() {
		t.Skip("translation of actions is not built (ofproto/xlate's pending files)")
	}
	b := NewBridge("br-int", BridgeConfig{})
	b.AddPorts([]PortSpec{{Name: "vif1", DPPort: 11, Request: 1}, {Name: "vif2", DPPort: 12, Request: 2}})
	n := loadFlows(t, b, filepath.Join("..", "tests", "testdata", "ovn-two-port.flows"))
	if n < 140 || b.Pipeline().NumRules() != n {
		t.Fatalf("loaded %d flows, pipeline holds %d", n, b.Pipeline().NumRules())
	}
	var f mf.Flow
	f.InPort = 1
	f.EtherType = 0x0800
	f.SrcMAC = [6]byte{0, 0, 0, 0, 1, 1}
	f.DstMAC = [6]byte{0, 0, 0, 0, 1, 2}
	f.SrcIPv4 = [4]byte{198, 18, 0, 1}
	f.DstIPv4 = [4]byte{198, 18, 0, 2}
	f.IPProto, f.IPTTL = 1, 64
	f.ICMPType = 8
	res := xlate.NewTranslator().Translate(&xlate.Input{Bridge: b, Version: b.Version(), Flow: f})
	if res.Error != nil {
		t.Fatalf("translation failed: %v", res.Error)
	}
	if got := res.Actions.String(); got != "12" {
		t.Errorf("datapath actions %q, want output to vif2's datapath port 12", got)
	}
	var lookups uint64
	for _, ts := range b.TableStats() {
		lookups += ts.LookupCount
	}
	if lookups < 30 {
		t.Errorf("the ping crossed only %d table lookups", lookups)
	}
}

package ofp

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gvs/ofproto/ofpact"
)

// TestOVNFlowsThroughBundles feeds OVN's flows for a two-port logical
// switch (tests/testdata/ovn-two-port.flows, as ovs-ofctl dump-flows
// printed them from a real ovn-controller's tables) to the fake switch
// with ovs-ofctl --bundle add-flows in OpenFlow 1.5, the way ovn-controller
// sends its flows: every message decodes, each bundled FLOW_MOD decodes
// to the flow of its line, as ovs-ofctl prints it.
func TestOVNFlowsThroughBundles(t *testing.T) {
	src := filepath.Join("..", "..", "tests", "testdata", "ovn-two-port.flows")
	f, err := os.Open(src)
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	var want []string
	var input strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		want = append(want, line)
		input.WriteString(line + "\n")
	}
	flows := filepath.Join(t.TempDir(), "flows")
	if err := os.WriteFile(flows, []byte(input.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	fs := startFakeSwitch(t, Version15)
	runOfctl(t, fs, "-O", "OpenFlow15", "--bundle", "add-flows", "SOCK", flows)
	fs.ln.Close()
	<-fs.done
	fs.mu.Lock()
	defer fs.mu.Unlock()
	var got []string
	for i, m := range fs.decoded {
		if fs.errs[i] != nil {
			t.Errorf("%x: %v", fs.got[i], fs.errs[i])
			continue
		}
		ba, ok := m.(*BundleAdd)
		if !ok {
			continue
		}
		_, inner, err := ba.Inner()
		if err != nil {
			t.Errorf("bundled %x: %v", ba.Message, err)
			continue
		}
		fm, ok := inner.(*FlowMod)
		if !ok {
			continue
		}
		var b strings.Builder
		if fm.NewCookie != 0 {
			fmt.Fprintf(&b, "cookie=%#x, ", fm.NewCookie)
		}
		if fm.TableID != 0 {
			fmt.Fprintf(&b, "table=%d, ", fm.TableID)
		}
		b.WriteString(fm.Match.Format(int(fm.Priority)))
		b.WriteString(" actions=" + ofpact.Format(fm.Actions))
		got = append(got, b.String())
	}
	if len(got) != len(want) {
		t.Fatalf("%d flow mods in bundles, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("flow %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
}

package ofpact

import (
	"os"
	"strings"
	"testing"
)

func TestOVNFlowsParse(t *testing.T) {
	data, err := os.ReadFile("../../tests/testdata/ovn-two-port.flows")
	if err != nil {
		t.Skip(err)
	}
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		i := strings.Index(line, " actions=")
		if i < 0 || strings.HasPrefix(line, "#") {
			continue
		}
		text := line[i+len(" actions="):]
		acts, err := Parse(text)
		if err != nil {
			t.Errorf("Parse(%q): %v", text, err)
			continue
		}
		if got := Format(acts); got != text {
			t.Errorf("Parse(%q) formats as\n%q", text, got)
		}
		for _, v := range []uint8{of15} { // the file is an OpenFlow 1.5 dump (1.3 turns masked set_field into load)
			b := AppendInstructions(nil, acts, v)
			back, err := PullInstructions(b, v)
			if err != nil {
				t.Errorf("%s: %x: %v", text, b, err)
				continue
			}
			if got := Format(back); got != text {
				t.Errorf("%s after %s wire:\n%s", text, versionNames[v], got)
			}
		}
		n++
	}
	t.Logf("%d flows", n)
}

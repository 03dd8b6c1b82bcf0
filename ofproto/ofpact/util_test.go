package ofpact

import (
	"strings"
	"testing"

	"gvs/ofproto/mf"
)

func mustParse(t *testing.T, s string) []Action {
	t.Helper()
	acts, err := Parse(s)
	if err != nil {
		t.Fatalf("Parse(%q): %v", s, err)
	}
	return acts
}

func TestOutputsTo(t *testing.T) {
	acts := mustParse(t, "set_field:0x1->reg0,clone(output:3,group:9),controller(pause)")
	for port, want := range map[uint32]bool{3: true, 4: false, mf.PortController: true} {
		if got := OutputsToPort(acts, port); got != want {
			t.Errorf("OutputsToPort(%d) = %v", port, got)
		}
	}
	if !OutputsToGroup(acts, 9) || OutputsToGroup(acts, 8) {
		t.Error("OutputsToGroup")
	}
	if !OutputsToPort(mustParse(t, "write_actions(output:7)"), 7) {
		t.Error("write_actions not searched")
	}
}

func TestMeterID(t *testing.T) {
	if got := MeterID(mustParse(t, "meter:5,output:1")); got != 5 {
		t.Errorf("MeterID = %d", got)
	}
	if got := MeterID(mustParse(t, "output:1")); got != 0 {
		t.Errorf("MeterID = %d", got)
	}
}

func TestEqual(t *testing.T) {
	a, b := mustParse(t, "load:0x1->NXM_NX_REG0[]"), mustParse(t, "set_field:0x1->reg0")
	if Equal(a, b) {
		t.Error("load and set_field differ in how they go out")
	}
	if !Equal(a, mustParse(t, "load:0x1->NXM_NX_REG0[]")) {
		t.Error("equal lists differ")
	}
}

func TestExecuteActionSet(t *testing.T) {
	for _, tc := range []struct{ set, want string }{
		{"output:1,set_field:0x1->reg0,push_vlan:0x8100,dec_ttl", "push_vlan:0x8100,dec_ttl,set_field:0x1->reg0,output:1"},
		{"group:3,output:1", "group:3"},
		{"output:1,output:2", "output:2"},
		{"set_field:0x1->reg0", "drop"},
		{"strip_vlan,push_vlan:0x8100,output:1", "strip_vlan,push_vlan:0x8100,output:1"},
	} {
		if got := Format(ExecuteActionSet(mustParse(t, tc.set))); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.set, got, tc.want)
		}
	}
}

func TestWalk(t *testing.T) {
	var kinds []string
	Walk(mustParse(t, "clone(group:1,ct(commit,exec(set_field:0x1->ct_mark))),output:2"), func(a Action) bool {
		kinds = append(kinds, a.Kind().String())
		return true
	})
	if got := strings.Join(kinds, " "); got != "clone group ct set_field output" {
		t.Errorf("Walk visited %s", got)
	}
	n := 0
	if Walk(mustParse(t, "output:1,output:2,output:3"), func(Action) bool { n++; return n < 2 }) || n != 2 {
		t.Errorf("Walk did not stop: %d", n)
	}
}

func TestKindSetOpenFlow(t *testing.T) {
	for _, tc := range []struct {
		version uint8
		want    uint32
	}{
		{of10, 0x00000fff},
		{of11, 0x01ffe7ff},
		{of13, 0x03ff8001},
	} {
		if got := AllKinds.ToOpenFlow(tc.version); got != tc.want {
			t.Errorf("%s: %#x, want %#x", versionNames[tc.version], got, tc.want)
		}
		if back := KindSetFromOpenFlow(tc.want, tc.version).ToOpenFlow(tc.version); back != tc.want {
			t.Errorf("%s: round trip %#x", versionNames[tc.version], back)
		}
	}
	if s := KindSetFromOpenFlow(1, of10).String(); s != "output" {
		t.Errorf("String: %q", s)
	}
}

func TestFormatNames(t *testing.T) {
	names := map[uint32]string{1: "p1", 2: "a-b", 3: "9x"}
	got := FormatNames(mustParse(t, "output:1,output:2,resubmit(2,3),enqueue:1:3,output:LOCAL,output:4,output:3"),
		func(p uint32) (string, bool) { n, ok := names[p]; return n, ok })
	want := `output:p1,output:"a-b",resubmit("a-b",3),enqueue:p1:3,LOCAL,output:4,output:"9x"`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

package setups

import (
	"strings"
	"testing"

	"gvs/bench/conntrack"
	"gvs/bench/topo"
)

// TestConntrackSetups: the conntrack part's setups have names of their
// own (not the datapath part's), one gvs and one Open vSwitch each with
// and without ct, tracking exactly when they load the ct firewall, and
// their bridge holds only the client's and server's ports under the
// OpenFlow numbers the flows use.
func TestConntrackSetups(t *testing.T) {
	other := map[string]bool{}
	for _, s := range append(append(All(Env{}), Extra(Env{})...), OpenFlowSetups(Env{})...) {
		other[s.Name()] = true
	}
	tracking := map[string]bool{}
	for _, s := range ConntrackSetups(Env{}) {
		if other[s.Name()] {
			t.Errorf("%s is also another part's setup", s.Name())
		}
		cs, ok := s.(ConntrackSwitch)
		if !ok {
			t.Fatalf("%s is no ConntrackSwitch", s.Name())
		}
		tracking[s.Name()] = cs.TracksConnections()
		if fs, ok := s.(FlowSenders); !ok || fs.FlowSenders() != 1 {
			t.Errorf("%s: the flows have a port for the client only", s.Name())
		}
		if err := s.Stop(); err != nil {
			t.Errorf("%s: Stop before Start: %v", s.Name(), err)
		}
	}
	want := map[string]bool{OVSConntrackName: true, OVSNoConntrackName: false, GVSConntrackName: true, GVSNoConntrackName: false}
	for name, tr := range want {
		if got, ok := tracking[name]; !ok || got != tr {
			t.Errorf("%s: tracks %v (present %v), want %v", name, got, ok, tr)
		}
	}
	add := strings.Join(flowsAddBridge(&topo.Topo{ClientPort: "cp", ServerPort: "sp"}, "--timeout=5", ""), " ")
	for _, w := range []string{"fail-mode=secure", "protocols=OpenFlow15", "cp -- set interface cp ofport_request=1", "sp -- set interface sp ofport_request=2"} {
		if !strings.Contains(add, w) {
			t.Errorf("add-br command %q lacks %q", add, w)
		}
	}
	if conntrack.ClientPort != 1 || conntrack.ServerPort != 2 {
		t.Error("the flows' port numbers changed without the bridge's")
	}
}

package bridge_test

import "testing"

// TestPatchPortErrors: a patch port's configuration error is written
// in the datapath's words (not "could not open network device"); a
// working patch port without its peer carries the pairing error, which
// goes when the peer arrives in a later transaction, and comes back
// when the peer goes, though the port itself did not change.
func TestPatchPortErrors(t *testing.T) {
	e := newEnv(t)
	e.startReconciler()
	e.vsctl("add-br", "br0", "--", "add-br", "br1")
	e.vsctl("add-port", "br0", "pc", "--", "set", "Interface", "pc", "type=patch")
	if got := e.get("Interface", "pc", "error"); got != `"pc: patch type requires valid 'peer' argument"` {
		t.Fatalf("pc error = %s", got)
	}
	if got := e.get("Interface", "pc", "ofport"); got != "-1" {
		t.Fatalf("pc ofport = %s", got)
	}
	e.vsctl("add-port", "br0", "pa", "--", "set", "Interface", "pa", "type=patch", "options:peer=pb")
	if got := e.get("Interface", "pa", "error"); got != `"No usable peer 'pb' exists in 'system' datapath."` {
		t.Fatalf("pa error before pb = %s", got)
	}
	e.vsctl("add-port", "br1", "pb", "--", "set", "Interface", "pb", "type=patch", "options:peer=pa")
	for _, name := range []string{"pa", "pb"} {
		if got := e.get("Interface", name, "error"); got != "[]" {
			t.Fatalf("%s error with its peer = %s", name, got)
		}
	}
	e.vsctl("del-port", "br1", "pb")
	if got := e.get("Interface", "pa", "error"); got != `"No usable peer 'pb' exists in 'system' datapath."` {
		t.Fatalf("pa error after pb went = %s", got)
	}
	if got := e.get("Interface", "pa", "statistics"); got != "{rx_bytes=0, rx_packets=0, tx_bytes=0, tx_packets=0}" {
		t.Fatalf("pa statistics = %s", got)
	}
}

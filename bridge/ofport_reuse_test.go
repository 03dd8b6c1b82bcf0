package bridge_test

import "testing"

// TestOfportsNotReusedSoon: like Open vSwitch, a number a port gave up is
// not handed to another port (or to the same interface coming back) for
// an hour; new ports take the next numbers instead.
func TestOfportsNotReusedSoon(t *testing.T) {
	e := newEnv(t)
	e.startReconciler()
	for _, n := range []string{"a1", "a2", "a3", "a4"} {
		e.dp.AddDevice(n)
	}
	e.vsctl("add-br", "br0")
	e.vsctl("add-port", "br0", "a1", "--", "add-port", "br0", "a2", "--", "add-port", "br0", "a3")
	e.vsctl("del-port", "a2")
	e.vsctl("add-port", "br0", "a4")
	want := map[string]string{"a1": "1", "a3": "3", "a4": "4"}
	for name, port := range want {
		if got := e.get("Interface", name, "ofport"); got != port {
			t.Errorf("%s ofport = %s, want %s", name, got, port)
		}
	}
	// a3's device vanishes and comes back: a new number, not 3 (nor 2).
	e.dp.RemoveDevice("a3")
	e.rec.Kick()
	e.eventually("a3 to fail", func() bool { return e.get("Interface", "a3", "ofport") == "-1" })
	e.dp.AddDevice("a3")
	e.rec.Kick()
	e.eventually("a3 to come back as 5", func() bool { return e.get("Interface", "a3", "ofport") == "5" })
}

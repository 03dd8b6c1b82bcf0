package bridge_test

import (
	"slices"
	"testing"

	"gvs/bridge/bridgetest"
)

func TestOfportsStableAcrossRestart(t *testing.T) {
	e := newEnv(t)
	e.startReconciler()
	for _, n := range []string{"a1", "a2", "a3", "a4"} {
		e.dp.AddDevice(n)
	}
	e.vsctl("add-br", "br0")
	e.vsctl("add-port", "br0", "a1")
	e.vsctl("add-port", "br0", "a2")
	e.vsctl("add-port", "br0", "a3")
	e.vsctl("del-port", "a1") // leaves a hole at 1
	e.vsctl("add-port", "br0", "a4", "--", "set", "Interface", "a4", "ofport_request=10")
	want := map[string]string{"a2": "2", "a3": "3", "a4": "10", "br0": "65534"}
	check := func(when string) {
		t.Helper()
		for name, port := range want {
			if got := e.get("Interface", name, "ofport"); got != port {
				t.Errorf("%s: %s ofport = %s, want %s", when, name, got, port)
			}
		}
	}
	check("before restart")

	// A new reconciler and an empty datapath, as after a daemon restart:
	// the ports come back from the database with the same numbers.
	e.stopReconciler()
	e.dp = bridgetest.New()
	for _, n := range []string{"a2", "a3", "a4", "a5"} {
		e.dp.AddDevice(n)
	}
	e.startReconciler()
	e.vsctl("add-port", "br0", "a5") // takes the hole, not a used number
	if got := e.dp.Ports(); !slices.Equal(got, []string{"a2", "a3", "a4", "a5", "br0"}) {
		t.Fatalf("ports after restart = %v", got)
	}
	want["a5"] = "1"
	check("after restart")

	// ofport_request moves a port when the number is free.
	e.vsctl("set", "Interface", "a3", "ofport_request=7")
	want["a3"] = "7"
	check("after ofport_request")
}

func TestReconnectsWhenTheServerReturns(t *testing.T) {
	e := newEnv(t)
	e.startReconciler()
	e.dp.AddDevice("p1")
	e.dp.AddDevice("p2")
	e.vsctl("add-br", "br0", "--", "add-port", "br0", "p1")

	e.stopServer()
	// The datapath keeps its configuration while the database is away.
	if got := e.dp.Ports(); !slices.Equal(got, []string{"br0", "p1"}) {
		t.Fatalf("ports while disconnected = %v", got)
	}
	e.startServer()
	e.vsctl("add-port", "br0", "p2")
	if got := e.dp.Ports(); !slices.Equal(got, []string{"br0", "p1", "p2"}) {
		t.Fatalf("ports after reconnection = %v", got)
	}
	if got := e.get("Interface", "p2", "ofport"); got != "2" {
		t.Fatalf("p2 ofport = %s", got)
	}
}

func TestFollowsATCPRemote(t *testing.T) {
	e := newEnv(t)
	if err := e.srv.AddRemote("ptcp:0:127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	addr := e.srv.BoundAddr("ptcp:0:127.0.0.1")
	if addr == nil {
		t.Fatal("no bound address for ptcp:0")
	}
	e.remote = "tcp:" + addr.String()
	e.startReconciler()
	e.vsctl("add-br", "br0")
	if got := e.dp.Ports(); !slices.Equal(got, []string{"br0"}) {
		t.Fatalf("ports = %v", got)
	}
}

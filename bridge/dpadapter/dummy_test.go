package dpadapter

import (
	"errors"
	"testing"
	"time"

	"gvs/bridge"
	"gvs/netdev/dummy"
)

// TestDummyPorts: with --enable-dummy, type=dummy ports and the internal
// port of a datapath_type=dummy bridge are dummy devices (no kernel
// device), polled by the datapath, following set-admin-state, and never
// marked gone by a link resync; without it they are refused.
func TestDummyPorts(t *testing.T) {
	off := New(Config{PMDs: 1})
	defer off.Close()
	if err := off.AddBridge("br0", bridge.BridgeConfig{DatapathType: "dummy"}); !errors.Is(err, ErrDummyDisabled) {
		t.Errorf("dummy bridge without --enable-dummy: %v", err)
	}
	off.AddBridge("br1", bridge.BridgeConfig{})
	if err := off.AddPort(bridge.PortSpec{Bridge: "br1", Name: "p1", Type: "dummy"}); !errors.Is(err, ErrDummyDisabled) {
		t.Errorf("dummy port without --enable-dummy: %v", err)
	}

	d := New(Config{PMDs: 1, Dummy: DummyEnabled})
	defer d.Close()
	if err := d.AddBridge("br0", bridge.BridgeConfig{DatapathType: "dummy"}); err != nil {
		t.Fatal(err)
	}
	errs := d.AddPorts([]bridge.PortSpec{
		{Bridge: "br0", Name: "br0", Type: "internal"},
		{Bridge: "br0", Name: "p1", Type: "dummy"},
		{Bridge: "br0", Name: "p2", Type: "dummy", Options: map[string]string{"n_rxq": "2"}},
	})
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	reg := d.Dummies()
	if len(reg.Devices()) != 3 || reg.Lookup("br0").Type() != "dummy-internal" || reg.Lookup("p2").NumRxQueues() != 2 {
		t.Fatalf("dummy devices: %d, br0 %v", len(reg.Devices()), reg.Lookup("br0"))
	}
	// A link resync (no kernel device of these names) leaves them alone.
	d.LinkEvents(nil, true)
	if _, err := d.PortState("p1"); err != nil {
		t.Fatalf("p1 after a resync: %v", err)
	}
	// A frame queued on p1 is polled by a PMD and reaches the datapath
	// (a miss: the bridge has no flows here).
	frame, err := dummy.ComposeFrame("eth(src=02:00:00:00:00:01,dst=ff:ff:ff:ff:ff:ff),eth_type(0x0806),arp(sip=198.18.0.1,tip=198.18.0.2,op=1,sha=02:00:00:00:00:01)", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Lookup("p1").Receive(0, frame); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for reg.Lookup("p1").Stats().RxPackets == 0 || d.dp.Stats().Missed == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("not received: p1 %+v, datapath %+v", reg.Lookup("p1").Stats(), d.dp.Stats())
		}
		time.Sleep(5 * time.Millisecond)
	}
	reg.Lookup("p1").SetAdminState(false)
	if st, _ := d.PortState("p1"); st.Link.AdminUp {
		t.Error("set-admin-state down not reported")
	}
	if err := d.DelPort("p1"); err != nil {
		t.Fatal(err)
	}
	if reg.Lookup("p1") != nil {
		t.Error("deleted port's device still registered")
	}
}

func TestDummyOverride(t *testing.T) {
	for _, c := range []struct {
		arg        string
		mode       DummyMode
		systemIs   bool
		internalIs bool
	}{{"", DummyEnabled, false, false}, {"system", DummySystem, true, false}, {"override", DummyOverride, true, true}} {
		mode, err := ParseDummyMode(c.arg)
		if err != nil || mode != c.mode {
			t.Fatalf("%q: %v %v", c.arg, mode, err)
		}
		d := New(Config{Dummy: mode})
		if got := d.dummyType(bridge.PortSpec{Type: "system"}, ""); (got != "") != c.systemIs {
			t.Errorf("%q: system port dummy type %q", c.arg, got)
		}
		if got := d.dummyType(bridge.PortSpec{Type: "internal"}, "netdev"); (got != "") != c.internalIs {
			t.Errorf("%q: internal port dummy type %q", c.arg, got)
		}
		d.Close()
	}
	if _, err := ParseDummyMode("bogus"); err == nil {
		t.Error("bogus level accepted")
	}
}

func TestDummyPortNumbers(t *testing.T) {
	for name, want := range map[string]uint32{"p1": 1, "vif2": 2, "br0": 100, "br-int": 0, "s12x3": 12, "p0": 0} {
		got, ok := dummyPortNo(name)
		if got != want || ok != (want != 0) {
			t.Errorf("%s: %d %v, want %d", name, got, ok, want)
		}
	}
	d := New(Config{PMDs: 1, Dummy: DummyEnabled})
	defer d.Close()
	d.AddBridge("br0", bridge.BridgeConfig{DatapathType: "dummy"})
	for _, err := range d.AddPorts([]bridge.PortSpec{
		{Bridge: "br0", Name: "br0", Type: "internal"},
		{Bridge: "br0", Name: "p3", Type: "dummy"},
		{Bridge: "br0", Name: "q3", Type: "dummy"}, // 3 is taken: the first free
		{Bridge: "br0", Name: "x", Type: "dummy"},
	}) {
		if err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]uint32{}
	for _, p := range d.ports {
		got[p.spec.Name] = p.no
	}
	if got["br0"] != 100 || got["p3"] != 3 || got["q3"] != 1 || got["x"] != 2 {
		t.Errorf("port numbers %v", got)
	}
}

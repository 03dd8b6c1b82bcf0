package dpif

import (
	"errors"
	"testing"

	"gvs/netdev"
	"gvs/netdev/netdevtest"
)

// TestPortsAddAndDelInOneStep: a batch of ports is published to the PMDs
// with one plan (one epoch) and removed with one; a device that cannot be
// added is reported for itself, stays open (the caller's) and does not
// stop the others.
func TestPortsAddAndDelInOneStep(t *testing.T) {
	fx := newFixture(t, Config{PMDs: 2}, 0)
	first, _ := fx.addPort(netdevtest.Config{Name: "x0", Discard: true})
	var devs []netdev.Device
	var fakes []*netdevtest.Device
	for _, name := range []string{"x1", "x2", "x0", "x3"} {
		d := netdevtest.MustNew(netdevtest.Config{Name: name, TxQueues: 4, Discard: true})
		devs, fakes = append(devs, d), append(fakes, d)
	}
	fx.dp.portMu.Lock()
	ep := fx.dp.planEp
	fx.dp.portMu.Unlock()
	nos, errs := fx.dp.PortsAdd(devs)
	if !errors.Is(errs[2], ErrDevInUse) {
		t.Fatalf("duplicate name: %v", errs[2])
	}
	if fakes[2].Closed() {
		t.Fatal("the device that was not added was closed")
	}
	seen := map[uint32]bool{first: true}
	for i, err := range errs {
		if i == 2 {
			continue
		}
		if err != nil || seen[nos[i]] {
			t.Fatalf("device %d: port %d, %v", i, nos[i], err)
		}
		seen[nos[i]] = true
	}
	fx.dp.portMu.Lock()
	if fx.dp.planEp != ep+1 {
		t.Errorf("%d plan publications for one batch, want 1", fx.dp.planEp-ep)
	}
	ep = fx.dp.planEp
	fx.dp.portMu.Unlock()
	if n := len(fx.dp.Ports()); n != 4 {
		t.Fatalf("%d ports, want 4", n)
	}
	// Every PMD polls some queue: the batch was spread over them.
	pmds := map[int]bool{}
	for _, p := range fx.dp.Ports() {
		for _, pmd := range p.RxQueuePMDs {
			pmds[pmd] = true
		}
	}
	if len(pmds) != 2 {
		t.Errorf("rx queues on PMDs %v, want both", pmds)
	}

	errs = fx.dp.PortsDel([]uint32{nos[0], nos[1], 999, nos[0]})
	if errs[0] != nil || errs[1] != nil || !errors.Is(errs[2], ErrNoPort) || !errors.Is(errs[3], ErrNoPort) {
		t.Fatalf("PortsDel: %v", errs)
	}
	if !fakes[0].Closed() || !fakes[1].Closed() || fakes[3].Closed() {
		t.Fatal("PortsDel closed the wrong devices")
	}
	fx.dp.portMu.Lock()
	if fx.dp.planEp != ep+1 {
		t.Errorf("%d plan publications for one deletion batch, want 1", fx.dp.planEp-ep)
	}
	fx.dp.portMu.Unlock()
	if n := len(fx.dp.Ports()); n != 2 {
		t.Fatalf("%d ports left, want 2", n)
	}
	fakes[2].Close()
}

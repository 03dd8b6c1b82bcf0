package link

import (
	"net"
	"testing"
)

// TestAttrsReadLoopback reads (never changes) the loopback device.
func TestAttrsReadLoopback(t *testing.T) {
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Skip("no loopback device:", err)
	}
	var a Attrs
	a.Init("lo", lo.Index, 1)
	if a.CachedMTU() != 1 {
		t.Fatalf("CachedMTU after Init = %d, want 1", a.CachedMTU())
	}
	if m := a.MTU(); m != lo.MTU || a.CachedMTU() != lo.MTU {
		t.Errorf("MTU() = %d, cached %d; the kernel says %d", m, a.CachedMTU(), lo.MTU)
	}
	if st := a.Link(); !st.AdminUp {
		t.Errorf("loopback link state %+v, want admin up", st)
	}
	var gone Attrs
	gone.Init("gone", 1<<30, 1500)
	if gone.MTU() != 0 || gone.MAC() != nil || gone.CachedMTU() != 1500 {
		t.Errorf("a missing device: MTU %d, MAC %v, cached %d", gone.MTU(), gone.MAC(), gone.CachedMTU())
	}
}

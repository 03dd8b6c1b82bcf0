package dpadapter

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gvs/bridge"
	"gvs/netdev"
)

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to create tap and veth devices")
	}
}

func ip(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func veth(t *testing.T, name string) {
	t.Helper()
	exec.Command("ip", "link", "del", name).Run()
	ip(t, "link", "add", name, "type", "veth", "peer", "name", name+"p")
	ip(t, "link", "set", name, "up")
	t.Cleanup(func() { exec.Command("ip", "link", "del", name).Run() })
}

func TestPortsOnRealDevices(t *testing.T) {
	needRoot(t)
	d := New(Config{PMDs: 1})
	defer d.Close()
	if err := d.SetConfig(bridge.DatapathConfig{}); err != nil {
		t.Fatal(err)
	}
	if err := d.AddBridge("gvbat0", bridge.BridgeConfig{}); err != nil {
		t.Fatal(err)
	}
	mac := net.HardwareAddr{0x02, 0x11, 0x22, 0x33, 0x44, 0x55}
	if err := d.AddPort(bridge.PortSpec{Bridge: "gvbat0", Name: "gvbat0", Type: "internal", MAC: mac}); err != nil {
		t.Fatal(err)
	}
	st, err := d.PortState("gvbat0")
	if err != nil {
		t.Fatal(err)
	}
	if st.MAC.String() != mac.String() || st.Link.IfIndex == 0 || st.Status["driver_name"] != "tun" {
		t.Errorf("internal port state %+v", st)
	}

	err = d.AddPort(bridge.PortSpec{Bridge: "gvbat0", Name: "gvbatx", Type: "geneve"})
	if !errors.Is(err, bridge.ErrUnsupportedType) {
		t.Errorf("unknown type: %v", err)
	}
	err = d.AddPort(bridge.PortSpec{Bridge: "gvbat0", Name: "gvbatnone", Type: "system"})
	if !errors.Is(err, netdev.ErrNoDevice) {
		t.Errorf("missing device: %v", err)
	}

	veth(t, "gvbav1")
	if err := d.AddPort(bridge.PortSpec{Bridge: "gvbat0", Name: "gvbav1", Type: "system", MTURequest: 1400, VLAN: bridge.VLANConfig{Tag: 7}}); err != nil {
		t.Fatal(err)
	}
	if st, err := d.PortState("gvbav1"); err != nil || st.MTU != 1400 {
		t.Errorf("veth state %+v %v", st, err)
	}
	if err := d.SetPort(bridge.PortSpec{Bridge: "gvbat0", Name: "gvbav1", Type: "system", MTURequest: 1450, VLAN: bridge.VLANConfig{Mode: "trunk", Trunks: []int{7, 8}}}); err != nil {
		t.Fatal(err)
	}
	if err := d.SetSocketBuffers(4 << 20); err != nil {
		t.Fatal(err)
	}
	if st, _ := d.PortState("gvbav1"); st.MTU != 1450 || st.Status["socket_buf_requested"] != "4194304" {
		t.Errorf("after SetPort and SetSocketBuffers: mtu %d status %v", st.MTU, st.Status)
	}
	view := View{DP: d, OFPorts: func(string) map[string]int { return map[string]int{"gvbat0": 65534, "gvbav1": 3} }}
	brs := view.Bridges()
	if view.Datapath() == nil || len(brs) != 1 || brs[0].NORMAL == nil || len(brs[0].Ports) != 2 ||
		brs[0].Ports[1].Interface != "gvbav1" || brs[0].Ports[1].OFPort != 3 || brs[0].Ports[1].SocketBufferRequest != 4<<20 {
		t.Errorf("view: %+v", brs)
	}

	// The device replaced by another of the same name is "gone".
	ip(t, "link", "del", "gvbav1")
	if _, err := d.PortState("gvbav1"); !errors.Is(err, netdev.ErrNoDevice) {
		t.Errorf("deleted device: %v", err)
	}
	veth(t, "gvbav1")
	if _, err := d.PortState("gvbav1"); !errors.Is(err, netdev.ErrNoDevice) {
		t.Errorf("replaced device: %v", err)
	}
	if err := d.DelPort("gvbav1"); err != nil {
		t.Errorf("DelPort of a vanished device: %v", err)
	}

	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := net.InterfaceByName("gvbat0"); err == nil {
		t.Error("internal port's tap device left after Close")
	}
}

func TestWatchLinksSeesNewDevices(t *testing.T) {
	needRoot(t)
	var events atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		WatchLinks(ctx, slogDiscard(), func() { events.Add(1) })
	}()
	time.Sleep(100 * time.Millisecond) // subscribed
	veth(t, "gvbaw1")
	deadline := time.Now().Add(5 * time.Second)
	for events.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	if events.Load() == 0 {
		t.Fatal("no link event for a new veth")
	}
}

func slogDiscard() *slog.Logger { return slog.New(slog.DiscardHandler) }

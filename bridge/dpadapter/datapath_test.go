package dpadapter

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gvs/bridge"
	"gvs/netdev"
	"gvs/netdev/afpacket"
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
	// The bridge numbered the ports (LOCAL, then 1); the reconciler's
	// numbers only fill in for a port without one.
	view := View{DP: d, OFPorts: func(string) map[string]int { return map[string]int{"gvbat0": 65534, "gvbav1": 3} }}
	brs := view.Bridges()
	if view.Datapath() == nil || len(brs) != 1 || brs[0].OpenFlow == nil || len(brs[0].Ports) != 2 ||
		brs[0].Ports[0].OFPort != 65534 || brs[0].Ports[1].Interface != "gvbav1" || brs[0].Ports[1].OFPort != 1 ||
		brs[0].Ports[1].SocketBufferRequest != 4<<20 {
		t.Errorf("view: %+v", brs)
	}

	// A device deleted, or replaced by another of the same name, is
	// "gone" once the adapter hears of it (here: a resync's dump).
	ip(t, "link", "del", "gvbav1")
	d.LinkEvents(nil, true)
	if _, err := d.PortState("gvbav1"); !errors.Is(err, netdev.ErrNoDevice) {
		t.Errorf("deleted device: %v", err)
	}
	veth(t, "gvbav1")
	d.LinkEvents(nil, true)
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

// recorder is a PortWatcher that remembers what it was told.
type recorder struct {
	mu      sync.Mutex
	names   map[string]int
	resyncs int
}

func (r *recorder) PortsChanged(names ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range names {
		r.names[n]++
	}
}

func (r *recorder) ResyncPorts() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.resyncs++
}

func (r *recorder) count(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.names[name]
}

// TestLinkEventsKeepPortState: the adapter learns from link events (not
// per-call queries) a new device's name, a port's link going down, its
// MTU, and its device being deleted or replaced.
func TestLinkEventsKeepPortState(t *testing.T) {
	needRoot(t)
	d := New(Config{PMDs: 1})
	defer d.Close()
	if err := d.AddBridge("gvbaw0", bridge.BridgeConfig{}); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{names: map[string]int{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.Watch(ctx, slogDiscard(), rec)
	}()
	defer func() { cancel(); <-done }()
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatal("timed out waiting for " + what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFor("the first resync", func() bool { rec.mu.Lock(); defer rec.mu.Unlock(); return rec.resyncs > 0 })
	veth(t, "gvbaw1")
	waitFor("an event naming the new veth", func() bool { return rec.count("gvbaw1") > 0 })
	if err := d.AddPort(bridge.PortSpec{Bridge: "gvbaw0", Name: "gvbaw1", Type: "system"}); err != nil {
		t.Fatal(err)
	}
	if st, err := d.PortState("gvbaw1"); err != nil || !st.Link.AdminUp || st.Link.IfIndex == 0 {
		t.Fatalf("new port: %+v %v", st, err)
	}
	// The peer coming up brings the carrier: one transition.
	ip(t, "link", "set", "gvbaw1p", "up")
	waitFor("the carrier", func() bool {
		st, err := d.PortState("gvbaw1")
		return err == nil && st.Link.CarrierUp && st.CarrierResets == 1
	})
	before := rec.count("gvbaw1")
	ip(t, "link", "set", "gvbaw1", "down", "mtu", "1400")
	waitFor("the port to be down with MTU 1400", func() bool {
		st, err := d.PortState("gvbaw1")
		return err == nil && !st.Link.AdminUp && !st.Link.CarrierUp && st.CarrierResets == 2 && st.MTU == 1400
	})
	// The device's own size check follows the event too (its Stats
	// does not read the MTU).
	d.mu.Lock()
	dev := d.ports["gvbaw1"].dev
	d.mu.Unlock()
	if c, ok := dev.(interface{ CachedMTU() int }); !ok || c.CachedMTU() != 1400 {
		t.Errorf("the device's cached MTU did not follow the link event to 1400 (%T)", dev)
	}
	if rec.count("gvbaw1") == before {
		t.Error("the watcher was not told about the change")
	}
	ip(t, "link", "del", "gvbaw1")
	waitFor("the port's device to be gone", func() bool {
		_, err := d.PortState("gvbaw1")
		return errors.Is(err, netdev.ErrNoDevice)
	})
	if err := d.DelPort("gvbaw1"); err != nil {
		t.Errorf("DelPort of a vanished device: %v", err)
	}
}

// TestAddPortsInOneStep: ports added together share one datapath step; a
// failing spec opens nothing and does not stop the others; DelPorts
// removes them together.
func TestAddPortsInOneStep(t *testing.T) {
	needRoot(t)
	d := New(Config{PMDs: 1})
	defer d.Close()
	if err := d.AddBridge("gvbab0", bridge.BridgeConfig{}); err != nil {
		t.Fatal(err)
	}
	var specs []bridge.PortSpec
	for i := range 8 {
		name := "gvbab" + strconv.Itoa(i+1)
		veth(t, name)
		specs = append(specs, bridge.PortSpec{Bridge: "gvbab0", Name: name, Type: "system"})
	}
	specs = append(specs,
		bridge.PortSpec{Bridge: "gvbab0", Name: "gvbabnone", Type: "system"},
		bridge.PortSpec{Bridge: "gvbab0", Name: "gvbab1", Type: "system"},
		bridge.PortSpec{Bridge: "nobridge", Name: "gvbabx", Type: "system"})
	errs := d.AddPorts(specs)
	for i := range 8 {
		if errs[i] != nil {
			t.Fatalf("%s: %v", specs[i].Name, errs[i])
		}
	}
	if !errors.Is(errs[8], netdev.ErrNoDevice) || errs[9] == nil || errs[10] == nil {
		t.Fatalf("bad specs: %v", errs[8:])
	}
	if n := len(d.dp.Ports()); n != 8 {
		t.Fatalf("%d datapath ports, want 8", n)
	}
	names := []string{"gvbab1", "gvbab2", "gvbab3", "gvbabnone"}
	errs = d.DelPorts(names)
	if errs[0] != nil || errs[1] != nil || errs[2] != nil || errs[3] == nil {
		t.Fatalf("DelPorts: %v", errs)
	}
	if n := len(d.dp.Ports()); n != 5 {
		t.Fatalf("%d datapath ports left, want 5", n)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}

func slogDiscard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// TestSystemPortsTakeSpares: the pool of ready receive sockets appears
// with the first system port, a system port added later opens from it,
// and it goes (its rings back to the budget) with the last system port.
func TestSystemPortsTakeSpares(t *testing.T) {
	needRoot(t)
	d := New(Config{PMDs: 1})
	defer d.Close()
	if err := d.AddBridge("gvbas0", bridge.BridgeConfig{}); err != nil {
		t.Fatal(err)
	}
	if err := d.AddPort(bridge.PortSpec{Bridge: "gvbas0", Name: "gvbas0", Type: "internal"}); err != nil {
		t.Fatal(err)
	}
	if d.spares != nil {
		t.Fatal("spare sockets kept without a system port")
	}
	veth(t, "gvbas1")
	veth(t, "gvbas2")
	if err := d.AddPort(bridge.PortSpec{Bridge: "gvbas0", Name: "gvbas1", Type: "system"}); err != nil {
		t.Fatal(err)
	}
	spares := d.spares
	if spares == nil {
		t.Fatal("no spare sockets after the first system port")
	}
	for end := time.Now().Add(5 * time.Second); spares.Ready() != afpacket.DefaultSpares; time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%d spares ready, want %d", spares.Ready(), afpacket.DefaultSpares)
		}
	}
	if err := d.AddPort(bridge.PortSpec{Bridge: "gvbas0", Name: "gvbas2", Type: "system"}); err != nil {
		t.Fatal(err)
	}
	if c := spares.Counts(); c.Taken != 1 {
		t.Errorf("spare counts %+v after the second system port, want one taken", c)
	}
	if errs := d.DelPorts([]string{"gvbas1"}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	if d.spares == nil {
		t.Fatal("spares dropped while a system port remains")
	}
	if errs := d.DelPorts([]string{"gvbas2"}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	if d.spares != nil || spares.Ready() != 0 {
		t.Errorf("spares kept after the last system port went (%d ready)", spares.Ready())
	}
	if used := d.rings.Used(); used != 0 {
		t.Errorf("ring budget used %d with no system port and no spares", used)
	}
}

package bridge_test

import (
	"slices"
	"strings"
	"testing"

	"gvs/netdev"
)

func TestAddBridgeAndPortsWithoutNoWait(t *testing.T) {
	e := newEnv(t)
	e.startReconciler()
	e.dp.AddDevice("p1")
	e.dp.AddDevice("p2")

	e.vsctl("add-br", "br0")
	if got := e.dp.Ports(); !slices.Equal(got, []string{"br0"}) {
		t.Fatalf("ports after add-br = %v", got)
	}
	if p, _ := e.dp.Port("br0"); p.Spec.Type != "internal" || p.Spec.Bridge != "br0" {
		t.Fatalf("bridge port = %+v", p.Spec)
	}
	if got := e.get("Interface", "br0", "ofport"); got != "65534" {
		t.Fatalf("br0 ofport = %s, want 65534 (LOCAL)", got)
	}
	e.vsctl("add-port", "br0", "p1")
	e.vsctl("add-port", "br0", "p2")
	if got := e.get("Interface", "p1", "ofport"); got != "1" {
		t.Fatalf("p1 ofport = %s", got)
	}
	if got := e.get("Interface", "p2", "ofport"); got != "2" {
		t.Fatalf("p2 ofport = %s", got)
	}
	if next, cur := e.get("Open_vSwitch", ".", "next_cfg"), e.get("Open_vSwitch", ".", "cur_cfg"); next != cur {
		t.Fatalf("cur_cfg %s != next_cfg %s after ovs-vsctl returned", cur, next)
	}

	e.vsctl("set", "Port", "p1", "tag=10")
	if p, _ := e.dp.Port("p1"); p.Spec.VLAN.Tag != 10 {
		t.Fatalf("p1 VLAN after set tag=10: %+v", p.Spec.VLAN)
	}
	e.vsctl("set", "Port", "p2", "trunks=20,10", "vlan_mode=trunk")
	if p, _ := e.dp.Port("p2"); !slices.Equal(p.Spec.VLAN.Trunks, []int{10, 20}) || p.Spec.VLAN.Mode != "trunk" {
		t.Fatalf("p2 VLAN: %+v", p.Spec.VLAN)
	}
	e.vsctl("set", "Bridge", "br0", "other_config:mac-table-size=100", "other_config:mac-aging-time=30")
	if cfg := e.dp.Bridges()["br0"]; cfg.MACTableSize != 100 || cfg.MACAgingTime.Seconds() != 30 {
		t.Fatalf("bridge config %+v", cfg)
	}

	e.vsctl("del-port", "p1")
	if got := e.dp.Ports(); !slices.Equal(got, []string{"br0", "p2"}) {
		t.Fatalf("ports after del-port = %v", got)
	}

	// What ovs-vsctl show needs, and what Open vSwitch writes.
	if got := e.get("Interface", "p2", "mac_in_use"); !strings.HasPrefix(got, `"02:00:00:00:00:`) {
		t.Fatalf("p2 mac_in_use = %s", got)
	}
	for col, want := range map[string]string{"admin_state": "up", "link_state": "up", "mtu": "1500", "link_speed": "10000000000", "error": "[]"} {
		if got := e.get("Interface", "p2", col); got != want {
			t.Errorf("p2 %s = %s, want %s", col, got, want)
		}
	}
	if got := e.get("Bridge", "br0", "datapath_id"); len(got) != 18 || !strings.HasPrefix(got, `"0000`) {
		t.Errorf("datapath_id = %s", got)
	}
	if got := e.get("Bridge", "br0", "datapath_version"); got != `"<built-in>"` {
		t.Errorf("datapath_version = %s", got)
	}
	for col, want := range map[string]string{
		"ovs_version":    `"3.1.0"`,
		"db_version":     `"8.3.1"`,
		"datapath_types": "[netdev, system]",
		"iface_types":    "[afxdp, internal, system, tap]",
	} {
		if got := e.get("Open_vSwitch", ".", col); got != want {
			t.Errorf("Open_vSwitch %s = %s, want %s", col, got, want)
		}
	}
	if got := e.vsctl("--no-wait", "get", "Open_vSwitch", ".", "datapaths:netdev"); got == "" {
		t.Errorf("no netdev Datapath row")
	}
	if got := e.vsctl("--no-wait", "--columns=capabilities", "list", "Datapath"); !strings.Contains(got, "max_vlan_headers") {
		t.Errorf("Datapath capabilities: %s", got)
	}

	e.vsctl("del-br", "br0")
	if got := e.dp.Ports(); len(got) != 0 {
		t.Fatalf("ports after del-br = %v", got)
	}
	if got := e.dp.Bridges(); len(got) != 0 {
		t.Fatalf("bridges after del-br = %v", got)
	}
}

func TestMissingDeviceStartsWorkingWhenItAppears(t *testing.T) {
	e := newEnv(t)
	e.startReconciler()
	e.vsctl("add-br", "br0")
	out := e.vsctl("add-port", "br0", "late0")
	if !strings.Contains(out, "could not open network device late0 (No such device)") {
		t.Errorf("ovs-vsctl output %q does not report the error", out)
	}
	if got := e.get("Interface", "late0", "error"); got != `"could not open network device late0 (No such device)"` {
		t.Fatalf("error = %s", got)
	}
	if got := e.get("Interface", "late0", "ofport"); got != "-1" {
		t.Fatalf("ofport of a failed interface = %s, want -1", got)
	}
	e.dp.AddDevice("late0")
	e.rec.Kick() // what a netlink link event does
	e.eventually("late0 to get an ofport", func() bool { return e.get("Interface", "late0", "ofport") == "1" })
	if got := e.get("Interface", "late0", "error"); got != "[]" {
		t.Fatalf("error after the device appeared = %s", got)
	}
	// And it goes away again: the port leaves the datapath, with an error.
	e.dp.RemoveDevice("late0")
	e.rec.Kick()
	e.eventually("late0 to fail again", func() bool { return e.get("Interface", "late0", "ofport") == "-1" })
	if _, ok := e.dp.Port("late0"); ok {
		t.Fatal("port of a vanished device still in the datapath")
	}
}

func TestBadConfigurationNeverStopsOtherPorts(t *testing.T) {
	e := newEnv(t)
	e.startReconciler()
	e.dp.AddDevice("good0")
	e.vsctl("add-br", "br0")
	e.vsctl("add-port", "br0", "odd0", "--", "set", "Interface", "odd0", "type=vxlan")
	e.vsctl("add-port", "br0", "good0")
	if got := e.get("Interface", "odd0", "error"); got != `"could not open network device odd0 (Address family not supported by protocol)"` {
		t.Fatalf("unknown type error = %s", got)
	}
	if got := e.get("Interface", "good0", "ofport"); got != "1" {
		t.Fatalf("good0 ofport = %s", got)
	}
	e.vsctl("set", "Open_vSwitch", ".", "other_config:pmd-cpu-mask=xyz", "other_config:userspace-sock-buf-size=lots")
	cfg, buf := e.dp.Config()
	if cfg.PMDCPUMask != "" || buf != 0 {
		t.Fatalf("bad values applied: %+v %d", cfg, buf)
	}
	if _, ok := e.dp.Port("good0"); !ok {
		t.Fatal("good0 left the datapath after bad global configuration")
	}
	e.vsctl("set", "Open_vSwitch", ".", "other_config:pmd-cpu-mask=0x6")
	if cfg, _ := e.dp.Config(); cfg.PMDCPUMask != "6" {
		t.Fatalf("pmd-cpu-mask = %q", cfg.PMDCPUMask)
	}
	if got := e.dp.Ports(); !slices.Equal(got, []string{"br0", "good0"}) {
		t.Fatalf("ports after PMD change = %v", got)
	}
	// A bond is reported, not half-configured.
	e.dp.AddDevice("b1")
	e.dp.AddDevice("b2")
	e.vsctl("add-bond", "br0", "bond0", "b1", "b2")
	if got := e.get("Interface", "b1", "error"); !strings.Contains(got, "bonds are not supported") {
		t.Fatalf("bond error = %s", got)
	}
}

func TestSocketBufferSizeAppliesToExistingPorts(t *testing.T) {
	e := newEnv(t)
	e.startReconciler()
	e.dp.AddDevice("p1")
	e.vsctl("add-br", "br0", "--", "add-port", "br0", "p1")
	if got := e.get("Interface", "p1", "status"); strings.Contains(got, "socket_buf_requested") {
		t.Fatalf("status before setting a size: %s", got)
	}
	e.vsctl("set", "Open_vSwitch", ".", "other_config:userspace-sock-buf-size=4194304")
	if _, buf := e.dp.Config(); buf != 4194304 {
		t.Fatalf("socket buffers = %d", buf)
	}
	e.eventually("status to show the size", func() bool {
		return strings.Contains(e.get("Interface", "p1", "status"), `socket_buf_requested="4194304"`)
	})
	e.vsctl("set", "Open_vSwitch", ".", "other_config:userspace-sock-buf-size=1000")
	if _, buf := e.dp.Config(); buf != netdev.MinSocketBuffer {
		t.Fatalf("small size not clamped: %d", buf)
	}
}

// TestCustomStatisticsAreWritten: a device's custom counters (an afxdp
// port's XDP_STATISTICS) go into Interface.statistics beside the standard
// ones, as Open vSwitch's iface_refresh_stats writes them, and never
// replace a standard counter.
func TestCustomStatisticsAreWritten(t *testing.T) {
	e := newEnv(t)
	e.startReconciler()
	e.dp.AddDevice("p1")
	e.vsctl("set", "Open_vSwitch", ".", "other_config:stats-update-interval=200")
	e.vsctl("add-br", "br0", "--", "add-port", "br0", "p1")
	e.dp.SetStats("p1", netdev.Stats{RxPackets: 5, RxKernelDrops: 9})
	e.dp.SetCustomStats("p1", map[string]uint64{"xsk_rx_ring_full": 4, "xsk_rx_fill_ring_empty_descs": 6, "rx_dropped": 1234})
	e.eventually("custom statistics to be written", func() bool {
		return strings.Contains(e.get("Interface", "p1", "statistics"), "xsk_rx_ring_full=4")
	})
	for k, want := range map[string]string{"xsk_rx_fill_ring_empty_descs": "6", "rx_packets": "5", "rx_dropped": "9"} {
		if got := e.get("Interface", "p1", "statistics:"+k); got != want {
			t.Errorf("statistics:%s = %s, want %s", k, got, want)
		}
	}
}

func TestStatisticsFollowTheInterval(t *testing.T) {
	e := newEnv(t)
	e.startReconciler()
	e.dp.AddDevice("p1")
	e.vsctl("set", "Open_vSwitch", ".", "other_config:stats-update-interval=200")
	e.vsctl("add-br", "br0", "--", "add-port", "br0", "p1")
	if got := e.get("Interface", "p1", "statistics:rx_packets"); got != "0" {
		t.Fatalf("initial rx_packets = %s", got)
	}
	e.dp.SetStats("p1", netdev.Stats{RxPackets: 7, RxBytes: 700, TxPackets: 3, TxBytes: 300, TxDrops: 1})
	e.eventually("statistics to be written", func() bool {
		return e.get("Interface", "p1", "statistics:rx_packets") == "7"
	})
	for k, want := range map[string]string{"rx_bytes": "700", "tx_packets": "3", "tx_bytes": "300", "tx_dropped": "1", "rx_dropped": "0", "rx_errors": "0", "tx_errors": "0"} {
		if got := e.get("Interface", "p1", "statistics:"+k); got != want {
			t.Errorf("statistics:%s = %s, want %s", k, got, want)
		}
	}
}

package bridge_test

import (
	"strings"
	"testing"
	"time"
)

func TestInterfaceAndBridgeSettings(t *testing.T) {
	e := newEnv(t)
	e.startReconciler()
	e.dp.AddDevice("m1")
	e.vsctl("add-br", "br0", "--", "add-port", "br0", "m1")

	e.vsctl("set", "Interface", "m1", "mtu_request=9000")
	if p, _ := e.dp.Port("m1"); p.Spec.MTURequest != 9000 {
		t.Fatalf("mtu_request not applied: %+v", p.Spec)
	}
	if got := e.get("Interface", "m1", "mtu"); got != "9000" {
		t.Fatalf("mtu = %s", got)
	}

	e.vsctl("set", "Bridge", "br0", "other_config:hwaddr=02:aa:bb:cc:dd:ee")
	if got := e.get("Bridge", "br0", "datapath_id"); got != `"000002aabbccddee"` {
		t.Fatalf("datapath_id from hwaddr = %s", got)
	}
	if got := e.get("Interface", "br0", "mac_in_use"); got != `"02:aa:bb:cc:dd:ee"` {
		t.Fatalf("bridge port MAC = %s", got)
	}
	if got := e.get("Interface", "br0", "ofport"); got != "65534" {
		t.Fatalf("bridge port ofport after reopening = %s", got)
	}

	e.vsctl("set", "Open_vSwitch", ".", "other_config:pmd-maxsleep=500")
	if cfg, _ := e.dp.Config(); cfg.PMDMaxSleep != 500*time.Microsecond {
		t.Fatalf("pmd-maxsleep = %v", cfg.PMDMaxSleep)
	}
	e.vsctl("set", "Bridge", "br0", "datapath_type=netdev")
	if _, ok := e.dp.Port("m1"); !ok {
		t.Fatal("datapath_type=netdev removed the ports")
	}
	if got := e.get("Open_vSwitch", ".", "system_type"); strings.Trim(got, `"`) == "" {
		t.Errorf("system_type = %s", got)
	}
}

func TestUnsupportedFeaturesAreReported(t *testing.T) {
	e := newEnv(t)
	e.startReconciler()
	e.vsctl("add-br", "br0")
	e.vsctl("--", "--id=@m", "create", "Mirror", "name=m0", "select_all=true", "--", "add", "Bridge", "br0", "mirrors", "@m")
	e.eventually("the mirror to be reported", func() bool { return e.logged("mirror m0: mirrors are not supported by gvs") })
	e.vsctl("add-port", "br0", "q0", "--", "set", "Interface", "q0", "type=internal", "--",
		"set", "Port", "q0", "qos=@q", "--", "--id=@q", "create", "QoS", "type=linux-htb")
	e.eventually("the QoS to be reported", func() bool { return e.logged("QoS is not supported by gvs") })
	// The port itself works.
	if got := e.get("Interface", "q0", "ofport"); got != "1" {
		t.Fatalf("q0 ofport = %s", got)
	}
	e.vsctl("add-port", "br0", "int1", "--", "set", "Interface", "int1", "type=internal", `mac="02:00:00:00:aa:01"`)
	if got := e.get("Interface", "int1", "mac_in_use"); got != `"02:00:00:00:aa:01"` {
		t.Fatalf("internal port with Interface.mac: mac_in_use = %s", got)
	}
}

func TestUnsupportedVLANModeIsAnInterfaceError(t *testing.T) {
	e := newEnv(t)
	e.startReconciler()
	e.dp.AddDevice("v1")
	e.vsctl("add-br", "br0", "--", "add-port", "br0", "v1")
	e.vsctl("set", "Port", "v1", "vlan_mode=dot1q-tunnel", "tag=5")
	if got := e.get("Interface", "v1", "error"); got != `"port v1: vlan_mode dot1q-tunnel is not supported by gvs"` {
		t.Fatalf("error = %s", got)
	}
	if _, ok := e.dp.Port("v1"); ok {
		t.Fatal("port with an unsupported vlan_mode left in the datapath")
	}
	e.vsctl("set", "Port", "v1", "vlan_mode=access")
	if got := e.get("Interface", "v1", "error"); got != "[]" {
		t.Fatalf("error after fixing vlan_mode = %s", got)
	}
	if p, ok := e.dp.Port("v1"); !ok || p.Spec.VLAN.Tag != 5 || p.Spec.VLAN.Mode != "access" {
		t.Fatalf("port after fixing vlan_mode: %+v %v", p.Spec.VLAN, ok)
	}
}

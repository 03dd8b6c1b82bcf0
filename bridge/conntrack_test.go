package bridge_test

import (
	"strings"
	"testing"
)

// TestConntrackZoneTimeoutPolicies: ovs-vsctl's zone timeout policy
// commands (Datapath.ct_zones -> CT_Zone.timeout_policy ->
// CT_Timeout_Policy.timeouts) reach the datapath as one configuration,
// changes and removals included, and a pass that changes nothing else
// does not set it again.
func TestConntrackZoneTimeoutPolicies(t *testing.T) {
	e := newEnv(t)
	e.startReconciler()
	e.vsctl("add-br", "br0")
	e.eventually("the netdev Datapath row", func() bool {
		return strings.Contains(e.vsctl("--no-wait", "--columns=_uuid", "list", "Datapath"), "_uuid")
	})
	e.vsctl("add-zone-tp", "netdev", "zone=5", "tcp_established=100", "udp_first=7")
	e.vsctl("add-zone-tp", "netdev", "zone=9", "icmp_reply=3")
	cfg, _ := e.dp.Conntrack()
	if len(cfg.Zones) != 2 || cfg.Zones[5] == "" || cfg.Zones[9] == "" || cfg.Zones[5] == cfg.Zones[9] {
		t.Fatalf("zones %v", cfg.Zones)
	}
	if p := cfg.Policies[cfg.Zones[5]]; len(p) != 2 || p["tcp_established"] != 100 || p["udp_first"] != 7 {
		t.Fatalf("zone 5 policy %v", p)
	}
	if p := cfg.Policies[cfg.Zones[9]]; len(p) != 1 || p["icmp_reply"] != 3 {
		t.Fatalf("zone 9 policy %v", p)
	}

	// A policy changed in place.
	e.vsctl("set", "CT_Timeout_Policy", cfg.Zones[9], "timeouts:icmp_reply=4")
	if cfg, _ := e.dp.Conntrack(); cfg.Policies[cfg.Zones[9]]["icmp_reply"] != 4 {
		t.Fatalf("after changing zone 9's policy: %v", cfg.Policies)
	}
	// Unrelated changes set nothing again.
	_, sets := e.dp.Conntrack()
	e.vsctl("set", "Bridge", "br0", "other_config:mac-aging-time=30")
	if _, n := e.dp.Conntrack(); n != sets {
		t.Fatalf("conntrack configuration set %d more times by a bridge change", n-sets)
	}
	e.vsctl("del-zone-tp", "netdev", "zone=5")
	cfg, _ = e.dp.Conntrack()
	if len(cfg.Zones) != 1 || len(cfg.Policies) != 1 || cfg.Zones[9] == "" {
		t.Fatalf("after del-zone-tp zone=5: %+v", cfg)
	}
	e.vsctl("del-zone-tp", "netdev", "zone=9")
	if cfg, _ := e.dp.Conntrack(); len(cfg.Zones) != 0 || len(cfg.Policies) != 0 {
		t.Fatalf("after deleting every zone: %+v", cfg)
	}
}

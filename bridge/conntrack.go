package bridge

import (
	"fmt"
	"maps"
	"slices"

	"gvs/schema/vswitchd"
)

// ConntrackDatapath is implemented by a Datapath with a connection
// tracker: the reconciler hands it the conntrack configuration of the
// database (Datapath.ct_zones, their CT_Zone rows and CT_Timeout_Policy
// rows) whenever it changes, the whole of it each time; the datapath
// applies the difference to its tracker (and again to a tracker it
// starts later).
type ConntrackDatapath interface {
	SetConntrackConfig(cfg ConntrackConfig) error
}

// ConntrackConfig is the conntrack configuration of the datapath's
// Datapath row (the "netdev" row; "system" for zones "netdev" does not
// name, as both are gvs's one datapath).
type ConntrackConfig struct {
	// Policies are the CT_Timeout_Policy rows the zones use, by UUID:
	// per protocol and state timeouts in seconds (keys tcp_syn_sent,
	// tcp_established, udp_first, icmp_reply, ...).
	Policies map[string]map[string]uint32
	// Zones maps each zone of ct_zones to its timeout policy's UUID
	// ("": the zone's CT_Zone has no timeout_policy, the default).
	Zones map[uint16]string
}

// Equal reports whether two configurations are the same.
func (c ConntrackConfig) Equal(o ConntrackConfig) bool {
	if !maps.Equal(c.Zones, o.Zones) || len(c.Policies) != len(o.Policies) {
		return false
	}
	for id, p := range c.Policies {
		q, ok := o.Policies[id]
		if !ok || !maps.Equal(p, q) {
			return false
		}
	}
	return true
}

// conntrackConfig builds the configuration from the Open_vSwitch row's
// datapaths, as Open vSwitch's ct_zones reconfiguration reads them.
func conntrackConfig(ovs *vswitchd.OpenvSwitch, dps map[string]*vswitchd.Datapath,
	zones map[string]*vswitchd.CTZone, policies map[string]*vswitchd.CTTimeoutPolicy) (ConntrackConfig, []string) {
	cfg := ConntrackConfig{Policies: map[string]map[string]uint32{}, Zones: map[uint16]string{}}
	if ovs == nil {
		return cfg, nil
	}
	var warnings []string
	// "netdev" last, so its zones win over "system"'s.
	for _, typ := range []string{"system", "netdev"} {
		dp := dps[ovs.Datapaths[typ]]
		if dp == nil {
			continue
		}
		for _, zone := range slices.Sorted(maps.Keys(dp.CTZones)) {
			if zone < 0 || zone > 65535 {
				continue // the schema forbids it
			}
			z := zones[dp.CTZones[zone]]
			if z == nil {
				continue // not in the cache yet: a later pass sees it
			}
			id := ""
			if z.TimeoutPolicy != nil {
				if tp := policies[*z.TimeoutPolicy]; tp != nil {
					id = tp.UUID
					p := map[string]uint32{}
					for k, v := range tp.Timeouts {
						if v < 0 || int64(v) > 1<<32-1 {
							warnings = append(warnings, fmt.Sprintf("CT_Timeout_Policy %s: %s=%d out of range; ignored", tp.UUID, k, v))
							continue
						}
						p[k] = uint32(v)
					}
					cfg.Policies[id] = p
				}
			}
			cfg.Zones[uint16(zone)] = id
		}
	}
	return cfg, warnings
}

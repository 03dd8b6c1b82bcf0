package dpadapter

import (
	"strconv"

	"gvs/bridge"
	"gvs/packet"
)

var _ bridge.CapabilitiesDatapath = (*Datapath)(nil)

// Capabilities implements bridge.CapabilitiesDatapath: Datapath.capabilities
// in Open vSwitch 3.1's keys, advertising what gvs's datapath and
// translation do (recirculation, masked sets, clone, check_pkt_len,
// trunc, dp_hash with the symmetric L4 hash, meters through the meter
// action), conntrack once the datapath has its tracker (not yet NAT's
// ct_state_nat and ct_zero_snat, nor ct_flush or the event mask), and
// not what they do not yet (tunnels, MPLS, the ND extensions,
// lb_output). ovn-controller uses only what is advertised.
func (d *Datapath) Capabilities() map[string]string {
	caps := map[string]string{
		"max_vlan_headers": strconv.Itoa(packet.MaxVLANs), "max_mpls_depth": "0", "recirc": "true",
		"ct_state": "false", "ct_zone": "false", "ct_mark": "false",
		"ct_label": "false", "ct_state_nat": "false", "ct_orig_tuple": "false",
		"ct_orig_tuple6": "false", "nd_ext": "false",
		"masked_set_action": "true", "tnl_push_pop": "false", "ufid": "true",
		"trunc": "true", "clone": "true", "sample_nesting": "false",
		"ct_eventmask": "false", "ct_clear": "false", "max_hash_alg": "1",
		"check_pkt_len": "true", "ct_timeout": "false",
		"explicit_drop_action": "true", "lb_output_action": "false",
		"ct_zero_snat": "false", "add_mpls": "false", "ct_flush": "false",
	}
	d.mu.Lock()
	tracking := d.dp != nil && d.dp.Conntrack() != nil
	d.mu.Unlock()
	if tracking {
		// The datapath runs ct and ct_clear, keeps the conntrack key
		// fields (original tuple included) across recirculation, and
		// its tracker applies zones' timeout policies.
		for _, k := range []string{"ct_state", "ct_zone", "ct_mark", "ct_label", "ct_orig_tuple", "ct_orig_tuple6", "ct_clear", "ct_timeout"} {
			caps[k] = "true"
		}
	}
	return caps
}

package dpadapter

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"gvs/bridge"
	"gvs/dpif"
	"gvs/dpif/conntrack"
	"gvs/packet"
)

// policyTracker records the timeout policy calls a tracker gets.
type policyTracker struct{ calls []string }

var _ conntrack.Conntrack = (*policyTracker)(nil)

func (p *policyTracker) Execute(*packet.Buffer, *conntrack.Request) {}
func (p *policyTracker) Dump(int32, func(*conntrack.Entry) bool)    {}
func (p *policyTracker) Flush(int32, *conntrack.Tuple) int          { return 0 }
func (p *policyTracker) Stats() conntrack.Stats                     { return conntrack.Stats{} }
func (p *policyTracker) SetMaxConns(uint32)                         {}
func (p *policyTracker) MaxConns() uint32                           { return 0 }
func (p *policyTracker) SetZoneLimits([]conntrack.ZoneLimit)        {}
func (p *policyTracker) ZoneLimits([]uint16) []conntrack.ZoneLimit  { return nil }
func (p *policyTracker) DelZoneLimits([]uint16)                     {}
func (p *policyTracker) DelTimeoutPolicy(id uint32) {
	p.calls = append(p.calls, fmt.Sprintf("del %d", id))
}
func (p *policyTracker) SetZonePolicy(z uint16, id uint32) {
	p.calls = append(p.calls, fmt.Sprintf("zone %d=%d", z, id))
}
func (p *policyTracker) SetTimeoutPolicy(id uint32, tp conntrack.TimeoutPolicy) {
	p.calls = append(p.calls, fmt.Sprintf("policy %d %v", id, map[string]uint32(tp)))
}

func (p *policyTracker) take() []string {
	c := p.calls
	p.calls = nil
	return c
}

// TestConntrackConfigReachesTheTracker: the zones' timeout policies are
// applied as a difference: new and changed policies, then zones, then
// zones and policies no longer configured; a configuration set before
// the datapath runs is applied when it starts.
func TestConntrackConfigReachesTheTracker(t *testing.T) {
	ct := &policyTracker{}
	d := New(Config{})
	cfg := bridge.ConntrackConfig{
		Policies: map[string]map[string]uint32{"tp-a": {"tcp_established": 100}, "tp-b": {"udp_first": 7}},
		Zones:    map[uint16]string{5: "tp-a", 6: "tp-b", 7: "tp-a", 8: ""},
	}
	if err := d.SetConntrackConfig(cfg); err != nil {
		t.Fatal(err)
	}
	dp, err := dpif.New(dpif.Config{PMDs: 1, Tracker: ct})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dp.Close() })
	d.mu.Lock()
	d.dp = dp
	d.applyConntrackLocked()
	d.mu.Unlock()
	want := []string{"policy 1 map[tcp_established:100]", "policy 2 map[udp_first:7]", "zone 5=1", "zone 6=2", "zone 7=1", "zone 8=0"}
	if got := ct.take(); !slices.Equal(got, want) {
		t.Fatalf("first apply:\n%q\nwant\n%q", got, want)
	}
	// The bridges' ct actions name the policy of zones that have one.
	if got, want := d.ct.zonePolicies, map[uint16]uint32{5: 1, 6: 2, 7: 1}; !maps.Equal(got, want) {
		t.Fatalf("zone policies for translation %v, want %v", got, want)
	}
	// The same again: nothing.
	d.SetConntrackConfig(cfg)
	if got := ct.take(); len(got) != 0 {
		t.Fatalf("unchanged configuration applied: %q", got)
	}
	// tp-a changes, zone 6 goes, tp-b with it, zone 8 gets tp-c.
	cfg = bridge.ConntrackConfig{
		Policies: map[string]map[string]uint32{"tp-a": {"tcp_established": 200}, "tp-c": {"icmp_reply": 1}},
		Zones:    map[uint16]string{5: "tp-a", 7: "tp-a", 8: "tp-c"},
	}
	d.SetConntrackConfig(cfg)
	want = []string{"policy 1 map[tcp_established:200]", "policy 3 map[icmp_reply:1]", "zone 8=3", "zone 6=0", "del 2"}
	if got := ct.take(); !slices.Equal(got, want) {
		t.Fatalf("second apply:\n%q\nwant\n%q", got, want)
	}
	if got, want := d.ct.zonePolicies, map[uint16]uint32{5: 1, 7: 1, 8: 3}; !maps.Equal(got, want) {
		t.Fatalf("zone policies for translation %v, want %v", got, want)
	}
}

// debianNetdevCapabilities is Datapath.capabilities as Debian's
// ovs-vswitchd 3.1 writes it for its netdev datapath.
var debianNetdevCapabilities = map[string]string{
	"add_mpls": "true", "check_pkt_len": "true", "clone": "true", "ct_clear": "true", "ct_eventmask": "true",
	"ct_flush": "true", "ct_label": "true", "ct_mark": "true", "ct_orig_tuple": "true", "ct_orig_tuple6": "true",
	"ct_state": "true", "ct_state_nat": "true", "ct_timeout": "true", "ct_zero_snat": "true", "ct_zone": "true",
	"explicit_drop_action": "true", "lb_output_action": "true", "masked_set_action": "true", "max_hash_alg": "1",
	"max_mpls_depth": "3", "max_vlan_headers": "1", "nd_ext": "true", "recirc": "true", "sample_nesting": "true",
	"tnl_push_pop": "true", "trunc": "true", "ufid": "true",
}

// TestCapabilitiesWithTracker: the capabilities have Open vSwitch's
// keys; the conntrack ones are advertised once the datapath has a
// tracker, and nothing is claimed that Open vSwitch's netdev datapath
// does not claim.
func TestCapabilitiesWithTracker(t *testing.T) {
	d := New(Config{})
	before := d.Capabilities()
	dp, err := dpif.New(dpif.Config{PMDs: 1, Tracker: &policyTracker{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dp.Close() })
	d.mu.Lock()
	d.dp = dp
	d.mu.Unlock()
	after := d.Capabilities()
	for _, caps := range []map[string]string{before, after} {
		if len(caps) != len(debianNetdevCapabilities) {
			t.Fatalf("%d capabilities, Open vSwitch has %d", len(caps), len(debianNetdevCapabilities))
		}
		for k, v := range caps {
			ovs, ok := debianNetdevCapabilities[k]
			if !ok {
				t.Errorf("capability %s is not Open vSwitch's", k)
			}
			if v == "true" && ovs != "true" {
				t.Errorf("%s claimed, Open vSwitch's netdev datapath does not", k)
			}
		}
	}
	for _, k := range []string{"ct_state", "ct_zone", "ct_mark", "ct_label", "ct_state_nat", "ct_orig_tuple", "ct_orig_tuple6",
		"ct_clear", "ct_timeout", "ct_flush"} {
		if before[k] != "false" || after[k] != "true" {
			t.Errorf("%s: %s without a tracker, %s with one", k, before[k], after[k])
		}
	}
}

package ofctl

import "testing"

// TestNeighborAgingAgainstDebian lets an entry outlive a one-second aging
// on both switches: both remove it (Open vSwitch in its main loop, gvs in
// its expiry sweep).
func TestNeighborAgingAgainstDebian(t *testing.T) {
	p := startPair(t, addPortsArgs(1)...)
	p.compare(t,
		"ovs-appctl tnl/neigh/aging 1",
		"ovs-appctl tnl/neigh/set br0 198.18.1.2 aa:bb:cc:00:00:01",
		"ovs-appctl tnl/neigh/show",
		"sleep 3; ovs-appctl tnl/neigh/show",
	)
}

// TestNeighborAgingWarpAgainstDebian is tunnel-push-pop.at's aging check:
// time/warp past the aging removes the entry at once.
func TestNeighborAgingWarpAgainstDebian(t *testing.T) {
	p := startPair(t, addPortsArgs(1)...)
	p.compare(t,
		"ovs-appctl tnl/neigh/aging 5",
		"ovs-appctl tnl/neigh/set br0 198.18.1.2 aa:bb:cc:00:00:01",
		"ovs-appctl time/warp 3000",
		"ovs-appctl tnl/neigh/show",
		"ovs-appctl time/warp 2000",
		"ovs-appctl tnl/neigh/show",
		"ovs-appctl tnl/neigh/aging 900",
		"ovs-appctl tnl/neigh/aging",
	)
}

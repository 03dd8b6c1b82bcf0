package ofctl

import (
	"strings"
	"testing"
)

// TestHarnessDebianAgainstDebian proves the harness and its normalisations
// on two of Debian's ovs-vswitchd, whatever gvs can do: the same commands
// on two identical switches must compare equal, and a real difference
// must not be normalised away.
func TestHarnessDebianAgainstDebian(t *testing.T) {
	requireTools(t)
	setup := addPortsArgs(2)
	p := pair{ref: startSwitch(t, kind{name: "debian-a"}, setup...), sut: startSwitch(t, kind{name: "debian-b"}, setup...)}
	p.compare(t,
		"ovs-ofctl show br0",
		"ovs-ofctl dump-desc br0",
		"ovs-ofctl add-flow br0 'priority=10,in_port=1,actions=output:2'",
		"ovs-ofctl add-flow br0 'priority=5,ip,nw_dst=198.18.0.1,actions=drop'",
		"ovs-appctl netdev-dummy/receive p1 'in_port(1),eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=198.18.0.2,dst=198.18.0.1,proto=1,tos=0,ttl=64,frag=no),icmp(type=8,code=0)'",
		"ovs-ofctl -O OpenFlow15 dump-flows br0",
		"ovs-ofctl dump-ports br0 2",
		"ovs-ofctl del-flows br0 --strict 'priority=99,in_port=7'",
		"ovs-ofctl add-flow br0 'table=300,actions=drop'",
		"ovs-appctl -t ovs-vswitchd netdev-dummy/receive nosuch 00",
	)
	// Something that really differs must show.
	p.ref.sh(t, "ovs-ofctl add-flow br0 priority=1,actions=drop")
	ref, sut := p.both(t, "ovs-ofctl --no-stats dump-flows br0")
	if ref == sut || !strings.Contains(ref.stdout, "priority=1 ") {
		t.Errorf("a flow added on one side only was not seen:\n%s\n%s", ref, sut)
	}
}

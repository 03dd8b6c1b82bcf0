package ofctl

import "testing"

// TestTableMod: table mod as Open vSwitch accepts and reports it: the
// OpenFlow 1.1-1.3 table-miss settings, the OpenFlow 1.4+ eviction and
// vacancy properties (dump-table-desc, dump-tables), and its errors.
func TestTableMod(t *testing.T) {
	p := startPair(t, addPortsArgs(2)...)
	p.requireOpenFlow(t)
	p.compare(t,
		"ovs-ofctl -O OpenFlow14 dump-table-desc br0 | head -n 8",
		"ovs-ofctl -O OpenFlow11 mod-table br0 1 drop",
		"ovs-ofctl -O OpenFlow11 mod-table br0 2 continue",
		"ovs-ofctl -O OpenFlow11 mod-table br0 3 controller",
		"ovs-ofctl -O OpenFlow12 mod-table br0 4 drop",
		"ovs-ofctl -O OpenFlow13 mod-table br0 5 drop",
		"ovs-ofctl -O OpenFlow11 dump-tables br0 | head -n 30",
		"ovs-ofctl -O OpenFlow13 dump-tables br0 | head -n 20",
		"ovs-ofctl -O OpenFlow14 mod-table br0 0 evict",
		"ovs-ofctl -O OpenFlow14 mod-table br0 1 vacancy:20,80",
		"ovs-ofctl -O OpenFlow14 mod-table br0 2 vacancy:20,80",
		"ovs-ofctl -O OpenFlow14 mod-table br0 2 novacancy",
		"ovs-ofctl -O OpenFlow14 mod-table br0 3 evict",
		"ovs-ofctl -O OpenFlow14 mod-table br0 3 noevict",
		"ovs-ofctl -O OpenFlow14 mod-table br0 4 vacancy:90,10",
		"ovs-ofctl -O OpenFlow14 mod-table br0 4 vacancy:10,101",
		"ovs-ofctl -O OpenFlow14 mod-table br0 5 drop",
		"ovs-ofctl -O OpenFlow14 mod-table br0 254 evict",
		"ovs-ofctl -O OpenFlow14 mod-table br0 255 vacancy:5,6",
		"ovs-ofctl -O OpenFlow14 dump-table-desc br0 | head -n 16",
		"ovs-ofctl -O OpenFlow15 dump-table-desc br0 | head -n 16",
		"ovs-ofctl -O OpenFlow14 dump-tables br0 | head -n 20",
		"ovs-ofctl -O OpenFlow11 mod-table br0 0 evict",
		"ovs-ofctl -O OpenFlow11 mod-table br0 254 drop",
		"ovs-ofctl -O OpenFlow12 mod-table br0 254 drop",
		"ovs-ofctl -O OpenFlow12 mod-table br0 255 continue",
		"ovs-ofctl -O OpenFlow12 dump-tables br0 | head -n 16",
		"ovs-ofctl -O OpenFlow11 add-flow br0 'table=1,priority=1,actions=output:2'",
		"ovs-appctl ofproto/trace br0 'in_port=1,ip' | tail -n 2",
		"ovs-ofctl -O OpenFlow10 mod-table br0 0 drop",
		"ovs-ofctl mod-table br0 0 name:foo",
		"ovs-ofctl -O OpenFlow14 mod-table br0 0 vacancy:x,y",
	)
}

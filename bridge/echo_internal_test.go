package bridge

import (
	"testing"

	"gvs/schema/vswitchd"
)

func TestConfigChangedIgnoresOwnWriteBack(t *testing.T) {
	up := vswitchd.InterfaceLinkStateUp
	before := &vswitchd.Interface{UUID: "u", Name: "p1", Type: "system", Options: map[string]string{"n_rxq": "2"}}
	status := *before
	status.Ofport, status.LinkState, status.Status = ptr(3), &up, map[string]string{"driver_name": "veth"}
	status.Statistics = map[string]int{"rx_packets": 1}
	if configChanged(before, &status) {
		t.Error("a write-back of Interface status columns counts as a change")
	}
	mtu := status
	mtu.MTURequest = ptr(9000)
	if !configChanged(&status, &mtu) {
		t.Error("mtu_request change not seen")
	}
	opts := status
	opts.Options = map[string]string{"n_rxq": "4"}
	if !configChanged(&status, &opts) {
		t.Error("options change not seen")
	}
	ovs := &vswitchd.OpenvSwitch{UUID: "o", NextCfg: 5, CurCfg: 4}
	cur := *ovs
	cur.CurCfg = 5
	if configChanged(ovs, &cur) {
		t.Error("cur_cfg counts as a change")
	}
	next := cur
	next.NextCfg = 6
	if !configChanged(&cur, &next) {
		t.Error("next_cfg change not seen")
	}
	br := &vswitchd.Bridge{UUID: "b", Name: "br0"}
	id := *br
	id.DatapathID = ptr("0000020000000001")
	if configChanged(br, &id) {
		t.Error("datapath_id counts as a change")
	}
	if !configChanged(&vswitchd.Port{Name: "a"}, &vswitchd.Port{Name: "a"}) {
		t.Error("a Port update must always count")
	}
}

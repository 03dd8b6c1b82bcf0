package ofproto

import (
	"errors"
	"gvs/ofproto/ofpact"
	"testing"

	"gvs/ofproto/mf"
	"gvs/ofproto/ofperr"
	"gvs/ofproto/pipeline"
)

func addMod(port uint32, prio int, acts ...pipeline.Action) *pipeline.FlowMod {
	var m mf.Match
	m.Flow.InPort, m.Wildcards.Masks.InPort = port, ^uint32(0)
	return &pipeline.FlowMod{Command: pipeline.FlowAdd, Match: m, Priority: prio, TableID: 1,
		OutPort: mf.PortNone, OutGroup: pipeline.GroupAny, BufferID: pipeline.BufferNone, Actions: acts}
}

func TestCommitBundle(t *testing.T) {
	b := NewBridge("br0", BridgeConfig{})
	hw := [6]byte{2, 0, 0, 0, 0, 7}
	nums, _ := b.AddPorts([]PortSpec{{Name: "p", DPPort: 4, MAC: hw}})
	var ran []uint32
	b.SetPacketOut(func(_ *Bridge, po *PacketOut, v uint64) error {
		if v != b.Version() {
			t.Errorf("packet out ran at version %d, published %d", v, b.Version())
		}
		ran = append(ran, po.InPort)
		return nil
	})
	v0 := b.Version()
	msgs := []BundleMsg{
		{FlowMod: addMod(1, 5, &ofpact.Output{Port: 2})},
		{GroupMod: &pipeline.GroupMod{Command: pipeline.GroupAdd, GroupID: 9}},
		{FlowMod: addMod(2, 5, &ofpact.Group{ID: 9})},
		{PacketOut: &PacketOut{InPort: mf.PortController}},
		{FlowMod: addMod(3, 5, &ofpact.Group{ID: 10})}, // no group 10
	}
	failed, err := b.CommitBundle(msgs, true)
	if failed != 4 || !errors.Is(err, ofperr.OFPBAC_BAD_OUT_GROUP) {
		t.Fatalf("failed %d err %v", failed, err)
	}
	if b.Version() != v0 || b.pipe.Group(b.Version(), 9) != nil || len(allFlows(t, b)) != 0 || len(ran) != 0 {
		t.Fatal("a failed bundle left changes behind")
	}
	// An atomic bundle cannot hold a port mod.
	pm := &PortMod{OFPort: nums[0], HWAddr: hw, Config: 1, Mask: 1}
	if failed, err := b.CommitBundle([]BundleMsg{msgs[0], {PortMod: pm}}, true); failed != 1 || !errors.Is(err, ofperr.OFPBFC_MSG_FAILED) {
		t.Fatalf("atomic bundle with a port mod: %d %v", failed, err)
	}
	// A bad port mod fails a non-atomic bundle with its own error.
	bad := &PortMod{OFPort: nums[0], HWAddr: [6]byte{1}}
	if failed, err := b.CommitBundle([]BundleMsg{msgs[0], {PortMod: bad}}, false); failed != 1 || !errors.Is(err, ofperr.OFPPMFC_BAD_HW_ADDR) {
		t.Fatalf("bad port mod: %d %v", failed, err)
	}
	if failed, err := b.CommitBundle(append(msgs[:4:4], BundleMsg{PortMod: pm}), false); err != nil {
		t.Fatalf("bundle failed at %d: %v", failed, err)
	}
	if len(allFlows(t, b)) != 2 || b.pipe.Group(b.Version(), 9) == nil || len(ran) != 1 || b.Port(nums[0]).Config != 1 {
		t.Fatalf("committed bundle: flows %d ran %v port %+v", len(allFlows(t, b)), ran, b.Port(nums[0]))
	}
	if b.Version() != v0+1 {
		t.Fatalf("one bundle, versions %d -> %d", v0, b.Version())
	}
	if failed, err := b.CommitBundle([]BundleMsg{{PacketOut: &PacketOut{InPort: 77}}}, true); failed != 0 || !errors.Is(err, ofperr.OFPBRC_BAD_PORT) {
		t.Fatalf("packet out from a missing port: %d %v", failed, err)
	}
	// ofproto_check_ofpacts: a packet out to a missing group fails.
	po := &PacketOut{InPort: mf.PortController, Packet: make([]byte, 60), Actions: []pipeline.Action{&ofpact.Group{ID: 10}}}
	if err := b.PacketOut(po); !errors.Is(err, ofperr.OFPBAC_BAD_OUT_GROUP) {
		t.Fatalf("packet out to a missing group: %v", err)
	}
}

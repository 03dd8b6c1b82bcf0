package ofproto

import (
	"errors"
	"testing"

	"gvs/ofproto/connmgr"
	"gvs/ofproto/mf"
	"gvs/ofproto/ofp"
	"gvs/ofproto/ofpact"
	"gvs/ofproto/ofperr"
	"gvs/ofproto/pipeline"
)

// TestConnBridge drives a bridge with decoded OpenFlow messages as the
// connection manager does.
func TestConnBridge(t *testing.T) {
	b := NewBridge("br0", BridgeConfig{})
	ev := &eventLog{}
	b.SetEvents(ev)
	c := NewConnBridge(b)
	c.AddNormalFlow(0)
	hw := [6]byte{2, 0, 0, 0, 0, 9}
	b.AddPorts([]PortSpec{{Name: "p1", DPPort: 3, MAC: hw, SpeedMbps: 10000}})
	if len(ev.status) != 1 || ev.status[0] != PortAdded {
		t.Fatalf("port status %v", ev.status)
	}
	descs := c.PortDescs()
	if len(descs) != 1 || descs[0].PortNo != 1 || descs[0].Curr != 1<<6|1<<11 || descs[0].CurrSpeed != 10000000 ||
		descs[0].State != ofp.PortStateLive {
		t.Fatalf("port descs %+v", descs)
	}

	var m mf.Match
	m.Flow.InPort, m.Wildcards.Masks.InPort = 1, ^uint32(0)
	fm := &ofp.FlowMod{Command: 0, Match: m, Priority: 100, TableID: 0, Cookie: 0x5, NewCookie: 0x5,
		BufferID: ofp.BufferNone, OutPort: mf.PortNone, OutGroup: ofp.GroupAny, Flags: ofp.FlowFlagSendFlowRem,
		Actions: []ofp.Action{&ofpact.Output{Port: 2}}}
	o := connmgr.Origin{Conn: 7, XID: 9}
	if err := c.FlowMod(fm, o); err != nil {
		t.Fatal(err)
	}
	if len(ev.updates) == 0 || ev.updates[len(ev.updates)-1].Requester != o || ev.updates[len(ev.updates)-1].Rule.Priority != 100 {
		t.Fatalf("flow monitor updates %+v", ev.updates)
	}
	fs, err := c.FlowStats(&ofp.FlowStatsRequest{TableID: pipeline.TableAll, OutPort: mf.PortNone, OutGroup: ofp.GroupAny})
	if err != nil || len(fs) != 2 {
		t.Fatalf("flow stats %+v %v", fs, err)
	}
	if fs[0].Priority != 100 || fs[0].Cookie != 5 || fs[0].Flags != ofp.FlowFlagSendFlowRem || len(fs[0].Actions) != 1 {
		t.Fatalf("flow stats %+v", fs[0])
	}
	bad := *fm
	bad.BufferID = 7
	if err := c.FlowMod(&bad, o); !errors.Is(err, ofperr.OFPBRC_BUFFER_UNKNOWN) {
		t.Fatalf("buffered flow mod: %v", err)
	}
	del := *fm
	del.Command = 3
	if err := c.FlowMod(&del, o); err != nil {
		t.Fatal(err)
	}
	if len(ev.removed) != 1 || ev.removed[0].Reason != pipeline.RemovedDelete || flowRemoved(&ev.removed[0]).Cookie != 5 {
		t.Fatalf("flow removed %+v", ev.removed)
	}

	gm := &ofp.GroupMod{Command: 0, Type: 1, GroupID: 4, Props: ofp.GroupProps{SelectionMethod: "dp_hash"},
		Buckets: []ofp.Bucket{{BucketID: 0, Weight: 10, WatchPort: mf.PortNone, WatchGroup: ofp.GroupAny,
			Actions: []ofp.Action{&ofpact.Output{Port: 1}}}}}
	if err := c.GroupMod(gm, o); err != nil {
		t.Fatal(err)
	}
	gd := c.GroupDescs(ofp.GroupAll)
	if len(gd) != 1 || gd[0].Props.SelectionMethod != "dp_hash" || gd[0].Buckets[0].Weight != 10 {
		t.Fatalf("group descs %+v", gd)
	}
	gm.Props.SelectionMethod = "magic"
	if err := c.GroupMod(gm, o); !errors.Is(err, ofperr.OFPBPC_BAD_VALUE) {
		t.Fatalf("bad selection method: %v", err)
	}

	tlv := &ofp.TLVTableMod{Command: ofp.TLVAdd, Maps: []ofp.TLVMap{{OptionClass: 0x102, OptionType: 0x80, OptionLen: 4, Index: 0}}}
	if err := c.TLVTableMod(tlv); err != nil {
		t.Fatal(err)
	}
	if err := c.TLVTableMod(tlv); !errors.Is(err, ofperr.NXTTMFC_ALREADY_MAPPED) {
		t.Fatalf("mapping twice: %v", err)
	}
	tlv.Maps[0].Index = 1
	if err := c.TLVTableMod(tlv); !errors.Is(err, ofperr.NXTTMFC_DUP_ENTRY) {
		t.Fatalf("same option twice: %v", err)
	}
	if r := c.TLVTable(); len(r.Maps) != 1 || r.MaxFields != 64 || r.MaxOptionSpace != 256 {
		t.Fatalf("TLV table %+v", r)
	}
	if err := c.SetFragHandling(ofp.FragReasm); !errors.Is(err, ofperr.OFPSCFC_BAD_FLAGS) {
		t.Fatalf("reassembly: %v", err)
	}
	if err := c.SetFragHandling(ofp.FragDrop); err != nil || c.FragHandling() != ofp.FragDrop {
		t.Fatalf("frag drop: %v", err)
	}
	tf := c.TableFeatures()
	if len(tf) != pipeline.NumTables-1 || len(tf[0].Props.Nonmiss.Next) != pipeline.NumTables-2 || len(tf[0].Props.Match) < 80 {
		t.Fatalf("table features: %d tables", len(tf))
	}
	if _, err := c.PortStats(99); !errors.Is(err, ofperr.OFPBRC_BAD_PORT) {
		t.Fatalf("stats of a missing port: %v", err)
	}
	if ps, err := c.PortStats(mf.PortNone); err != nil || len(ps) != 1 {
		t.Fatalf("port stats %+v %v", ps, err)
	}
}

package ofproto

import (
	"gvs/ofproto/ofpact"
	"testing"
	"time"

	"gvs/ofproto/mf"
	"gvs/ofproto/pipeline"
)

func TestFlowAndGroupStats(t *testing.T) {
	clock := time.Unix(1_000_000, 0)
	b := NewBridge("br0", BridgeConfig{Now: func() time.Time { return clock }})
	if err := b.Pipeline().GroupMod(&pipeline.GroupMod{Command: pipeline.GroupAdd, GroupID: 3,
		Buckets: []pipeline.Bucket{{ID: 0, WatchPort: mf.PortNone, WatchGroup: pipeline.GroupAny}, {ID: 1}}}); err != nil {
		t.Fatal(err)
	}
	if err := b.Pipeline().FlowMod(addMod(1, 5, &ofpact.Group{ID: 3})); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(10 * time.Second)
	r := b.LookupRule(b.Version(), 1, func() *mf.Flow { f := &mf.Flow{}; f.InPort = 1; return f }(), nil)
	r.Credit(xlateStats(2, 120, clock.Add(-3*time.Second)))
	b.Group(b.Version(), 3).Credit(1, xlateStats(2, 120, time.Time{}))
	clock = clock.Add(5 * time.Second)

	fs, err := b.FlowStats(&FlowStatsRequest{TableID: pipeline.TableAll, OutPort: mf.PortNone, OutGroup: pipeline.GroupAny})
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 1 || fs[0].TableID != 1 {
		t.Fatalf("flow stats %+v", fs)
	}
	s := fs[0]
	if s.Packets != 2 || s.Bytes != 120 || s.Duration != 15*time.Second || s.IdleAge != 8 || s.HardAge != 15 || s.Priority != 5 {
		t.Fatalf("flow stats %+v", s)
	}
	agg, err := b.AggregateStats(&FlowStatsRequest{TableID: 1, OutPort: mf.PortNone, OutGroup: 3})
	if err != nil || agg.Flows != 1 || agg.Packets != 2 {
		t.Fatalf("aggregate %+v %v", agg, err)
	}
	gs := b.GroupStats(pipeline.GroupAll)
	if len(gs) != 1 || gs[0].RefCount != 1 || gs[0].Packets != 2 || gs[0].Buckets[1].Packets != 2 || gs[0].Buckets[0].Packets != 0 {
		t.Fatalf("group stats %+v", gs)
	}
	if len(b.GroupStats(9)) != 0 || len(b.GroupDescs(3)) != 1 {
		t.Fatal("group lookups")
	}
	ts := b.TableStats()
	if len(ts) != pipeline.NumTables-1 || ts[0].ActiveCount != 0 || ts[1].ActiveCount != 1 || ts[1].LookupCount != 1 || ts[1].MatchedCount != 1 {
		t.Fatalf("table stats %+v %+v", ts[0], ts[1])
	}
}

package pipeline

import (
	"gvs/ofproto/ofpact"
	"gvs/ofproto/ofperr"
	"testing"
)

func bucket(id uint32, acts ...Action) Bucket {
	return Bucket{ID: id, WatchPort: 0xffff, WatchGroup: GroupAny, Actions: acts}
}

func groupAdd(id uint32, typ GroupType, buckets ...Bucket) *GroupMod {
	return &GroupMod{Command: GroupAdd, Type: typ, GroupID: id, Buckets: buckets}
}

func bucketIDs(g *Group) []uint32 {
	var out []uint32
	for _, b := range g.Buckets {
		out = append(out, b.ID)
	}
	return out
}

func TestGroupAddModifyDelete(t *testing.T) {
	p := newFixture(t)
	if err := p.GroupMod(groupAdd(1, GroupTypeAll, bucket(0, &ofpact.Output{Port: 1}), bucket(1, &ofpact.Output{Port: 2}))); err != nil {
		t.Fatal(err)
	}
	wantErr(t, p.GroupMod(groupAdd(1, GroupTypeAll)), ofperr.OFPGMFC_GROUP_EXISTS)
	wantErr(t, p.GroupMod(groupAdd(GroupAll, GroupTypeAll)), ofperr.OFPGMFC_INVALID_GROUP)
	wantErr(t, p.GroupMod(groupAdd(2, 7)), ofperr.OFPGMFC_BAD_TYPE)
	wantErr(t, p.GroupMod(&GroupMod{Command: GroupModify, GroupID: 2}), ofperr.OFPGMFC_UNKNOWN_GROUP)
	wantErr(t, p.GroupMod(&GroupMod{Command: 9, GroupID: 2}), ofperr.OFPGMFC_BAD_COMMAND)

	g1 := p.Group(p.Version(), 1)
	if g1 == nil || len(g1.Buckets) != 2 {
		t.Fatalf("group 1: %+v", g1)
	}
	mustMod(t, p, add(0, 1, match().inPort(1).get(), []Action{&ofpact.Group{ID: 1}}).flags(FlagSendFlowRem))
	mustMod(t, p, add(0, 1, match().inPort(2).get(), out(3)))
	if n := p.GroupRefCount(1); n != 1 {
		t.Fatalf("ref count %d", n)
	}

	// Modify replaces the group at a new version, keeps its creation time.
	before := p.Version()
	p.clock.Advance(1e9)
	if err := p.GroupMod(&GroupMod{Command: GroupModify, Type: GroupTypeSelect, GroupID: 1, Buckets: []Bucket{bucket(5, &ofpact.Output{Port: 4})}}); err != nil {
		t.Fatal(err)
	}
	g := p.Group(p.Version(), 1)
	if g.Type != GroupTypeSelect || len(g.Buckets) != 1 || !g.Created.Equal(g1.Created) || g.Modified.Equal(g1.Modified) {
		t.Fatalf("modified group %+v", g)
	}
	if old := p.Group(before, 1); old != g1 {
		t.Fatalf("lookups at the old version see %+v, want the old group", old)
	}

	// Add-or-modify.
	if err := p.GroupMod(&GroupMod{Command: GroupAddOrModify, Type: GroupTypeIndirect, GroupID: 3, Buckets: []Bucket{bucket(0)}}); err != nil {
		t.Fatal(err)
	}
	if err := p.GroupMod(&GroupMod{Command: GroupAddOrModify, Type: GroupTypeAll, GroupID: 3}); err != nil {
		t.Fatal(err)
	}
	if g := p.Group(p.Version(), 3); g == nil || g.Type != GroupTypeAll {
		t.Fatalf("add-or-modify: %+v", g)
	}

	// Deleting the group deletes the flows that use it.
	if err := p.GroupMod(&GroupMod{Command: GroupDelete, GroupID: 1}); err != nil {
		t.Fatal(err)
	}
	if p.Group(p.Version(), 1) != nil {
		t.Fatal("group 1 still there")
	}
	rules := p.all(t)
	if len(rules) != 1 || rules[0].Match.Flow.InPort != 2 {
		t.Fatalf("rules after group delete: %v", rules)
	}
	if got := p.events.take(); len(got) != 1 || got[0].Reason != RemovedGroupDelete {
		t.Fatalf("flow removed: %+v", got)
	}
	// Deleting a missing group is not an error; OFPG_ALL deletes all.
	if err := p.GroupMod(&GroupMod{Command: GroupDelete, GroupID: 77}); err != nil {
		t.Fatal(err)
	}
	if err := p.GroupMod(&GroupMod{Command: GroupDelete, GroupID: GroupAll}); err != nil {
		t.Fatal(err)
	}
	if gs := p.Groups(); len(gs) != 0 {
		t.Fatalf("groups left: %v", gs)
	}
}

func TestGroupBuckets(t *testing.T) {
	p := newFixture(t)
	if err := p.GroupMod(groupAdd(1, GroupTypeSelect, bucket(1), bucket(2), bucket(3))); err != nil {
		t.Fatal(err)
	}
	ins := func(at uint32, ids ...uint32) error {
		var bs []Bucket
		for _, id := range ids {
			bs = append(bs, bucket(id))
		}
		return p.GroupMod(&GroupMod{Command: GroupInsertBucket, Type: GroupTypeAll, GroupID: 1, CommandBucketID: at, Buckets: bs})
	}
	rm := func(at uint32) error {
		return p.GroupMod(&GroupMod{Command: GroupRemoveBucket, GroupID: 1, CommandBucketID: at})
	}
	check := func(want ...uint32) {
		t.Helper()
		g := p.Group(p.Version(), 1)
		got := bucketIDs(g)
		if len(got) != len(want) {
			t.Fatalf("buckets %v, want %v", got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("buckets %v, want %v", got, want)
			}
		}
		if g.Type != GroupTypeSelect {
			t.Fatalf("bucket command changed the type to %d", g.Type)
		}
	}
	if err := ins(BucketFirst, 10); err != nil {
		t.Fatal(err)
	}
	check(10, 1, 2, 3)
	if err := ins(BucketLast, 11, 12); err != nil {
		t.Fatal(err)
	}
	check(10, 1, 2, 3, 11, 12)
	if err := ins(2, 13); err != nil {
		t.Fatal(err)
	}
	check(10, 1, 2, 13, 3, 11, 12)
	wantErr(t, ins(99, 14), ofperr.OFPGMFC_UNKNOWN_BUCKET)
	wantErr(t, ins(BucketLast, 1), ofperr.OFPGMFC_BUCKET_EXISTS)
	if err := rm(BucketFirst); err != nil {
		t.Fatal(err)
	}
	if err := rm(BucketLast); err != nil {
		t.Fatal(err)
	}
	if err := rm(13); err != nil {
		t.Fatal(err)
	}
	check(1, 2, 3, 11)
	wantErr(t, rm(13), ofperr.OFPGMFC_UNKNOWN_BUCKET)
	if err := rm(BucketAll); err != nil {
		t.Fatal(err)
	}
	check()
}

func TestGroupChaining(t *testing.T) {
	p := newFixture(t)
	wantErr(t, p.GroupMod(groupAdd(1, GroupTypeAll, bucket(0, &ofpact.Group{ID: 2}))), ofperr.OFPBAC_BAD_OUT_GROUP)
	if err := p.GroupMod(groupAdd(2, GroupTypeAll, bucket(0, &ofpact.Output{Port: 1}))); err != nil {
		t.Fatal(err)
	}
	if err := p.GroupMod(groupAdd(1, GroupTypeAll, bucket(0, &ofpact.Group{ID: 2}))); err != nil {
		t.Fatal(err)
	}
	// 2 -> 1 -> 2 would loop.
	wantErr(t, p.GroupMod(&GroupMod{Command: GroupModify, GroupID: 2, Buckets: []Bucket{bucket(0, &ofpact.Group{ID: 1})}}), ofperr.OFPGMFC_LOOP)
	wantErr(t, p.GroupMod(&GroupMod{Command: GroupModify, GroupID: 2, Buckets: []Bucket{bucket(0, &ofpact.Group{ID: 2})}}), ofperr.OFPGMFC_LOOP)
}

func TestMeters(t *testing.T) {
	p := newFixture(t)
	cfg := MeterConfig{ID: 1, Flags: MeterFlagKbps, Bands: []Band{{Type: BandDrop, Rate: 10000}}}
	if err := p.MeterMod(&MeterMod{Command: MeterAdd, Config: cfg}); err != nil {
		t.Fatal(err)
	}
	wantErr(t, p.MeterMod(&MeterMod{Command: MeterAdd, Config: cfg}), ofperr.OFPMMFC_METER_EXISTS)
	wantErr(t, p.MeterMod(&MeterMod{Command: MeterModify, Config: MeterConfig{ID: 2}}), ofperr.OFPMMFC_UNKNOWN_METER)
	wantErr(t, p.MeterMod(&MeterMod{Command: MeterAdd, Config: MeterConfig{ID: 0}}), ofperr.OFPMMFC_INVALID_METER)
	wantErr(t, p.MeterMod(&MeterMod{Command: MeterAdd, Config: MeterConfig{ID: MeterAll}}), ofperr.OFPMMFC_INVALID_METER)
	wantErr(t, p.MeterMod(&MeterMod{Command: MeterAdd, Config: MeterConfig{ID: 3, Bands: make([]Band, 2)}}), ofperr.OFPMMFC_OUT_OF_BANDS)
	wantErr(t, p.MeterMod(&MeterMod{Command: 7, Config: MeterConfig{ID: 3}}), ofperr.OFPMMFC_BAD_COMMAND)

	mustMod(t, p, add(0, 1, match().inPort(1).get(), []Action{&ofpact.Meter{ID: 1}, &ofpact.Output{Port: 2}}).flags(FlagSendFlowRem))
	if n := p.MeterRuleCount(1); n != 1 {
		t.Fatalf("meter flow count %d", n)
	}
	cfg.Bands[0].Rate = 20000
	if err := p.MeterMod(&MeterMod{Command: MeterModify, Config: cfg}); err != nil {
		t.Fatal(err)
	}
	if m := p.Meter(1); m.Config.Bands[0].Rate != 20000 {
		t.Fatalf("meter not modified: %+v", m)
	}
	if err := p.MeterMod(&MeterMod{Command: MeterDelete, Config: MeterConfig{ID: 1}}); err != nil {
		t.Fatal(err)
	}
	if p.Meter(1) != nil || len(p.all(t)) != 0 {
		t.Fatal("meter delete left the meter or its flow")
	}
	if got := p.events.take(); len(got) != 1 || got[0].Reason != RemovedMeterDelete {
		t.Fatalf("flow removed %+v", got)
	}
	// Without a provider nothing but delete works.
	q := New(Config{})
	wantErr(t, q.MeterMod(&MeterMod{Command: MeterAdd, Config: MeterConfig{ID: 1}}), ofperr.OFPMMFC_INVALID_METER)
	if err := q.MeterMod(&MeterMod{Command: MeterDelete, Config: MeterConfig{ID: MeterAll}}); err != nil {
		t.Fatal(err)
	}
}

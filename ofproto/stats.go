package ofproto

import (
	"time"

	"gvs/ofproto/mf"
	"gvs/ofproto/pipeline"
)

// FlowStats is one flow's statistics (struct ofputil_flow_stats).
type FlowStats struct {
	TableID                  uint8
	Duration                 time.Duration
	Priority                 uint16
	IdleTimeout, HardTimeout uint16
	Importance               uint16
	Flags                    pipeline.Flags
	Cookie                   uint64
	Packets, Bytes           uint64
	// IdleAge and HardAge: seconds since the flow was last used and
	// since it was added or modified (Nicira's idle_age/hard_age).
	IdleAge, HardAge int
	Match            mf.Match
	Actions          []pipeline.Action
}

// FlowStatsRequest selects flows for statistics (struct
// ofputil_flow_stats_request): loose matching always.
type FlowStatsRequest struct {
	TableID            uint8
	Match              mf.Match
	Cookie, CookieMask uint64
	OutPort            uint32
	OutGroup           uint32
}

func (r *FlowStatsRequest) query() *pipeline.FlowQuery {
	return &pipeline.FlowQuery{TableID: r.TableID, Match: r.Match, Cookie: r.Cookie, CookieMask: r.CookieMask,
		OutPort: r.OutPort, OutGroup: r.OutGroup}
}

// FlowStats answers a flow statistics request as
// handle_flow_stats_request does.
func (b *Bridge) FlowStats(req *FlowStatsRequest) ([]FlowStats, error) {
	rules, err := b.pipe.Flows(req.query())
	if err != nil {
		return nil, err
	}
	now := b.now()
	out := make([]FlowStats, len(rules))
	for i, r := range rules {
		pk, by, used := r.Stats()
		idle, hard := r.Timeouts()
		out[i] = FlowStats{
			TableID: r.TableID, Duration: now.Sub(r.Created()), Priority: uint16(r.Priority),
			IdleTimeout: idle, HardTimeout: hard, Importance: r.Importance,
			Flags: r.Flags, Cookie: r.Cookie, Packets: pk, Bytes: by,
			IdleAge: ageSecs(now.Sub(used)), HardAge: ageSecs(now.Sub(r.Modified())),
			Match: r.Match, Actions: r.Actions,
		}
	}
	return out, nil
}

// ageSecs is age_secs: whole seconds, clamped to 0..65535.
func ageSecs(d time.Duration) int {
	switch {
	case d < 0:
		return 0
	case d >= 65535*time.Second:
		return 65535
	}
	return int(d / time.Second)
}

// AggregateStats are an aggregate statistics reply.
type AggregateStats struct {
	Packets, Bytes uint64
	Flows          int
}

// AggregateStats sums the flows a request selects.
func (b *Bridge) AggregateStats(req *FlowStatsRequest) (AggregateStats, error) {
	pk, by, n, err := b.pipe.Aggregate(req.query())
	return AggregateStats{Packets: pk, Bytes: by, Flows: n}, err
}

// TableStats returns every OpenFlow table's statistics.
func (b *Bridge) TableStats() []pipeline.TableStats { return b.pipe.TableStats() }

// GroupStats are one group's statistics (struct ofputil_group_stats).
type GroupStats struct {
	GroupID        uint32
	RefCount       int
	Packets, Bytes uint64
	Duration       time.Duration
	Buckets        []BucketStats
}

// BucketStats are one bucket's counters.
type BucketStats struct{ Packets, Bytes uint64 }

// GroupStats returns the statistics of group id, or of every group for
// pipeline.GroupAll; a missing group gives none (Open vSwitch replies
// with an empty list).
func (b *Bridge) GroupStats(id uint32) []GroupStats {
	var out []GroupStats
	now := b.now()
	for _, g := range b.groups(id) {
		pk, by := g.Stats()
		gs := GroupStats{GroupID: g.ID, RefCount: b.pipe.GroupRefCount(g.ID), Packets: pk, Bytes: by,
			Duration: now.Sub(g.Created)}
		for i := range g.Buckets {
			bp, bb := g.BucketStats(i)
			gs.Buckets = append(gs.Buckets, BucketStats{bp, bb})
		}
		out = append(out, gs)
	}
	return out
}

// GroupDescs returns the groups (id, or all for pipeline.GroupAll).
func (b *Bridge) GroupDescs(id uint32) []*pipeline.Group { return b.groups(id) }

func (b *Bridge) groups(id uint32) []*pipeline.Group {
	if id == pipeline.GroupAll {
		return b.pipe.Groups()
	}
	if g := b.pipe.Group(b.Version(), id); g != nil {
		return []*pipeline.Group{g}
	}
	return nil
}

// MeterStats are one meter's statistics (struct ofputil_meter_stats).
type MeterStats struct {
	MeterID   uint32
	RuleCount int
	Duration  time.Duration
	pipeline.MeterStats
}

// MeterStats returns meter id's statistics, or every meter's for
// pipeline.MeterAll.
func (b *Bridge) MeterStats(id uint32) []MeterStats {
	var out []MeterStats
	now := b.now()
	for _, m := range b.meters(id) {
		out = append(out, MeterStats{MeterID: m.Config.ID, RuleCount: b.pipe.MeterRuleCount(m.Config.ID),
			Duration: now.Sub(m.Created), MeterStats: b.pipe.MeterStats(m)})
	}
	return out
}

// MeterConfigs returns meter id's configuration, or every meter's.
func (b *Bridge) MeterConfigs(id uint32) []pipeline.MeterConfig {
	var out []pipeline.MeterConfig
	for _, m := range b.meters(id) {
		out = append(out, m.Config)
	}
	return out
}

func (b *Bridge) meters(id uint32) []*pipeline.Meter {
	if id == pipeline.MeterAll {
		return b.pipe.Meters()
	}
	if m := b.pipe.Meter(id); m != nil {
		return []*pipeline.Meter{m}
	}
	return nil
}

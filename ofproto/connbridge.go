package ofproto

import (
	"slices"
	"sync/atomic"
	"time"

	"gvs/ofproto/connmgr"
	"gvs/ofproto/mf"
	"gvs/ofproto/ofp"
	"gvs/ofproto/ofperr"
	"gvs/ofproto/pipeline"
	"gvs/ofproto/xlate"
)

// ConnBridge is a Bridge as the connection manager drives it
// (connmgr.Bridge): OpenFlow's decoded messages in, the bridge's
// operations out, and the bridge's asynchronous reports converted to
// OpenFlow's messages for the manager's Events.
type ConnBridge struct {
	b    *Bridge
	dpid atomic.Uint64
	frag atomic.Uint32
	// tables are the table mod settings (tablemod.go).
	tables tableConfigs
}

// NewConnBridge returns the connection manager's view of b. Connect
// (with the manager's events) is what hands b over.
func NewConnBridge(b *Bridge) *ConnBridge { return &ConnBridge{b: b} }

// SetDatapathID sets the datapath id FEATURES_REPLY reports.
func (c *ConnBridge) SetDatapathID(id uint64) { c.dpid.Store(id) }

// Features is handle_features_request's reply minus the ports:
// Open vSwitch's capabilities (ofp's Cap* bits, which each version shows
// its share of) and OpenFlow 1.0 actions.
func (c *ConnBridge) Features() ofp.FeaturesReply {
	return ofp.FeaturesReply{
		DatapathID: c.dpid.Load(), NBuffers: 0, NTables: pipeline.NumTables - 1,
		Capabilities: ofp.OVSCapabilities,
		Actions:      0xfff, // every OpenFlow 1.0 action, as Open vSwitch reports
	}
}

// Desc is Open vSwitch's DESC reply.
func (c *ConnBridge) Desc() ofp.DescReply {
	return ofp.DescReply{MfrDesc: "Nicira, Inc.", HWDesc: "Open vSwitch", SWDesc: "3.1.0", SerialNum: "None", DPDesc: "None"}
}

// PortDescs describes every port.
func (c *ConnBridge) PortDescs() []ofp.Port {
	var out []ofp.Port
	for _, d := range c.b.PortDescs() {
		out = append(out, ofpPort(&d))
	}
	return out
}

func ofpPort(d *PortDesc) ofp.Port {
	p := ofp.Port{PortNo: d.OFPort, HWAddr: d.HWAddr, Name: d.Name, Config: uint32(d.Config),
		Curr: d.Curr, Advertised: d.Advertised, Supported: d.Supported, CurrSpeed: d.CurrSpeed, MaxSpeed: d.MaxSpeed}
	if d.LinkDown {
		p.State |= ofp.PortStateLinkDown
	}
	if d.Live {
		p.State |= ofp.PortStateLive
	}
	return p
}

// FragHandling is the switch config's fragment handling.
func (c *ConnBridge) FragHandling() uint16 { return uint16(c.frag.Load()) }

// SetFragHandling sets it: normal, drop and nx-match (reassembly is
// OFPSCFC_BAD_FLAGS, as in Open vSwitch).
func (c *ConnBridge) SetFragHandling(mode uint16) error {
	var h xlate.FragHandling
	switch mode & ofp.FragMask {
	case ofp.FragNormal:
		h = xlate.FragNormal
	case ofp.FragDrop:
		h = xlate.FragDrop
	case ofp.FragNxMatch:
		h = xlate.FragNXMatch
	default:
		return ofperr.OFPSCFC_BAD_FLAGS
	}
	c.frag.Store(uint32(mode & ofp.FragMask))
	c.b.setFragHandling(h)
	return nil
}

// flowModFlags converts ofp's flow mod flags.
func flowModFlags(f uint16) pipeline.Flags {
	var out pipeline.Flags
	for _, m := range []struct {
		ofp uint16
		p   pipeline.Flags
	}{
		{ofp.FlowFlagSendFlowRem, pipeline.FlagSendFlowRem}, {ofp.FlowFlagResetCounts, pipeline.FlagResetCounts},
		{ofp.FlowFlagNoPktCounts, pipeline.FlagNoPktCounts}, {ofp.FlowFlagNoBytCounts, pipeline.FlagNoBytCounts},
		{ofp.FlowFlagCheckOverlap, pipeline.FlagCheckOverlap}, {ofp.FlowFlagEmerg, pipeline.FlagEmerg},
	} {
		if f&m.ofp != 0 {
			out |= m.p
		}
	}
	return out
}

func ofpFlowFlags(f pipeline.Flags) uint16 {
	var out uint16
	for _, m := range []struct {
		p   pipeline.Flags
		ofp uint16
	}{
		{pipeline.FlagSendFlowRem, ofp.FlowFlagSendFlowRem}, {pipeline.FlagNoPktCounts, ofp.FlowFlagNoPktCounts},
		{pipeline.FlagNoBytCounts, ofp.FlowFlagNoBytCounts}, {pipeline.FlagCheckOverlap, ofp.FlowFlagCheckOverlap},
		{pipeline.FlagResetCounts, ofp.FlowFlagResetCounts},
	} {
		if f&m.p != 0 {
			out |= m.ofp
		}
	}
	if f&pipeline.FlagCheckOverlap != 0 {
		out |= ofp.FlowFlagCheckOverlap
	}
	if f&pipeline.FlagResetCounts != 0 {
		out |= ofp.FlowFlagResetCounts
	}
	return out
}

// actions converts a decoded action list to the pipeline's.
func actions[A any](in []A) []pipeline.Action {
	if in == nil {
		return nil
	}
	out := make([]pipeline.Action, 0, len(in))
	for _, a := range in {
		if x, ok := any(a).(pipeline.Action); ok {
			out = append(out, x)
		}
	}
	return out
}

func ofpActions(in []pipeline.Action) []ofp.Action {
	out := make([]ofp.Action, 0, len(in))
	for _, a := range in {
		if x, ok := any(a).(ofp.Action); ok {
			out = append(out, x)
		}
	}
	return out
}

func (c *ConnBridge) pipelineFlowMod(fm *ofp.FlowMod, o connmgr.Origin) (*pipeline.FlowMod, error) {
	p := new(pipeline.FlowMod)
	return p, fillFlowMod(p, fm, o)
}

// fillFlowMod converts a decoded flow mod.
func fillFlowMod(p *pipeline.FlowMod, fm *ofp.FlowMod, o connmgr.Origin) error {
	if fm.BufferID != ofp.BufferNone {
		return ofperr.OFPBRC_BUFFER_UNKNOWN
	}
	*p = pipeline.FlowMod{
		Command: pipeline.Command(fm.Command), Match: fm.Match, Priority: int(fm.Priority), TableID: fm.TableID,
		Cookie: fm.Cookie, CookieMask: fm.CookieMask, NewCookie: fm.NewCookie, ModifyCookie: fm.ModifyCookie(),
		IdleTimeout: fm.IdleTimeout, HardTimeout: fm.HardTimeout, Importance: fm.Importance,
		Flags: flowModFlags(fm.Flags), BufferID: fm.BufferID, OutPort: fm.OutPort, OutGroup: fm.OutGroup,
		Actions: fm.Actions, Requester: o, // ofp.Action is pipeline.Action: no copy
	}
	return nil
}

// FlowMod implements connmgr.Bridge.
func (c *ConnBridge) FlowMod(fm *ofp.FlowMod, o connmgr.Origin) error {
	var pfm pipeline.FlowMod
	if err := fillFlowMod(&pfm, fm, o); err != nil {
		return err
	}
	return c.b.pipe.FlowMod(&pfm)
}

func pipelineGroupMod(gm *ofp.GroupMod) (*pipeline.GroupMod, error) {
	out := &pipeline.GroupMod{Command: pipeline.GroupCommand(gm.Command), Type: pipeline.GroupType(gm.Type),
		GroupID: gm.GroupID, CommandBucketID: gm.CommandBucketID}
	switch gm.Props.SelectionMethod {
	case "":
		out.Props.SelectionMethod = xlate.SelectDefault
	case "dp_hash":
		out.Props.SelectionMethod = xlate.SelectDPHash
	case "hash":
		out.Props.SelectionMethod = xlate.SelectHash
	default:
		return nil, ofperr.OFPBPC_BAD_VALUE
	}
	out.Props.MethodParam = gm.Props.SelectionMethodParam
	for _, f := range gm.Props.Fields {
		out.Props.FieldList = append(out.Props.FieldList, pipeline.HashField{Field: f.Field, Mask: f.Mask})
		f.Field.SetMaskTo(&out.Props.Fields, f.Mask)
	}
	// Open vSwitch keeps the fields as a bitmap over field ids, so group
	// descriptions list them in id order whatever order the mod named.
	slices.SortStableFunc(out.Props.FieldList, func(a, b pipeline.HashField) int { return int(a.Field.ID) - int(b.Field.ID) })
	for _, b := range gm.Buckets {
		out.Buckets = append(out.Buckets, pipeline.Bucket{ID: b.BucketID, Weight: b.Weight,
			WatchPort: b.WatchPort, WatchGroup: b.WatchGroup, Actions: actions(b.Actions)})
	}
	return out, nil
}

// GroupMod implements connmgr.Bridge.
func (c *ConnBridge) GroupMod(gm *ofp.GroupMod, _ connmgr.Origin) error {
	pgm, err := pipelineGroupMod(gm)
	if err != nil {
		return err
	}
	return c.b.pipe.GroupMod(pgm)
}

// MeterMod implements connmgr.Bridge.
func (c *ConnBridge) MeterMod(mm *ofp.MeterMod) error {
	cfg := pipeline.MeterConfig{ID: mm.Meter.MeterID, Flags: mm.Meter.Flags}
	for _, b := range mm.Meter.Bands {
		cfg.Bands = append(cfg.Bands, pipeline.Band{Type: b.Type, Rate: b.Rate, Burst: b.BurstSize, PrecLevel: b.PrecLevel})
	}
	return c.b.pipe.MeterMod(&pipeline.MeterMod{Command: pipeline.MeterCommand(mm.Command), Config: cfg})
}

// PortMod implements connmgr.Bridge.
func (c *ConnBridge) PortMod(pm *ofp.PortMod) error { return c.b.ApplyPortMod(portMod(pm)) }

func portMod(pm *ofp.PortMod) *PortMod {
	return &PortMod{OFPort: pm.PortNo, HWAddr: pm.HWAddr, Config: xlate.PortFlags(pm.Config), Mask: xlate.PortFlags(pm.Mask)}
}

// flowRemoved is a flow removed message.
func flowRemoved(fr *pipeline.FlowRemoved) *ofp.FlowRemoved {
	r := fr.Rule
	idle, hard := r.Timeouts()
	sec, nsec := splitDuration(fr.Duration)
	return &ofp.FlowRemoved{Match: r.Match, Cookie: r.Cookie, Priority: uint16(r.Priority),
		Reason: uint8(fr.Reason), TableID: r.TableID, DurationSec: sec, DurationNsec: nsec,
		IdleTimeout: idle, HardTimeout: hard, PacketCount: fr.Packets, ByteCount: fr.Bytes}
}

// TableMod implements connmgr.Bridge (tablemod.go).
func (c *ConnBridge) TableMod(tm *ofp.TableMod) error { return c.tableMod(tm) }

func (c *ConnBridge) packetOut(po *ofp.PacketOut) (*PacketOut, error) {
	if po.BufferID != ofp.BufferNone {
		return nil, ofperr.OFPBRC_BUFFER_UNKNOWN
	}
	in := po.Metadata.Flow.InPort
	if po.Metadata.Wildcards.Masks.InPort == 0 {
		in = mf.PortController
	}
	f := po.Metadata.Flow
	return &PacketOut{InPort: in, Packet: po.Packet, Actions: actions(po.Actions), Flow: &f}, nil
}

// PacketOut implements connmgr.Bridge.
func (c *ConnBridge) PacketOut(po *ofp.PacketOut, _ connmgr.Origin) error {
	p, err := c.packetOut(po)
	if err != nil {
		return err
	}
	return c.b.PacketOut(p)
}

// Resume implements connmgr.Bridge: the continuation names a paused
// translation this bridge keeps (NXR_STALE if it no longer does); the
// resumed pipeline sees the metadata the controller sent back.
func (c *ConnBridge) Resume(r *ofp.Resume, _ connmgr.Origin) error {
	return c.b.ResumeWith(r.Continuation, r.Packet, &r.Metadata)
}

func flowStatsRequest(req *ofp.FlowStatsRequest) *FlowStatsRequest {
	return &FlowStatsRequest{TableID: req.TableID, Match: req.Match, Cookie: req.Cookie, CookieMask: req.CookieMask,
		OutPort: req.OutPort, OutGroup: req.OutGroup}
}

func splitDuration(d time.Duration) (uint32, uint32) {
	if d < 0 {
		d = 0
	}
	return uint32(d / time.Second), uint32(d % time.Second)
}

// FlowStats implements connmgr.Bridge.
func (c *ConnBridge) FlowStats(req *ofp.FlowStatsRequest) ([]ofp.FlowStats, error) {
	fs, err := c.b.FlowStats(flowStatsRequest(req))
	if err != nil {
		return nil, err
	}
	out := make([]ofp.FlowStats, len(fs))
	for i, s := range fs {
		sec, nsec := splitDuration(s.Duration)
		pk, by := s.Packets, s.Bytes
		if s.Flags&pipeline.FlagNoPktCounts != 0 {
			pk = ^uint64(0)
		}
		if s.Flags&pipeline.FlagNoBytCounts != 0 {
			by = ^uint64(0)
		}
		out[i] = ofp.FlowStats{TableID: s.TableID, DurationSec: sec, DurationNsec: nsec, Priority: s.Priority,
			IdleTimeout: s.IdleTimeout, HardTimeout: s.HardTimeout, Flags: ofpFlowFlags(s.Flags), Importance: s.Importance,
			Cookie: s.Cookie, PacketCount: pk, ByteCount: by, IdleAge: s.IdleAge, HardAge: s.HardAge,
			Match: s.Match, Actions: ofpActions(s.Actions)}
	}
	return out, nil
}

// AggregateStats implements connmgr.Bridge.
func (c *ConnBridge) AggregateStats(req *ofp.FlowStatsRequest) (ofp.AggregateReply, error) {
	a, err := c.b.AggregateStats(flowStatsRequest(req))
	if err != nil {
		return ofp.AggregateReply{}, err
	}
	return ofp.AggregateReply{PacketCount: a.Packets, ByteCount: a.Bytes, FlowCount: uint32(a.Flows)}, nil
}

// TableStats implements connmgr.Bridge.
func (c *ConnBridge) TableStats() []ofp.TableStats {
	var out []ofp.TableStats
	for _, t := range c.b.TableStats() {
		out = append(out, ofp.TableStats{TableID: t.TableID, Wildcards: 0x3fffff,
			MaxEntries: 1000000, ActiveCount: uint32(t.ActiveCount), LookupCount: t.LookupCount, MatchedCount: t.MatchedCount,
			MissConfig: uint8(c.b.TableMiss(t.TableID))})
	}
	return out
}

// TableDescs implements connmgr.Bridge.
func (c *ConnBridge) TableDescs() []ofp.TableDesc {
	out := make([]ofp.TableDesc, 0, pipeline.NumTables-1)
	for id := range pipeline.NumTables - 1 {
		out = append(out, c.tableDesc(uint8(id)))
	}
	return out
}

// PortStats implements connmgr.Bridge (counters come from the datapath
// through the switch's port statistics hook).
func (c *ConnBridge) PortStats(port uint32) ([]ofp.PortStats, error) {
	var out []ofp.PortStats
	for _, p := range ovsPortOrder(c.b.Ports()) {
		if port != mf.PortNone && p.OFPort != port {
			continue
		}
		out = append(out, c.b.portStats(p))
	}
	if port != mf.PortNone && len(out) == 0 {
		return nil, ofperr.OFPBRC_BAD_PORT
	}
	return out, nil
}

// QueueStats implements connmgr.Bridge as handle_queue_stats_request:
// only dummy devices have a queue (queue 0, statistics unknown, as Open
// vSwitch's netdev-dummy); kernel devices report none. Any port (or
// OpenFlow 1.0's ALL) with a specific queue that no port has is
// OFPQOFC_BAD_QUEUE; a missing port OFPQOFC_BAD_PORT.
func (c *ConnBridge) QueueStats(port, queue uint32) ([]ofp.QueueStats, error) {
	any := port == mf.PortNone || port == mf.PortAll || port == 0xffffffff
	if !any && c.b.Port(port) == nil {
		return nil, ofperr.OFPQOFC_BAD_PORT
	}
	var out []ofp.QueueStats
	found := false
	for _, p := range ovsPortOrder(c.b.Ports()) {
		if !any && p.OFPort != port {
			continue
		}
		has := c.b.hasDummyQueue(p.Name)
		if queue != ofp.QueueAll && (queue != 0 || !has) {
			continue
		}
		found = true
		if has {
			out = append(out, ofp.QueueStats{PortNo: p.OFPort, QueueID: 0, TxBytes: ^uint64(0), TxPackets: ^uint64(0),
				TxErrors: ^uint64(0), DurationSec: ^uint32(0), DurationNsec: ^uint32(0)})
		}
	}
	if !found && (queue != ofp.QueueAll || any && len(c.b.Ports()) == 0) {
		return nil, ofperr.OFPQOFC_BAD_QUEUE
	}
	return out, nil
}

// GroupStats implements connmgr.Bridge.
func (c *ConnBridge) GroupStats(group uint32) ([]ofp.GroupStats, error) {
	var out []ofp.GroupStats
	for _, g := range c.b.GroupStats(group) {
		sec, nsec := splitDuration(g.Duration)
		gs := ofp.GroupStats{GroupID: g.GroupID, RefCount: uint32(g.RefCount), PacketCount: g.Packets, ByteCount: g.Bytes,
			DurationSec: sec, DurationNsec: nsec}
		for _, b := range g.Buckets {
			gs.Buckets = append(gs.Buckets, ofp.BucketCounter{PacketCount: b.Packets, ByteCount: b.Bytes})
		}
		out = append(out, gs)
	}
	return out, nil
}

// GroupDescs implements connmgr.Bridge.
func (c *ConnBridge) GroupDescs(group uint32) []ofp.GroupDesc {
	var out []ofp.GroupDesc
	for _, g := range c.b.GroupDescs(group) {
		d := ofp.GroupDesc{Type: uint8(g.Type), GroupID: g.ID}
		switch g.Props.SelectionMethod {
		case xlate.SelectDPHash:
			d.Props.SelectionMethod = "dp_hash"
		case xlate.SelectHash:
			d.Props.SelectionMethod = "hash"
		}
		d.Props.SelectionMethodParam = g.Props.MethodParam
		for _, f := range g.Props.FieldList {
			d.Props.Fields = append(d.Props.Fields, ofp.GroupField{Field: f.Field, Mask: f.Mask})
		}
		for _, b := range g.Buckets {
			d.Buckets = append(d.Buckets, ofp.Bucket{BucketID: b.ID, Weight: b.Weight, WatchPort: b.WatchPort,
				WatchGroup: b.WatchGroup, Actions: ofpActions(b.Actions)})
		}
		out = append(out, d)
	}
	return out
}

// GroupFeatures implements connmgr.Bridge: every group type, Open
// vSwitch's capabilities (select weight and liveness, chaining) and
// OFPG_MAX groups of each type.
func (c *ConnBridge) GroupFeatures() ofp.GroupFeaturesReply {
	return ofp.GroupFeaturesReply{Types: 0xf, Capabilities: 0x1 | 0x2 | 0x4,
		MaxGroups: [4]uint32{pipeline.GroupMax, pipeline.GroupMax, pipeline.GroupMax, pipeline.GroupMax}}
}

// MeterStats implements connmgr.Bridge.
func (c *ConnBridge) MeterStats(meter uint32) ([]ofp.MeterStats, error) {
	var out []ofp.MeterStats
	for _, m := range c.b.MeterStats(meter) {
		sec, nsec := splitDuration(m.Duration)
		ms := ofp.MeterStats{MeterID: m.MeterID, FlowCount: uint32(m.RuleCount), PacketInCount: m.Packets,
			ByteInCount: m.Bytes, DurationSec: sec, DurationNsec: nsec}
		for _, b := range m.Bands {
			ms.Bands = append(ms.Bands, ofp.BucketCounter{PacketCount: b.Packets, ByteCount: b.Bytes})
		}
		out = append(out, ms)
	}
	return out, nil
}

// MeterConfigs implements connmgr.Bridge.
func (c *ConnBridge) MeterConfigs(meter uint32) ([]ofp.MeterConfig, error) {
	var out []ofp.MeterConfig
	for _, m := range c.b.MeterConfigs(meter) {
		mc := ofp.MeterConfig{MeterID: m.ID, Flags: m.Flags}
		for _, b := range m.Bands {
			mc.Bands = append(mc.Bands, ofp.MeterBand{Type: b.Type, Rate: b.Rate, BurstSize: b.Burst, PrecLevel: b.PrecLevel})
		}
		out = append(out, mc)
	}
	return out, nil
}

// MeterFeatures implements connmgr.Bridge.
func (c *ConnBridge) MeterFeatures() ofp.MeterFeaturesReply {
	f := c.b.pipe.MeterFeatures()
	return ofp.MeterFeaturesReply{MaxMeters: f.MaxMeters, BandTypes: f.BandTypes, Capabilities: f.Capabilities,
		MaxBands: f.MaxBands, MaxColor: f.MaxColor}
}

// TLVTableMod implements connmgr.Bridge: the mappings are kept and
// reported back (tunnels are the next issue's).
func (c *ConnBridge) TLVTableMod(m *ofp.TLVTableMod) error { return c.b.tlvTableMod(m) }

// TLVTable implements connmgr.Bridge.
func (c *ConnBridge) TLVTable() ofp.TLVTableReply { return c.b.tlvTable() }

// FlushFlows implements connmgr.Bridge.
func (c *ConnBridge) FlushFlows() { c.b.FlushFlows() }

// AddNormalFlow implements connmgr.Bridge.
func (c *ConnBridge) AddNormalFlow(priority uint32) { c.b.AddNormalFlow(priority) }

// DeleteFlow implements connmgr.Bridge.
func (c *ConnBridge) DeleteFlow(m *mf.Match, priority uint32) { c.b.DeleteFlow(m, priority) }

// MonitorFlows implements connmgr.Bridge: the flows the monitors of req
// concern (table, out_port, out_group, loose match), each once, with
// actions; never hidden flows.
func (c *ConnBridge) MonitorFlows(req *ofp.FlowMonitorRequest) []ofp.FlowUpdate {
	seen := map[*pipeline.Rule]bool{}
	var out []ofp.FlowUpdate
	for _, mon := range req.Monitors {
		rules, err := c.b.pipe.Flows(&pipeline.FlowQuery{TableID: mon.TableID, Match: mon.Match,
			OutPort: mon.OutPort, OutGroup: mon.OutGroup})
		if err != nil {
			continue
		}
		for _, r := range rules {
			if !seen[r] {
				seen[r] = true
				u := flowUpdate(&pipeline.FlowUpdate{Event: pipeline.FlowAdded, Rule: r})
				u.Event = ofp.UpdateInitial
				out = append(out, u)
			}
		}
	}
	return out
}

// flowUpdate is a flow monitor update for a pipeline change.
func flowUpdate(u *pipeline.FlowUpdate) ofp.FlowUpdate {
	r := u.Rule
	ev := ofp.UpdateAdded
	switch u.Event {
	case pipeline.FlowDeleted:
		ev = ofp.UpdateRemoved
	case pipeline.FlowModified:
		ev = ofp.UpdateModified
	}
	return ofp.FlowUpdate{Event: ev, Reason: uint16(u.Reason), IdleTimeout: r.IdleTimeout,
		HardTimeout: r.HardTimeout, Priority: uint16(r.Priority), TableID: r.TableID, Cookie: r.Cookie,
		Match: r.Match, Actions: ofpActions(r.Actions)}
}

// TableFeatures implements connmgr.Bridge as query_tables does, through
// ofproto/ofp's description of an Open vSwitch table (OpenFlow 1.3's
// form; the connection re-encodes per version): every visible table, up
// to 1,000,000 flows each. gvs's tables cannot be changed by a
// TABLE_FEATURES request (no TableFeaturesSetter).
func (c *ConnBridge) TableFeatures() []ofp.TableFeatures {
	const n = pipeline.NumTables - 1
	out := make([]ofp.TableFeatures, 0, n)
	for id := range n {
		out = append(out, ofp.DefaultTableFeatures(ofp.Version13, uint8(id), n, 1000000))
	}
	return out
}

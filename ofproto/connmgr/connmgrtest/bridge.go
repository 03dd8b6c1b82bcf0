// Package connmgrtest fakes an OpenFlow bridge (connmgr.Bridge) for tests
// of the layers above the connection manager (the reconciler's
// Controller table handling): it answers every request with nothing and
// records the flows the Manager itself adds.
package connmgrtest

import (
	"sync"

	"gvs/ofproto/connmgr"
	"gvs/ofproto/mf"
	"gvs/ofproto/ofp"
)

// Bridge is a fake connmgr.Bridge. The zero value is ready.
type Bridge struct {
	mu         sync.Mutex
	normal     []uint32
	datapathID uint64
}

var _ connmgr.Bridge = (*Bridge)(nil)

// Features reports the datapath id last set.
func (b *Bridge) Features() ofp.FeaturesReply {
	return ofp.FeaturesReply{DatapathID: b.DatapathID(), NTables: 254}
}

func (b *Bridge) Desc() ofp.DescReply                                      { return ofp.DescReply{} }
func (b *Bridge) PortDescs() []ofp.Port                                    { return nil }
func (b *Bridge) FragHandling() uint16                                     { return ofp.FragNormal }
func (b *Bridge) SetFragHandling(uint16) error                             { return nil }
func (b *Bridge) FlowMod(*ofp.FlowMod, connmgr.Origin) error               { return nil }
func (b *Bridge) GroupMod(*ofp.GroupMod, connmgr.Origin) error             { return nil }
func (b *Bridge) MeterMod(*ofp.MeterMod) error                             { return nil }
func (b *Bridge) PortMod(*ofp.PortMod) error                               { return nil }
func (b *Bridge) TableMod(*ofp.TableMod) error                             { return nil }
func (b *Bridge) PacketOut(*ofp.PacketOut, connmgr.Origin) error           { return nil }
func (b *Bridge) Resume(*ofp.Resume, connmgr.Origin) error                 { return nil }
func (b *Bridge) FlowStats(*ofp.FlowStatsRequest) ([]ofp.FlowStats, error) { return nil, nil }
func (b *Bridge) TableStats() []ofp.TableStats                             { return nil }
func (b *Bridge) TableDescs() []ofp.TableDesc                              { return nil }
func (b *Bridge) TableFeatures() []ofp.TableFeatures                       { return nil }
func (b *Bridge) PortStats(uint32) ([]ofp.PortStats, error)                { return nil, nil }
func (b *Bridge) QueueStats(uint32, uint32) ([]ofp.QueueStats, error)      { return nil, nil }
func (b *Bridge) GroupStats(uint32) ([]ofp.GroupStats, error)              { return nil, nil }
func (b *Bridge) GroupDescs(uint32) []ofp.GroupDesc                        { return nil }
func (b *Bridge) GroupFeatures() ofp.GroupFeaturesReply                    { return ofp.GroupFeaturesReply{} }
func (b *Bridge) MeterStats(uint32) ([]ofp.MeterStats, error)              { return nil, nil }
func (b *Bridge) MeterConfigs(uint32) ([]ofp.MeterConfig, error)           { return nil, nil }
func (b *Bridge) MeterFeatures() ofp.MeterFeaturesReply                    { return ofp.MeterFeaturesReply{} }
func (b *Bridge) TLVTableMod(*ofp.TLVTableMod) error                       { return nil }
func (b *Bridge) TLVTable() ofp.TLVTableReply                              { return ofp.TLVTableReply{} }
func (b *Bridge) CTFlushZone(uint16) error                                 { return nil }
func (b *Bridge) CTFlush(*ofp.CTFlush) error                               { return nil }

func (b *Bridge) AggregateStats(*ofp.FlowStatsRequest) (ofp.AggregateReply, error) {
	return ofp.AggregateReply{}, nil
}

func (b *Bridge) CommitBundle([]connmgr.BundleMsg, uint16, connmgr.Origin) (int, error) {
	return 0, nil
}

func (b *Bridge) MonitorFlows(*ofp.FlowMonitorRequest) []ofp.FlowUpdate { return nil }

// FlushFlows forgets the NORMAL flows.
func (b *Bridge) FlushFlows() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.normal = nil
}

// AddNormalFlow records a NORMAL flow at priority.
func (b *Bridge) AddNormalFlow(priority uint32) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.normal = append(b.normal, priority)
}

// DeleteFlow forgets the NORMAL flow at priority.
func (b *Bridge) DeleteFlow(_ *mf.Match, priority uint32) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, p := range b.normal {
		if p == priority {
			b.normal = append(b.normal[:i], b.normal[i+1:]...)
			return
		}
	}
}

// NormalFlows returns the priorities of the NORMAL flows the Manager
// added and did not delete.
func (b *Bridge) NormalFlows() []uint32 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]uint32(nil), b.normal...)
}

// SetDatapathID records the datapath id (for a fake datapath's
// SetDatapathID).
func (b *Bridge) SetDatapathID(id uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.datapathID = id
}

// DatapathID returns the id last set.
func (b *Bridge) DatapathID() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.datapathID
}

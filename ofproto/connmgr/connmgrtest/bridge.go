// Package connmgrtest fakes an OpenFlow bridge (connmgr.Bridge) for tests
// of the layers above the connection manager (the reconciler's
// Controller table handling): it answers every request with nothing and
// records the flows the Manager itself adds.
package connmgrtest

import (
	"sync"

	"gvs/ofproto/connmgr"
	"gvs/ofproto/mf"
)

// Bridge is a fake connmgr.Bridge. The zero value is ready.
type Bridge struct {
	mu         sync.Mutex
	normal     []uint32
	datapathID uint64
}

var _ connmgr.Bridge = (*Bridge)(nil)

func (b *Bridge) Features() connmgr.SwitchFeatures                   { return connmgr.SwitchFeatures{} }
func (b *Bridge) Desc() connmgr.DescStats                            { return connmgr.DescStats{} }
func (b *Bridge) PortDescs() []connmgr.PortDesc                      { return nil }
func (b *Bridge) FragHandling() uint16                               { return 0 }
func (b *Bridge) SetFragHandling(uint16) error                       { return nil }
func (b *Bridge) FlowMod(*connmgr.FlowMod, connmgr.Origin) error     { return nil }
func (b *Bridge) GroupMod(*connmgr.GroupMod, connmgr.Origin) error   { return nil }
func (b *Bridge) MeterMod(*connmgr.MeterMod) error                   { return nil }
func (b *Bridge) PortMod(*connmgr.PortMod) error                     { return nil }
func (b *Bridge) TableMod(*connmgr.TableMod) error                   { return nil }
func (b *Bridge) PacketOut(*connmgr.PacketOut, connmgr.Origin) error { return nil }
func (b *Bridge) Resume(*connmgr.Resume, connmgr.Origin) error       { return nil }
func (b *Bridge) CommitBundle([]connmgr.BundleMsg, uint16, connmgr.Origin) (int, error) {
	return 0, nil
}
func (b *Bridge) FlowStats(*connmgr.FlowStatsRequest) ([]connmgr.FlowStats, error) {
	return nil, nil
}
func (b *Bridge) AggregateStats(*connmgr.FlowStatsRequest) (connmgr.AggregateStats, error) {
	return connmgr.AggregateStats{}, nil
}
func (b *Bridge) TableStats() []connmgr.TableStats                        { return nil }
func (b *Bridge) TableFeatures() []connmgr.TableFeatures                  { return nil }
func (b *Bridge) TableDescs() []connmgr.TableDesc                         { return nil }
func (b *Bridge) PortStats(uint32) ([]connmgr.PortStats, error)           { return nil, nil }
func (b *Bridge) QueueStats(uint32, uint32) ([]connmgr.QueueStats, error) { return nil, nil }
func (b *Bridge) GroupStats(uint32) ([]connmgr.GroupStats, error)         { return nil, nil }
func (b *Bridge) GroupDescs(uint32) []connmgr.GroupDesc                   { return nil }
func (b *Bridge) GroupFeatures() connmgr.GroupFeatures                    { return connmgr.GroupFeatures{} }
func (b *Bridge) MeterStats(uint32) ([]connmgr.MeterStats, error)         { return nil, nil }
func (b *Bridge) MeterConfigs(uint32) ([]connmgr.MeterConfig, error)      { return nil, nil }
func (b *Bridge) MeterFeatures() connmgr.MeterFeatures                    { return connmgr.MeterFeatures{} }
func (b *Bridge) TLVTableMod(*connmgr.TLVTableMod) error                  { return nil }
func (b *Bridge) TLVTable() connmgr.TLVTableReply                         { return connmgr.TLVTableReply{} }
func (b *Bridge) CTFlushZone(uint16) error                                { return nil }
func (b *Bridge) MonitorFlows(*connmgr.FlowMonitorRequest) []connmgr.FlowUpdate {
	return nil
}

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

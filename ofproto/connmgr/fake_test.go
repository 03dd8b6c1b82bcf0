package connmgr

import (
	"sync"

	"gvs/ofproto/mf"
)

// fakeBridge records what the Manager asks of it.
type fakeBridge struct {
	mu      sync.Mutex
	flushes int
	normal  []uint32 // priorities of the NORMAL flows the Manager added
	deleted []uint32
}

var _ Bridge = (*fakeBridge)(nil)

func (b *fakeBridge) Features() SwitchFeatures           { return SwitchFeatures{} }
func (b *fakeBridge) Desc() DescStats                    { return DescStats{} }
func (b *fakeBridge) PortDescs() []PortDesc              { return nil }
func (b *fakeBridge) FragHandling() uint16               { return 0 }
func (b *fakeBridge) SetFragHandling(uint16) error       { return nil }
func (b *fakeBridge) FlowMod(*FlowMod, Origin) error     { return nil }
func (b *fakeBridge) GroupMod(*GroupMod, Origin) error   { return nil }
func (b *fakeBridge) MeterMod(*MeterMod) error           { return nil }
func (b *fakeBridge) PortMod(*PortMod) error             { return nil }
func (b *fakeBridge) TableMod(*TableMod) error           { return nil }
func (b *fakeBridge) PacketOut(*PacketOut, Origin) error { return nil }
func (b *fakeBridge) Resume(*Resume, Origin) error       { return nil }
func (b *fakeBridge) CommitBundle([]BundleMsg, uint16, Origin) (int, error) {
	return 0, nil
}
func (b *fakeBridge) FlowStats(*FlowStatsRequest) ([]FlowStats, error) { return nil, nil }
func (b *fakeBridge) AggregateStats(*FlowStatsRequest) (AggregateStats, error) {
	return AggregateStats{}, nil
}
func (b *fakeBridge) TableStats() []TableStats                        { return nil }
func (b *fakeBridge) TableFeatures() []TableFeatures                  { return nil }
func (b *fakeBridge) TableDescs() []TableDesc                         { return nil }
func (b *fakeBridge) PortStats(uint32) ([]PortStats, error)           { return nil, nil }
func (b *fakeBridge) QueueStats(uint32, uint32) ([]QueueStats, error) { return nil, nil }
func (b *fakeBridge) GroupStats(uint32) ([]GroupStats, error)         { return nil, nil }
func (b *fakeBridge) GroupDescs(uint32) []GroupDesc                   { return nil }
func (b *fakeBridge) GroupFeatures() GroupFeatures                    { return GroupFeatures{} }
func (b *fakeBridge) MeterStats(uint32) ([]MeterStats, error)         { return nil, nil }
func (b *fakeBridge) MeterConfigs(uint32) ([]MeterConfig, error)      { return nil, nil }
func (b *fakeBridge) MeterFeatures() MeterFeatures                    { return MeterFeatures{} }
func (b *fakeBridge) TLVTableMod(*TLVTableMod) error                  { return nil }
func (b *fakeBridge) TLVTable() TLVTableReply                         { return TLVTableReply{} }
func (b *fakeBridge) CTFlushZone(uint16) error                        { return nil }
func (b *fakeBridge) MonitorFlows(*FlowMonitorRequest) []FlowUpdate   { return nil }

func (b *fakeBridge) FlushFlows() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flushes++
	b.normal = nil
}

func (b *fakeBridge) AddNormalFlow(priority uint32) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.normal = append(b.normal, priority)
}

func (b *fakeBridge) DeleteFlow(_ *mf.Match, priority uint32) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.deleted = append(b.deleted, priority)
	for i, p := range b.normal {
		if p == priority {
			b.normal = append(b.normal[:i], b.normal[i+1:]...)
			break
		}
	}
}

func (b *fakeBridge) normalFlows() []uint32 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]uint32(nil), b.normal...)
}

package connmgr

import (
	"fmt"
	"slices"
	"sync"

	"gvs/ofproto/mf"
	"gvs/ofproto/ofp"
	"gvs/ofproto/ofperr"
)

// fakeBridge answers from fixed data and records what the Manager asks.
type fakeBridge struct {
	mu       sync.Mutex
	features ofp.FeaturesReply
	ports    []ofp.Port
	flows    []ofp.FlowStats
	frag     uint16
	flowMods []ofp.FlowMod
	// flowModErr, when set, fails every flow mod.
	flowModErr error
	// bundles are the committed bundles; bundleFail makes a commit fail
	// at that message index.
	bundles    [][]BundleMsg
	bundleFail int
	packetOuts []ofp.PacketOut
	flushes    int
	normal     []uint32
}

var _ Bridge = (*fakeBridge)(nil)

func newFakeBridge() *fakeBridge {
	return &fakeBridge{
		features: ofp.FeaturesReply{DatapathID: 0xa2, NTables: 254, Capabilities: CapFlowStats | CapTableStats | CapPortStats | CapQueueStats | CapARPMatchIP, Actions: 0xfff},
		ports: []ofp.Port{
			{PortNo: 1, HWAddr: [6]byte{0xaa, 0x55, 0xaa, 0x55, 0, 1}, Name: "p1", CurrSpeed: 10000000, MaxSpeed: 0},
			{PortNo: mf.PortLocal, HWAddr: [6]byte{0xaa, 0x55, 0xaa, 0x55, 0, 0xa2}, Name: "br0", Config: ofp.PortConfigPortDown},
		},
		bundleFail: -1,
	}
}

func (b *fakeBridge) Features() ofp.FeaturesReply { return b.features }
func (b *fakeBridge) Desc() ofp.DescReply {
	return ofp.DescReply{MfrDesc: "gvs", HWDesc: "fake", SWDesc: "test", SerialNum: "None", DPDesc: "br0"}
}
func (b *fakeBridge) PortDescs() []ofp.Port { return b.ports }
func (b *fakeBridge) FragHandling() uint16 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.frag
}
func (b *fakeBridge) SetFragHandling(mode uint16) error {
	if mode == ofp.FragReasm {
		return ofperr.OFPSCFC_BAD_FLAGS
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.frag = mode
	return nil
}
func (b *fakeBridge) FlowMod(fm *ofp.FlowMod, _ Origin) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.flowModErr != nil {
		return b.flowModErr
	}
	b.flowMods = append(b.flowMods, *fm)
	return nil
}
func (b *fakeBridge) GroupMod(*ofp.GroupMod, Origin) error { return nil }
func (b *fakeBridge) MeterMod(*ofp.MeterMod) error         { return nil }
func (b *fakeBridge) PortMod(*ofp.PortMod) error           { return nil }
func (b *fakeBridge) TableMod(*ofp.TableMod) error         { return nil }
func (b *fakeBridge) PacketOut(po *ofp.PacketOut, _ Origin) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.packetOuts = append(b.packetOuts, *po)
	return nil
}
func (b *fakeBridge) Resume(*ofp.Resume, Origin) error { return nil }
func (b *fakeBridge) CommitBundle(msgs []BundleMsg, _ uint16, _ Origin) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bundleFail >= 0 && b.bundleFail < len(msgs) {
		return b.bundleFail, ofperr.OFPBAC_BAD_OUT_PORT
	}
	b.bundles = append(b.bundles, slices.Clone(msgs))
	return 0, nil
}
func (b *fakeBridge) FlowStats(req *ofp.FlowStatsRequest) ([]ofp.FlowStats, error) {
	if req.TableID != ofp.TableAll && req.TableID >= 254 {
		return nil, ofperr.OFPBRC_BAD_TABLE_ID
	}
	return b.flows, nil
}
func (b *fakeBridge) AggregateStats(*ofp.FlowStatsRequest) (ofp.AggregateReply, error) {
	var r ofp.AggregateReply
	for _, f := range b.flows {
		r.PacketCount += f.PacketCount
		r.ByteCount += f.ByteCount
		r.FlowCount++
	}
	return r, nil
}
func (b *fakeBridge) GroupStats(uint32) ([]ofp.GroupStats, error)    { return nil, nil }
func (b *fakeBridge) GroupDescs(uint32) []ofp.GroupDesc              { return nil }
func (b *fakeBridge) GroupFeatures() ofp.GroupFeaturesReply          { return ofp.GroupFeaturesReply{} }
func (b *fakeBridge) MeterStats(uint32) ([]ofp.MeterStats, error)    { return nil, nil }
func (b *fakeBridge) MeterConfigs(uint32) ([]ofp.MeterConfig, error) { return nil, nil }
func (b *fakeBridge) MeterFeatures() ofp.MeterFeaturesReply          { return ofp.MeterFeaturesReply{} }
func (b *fakeBridge) CTFlushZone(uint16) error                       { return nil }

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
	if i := slices.Index(b.normal, priority); i >= 0 {
		b.normal = slices.Delete(b.normal, i, i+1)
	}
}

func (b *fakeBridge) normalFlows() []uint32 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.normal)
}

func (b *fakeBridge) recordedFlowMods() []ofp.FlowMod {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.flowMods)
}

func (b *fakeBridge) TableStats() []ofp.TableStats {
	out := make([]ofp.TableStats, 254)
	for i := range out {
		out[i] = ofp.TableStats{TableID: uint8(i), Name: fmt.Sprintf("table%d", i), Wildcards: 0x3fffff, MaxEntries: 1000000}
	}
	out[0].ActiveCount = uint32(len(b.flows))
	return out
}

func (b *fakeBridge) TableFeatures() []ofp.TableFeatures {
	out := make([]ofp.TableFeatures, 254)
	for i := range out {
		inst := ofp.TableInstructionFeatures{
			Instructions: 1<<1 | 1<<2 | 1<<3 | 1<<4,           // write/apply/clear actions, write metadata
			Write:        ofp.TableActionFeatures{Actions: 1}, // output
			Apply:        ofp.TableActionFeatures{Actions: 1},
		}
		inPort := uint64(0x80000004) << 32 // OXM_OF_IN_PORT
		out[i] = ofp.TableFeatures{TableID: uint8(i), Name: fmt.Sprintf("table%d", i), MetadataMatch: ^uint64(0), MetadataWrite: ^uint64(0), MaxEntries: 1000000,
			Props: &ofp.TableFeatureProps{Nonmiss: inst, Miss: inst, Match: []uint64{inPort}, Wildcards: []uint64{inPort}}}
	}
	return out
}

func (b *fakeBridge) TableDescs() []ofp.TableDesc { return nil }

func (b *fakeBridge) PortStats(port uint32) ([]ofp.PortStats, error) {
	var out []ofp.PortStats
	for _, p := range b.ports {
		if port == mf.PortNone || port == p.PortNo {
			out = append(out, ofp.PortStats{PortNo: p.PortNo, RxPackets: 10, TxPackets: 20, RxBytes: 1000, TxBytes: 2000})
		}
	}
	if out == nil {
		return nil, ofperr.OFPBRC_BAD_PORT
	}
	return out, nil
}

func (b *fakeBridge) QueueStats(uint32, uint32) ([]ofp.QueueStats, error) { return nil, nil }
func (b *fakeBridge) TLVTableMod(*ofp.TLVTableMod) error                  { return nil }
func (b *fakeBridge) TLVTable() ofp.TLVTableReply {
	return ofp.TLVTableReply{MaxOptionSpace: 256, MaxFields: 64}
}
func (b *fakeBridge) CTFlush(*ofp.CTFlush) error { return nil }

func (b *fakeBridge) MonitorFlows(req *ofp.FlowMonitorRequest) []ofp.FlowUpdate {
	var out []ofp.FlowUpdate
	for i := range req.Monitors {
		for _, f := range b.flows {
			u := ofp.FlowUpdate{Event: ofp.UpdateAdded, TableID: f.TableID, Priority: f.Priority, Cookie: f.Cookie, Match: f.Match}
			if MonitorMatches(&req.Monitors[i], &FlowChange{Update: u}) {
				out = append(out, u)
			}
		}
	}
	return out
}

func (b *fakeBridge) committed() [][]BundleMsg {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.bundles)
}

func (b *fakeBridge) setBundleFail(i int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.bundleFail = i
}

func (b *fakeBridge) setFlowModErr(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flowModErr = err
}

package ofproto

import (
	"errors"
	"testing"

	"gvs/dpif"
	"gvs/ofproto/ofperr"
	"gvs/ofproto/pipeline"
)

// TestDatapathMeters: OpenFlow meters of two bridges become distinct
// datapath meters; modify and delete reach the datapath; configurations
// the netdev datapath cannot do fail as Open vSwitch's meter_set maps
// them.
func TestDatapathMeters(t *testing.T) {
	dp, err := dpif.New(dpif.Config{PMDs: 1, PoolBuffers: 256, FrameSize: 2048})
	if err != nil {
		t.Fatal(err)
	}
	defer dp.Close()
	sw := New(dp, nil)
	defer sw.Close()
	a, _ := sw.AddBridge("a", BridgeConfig{})
	b, _ := sw.AddBridge("b", BridgeConfig{})
	cfg := pipeline.MeterConfig{ID: 1, Flags: pipeline.MeterFlagKbps, Bands: []pipeline.Band{{Type: pipeline.BandDrop, Rate: 1000}}}
	for _, br := range []*Bridge{a, b} {
		if err := br.Pipeline().MeterMod(&pipeline.MeterMod{Command: pipeline.MeterAdd, Config: cfg}); err != nil {
			t.Fatal(err)
		}
	}
	ma, _ := a.Meter(1)
	mb, _ := b.Meter(1)
	if ma == mb {
		t.Fatalf("two bridges' meter 1 share datapath meter %d", ma)
	}
	if _, ok := dp.MeterStats(ma); !ok {
		t.Fatalf("datapath meter %d missing", ma)
	}
	if f := a.Pipeline().MeterFeatures(); f.MaxMeters != dpif.MaxMeters || f.MaxBands != dpif.MaxMeterBands {
		t.Fatalf("features %+v", f)
	}
	bad := cfg
	bad.ID = 2
	bad.Bands = []pipeline.Band{{Type: pipeline.BandDSCPRemark, Rate: 10}}
	if err := a.Pipeline().MeterMod(&pipeline.MeterMod{Command: pipeline.MeterAdd, Config: bad}); !errors.Is(err, ofperr.OFPMMFC_BAD_BAND) {
		t.Fatalf("dscp_remark band: %v", err)
	}
	bad.Bands = []pipeline.Band{{Type: pipeline.BandDrop, Rate: 0}}
	if err := a.Pipeline().MeterMod(&pipeline.MeterMod{Command: pipeline.MeterAdd, Config: bad}); !errors.Is(err, ofperr.OFPMMFC_BAD_RATE) {
		t.Fatalf("zero rate: %v", err)
	}
	bad.Flags = pipeline.MeterFlagKbps | pipeline.MeterFlagPktps
	bad.Bands = []pipeline.Band{{Type: pipeline.BandDrop, Rate: 5}}
	if err := a.Pipeline().MeterMod(&pipeline.MeterMod{Command: pipeline.MeterAdd, Config: bad}); !errors.Is(err, ofperr.OFPMMFC_BAD_FLAGS) {
		t.Fatalf("kbps and pktps: %v", err)
	}
	cfg.Bands[0].Rate = 2000
	if err := a.Pipeline().MeterMod(&pipeline.MeterMod{Command: pipeline.MeterModify, Config: cfg}); err != nil {
		t.Fatal(err)
	}
	if m, _ := a.Meter(1); m != ma {
		t.Fatal("modify changed the datapath meter")
	}
	if err := a.Pipeline().MeterMod(&pipeline.MeterMod{Command: pipeline.MeterDelete, Config: pipeline.MeterConfig{ID: 1}}); err != nil {
		t.Fatal(err)
	}
	if _, ok := dp.MeterStats(ma); ok {
		t.Fatal("deleted meter still in the datapath")
	}
	if _, ok := dp.MeterStats(mb); !ok {
		t.Fatal("the other bridge's meter went too")
	}
}

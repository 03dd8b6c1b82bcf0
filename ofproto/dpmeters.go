package ofproto

import (
	"sync"

	"gvs/dpif"
	"gvs/ofproto/ofperr"
	"gvs/ofproto/pipeline"
)

// DatapathMeters implements pipeline.MeterProvider over one datapath's
// meters (dpif), shared by every bridge of the datapath: it hands out
// datapath meter ids as Open vSwitch's dpif-netdev does from its id pool,
// and reports dpif-netdev's meter features.
type DatapathMeters struct {
	dp *dpif.Datapath

	mu   sync.Mutex
	used map[uint32]bool
	next uint32
}

var _ pipeline.MeterProvider = (*DatapathMeters)(nil)

// NewDatapathMeters returns the meters of dp.
func NewDatapathMeters(dp *dpif.Datapath) *DatapathMeters {
	return &DatapathMeters{dp: dp, used: map[uint32]bool{}}
}

// Features are dpif-netdev's: MAX_METERS meters of up to 8 drop bands,
// kbps or pktps, burst and stats.
func (m *DatapathMeters) Features() pipeline.MeterFeatures {
	return pipeline.MeterFeatures{
		MaxMeters: dpif.MaxMeters, BandTypes: 1 << pipeline.BandDrop,
		Capabilities: uint32(pipeline.MeterFlagKbps | pipeline.MeterFlagPktps | pipeline.MeterFlagBurst | pipeline.MeterFlagStats),
		MaxBands:     dpif.MaxMeterBands,
	}
}

// config checks a configuration as dpif_netdev_meter_set does and
// converts it; the errors are the ones ofproto-dpif's meter_set maps
// dpif's to.
func config(cfg pipeline.MeterConfig) (dpif.MeterConfig, error) {
	const flags = pipeline.MeterFlagKbps | pipeline.MeterFlagPktps | pipeline.MeterFlagBurst | pipeline.MeterFlagStats
	if cfg.Flags&^flags != 0 || cfg.Flags&pipeline.MeterFlagKbps != 0 && cfg.Flags&pipeline.MeterFlagPktps != 0 {
		return dpif.MeterConfig{}, ofperr.OFPMMFC_BAD_FLAGS
	}
	out := dpif.MeterConfig{PktPS: cfg.Flags&pipeline.MeterFlagPktps != 0}
	if len(cfg.Bands) == 0 || len(cfg.Bands) > dpif.MaxMeterBands {
		return dpif.MeterConfig{}, ofperr.OFPMMFC_BAD_BAND
	}
	for _, b := range cfg.Bands {
		if b.Type != pipeline.BandDrop {
			return dpif.MeterConfig{}, ofperr.OFPMMFC_BAD_BAND
		}
		if b.Rate == 0 {
			return dpif.MeterConfig{}, ofperr.OFPMMFC_BAD_RATE
		}
		burst := uint32(0)
		if cfg.Flags&pipeline.MeterFlagBurst != 0 {
			burst = b.Burst
		}
		out.Bands = append(out.Bands, dpif.MeterBand{Rate: b.Rate, Burst: burst})
	}
	return out, nil
}

// AddMeter implements pipeline.MeterProvider.
func (m *DatapathMeters) AddMeter(cfg pipeline.MeterConfig) (uint32, error) {
	dc, err := config(cfg)
	if err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for range dpif.MaxMeters {
		id := m.next
		m.next = (m.next + 1) % dpif.MaxMeters
		if m.used[id] {
			continue
		}
		if err := m.dp.MeterSet(id, dc); err != nil {
			return 0, ofperr.OFPMMFC_UNKNOWN
		}
		m.used[id] = true
		return id, nil
	}
	return 0, ofperr.OFPMMFC_OUT_OF_METERS
}

// ModifyMeter implements pipeline.MeterProvider.
func (m *DatapathMeters) ModifyMeter(id uint32, cfg pipeline.MeterConfig) error {
	dc, err := config(cfg)
	if err != nil {
		return err
	}
	if err := m.dp.MeterSet(id, dc); err != nil {
		return ofperr.OFPMMFC_UNKNOWN
	}
	return nil
}

// DelMeter implements pipeline.MeterProvider.
func (m *DatapathMeters) DelMeter(id uint32) {
	m.dp.MeterDel(id)
	m.mu.Lock()
	delete(m.used, id)
	m.mu.Unlock()
}

// MeterStats implements pipeline.MeterProvider.
func (m *DatapathMeters) MeterStats(id uint32, nBands int) (pipeline.MeterStats, error) {
	s, ok := m.dp.MeterStats(id)
	if !ok {
		return pipeline.MeterStats{}, dpif.ErrNoMeter
	}
	out := pipeline.MeterStats{Packets: s.Packets, Bytes: s.Bytes, Bands: make([]pipeline.BandStats, nBands)}
	for i := range min(nBands, len(s.Bands)) {
		out.Bands[i] = pipeline.BandStats{Packets: s.Bands[i].Packets, Bytes: s.Bands[i].Bytes}
	}
	return out, nil
}

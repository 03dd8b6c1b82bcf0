package pipeline

import (
	"gvs/ofproto/ofperr"
	"maps"
	"slices"
	"time"
)

// MeterCommand is a meter mod command (OFPMC13_*).
type MeterCommand uint16

const (
	MeterAdd    MeterCommand = 0
	MeterModify MeterCommand = 1
	MeterDelete MeterCommand = 2
)

// Meter flags (OFPMF13_*).
const (
	MeterFlagKbps  uint16 = 1 << 0
	MeterFlagPktps uint16 = 1 << 1
	MeterFlagBurst uint16 = 1 << 2
	MeterFlagStats uint16 = 1 << 3
)

// Band types (OFPMBT13_*).
const (
	BandDrop       uint16 = 1
	BandDSCPRemark uint16 = 2
)

// Band is one meter band.
type Band struct {
	Type      uint16
	Rate      uint32 // kb/s or packets/s, as the meter's flags say
	Burst     uint32
	PrecLevel uint8 // DSCP remark only
}

// MeterConfig is a meter's configuration (struct ofputil_meter_config).
type MeterConfig struct {
	ID    uint32
	Flags uint16
	Bands []Band
}

// MeterMod is a decoded meter mod.
type MeterMod struct {
	Command MeterCommand
	Config  MeterConfig
}

// MeterStats are a meter's counters (struct ofputil_meter_stats).
type MeterStats struct {
	Packets, Bytes uint64
	Bands          []BandStats
}

// BandStats are one band's counters.
type BandStats struct{ Packets, Bytes uint64 }

// MeterFeatures are what the meter provider supports (struct
// ofputil_meter_features).
type MeterFeatures struct {
	MaxMeters    uint32
	BandTypes    uint32 // bit (1 << type)
	Capabilities uint32 // meter flags supported
	MaxBands     uint8
	MaxColor     uint8
}

// MeterProvider implements meters in the datapath (ofproto-dpif's
// meter_set/meter_get/meter_del over dpif). It numbers its meters itself
// (one datapath serves several bridges): the provider id.
type MeterProvider interface {
	Features() MeterFeatures
	// AddMeter creates a datapath meter; ModifyMeter replaces one's
	// configuration. Their errors are OpenFlow errors
	// (OFPMMFC_OUT_OF_METERS, BAD_BAND, BAD_RATE, BAD_FLAGS...).
	AddMeter(cfg MeterConfig) (providerID uint32, err error)
	ModifyMeter(providerID uint32, cfg MeterConfig) error
	DelMeter(providerID uint32)
	MeterStats(providerID uint32, nBands int) (MeterStats, error)
}

// Meter is a meter table entry.
type Meter struct {
	Config  MeterConfig
	Created time.Time
	// ProviderID is the datapath meter implementing it (translation's
	// meter action names it).
	ProviderID uint32
}

type meterMap struct{ m map[uint32]*Meter }

// Meter returns meter id or nil. Safe from any goroutine.
func (p *Pipeline) Meter(id uint32) *Meter { return p.meters.Load().m[id] }

// Meters returns every meter, by id.
func (p *Pipeline) Meters() []*Meter {
	m := p.meters.Load().m
	out := make([]*Meter, 0, len(m))
	for _, x := range m {
		out = append(out, x)
	}
	slices.SortFunc(out, func(a, b *Meter) int { return cmpU32(a.Config.ID, b.Config.ID) })
	return out
}

// MeterFeatures returns the provider's features (all zero without one:
// then every meter mod but delete fails, as in Open vSwitch).
func (p *Pipeline) MeterFeatures() MeterFeatures {
	if p.cfg.Meters == nil {
		return MeterFeatures{}
	}
	return p.cfg.Meters.Features()
}

// MeterStats returns meter's counters from the provider.
func (p *Pipeline) MeterStats(m *Meter) MeterStats {
	st := MeterStats{Bands: make([]BandStats, len(m.Config.Bands))}
	if p.cfg.Meters != nil {
		if s, err := p.cfg.Meters.MeterStats(m.ProviderID, len(m.Config.Bands)); err == nil {
			st = s
		}
	}
	return st
}

// MeterRuleCount is how many rules use meter id (meter stats' flow_count).
func (p *Pipeline) MeterRuleCount(id uint32) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.meterRefs[id])
}

// MeterMod applies a meter mod (handle_meter_mod). Meters are not
// versioned (as in Open vSwitch): the change is immediate; deleting a
// meter deletes the rules that use it.
func (p *Pipeline) MeterMod(mm *MeterMod) error {
	id := mm.Config.ID
	if mm.Command != MeterDelete {
		f := p.MeterFeatures()
		if f.MaxMeters == 0 || id == 0 {
			return ofperr.OFPMMFC_INVALID_METER
		}
		if id > MeterMax && id != MeterSlowpath && id != MeterController {
			return ofperr.OFPMMFC_INVALID_METER
		}
		if len(mm.Config.Bands) > int(f.MaxBands) {
			return ofperr.OFPMMFC_OUT_OF_BANDS
		}
	}
	switch mm.Command {
	case MeterAdd:
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.meters.Load().m[id] != nil {
			return ofperr.OFPMMFC_METER_EXISTS
		}
		pid, err := p.cfg.Meters.AddMeter(mm.Config)
		if err != nil {
			return err
		}
		p.setMeter(&Meter{Config: cloneMeterConfig(mm.Config), Created: p.now(), ProviderID: pid})
	case MeterModify:
		p.mu.Lock()
		defer p.mu.Unlock()
		old := p.meters.Load().m[id]
		if old == nil {
			return ofperr.OFPMMFC_UNKNOWN_METER
		}
		if err := p.cfg.Meters.ModifyMeter(old.ProviderID, mm.Config); err != nil {
			return err
		}
		p.setMeter(&Meter{Config: cloneMeterConfig(mm.Config), Created: old.Created, ProviderID: old.ProviderID})
	case MeterDelete:
		if id == 0 {
			return nil // OpenFlow has no meter 0
		}
		t := p.Begin()
		var ids []uint32
		if id == MeterAll {
			ids = slices.Sorted(maps.Keys(p.meters.Load().m))
		} else if p.meters.Load().m[id] != nil {
			ids = []uint32{id}
		}
		for _, mid := range ids {
			var rules []*Rule
			for r := range p.meterRefs[mid] {
				rules = append(rules, r)
			}
			slices.SortFunc(rules, ruleOrder)
			t.deleteRulesStart(rules, RemovedMeterDelete)
		}
		t.Commit()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, mid := range ids {
			if m := p.meters.Load().m[mid]; m != nil && p.cfg.Meters != nil {
				p.cfg.Meters.DelMeter(m.ProviderID)
			}
			m := maps.Clone(p.meters.Load().m)
			delete(m, mid)
			p.meters.Store(&meterMap{m})
		}
	default:
		return ofperr.OFPMMFC_BAD_COMMAND
	}
	if p.cfg.Changed != nil {
		p.cfg.Changed(p.Version())
	}
	return nil
}

func (p *Pipeline) setMeter(m *Meter) {
	next := maps.Clone(p.meters.Load().m)
	if next == nil {
		next = map[uint32]*Meter{}
	}
	next[m.Config.ID] = m
	p.meters.Store(&meterMap{next})
}

func cloneMeterConfig(c MeterConfig) MeterConfig {
	c.Bands = slices.Clone(c.Bands)
	return c
}

package dpif

import (
	"errors"
	"sync/atomic"
	"time"
)

// MaxMeters is how many datapath meters there may be (ids 0 to
// MaxMeters-1), as Open vSwitch's netdev datapath's MAX_METERS.
const MaxMeters = 1 << 18

// MaxMeterBands is how many bands one meter may have.
const MaxMeterBands = 8

// MeterBand is one drop band: packets over Rate are dropped.
type MeterBand struct {
	// Rate is in kbit/s, or packets per second for a MeterConfig with
	// PktPS.
	Rate uint32
	// Burst is in kbit, or packets; 0 means Rate (one second's worth),
	// as Open vSwitch does.
	Burst uint32
}

// MeterConfig configures a datapath meter.
type MeterConfig struct {
	PktPS bool // rates in packets per second, not kbit/s
	Bands []MeterBand
}

// MeterBandStats are one band's counters: the packets it dropped.
type MeterBandStats struct {
	Packets, Bytes uint64
}

// MeterStats are a meter's counters since MeterSet.
type MeterStats struct {
	Packets, Bytes uint64 // every packet that reached the meter
	Bands          []MeterBandStats
}

// Meter errors.
var (
	ErrMeterID    = errors.New("dpif: meter id out of range")
	ErrMeterBands = errors.New("dpif: a meter needs 1 to 8 bands, each with a non-zero rate")
	ErrNoMeter    = errors.New("dpif: no such meter")
)

// meter is one datapath meter, shared by every PMD without locks: each
// band is a token bucket held as one atomic number, its theoretical
// arrival time (the generic cell rate algorithm, which is a token bucket
// read differently): a packet costs cost/rate of time; it conforms if
// the bucket's time, advanced by that cost from at least now, stays
// within burst/rate of now. One compare-and-swap per band and packet, no
// lock, however many PMDs share the meter.
type meter struct {
	pktps          bool
	bands          []meterBand
	packets, bytes atomic.Uint64
}

type meterBand struct {
	// nsPerUnit is the time one packet (pktps) or one bit costs, in
	// 2^-16 ns so low rates and small packets keep their precision.
	nsPerUnit uint64
	// tolerance is burst/rate in ns: how far ahead of now the bucket
	// may run.
	tolerance      int64
	tat            atomic.Int64 // theoretical arrival time, datapath clock
	packets, bytes atomic.Uint64
}

// meterTable maps ids to meters: an immutable slice published whole,
// grown to the highest id in use.
type meterTable []*meter

// MeterSet creates or replaces meter id. Replacing resets its buckets
// and counters, as in Open vSwitch.
func (dp *Datapath) MeterSet(id uint32, cfg MeterConfig) error {
	if id >= MaxMeters {
		return ErrMeterID
	}
	if len(cfg.Bands) == 0 || len(cfg.Bands) > MaxMeterBands {
		return ErrMeterBands
	}
	m := &meter{pktps: cfg.PktPS, bands: make([]meterBand, len(cfg.Bands))}
	for i, band := range cfg.Bands {
		if band.Rate == 0 {
			return ErrMeterBands
		}
		burst := band.Burst
		if burst == 0 {
			burst = band.Rate
		}
		mb := &m.bands[i]
		if cfg.PktPS {
			mb.nsPerUnit = uint64(time.Second<<16) / uint64(band.Rate)
		} else {
			// kbit/s: one bit costs 1e9/(rate*1000) ns.
			mb.nsPerUnit = uint64(time.Second<<16) / (uint64(band.Rate) * 1000)
		}
		mb.tolerance = int64(uint64(burst) * uint64(time.Second) / uint64(band.Rate))
		// Start with a full bucket.
		mb.tat.Store(-mb.tolerance)
	}
	dp.meterMu.Lock()
	defer dp.meterMu.Unlock()
	old := dp.meters.Load()
	var t meterTable
	if old != nil {
		t = *old
	}
	if int(id) >= len(t) {
		t = append(append(meterTable(nil), t...), make(meterTable, int(id)+1-len(t))...)
	} else {
		t = append(meterTable(nil), t...)
	}
	t[id] = m
	dp.meters.Store(&t)
	return nil
}

// MeterDel deletes meter id and returns its final counters. Flows that
// name it pass packets unmetered, as in Open vSwitch.
func (dp *Datapath) MeterDel(id uint32) (MeterStats, error) {
	dp.meterMu.Lock()
	defer dp.meterMu.Unlock()
	old := dp.meters.Load()
	if old == nil || int(id) >= len(*old) || (*old)[id] == nil {
		return MeterStats{}, ErrNoMeter
	}
	m := (*old)[id]
	t := append(meterTable(nil), (*old)...)
	t[id] = nil
	dp.meters.Store(&t)
	return m.stats(), nil
}

// MeterStats returns meter id's counters.
func (dp *Datapath) MeterStats(id uint32) (MeterStats, bool) {
	m := dp.meter(id)
	if m == nil {
		return MeterStats{}, false
	}
	return m.stats(), true
}

func (m *meter) stats() MeterStats {
	s := MeterStats{Packets: m.packets.Load(), Bytes: m.bytes.Load(), Bands: make([]MeterBandStats, len(m.bands))}
	for i := range m.bands {
		s.Bands[i] = MeterBandStats{Packets: m.bands[i].packets.Load(), Bytes: m.bands[i].bytes.Load()}
	}
	return s
}

func (dp *Datapath) meter(id uint32) *meter {
	t := dp.meters.Load()
	if t == nil || int(id) >= len(*t) {
		return nil
	}
	return (*t)[id]
}

// meterPass runs one packet of size bytes through meter id at time now
// (datapath clock) and reports whether it may go on. A missing meter
// passes everything. The packet is charged to every band it conforms
// to; over any band it is dropped and counted by the exceeded band with
// the highest rate (the one Open vSwitch applies).
func (dp *Datapath) meterPass(id uint32, size int, now int64) bool {
	m := dp.meter(id)
	if m == nil {
		return true
	}
	m.packets.Add(1)
	m.bytes.Add(uint64(size))
	units := uint64(1)
	if !m.pktps {
		units = uint64(size) * 8
	}
	exceeded := -1
	for i := range m.bands {
		mb := &m.bands[i]
		if !mb.take(units, now) {
			if exceeded < 0 || mb.nsPerUnit < m.bands[exceeded].nsPerUnit {
				exceeded = i
			}
		}
	}
	if exceeded < 0 {
		return true
	}
	m.bands[exceeded].packets.Add(1)
	m.bands[exceeded].bytes.Add(uint64(size))
	return false
}

// take charges units to the band if it has them.
func (mb *meterBand) take(units uint64, now int64) bool {
	cost := int64(units * mb.nsPerUnit >> 16)
	for {
		tat := mb.tat.Load()
		next := max(tat, now-mb.tolerance) + cost
		if next > now {
			return false
		}
		if mb.tat.CompareAndSwap(tat, next) {
			return true
		}
	}
}

package ofp

import (
	"encoding/binary"

	"gvs/ofproto/ofperr"
)

// Meter commands (OFPMC13_*), flags (OFPMF13_*), band types (OFPMBT13_*)
// and special meter ids.
const (
	MeterAdd    uint16 = 0
	MeterModify uint16 = 1
	MeterDelete uint16 = 2

	MeterFlagKbps  uint16 = 1
	MeterFlagPktps uint16 = 2
	MeterFlagBurst uint16 = 4
	MeterFlagStats uint16 = 8

	BandDrop       uint16 = 1
	BandDSCPRemark uint16 = 2

	MeterSlowpath   uint32 = 0xfffffffd
	MeterController uint32 = 0xfffffffe
	MeterAll        uint32 = 0xffffffff
)

// MeterBand is one band of a meter (ofputil_meter_band).
type MeterBand struct {
	Type      uint16
	Rate      uint32
	BurstSize uint32
	PrecLevel uint8
}

// MeterConfig is a meter's configuration (ofputil_meter_config).
type MeterConfig struct {
	MeterID uint32
	Flags   uint16
	Bands   []MeterBand
}

// MeterMod (OFPT_METER_MOD).
type MeterMod struct {
	Command uint16
	Meter   MeterConfig
}

func (*MeterMod) raw(v uint8) (Raw, error) { return pick(v, raw13MeterMod) }

func appendBands(b []byte, bands []MeterBand) []byte {
	for _, mb := range bands {
		b = put16(b, mb.Type)
		b = put16(b, 16)
		b = put32(b, mb.Rate)
		b = put32(b, mb.BurstSize)
		b = put8(b, mb.PrecLevel)
		b = pad(b, 3)
	}
	return b
}

func pullBands(b []byte) ([]MeterBand, error) {
	var bands []MeterBand
	for len(b) >= 16 {
		if binary.BigEndian.Uint16(b[2:]) != 16 {
			return nil, ofperr.OFPBRC_BAD_LEN
		}
		mb := MeterBand{Type: binary.BigEndian.Uint16(b)}
		if mb.Type != BandDrop && mb.Type != BandDSCPRemark {
			return nil, ofperr.OFPMMFC_BAD_BAND
		}
		mb.Rate = binary.BigEndian.Uint32(b[4:])
		mb.BurstSize = binary.BigEndian.Uint32(b[8:])
		if mb.Type == BandDSCPRemark {
			mb.PrecLevel = b[12]
		}
		bands = append(bands, mb)
		b = b[16:]
	}
	if len(b) != 0 {
		return nil, ofperr.OFPBRC_BAD_LEN
	}
	return bands, nil
}

func (m *MeterMod) appendBody(b []byte, _ uint8) ([]byte, error) {
	b = put16(b, m.Command)
	b = put16(b, m.Meter.Flags)
	b = put32(b, m.Meter.MeterID)
	return appendBands(b, m.Meter.Bands), nil
}

func decodeMeterMod(_ *Header, body []byte) (Msg, error) {
	r := reader{b: body}
	m := &MeterMod{Command: r.u16()}
	flags := r.u16()
	m.Meter.MeterID = r.u32()
	if m.Command > MeterDelete {
		return nil, ofperr.OFPMMFC_BAD_COMMAND
	}
	if m.Command == MeterDelete {
		return m, nil
	}
	m.Meter.Flags = flags
	if flags&MeterFlagKbps != 0 && flags&MeterFlagPktps != 0 {
		return nil, ofperr.OFPMMFC_BAD_FLAGS
	}
	bands, err := pullBands(r.rest())
	if err != nil {
		return nil, err
	}
	m.Meter.Bands = bands
	return m, nil
}

// MeterStatsRequest and MeterConfigRequest (OFPST13_METER,
// OFPST13_METER_CONFIG): MeterAll for every meter.
type MeterStatsRequest struct {
	Multipart
	MeterID uint32
}
type MeterConfigRequest MeterStatsRequest

func (*MeterStatsRequest) raw(v uint8) (Raw, error)  { return pick(v, raw13MeterStatsRequest) }
func (*MeterConfigRequest) raw(v uint8) (Raw, error) { return pick(v, raw13MeterConfigRequest) }
func (m *MeterStatsRequest) appendBody(b []byte, _ uint8) ([]byte, error) {
	return pad(put32(b, m.MeterID), 4), nil
}
func (m *MeterConfigRequest) appendBody(b []byte, _ uint8) ([]byte, error) {
	return pad(put32(b, m.MeterID), 4), nil
}

// MeterConfigReply (OFPST13_METER_CONFIG reply).
type MeterConfigReply struct {
	Multipart
	Meters []MeterConfig
}

func (*MeterConfigReply) raw(v uint8) (Raw, error) { return pick(v, raw13MeterConfigReply) }
func (m *MeterConfigReply) entries() int           { return len(m.Meters) }
func (m *MeterConfigReply) appendBody(b []byte, v uint8) ([]byte, error) {
	return appendEntries(m, b, v)
}
func (m *MeterConfigReply) part(i, j int) Msg { return &MeterConfigReply{Meters: m.Meters[i:j]} }
func (m *MeterConfigReply) appendEntry(b []byte, _ uint8, i int) ([]byte, error) {
	mc := &m.Meters[i]
	start := len(b)
	b = put16(b, 0)
	b = put16(b, mc.Flags)
	b = put32(b, mc.MeterID)
	b = appendBands(b, mc.Bands)
	setLen16(b, start, 0)
	return b, nil
}

func pullMeterConfigReply(m *MeterConfigReply, _ *Header, r *reader) error {
	for r.len() > 0 {
		if r.len() < 8 {
			return ofperr.OFPBRC_BAD_LEN
		}
		n := int(binary.BigEndian.Uint16(r.b))
		if n < 8 || n > r.len() {
			return ofperr.OFPBRC_BAD_LEN
		}
		e := r.take(n)
		mc := MeterConfig{Flags: binary.BigEndian.Uint16(e[2:]), MeterID: binary.BigEndian.Uint32(e[4:])}
		bands, err := pullBands(e[8:])
		if err != nil {
			return err
		}
		mc.Bands = bands
		m.Meters = append(m.Meters, mc)
	}
	return nil
}

// MeterStats is one meter's counters.
type MeterStats struct {
	MeterID       uint32
	FlowCount     uint32
	PacketInCount uint64
	ByteInCount   uint64
	DurationSec   uint32
	DurationNsec  uint32
	Bands         []BucketCounter // per band: packets and bytes dropped or remarked
}

// MeterStatsReply (OFPST13_METER reply).
type MeterStatsReply struct {
	Multipart
	Stats []MeterStats
}

func (*MeterStatsReply) raw(v uint8) (Raw, error) { return pick(v, raw13MeterStatsReply) }
func (m *MeterStatsReply) entries() int           { return len(m.Stats) }
func (m *MeterStatsReply) appendBody(b []byte, v uint8) ([]byte, error) {
	return appendEntries(m, b, v)
}
func (m *MeterStatsReply) part(i, j int) Msg { return &MeterStatsReply{Stats: m.Stats[i:j]} }
func (m *MeterStatsReply) appendEntry(b []byte, _ uint8, i int) ([]byte, error) {
	s := &m.Stats[i]
	start := len(b)
	b = put32(b, s.MeterID)
	b = put16(b, 0)
	b = pad(b, 6)
	b = put32(b, s.FlowCount)
	b = put64(b, s.PacketInCount)
	b = put64(b, s.ByteInCount)
	b = put32(b, s.DurationSec)
	b = put32(b, s.DurationNsec)
	for _, c := range s.Bands {
		b = put64(b, c.PacketCount)
		b = put64(b, c.ByteCount)
	}
	setLen16(b, start, 4)
	return b, nil
}

func pullMeterStatsReply(m *MeterStatsReply, _ *Header, r *reader) error {
	for r.len() > 0 {
		if r.len() < 40 {
			return ofperr.OFPBRC_BAD_LEN
		}
		n := int(binary.BigEndian.Uint16(r.b[4:]))
		if n < 40 || n > r.len() || (n-40)%16 != 0 {
			return ofperr.OFPBRC_BAD_LEN
		}
		e := reader{b: r.take(n)}
		s := MeterStats{MeterID: e.u32()}
		e.skip(8)
		s.FlowCount = e.u32()
		s.PacketInCount, s.ByteInCount = e.u64(), e.u64()
		s.DurationSec, s.DurationNsec = e.u32(), e.u32()
		for e.len() > 0 {
			s.Bands = append(s.Bands, BucketCounter{e.u64(), e.u64()})
		}
		m.Stats = append(m.Stats, s)
	}
	return nil
}

// MeterFeaturesRequest and MeterFeaturesReply (OFPST13_METER_FEATURES).
// BandTypes is a bitmap of 1<<BandDrop etc.; Capabilities of meter flags.
type MeterFeaturesRequest struct{ Multipart }
type MeterFeaturesReply struct {
	Multipart
	MaxMeters    uint32
	BandTypes    uint32
	Capabilities uint32
	MaxBands     uint8
	MaxColor     uint8
}

func (*MeterFeaturesRequest) raw(v uint8) (Raw, error) { return pick(v, raw13MeterFeaturesRequest) }
func (*MeterFeaturesRequest) appendBody(b []byte, _ uint8) ([]byte, error) {
	return b, nil
}
func (*MeterFeaturesReply) raw(v uint8) (Raw, error) { return pick(v, raw13MeterFeaturesReply) }
func (m *MeterFeaturesReply) appendBody(b []byte, _ uint8) ([]byte, error) {
	b = put32(b, m.MaxMeters)
	b = put32(b, m.BandTypes)
	b = put32(b, m.Capabilities)
	b = put8(b, m.MaxBands)
	b = put8(b, m.MaxColor)
	return pad(b, 2), nil
}

func init() {
	register(decodeMeterMod, raw13MeterMod)
	register(decoderFor(func(m *MeterStatsRequest, _ *Header, r *reader) error {
		m.MeterID = r.u32()
		r.skip(4)
		return nil
	}), raw13MeterStatsRequest)
	register(decoderFor(func(m *MeterConfigRequest, _ *Header, r *reader) error {
		m.MeterID = r.u32()
		r.skip(4)
		return nil
	}), raw13MeterConfigRequest)
	register(decoderFor(pullMeterConfigReply), raw13MeterConfigReply)
	register(decoderFor(pullMeterStatsReply), raw13MeterStatsReply)
	register(decoderFor(func(*MeterFeaturesRequest, *Header, *reader) error { return nil }), raw13MeterFeaturesRequest)
	register(decoderFor(func(m *MeterFeaturesReply, _ *Header, r *reader) error {
		m.MaxMeters, m.BandTypes, m.Capabilities, m.MaxBands, m.MaxColor = r.u32(), r.u32(), r.u32(), r.u8(), r.u8()
		r.skip(2)
		return nil
	}), raw13MeterFeaturesReply)
}

package ofp

import (
	"encoding/binary"
	"math/bits"

	"gvs/ofproto/ofperr"
)

// TableStatsRequest and TableStatsReply (OFPST_TABLE). The 1.0 form also
// carries each table's name, wildcards and max entries; 1.1 and 1.2
// replies are not encoded by gvs (their many capability bitmaps come
// from table features): encoding one fails with OFPBRC_BAD_VERSION.
type TableStatsRequest struct{ Multipart }

type TableStats struct {
	TableID      uint8
	Name         string // 1.0
	Wildcards    uint32 // 1.0
	MaxEntries   uint32 // 1.0
	ActiveCount  uint32
	LookupCount  uint64
	MatchedCount uint64
	// Legacy are 1.1's and 1.2's capability fields between the name and
	// max_entries (wildcards, match, instructions, actions, config...),
	// as sent; nil encodes what Open vSwitch 3.1 sends for its tables.
	Legacy []byte
	// MissConfig is the table's miss setting (Open vSwitch's enum
	// ofputil_table_miss: 0 default, 1 controller, 2 continue, 3 drop),
	// put in the config of the default Legacy fields: raw in 1.1, as
	// Open vSwitch 3.1 does, as OFPTC11_TABLE_MISS_* in 1.2.
	MissConfig uint8
}

// ovsLegacy11 and ovsLegacy12 are the 1.1 and 1.2 table capability
// fields Open vSwitch 3.1 sends (its wildcards, match fields,
// instructions, actions, set-field fields, metadata and config).
var (
	ovsLegacy11 = []byte{
		0x00, 0x00, 0xfb, 0xff, 0x00, 0x00, 0xfb, 0xff, 0x00, 0x00, 0x00, 0x3e,
		0x01, 0xff, 0xe7, 0xff, 0x01, 0xff, 0xe7, 0xff, 0x00, 0x00, 0x00, 0x00,
	}
	ovsLegacy12 = []byte{
		0x00, 0x00, 0x10, 0x1f, 0xff, 0xff, 0xff, 0xfd, 0x00, 0x00, 0x10, 0x1f, 0xff, 0xff, 0xff, 0xfd,
		0x03, 0xff, 0x80, 0x01, 0x03, 0xff, 0x80, 0x01,
		0x00, 0x00, 0x00, 0x0f, 0xff, 0xff, 0xfb, 0xdd, 0x00, 0x00, 0x00, 0x0f, 0xff, 0xff, 0xfb, 0xdd,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0x00, 0x00, 0x00, 0x3e, 0x00, 0x00, 0x00, 0x00,
	}
)

type TableStatsReply struct {
	Multipart
	Tables []TableStats
}

func (*TableStatsRequest) raw(uint8) (Raw, error)                       { return rawTableStatsRequest, nil }
func (*TableStatsRequest) appendBody(b []byte, _ uint8) ([]byte, error) { return b, nil }
func (*TableStatsReply) raw(v uint8) (Raw, error) {
	return pick(v, raw10TableStatsReply, raw11TableStatsReply, raw12TableStatsReply, raw13TableStatsReply)
}
func (m *TableStatsReply) entries() int { return len(m.Tables) }
func (m *TableStatsReply) appendBody(b []byte, v uint8) ([]byte, error) {
	return appendEntries(m, b, v)
}
func (m *TableStatsReply) part(i, j int) Msg { return &TableStatsReply{Tables: m.Tables[i:j]} }
func (m *TableStatsReply) appendEntry(b []byte, v uint8, i int) ([]byte, error) {
	ts := &m.Tables[i]
	b = put8(b, ts.TableID)
	if v == Version11 || v == Version12 {
		legacy := ts.Legacy
		if legacy == nil {
			legacy = ovsLegacy11
			if v == Version12 {
				legacy = ovsLegacy12
			}
			if ts.MissConfig != 0 {
				legacy = append([]byte(nil), legacy...)
				config := uint32(ts.MissConfig)
				if v == Version12 {
					config = [4]uint32{0, 0, 1, 2}[ts.MissConfig&3]
				}
				binary.BigEndian.PutUint32(legacy[len(legacy)-4:], config)
			}
			if i == len(m.Tables)-1 {
				// The last table has no goto_table instruction.
				legacy = append([]byte(nil), legacy...)
				instr := map[uint8]int{Version11: 8, Version12: 56}[v]
				legacy[instr+3] &^= 1 << 1
			}
		}
		if n := map[uint8]int{Version11: 24, Version12: 64}[v]; len(legacy) != n {
			return b, ofperr.OFPBRC_BAD_LEN
		}
		b = pad(b, 7)
		b = putStr(b, ts.Name, 32)
		b = append(b, legacy...)
		b = put32(b, ts.MaxEntries)
		b = put32(b, ts.ActiveCount)
		b = put64(b, ts.LookupCount)
		return put64(b, ts.MatchedCount), nil
	}
	b = pad(b, 3)
	if v == Version10 {
		b = putStr(b, ts.Name, 32)
		b = put32(b, ts.Wildcards)
		b = put32(b, ts.MaxEntries)
	}
	b = put32(b, ts.ActiveCount)
	b = put64(b, ts.LookupCount)
	return put64(b, ts.MatchedCount), nil
}

func pullTableStatsReply(m *TableStatsReply, h *Header, r *reader) error {
	for r.len() > 0 {
		ts := TableStats{TableID: r.u8()}
		switch h.Raw {
		case raw10TableStatsReply:
			r.skip(3)
			ts.Name, ts.Wildcards, ts.MaxEntries = r.str(32), r.u32(), r.u32()
		case raw11TableStatsReply, raw12TableStatsReply:
			r.skip(7)
			ts.Name = r.str(32)
			n := 24
			if h.Raw == raw12TableStatsReply {
				n = 64
			}
			ts.Legacy = r.take(n)
			ts.MaxEntries = r.u32()
		default:
			r.skip(3)
		}
		ts.ActiveCount, ts.LookupCount, ts.MatchedCount = r.u32(), r.u64(), r.u64()
		m.Tables = append(m.Tables, ts)
	}
	return nil
}

// PortStatsRequest (OFPST_PORT): PortNo in the 16-bit space, mf.PortNone
// (OFPP_ANY) for all ports.
type PortStatsRequest struct {
	Multipart
	PortNo uint32
}

func (*PortStatsRequest) raw(v uint8) (Raw, error) {
	return pick(v, raw10PortStatsRequest, raw11PortStatsRequest)
}
func (m *PortStatsRequest) appendBody(b []byte, v uint8) ([]byte, error) {
	if v == Version10 {
		return pad(put16(b, uint16(m.PortNo)), 6), nil
	}
	return pad(put32(b, PortTo11(m.PortNo)), 4), nil
}

// PortStats are one port's counters (ofputil_port_stats); all-ones is
// "unavailable". Duration is sent in 1.3+, the Ethernet counters in every
// version.
type PortStats struct {
	PortNo       uint32
	RxPackets    uint64
	TxPackets    uint64
	RxBytes      uint64
	TxBytes      uint64
	RxDropped    uint64
	TxDropped    uint64
	RxErrors     uint64
	TxErrors     uint64
	RxFrameErr   uint64
	RxOverErr    uint64
	RxCRCErr     uint64
	Collisions   uint64
	DurationSec  uint32
	DurationNsec uint32
	// OtherProps are 1.4+ properties besides the Ethernet counters (Open
	// vSwitch's custom statistics experimenter property), kept as sent.
	OtherProps []Prop
}

type PortStatsReply struct {
	Multipart
	Stats []PortStats
}

func (*PortStatsReply) raw(v uint8) (Raw, error) {
	return pick(v, raw10PortStatsReply, raw11PortStatsReply, raw13PortStatsReply, raw14PortStatsReply)
}
func (m *PortStatsReply) entries() int { return len(m.Stats) }
func (m *PortStatsReply) appendBody(b []byte, v uint8) ([]byte, error) {
	return appendEntries(m, b, v)
}
func (m *PortStatsReply) part(i, j int) Msg { return &PortStatsReply{Stats: m.Stats[i:j]} }

func (m *PortStatsReply) appendEntry(b []byte, v uint8, i int) ([]byte, error) {
	ps := &m.Stats[i]
	if v >= Version14 {
		start := len(b)
		b = put16(b, 0)
		b = pad(b, 2)
		b = put32(b, PortTo11(ps.PortNo))
		b = put32(b, ps.DurationSec)
		b = put32(b, ps.DurationNsec)
		for _, c := range []uint64{ps.RxPackets, ps.TxPackets, ps.RxBytes, ps.TxBytes, ps.RxDropped, ps.TxDropped, ps.RxErrors, ps.TxErrors} {
			b = put64(b, c)
		}
		b = put16(b, 0) // OFPPSPT14_ETHERNET
		b = put16(b, 40)
		b = pad(b, 4)
		for _, c := range []uint64{ps.RxFrameErr, ps.RxOverErr, ps.RxCRCErr, ps.Collisions} {
			b = put64(b, c)
		}
		b = appendProps(b, ps.OtherProps)
		setLen16(b, start, 0)
		return b, nil
	}
	if v == Version10 {
		b = put16(b, uint16(ps.PortNo))
		b = pad(b, 6)
	} else {
		b = put32(b, PortTo11(ps.PortNo))
		b = pad(b, 4)
	}
	for _, c := range []uint64{ps.RxPackets, ps.TxPackets, ps.RxBytes, ps.TxBytes, ps.RxDropped, ps.TxDropped,
		ps.RxErrors, ps.TxErrors, ps.RxFrameErr, ps.RxOverErr, ps.RxCRCErr, ps.Collisions} {
		b = put64(b, c)
	}
	if v == Version13 {
		b = put32(b, ps.DurationSec)
		b = put32(b, ps.DurationNsec)
	}
	return b, nil
}

func pullPortStatsReply(m *PortStatsReply, h *Header, r *reader) error {
	v := h.Version
	for r.len() > 0 {
		ps := PortStats{DurationSec: ^uint32(0), DurationNsec: ^uint32(0)}
		if v >= Version14 {
			if r.len() < 80 {
				return ofperr.OFPBRC_BAD_LEN
			}
			n := int(binary.BigEndian.Uint16(r.b))
			if n < 80 || n > r.len() {
				return ofperr.OFPBRC_BAD_LEN
			}
			e := reader{b: r.take(n)}
			e.skip(4)
			no, err := PortFrom11(e.u32())
			if err != nil {
				return err
			}
			ps.PortNo = no
			ps.DurationSec, ps.DurationNsec = e.u32(), e.u32()
			ps.RxPackets, ps.TxPackets, ps.RxBytes, ps.TxBytes = e.u64(), e.u64(), e.u64(), e.u64()
			ps.RxDropped, ps.TxDropped, ps.RxErrors, ps.TxErrors = e.u64(), e.u64(), e.u64(), e.u64()
			ps.RxFrameErr, ps.RxOverErr, ps.RxCRCErr, ps.Collisions = ^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)
			props, err := pullProps(e.rest(), 8)
			if err != nil {
				return err
			}
			for _, p := range props {
				if p.Type == 0 && len(p.Body) == 36 {
					pr := reader{b: p.Body[4:]}
					ps.RxFrameErr, ps.RxOverErr, ps.RxCRCErr, ps.Collisions = pr.u64(), pr.u64(), pr.u64(), pr.u64()
				} else {
					ps.OtherProps = append(ps.OtherProps, p)
				}
			}
		} else {
			if v == Version10 {
				ps.PortNo = uint32(r.u16())
				r.skip(6)
			} else {
				no, err := PortFrom11(r.u32())
				if err != nil {
					return err
				}
				ps.PortNo = no
				r.skip(4)
			}
			ps.RxPackets, ps.TxPackets, ps.RxBytes, ps.TxBytes = r.u64(), r.u64(), r.u64(), r.u64()
			ps.RxDropped, ps.TxDropped, ps.RxErrors, ps.TxErrors = r.u64(), r.u64(), r.u64(), r.u64()
			ps.RxFrameErr, ps.RxOverErr, ps.RxCRCErr, ps.Collisions = r.u64(), r.u64(), r.u64(), r.u64()
			if v == Version13 {
				ps.DurationSec, ps.DurationNsec = r.u32(), r.u32()
			}
		}
		m.Stats = append(m.Stats, ps)
	}
	return nil
}

// PortDescRequest (OFPST_PORT_DESC; PortNo only in 1.5, mf.PortNone
// for all).
type PortDescRequest struct {
	Multipart
	PortNo uint32
}

func (*PortDescRequest) raw(v uint8) (Raw, error) {
	return pick(v, raw10PortDescRequest, raw15PortDescRequest)
}
func (m *PortDescRequest) appendBody(b []byte, v uint8) ([]byte, error) {
	if v >= Version15 {
		return pad(put32(b, PortTo11(m.PortNo)), 4), nil
	}
	return b, nil
}

// PortDescReply (OFPST_PORT_DESC reply).
type PortDescReply struct {
	Multipart
	Ports []Port
}

func (*PortDescReply) raw(v uint8) (Raw, error) {
	return pick(v, raw10PortDescReply, raw11PortDescReply, raw14PortDescReply)
}
func (m *PortDescReply) entries() int { return len(m.Ports) }
func (m *PortDescReply) appendBody(b []byte, v uint8) ([]byte, error) {
	return appendEntries(m, b, v)
}
func (m *PortDescReply) part(i, j int) Msg { return &PortDescReply{Ports: m.Ports[i:j]} }
func (m *PortDescReply) appendEntry(b []byte, v uint8, i int) ([]byte, error) {
	return appendPort(b, &m.Ports[i], v), nil
}

// QueueStatsRequest (OFPST_QUEUE): mf.PortNone and QueueAll for all.
type QueueStatsRequest struct {
	Multipart
	PortNo  uint32
	QueueID uint32
}

// QueueAll (OFPQ_ALL) selects every queue.
const QueueAll uint32 = 0xffffffff

func (*QueueStatsRequest) raw(v uint8) (Raw, error) {
	return pick(v, raw10QueueStatsRequest, raw11QueueStatsRequest)
}
func (m *QueueStatsRequest) appendBody(b []byte, v uint8) ([]byte, error) {
	if v == Version10 {
		b = pad(put16(b, uint16(m.PortNo)), 2)
	} else {
		b = put32(b, PortTo11(m.PortNo))
	}
	return put32(b, m.QueueID), nil
}

// QueueStats are one queue's counters (duration in 1.3+).
type QueueStats struct {
	PortNo       uint32
	QueueID      uint32
	TxBytes      uint64
	TxPackets    uint64
	TxErrors     uint64
	DurationSec  uint32
	DurationNsec uint32
}

type QueueStatsReply struct {
	Multipart
	Stats []QueueStats
}

func (*QueueStatsReply) raw(v uint8) (Raw, error) {
	return pick(v, raw10QueueStatsReply, raw11QueueStatsReply, raw13QueueStatsReply, raw14QueueStatsReply)
}
func (m *QueueStatsReply) entries() int { return len(m.Stats) }
func (m *QueueStatsReply) appendBody(b []byte, v uint8) ([]byte, error) {
	return appendEntries(m, b, v)
}
func (m *QueueStatsReply) part(i, j int) Msg { return &QueueStatsReply{Stats: m.Stats[i:j]} }
func (m *QueueStatsReply) appendEntry(b []byte, v uint8, i int) ([]byte, error) {
	qs := &m.Stats[i]
	start := len(b)
	switch {
	case v == Version10:
		b = pad(put16(b, uint16(qs.PortNo)), 2)
	case v >= Version14:
		b = pad(put16(b, 0), 6)
		b = put32(b, PortTo11(qs.PortNo))
	default:
		b = put32(b, PortTo11(qs.PortNo))
	}
	b = put32(b, qs.QueueID)
	b = put64(b, qs.TxBytes)
	b = put64(b, qs.TxPackets)
	b = put64(b, qs.TxErrors)
	if v >= Version13 {
		b = put32(b, qs.DurationSec)
		b = put32(b, qs.DurationNsec)
	}
	if v >= Version14 {
		setLen16(b, start, 0)
	}
	return b, nil
}

func pullQueueStatsReply(m *QueueStatsReply, h *Header, r *reader) error {
	v := h.Version
	for r.len() > 0 {
		qs := QueueStats{DurationSec: ^uint32(0), DurationNsec: ^uint32(0)}
		e := r
		if v >= Version14 {
			if r.len() < 48 {
				return ofperr.OFPBRC_BAD_LEN
			}
			n := int(binary.BigEndian.Uint16(r.b))
			if n < 48 || n > r.len() {
				return ofperr.OFPBRC_BAD_LEN
			}
			e = &reader{b: r.take(n)}
			e.skip(8)
		}
		if v == Version10 {
			qs.PortNo = uint32(e.u16())
			e.skip(2)
		} else {
			no, err := PortFrom11(e.u32())
			if err != nil {
				return err
			}
			qs.PortNo = no
		}
		qs.QueueID, qs.TxBytes, qs.TxPackets, qs.TxErrors = e.u32(), e.u64(), e.u64(), e.u64()
		if v >= Version13 {
			qs.DurationSec, qs.DurationNsec = e.u32(), e.u32()
		}
		if e.err != nil {
			return e.err
		}
		m.Stats = append(m.Stats, qs)
	}
	return nil
}

// Table feature property types (OFPTFPT13_*); a miss variant is +1.
const (
	TFPInstructions  = 0
	TFPNextTables    = 2
	TFPWriteActions  = 4
	TFPApplyActions  = 6
	TFPMatch         = 8
	TFPWildcards     = 10
	TFPWriteSetfield = 12
	TFPApplySetfield = 14
)

// TableActionFeatures are the actions (bitmap of wire action types) and
// set-field fields (OXM headers) an apply- or write-actions may use.
type TableActionFeatures struct {
	Actions   uint32
	SetFields []uint64
}

// TableInstructionFeatures are what a table's flows (or its miss flow)
// may use: instructions (bitmap of wire instruction types), goto targets,
// and write/apply actions.
type TableInstructionFeatures struct {
	Instructions uint32
	Next         []uint8
	Write, Apply TableActionFeatures
}

// TableFeatureProps are the properties Open vSwitch sends for a table,
// in its order. OXM headers are 64-bit: a 4-byte header in the high half,
// and for experimenter fields (class 0xffff) the experimenter id in the
// low half.
type TableFeatureProps struct {
	Nonmiss, Miss TableInstructionFeatures
	Match         []uint64 // with the OXM has-mask bit for maskable fields
	Wildcards     []uint64
}

// TableFeatures is one table's entry in a TABLE_FEATURES request or reply
// (ofputil_table_features). Capabilities is 1.4+'s OFPTC14_* bits.
// Props nil means no properties (a request that changes nothing).
type TableFeatures struct {
	TableID       uint8
	Command       uint8 // 1.5 requests
	Name          string
	MetadataMatch uint64
	MetadataWrite uint64
	Capabilities  uint32
	MaxEntries    uint32
	Props         *TableFeatureProps
}

type TableFeaturesRequest struct {
	Multipart
	Tables []TableFeatures
}

type TableFeaturesReply struct {
	Multipart
	Tables []TableFeatures
}

func (*TableFeaturesRequest) raw(v uint8) (Raw, error) { return pick(v, raw13TableFeaturesRequest) }
func (*TableFeaturesReply) raw(v uint8) (Raw, error)   { return pick(v, raw13TableFeaturesReply) }
func (m *TableFeaturesRequest) appendBody(b []byte, v uint8) ([]byte, error) {
	for i := range m.Tables {
		b = appendTableFeatures(b, &m.Tables[i], v)
	}
	return b, nil
}
func (m *TableFeaturesReply) entries() int { return len(m.Tables) }
func (m *TableFeaturesReply) appendBody(b []byte, v uint8) ([]byte, error) {
	return appendEntries(m, b, v)
}
func (m *TableFeaturesReply) part(i, j int) Msg { return &TableFeaturesReply{Tables: m.Tables[i:j]} }
func (m *TableFeaturesReply) appendEntry(b []byte, v uint8, i int) ([]byte, error) {
	return appendTableFeatures(b, &m.Tables[i], v), nil
}

func appendBitmapProp(b []byte, typ uint16, bitmap uint32) []byte {
	start := len(b)
	b = put16(b, typ)
	b = put16(b, 0)
	for bitmap != 0 {
		i := bits.TrailingZeros32(bitmap)
		b = put16(b, uint16(i))
		b = put16(b, 4)
		bitmap &= bitmap - 1
	}
	setLen16(b, start, 2)
	return pad8(b, start)
}

func appendHeadersProp(b []byte, typ uint16, headers []uint64) []byte {
	start := len(b)
	b = put16(b, typ)
	b = put16(b, 0)
	for _, h := range headers {
		b = put32(b, uint32(h>>32))
		if h>>48 == 0xffff {
			b = put32(b, uint32(h))
		}
	}
	setLen16(b, start, 2)
	return pad8(b, start)
}

// instructionMeter is OFPIT13_METER's bit: OpenFlow 1.5 made metering an
// action, and Open vSwitch's ovsinst_bitmap_to_openflow leaves the
// instruction out of 1.5's bitmaps.
const instructionMeter uint32 = 1 << 6

func appendInstructionFeatures(b []byte, f *TableInstructionFeatures, miss uint16, v uint8) []byte {
	instructions := f.Instructions
	if v >= Version15 {
		instructions &^= instructionMeter
	}
	b = appendBitmapProp(b, TFPInstructions+miss, instructions)
	start := len(b)
	b = put16(b, TFPNextTables+miss)
	b = put16(b, 0)
	b = append(b, f.Next...)
	setLen16(b, start, 2)
	b = pad8(b, start)
	b = appendBitmapProp(b, TFPWriteActions+miss, f.Write.Actions)
	b = appendHeadersProp(b, TFPWriteSetfield+miss, f.Write.SetFields)
	b = appendBitmapProp(b, TFPApplyActions+miss, f.Apply.Actions)
	return appendHeadersProp(b, TFPApplySetfield+miss, f.Apply.SetFields)
}

func appendTableFeatures(b []byte, tf *TableFeatures, v uint8) []byte {
	start := len(b)
	b = put16(b, 0)
	b = put8(b, tf.TableID)
	if v >= Version15 {
		b = put8(b, tf.Command)
	} else {
		b = put8(b, 0)
	}
	b = pad(b, 4)
	b = putStr(b, tf.Name, 32)
	b = put64(b, tf.MetadataMatch)
	b = put64(b, tf.MetadataWrite)
	if v >= Version14 {
		b = put32(b, tf.Capabilities)
	} else {
		b = put32(b, 0)
	}
	b = put32(b, tf.MaxEntries)
	if p := tf.Props; p != nil {
		b = appendInstructionFeatures(b, &p.Nonmiss, 0, v)
		b = appendInstructionFeatures(b, &p.Miss, 1, v)
		b = appendHeadersProp(b, TFPMatch, p.Match)
		b = appendHeadersProp(b, TFPWildcards, p.Wildcards)
	}
	setLen16(b, start, 0)
	return b
}

func pullBitmapProp(body []byte) (uint32, error) {
	var m uint32
	for len(body) >= 4 {
		typ, n := binary.BigEndian.Uint16(body), int(binary.BigEndian.Uint16(body[2:]))
		if n < 4 || n > len(body) {
			return 0, ofperr.OFPBPC_BAD_LEN
		}
		if typ < 32 {
			m |= 1 << typ
		}
		body = body[n:]
	}
	return m, nil
}

func pullHeadersProp(body []byte) ([]uint64, error) {
	var hs []uint64
	for len(body) > 0 {
		if len(body) < 4 {
			return nil, ofperr.OFPBPC_BAD_LEN
		}
		h := uint64(binary.BigEndian.Uint32(body)) << 32
		n := 4
		if h>>48 == 0xffff {
			if len(body) < 8 {
				return nil, ofperr.OFPBPC_BAD_LEN
			}
			h |= uint64(binary.BigEndian.Uint32(body[4:]))
			n = 8
		}
		hs = append(hs, h)
		body = body[n:]
	}
	return hs, nil
}

func pullTableFeatures(r *reader, v uint8) (TableFeatures, error) {
	var tf TableFeatures
	if r.len() < 64 {
		return tf, ofperr.OFPBPC_BAD_LEN
	}
	n := int(binary.BigEndian.Uint16(r.b))
	if n < 64 || n%8 != 0 || n > r.len() {
		return tf, ofperr.OFPBPC_BAD_LEN
	}
	e := reader{b: r.take(n)}
	e.skip(2)
	tf.TableID = e.u8()
	tf.Command = e.u8()
	e.skip(4)
	tf.Name = e.str(32)
	tf.MetadataMatch, tf.MetadataWrite = e.u64(), e.u64()
	tf.Capabilities, tf.MaxEntries = e.u32(), e.u32()
	if v < Version14 {
		tf.Capabilities = 0
	}
	if v < Version15 {
		tf.Command = 0
	}
	if e.len() == 0 {
		return tf, nil
	}
	props, err := pullProps(e.rest(), 8)
	if err != nil {
		return tf, err
	}
	p := &TableFeatureProps{}
	for _, pr := range props {
		f := &p.Nonmiss
		if pr.Type < TFPMatch && pr.Type%2 == 1 || pr.Type >= TFPWriteSetfield && pr.Type%2 == 1 {
			f = &p.Miss
		}
		var err error
		switch pr.Type &^ 1 {
		case TFPInstructions:
			f.Instructions, err = pullBitmapProp(pr.Body)
		case TFPNextTables:
			f.Next = append([]uint8(nil), pr.Body...)
		case TFPWriteActions:
			f.Write.Actions, err = pullBitmapProp(pr.Body)
		case TFPApplyActions:
			f.Apply.Actions, err = pullBitmapProp(pr.Body)
		case TFPWriteSetfield:
			f.Write.SetFields, err = pullHeadersProp(pr.Body)
		case TFPApplySetfield:
			f.Apply.SetFields, err = pullHeadersProp(pr.Body)
		case TFPMatch:
			if pr.Type == TFPMatch {
				p.Match, err = pullHeadersProp(pr.Body)
			}
		case TFPWildcards:
			if pr.Type == TFPWildcards {
				p.Wildcards, err = pullHeadersProp(pr.Body)
			}
		default:
			if pr.Type < 0xfffe {
				err = ofperr.OFPBPC_BAD_TYPE
			}
		}
		if err != nil {
			return tf, err
		}
	}
	tf.Props = p
	return tf, nil
}

// TableDesc is one table's description (OFPST14_TABLE_DESC).
type TableDesc struct {
	TableID uint8
	Config  uint32
	Props   []Prop
}

type TableDescRequest struct{ Multipart }
type TableDescReply struct {
	Multipart
	Tables []TableDesc
}

func (*TableDescRequest) raw(v uint8) (Raw, error)                     { return pick(v, raw14TableDescRequest) }
func (*TableDescRequest) appendBody(b []byte, _ uint8) ([]byte, error) { return b, nil }
func (*TableDescReply) raw(v uint8) (Raw, error)                       { return pick(v, raw14TableDescReply) }
func (m *TableDescReply) entries() int                                 { return len(m.Tables) }
func (m *TableDescReply) appendBody(b []byte, v uint8) ([]byte, error) {
	return appendEntries(m, b, v)
}
func (m *TableDescReply) part(i, j int) Msg { return &TableDescReply{Tables: m.Tables[i:j]} }
func (m *TableDescReply) appendEntry(b []byte, _ uint8, i int) ([]byte, error) {
	td := &m.Tables[i]
	start := len(b)
	b = put16(b, 0)
	b = put8(b, td.TableID)
	b = pad(b, 1)
	b = put32(b, td.Config)
	b = appendProps(b, td.Props)
	setLen16(b, start, 0)
	return b, nil
}

func init() {
	register(decoderFor(func(*TableStatsRequest, *Header, *reader) error { return nil }), rawTableStatsRequest)
	register(decoderFor(pullTableStatsReply), raw10TableStatsReply, raw11TableStatsReply, raw12TableStatsReply, raw13TableStatsReply)
	register(decoderFor(func(m *PortStatsRequest, h *Header, r *reader) error {
		if h.Version == Version10 {
			m.PortNo = uint32(r.u16())
			r.skip(6)
			return nil
		}
		no, err := PortFrom11(r.u32())
		m.PortNo = no
		r.skip(4)
		return err
	}), raw10PortStatsRequest, raw11PortStatsRequest)
	register(decoderFor(pullPortStatsReply), raw10PortStatsReply, raw11PortStatsReply, raw13PortStatsReply, raw14PortStatsReply)
	register(decoderFor(func(m *PortDescRequest, h *Header, r *reader) error {
		m.PortNo = 0xffff
		if h.Raw == raw15PortDescRequest {
			no, err := PortFrom11(r.u32())
			m.PortNo = no
			r.skip(4)
			return err
		}
		return nil
	}), raw10PortDescRequest, raw15PortDescRequest)
	register(decoderFor(func(m *PortDescReply, h *Header, r *reader) error {
		ports, err := pullPorts(r, h.Version)
		m.Ports = ports
		return err
	}), raw10PortDescReply, raw11PortDescReply, raw14PortDescReply)
	register(decoderFor(func(m *QueueStatsRequest, h *Header, r *reader) error {
		if h.Version == Version10 {
			m.PortNo = uint32(r.u16())
			r.skip(2)
		} else {
			no, err := PortFrom11(r.u32())
			if err != nil {
				return err
			}
			m.PortNo = no
		}
		m.QueueID = r.u32()
		return nil
	}), raw10QueueStatsRequest, raw11QueueStatsRequest)
	register(decoderFor(pullQueueStatsReply), raw10QueueStatsReply, raw11QueueStatsReply, raw13QueueStatsReply, raw14QueueStatsReply)
	register(decoderFor(func(m *TableFeaturesRequest, h *Header, r *reader) error {
		for r.len() > 0 {
			tf, err := pullTableFeatures(r, h.Version)
			if err != nil {
				return err
			}
			m.Tables = append(m.Tables, tf)
		}
		return nil
	}), raw13TableFeaturesRequest)
	register(decoderFor(func(m *TableFeaturesReply, h *Header, r *reader) error {
		for r.len() > 0 {
			tf, err := pullTableFeatures(r, h.Version)
			if err != nil {
				return err
			}
			m.Tables = append(m.Tables, tf)
		}
		return nil
	}), raw13TableFeaturesReply)
	register(decoderFor(func(*TableDescRequest, *Header, *reader) error { return nil }), raw14TableDescRequest)
	register(decoderFor(func(m *TableDescReply, _ *Header, r *reader) error {
		return pullTableDescEntries(m, r)
	}), raw14TableDescReply)
	register(decodeTableStatus, raw14TableStatus)
}

func pullTableDescEntries(m *TableDescReply, r *reader) error {
	{
		for r.len() > 0 {
			if r.len() < 8 {
				return ofperr.OFPBRC_BAD_LEN
			}
			n := int(binary.BigEndian.Uint16(r.b))
			if n < 8 || n > r.len() {
				return ofperr.OFPBRC_BAD_LEN
			}
			e := reader{b: r.take(n)}
			e.skip(2)
			td := TableDesc{TableID: e.u8()}
			e.skip(1)
			td.Config = e.u32()
			props, err := pullProps(e.rest(), 8)
			if err != nil {
				return err
			}
			td.Props = props
			m.Tables = append(m.Tables, td)
		}
		return nil
	}
}

// TableStatus (OFPT14_TABLE_STATUS) reports a table's vacancy crossing a
// threshold (Reason OFPTR_VACANCY_DOWN 3 / _UP 4).
type TableStatus struct {
	Reason uint8
	Table  TableDesc
}

func (*TableStatus) raw(v uint8) (Raw, error) { return pick(v, raw14TableStatus) }

func (m *TableStatus) appendBody(b []byte, v uint8) ([]byte, error) {
	b = pad(put8(b, m.Reason), 7)
	return (&TableDescReply{Tables: []TableDesc{m.Table}}).appendEntry(b, v, 0)
}

func decodeTableStatus(h *Header, body []byte) (Msg, error) {
	m := &TableStatus{Reason: body[0]}
	var rep TableDescReply
	r := reader{b: body[8:]}
	if err := pullTableDescEntries(&rep, &r); err != nil {
		return nil, err
	}
	if len(rep.Tables) != 1 {
		return nil, ofperr.OFPBRC_BAD_LEN
	}
	m.Table = rep.Tables[0]
	return m, nil
}

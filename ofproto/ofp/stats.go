package ofp

import (
	"encoding/binary"

	"gvs/ofproto/ofperr"
)

// Multipart carries a multipart (statistics) message's flags; every
// request and reply type embeds it. In replies StatsFlagReplyMore says
// more replies follow (EncodeReplies sets it when it splits a reply).
type Multipart struct {
	Flags uint16
}

func (m *Multipart) statsFlags() uint16 { return m.Flags }

// multipart lets EncodeReplies set the flags of the parts it makes.
type multipart interface {
	statsMsg
	setFlags(uint16)
}

func (m *Multipart) setFlags(f uint16) { m.Flags = f }

func decoderFor[T any, P interface {
	*T
	Msg
	multipart
}](f func(m P, h *Header, r *reader) error) decoder {
	return func(h *Header, body []byte) (Msg, error) {
		m := P(new(T))
		m.setFlags(h.StatsFlags)
		r := reader{b: body}
		if err := f(m, h, &r); err != nil {
			return nil, err
		}
		if r.err != nil {
			return nil, r.err
		}
		return m, nil
	}
}

// DescRequest and DescReply (OFPST_DESC): the switch's description.
type DescRequest struct{ Multipart }
type DescReply struct {
	Multipart
	MfrDesc   string
	HWDesc    string
	SWDesc    string
	SerialNum string
	DPDesc    string
}

func (*DescRequest) raw(uint8) (Raw, error)                       { return rawDescRequest, nil }
func (*DescRequest) appendBody(b []byte, _ uint8) ([]byte, error) { return b, nil }
func (*DescReply) raw(uint8) (Raw, error)                         { return rawDescReply, nil }
func (m *DescReply) appendBody(b []byte, _ uint8) ([]byte, error) {
	b = putStr(b, m.MfrDesc, 256)
	b = putStr(b, m.HWDesc, 256)
	b = putStr(b, m.SWDesc, 256)
	b = putStr(b, m.SerialNum, 32)
	return putStr(b, m.DPDesc, 256), nil
}

// FlowStatsRequest (OFPST_FLOW, NXST_FLOW when NX) and AggregateRequest
// (OFPST_AGGREGATE, NXST_AGGREGATE) select flows by match (non-strict),
// table (TableAll for all), out port/group and cookie.
type FlowStatsRequest struct {
	Multipart
	NX         bool
	Match      Match
	TableID    uint8
	OutPort    uint32
	OutGroup   uint32
	Cookie     uint64
	CookieMask uint64
}
type AggregateRequest FlowStatsRequest

func (m *FlowStatsRequest) raw(v uint8) (Raw, error) {
	if m.NX {
		return rawNXFlowStatsRequest, nil
	}
	return pick(v, raw10FlowStatsRequest, raw11FlowStatsRequest)
}

func (m *AggregateRequest) raw(v uint8) (Raw, error) {
	if m.NX {
		return rawNXAggregateRequest, nil
	}
	return pick(v, raw10AggregateRequest, raw11AggregateRequest, raw15AggregateRequest)
}

func (m *FlowStatsRequest) appendBody(b []byte, v uint8) ([]byte, error) {
	switch {
	case m.NX:
		start := len(b)
		b = put16(b, uint16(m.OutPort))
		b = put16(b, 0)
		b = put8(b, m.TableID)
		b = pad(b, 3)
		var n int
		b, n = appendNXMatch(b, &m.Match, 0, m.Cookie, m.CookieMask)
		binary.BigEndian.PutUint16(b[start+2:], uint16(n))
		return pad(b, roundUp8(n)-n), nil
	case v == Version10:
		b = append10Match(b, &m.Match)
		b = put8(b, m.TableID)
		b = pad(b, 1)
		return put16(b, uint16(m.OutPort)), nil
	}
	b = put8(b, m.TableID)
	b = pad(b, 3)
	b = put32(b, PortTo11(m.OutPort))
	b = put32(b, m.OutGroup)
	b = pad(b, 4)
	b = put64(b, m.Cookie)
	b = put64(b, m.CookieMask)
	if v == Version11 {
		return append11Match(b, &m.Match), nil
	}
	return appendOXMMatch(b, &m.Match, v), nil
}

func (m *AggregateRequest) appendBody(b []byte, v uint8) ([]byte, error) {
	return (*FlowStatsRequest)(m).appendBody(b, v)
}

func pullFlowStatsRequest(m *FlowStatsRequest, h *Header, r *reader) error {
	m.OutGroup = GroupAny
	switch h.Raw {
	case rawNXFlowStatsRequest, rawNXAggregateRequest:
		m.NX = true
		m.OutPort = uint32(r.u16())
		matchLen := int(r.u16())
		m.TableID = r.u8()
		r.skip(3)
		if r.err != nil {
			return r.err
		}
		match, cookie, mask, rest, err := pullNXMatchCookie(r.rest(), matchLen, true)
		if err != nil {
			return err
		}
		if len(rest) != 0 {
			return ofperr.OFPBRC_BAD_LEN
		}
		m.Match, m.Cookie, m.CookieMask = match, cookie, mask
	case raw10FlowStatsRequest, raw10AggregateRequest:
		match, err := pull10Match(r.take(40))
		if err != nil {
			return err
		}
		m.Match = match
		m.TableID = r.u8()
		r.skip(1)
		m.OutPort = uint32(r.u16())
	default:
		m.TableID = r.u8()
		r.skip(3)
		out, err := PortFrom11(r.u32())
		if err != nil {
			return err
		}
		m.OutPort = out
		m.OutGroup = r.u32()
		r.skip(4)
		m.Cookie = r.u64()
		m.CookieMask = r.u64()
		if r.err != nil {
			return r.err
		}
		match, rest, err := pullMatch11(r.rest(), h.Version)
		if err != nil {
			return err
		}
		if h.Raw == raw15AggregateRequest {
			// The statistics a 1.5 aggregate request asks for: Open
			// vSwitch ignores them and sends all it has.
			rest = nil
		}
		if len(rest) != 0 {
			return ofperr.OFPBRC_BAD_LEN
		}
		m.Match = match
	}
	return nil
}

// FlowStats is one flow in a flow stats reply (ofputil_flow_stats).
// IdleAge and HardAge are seconds, -1 if unknown (Nicira and 1.5 forms
// carry them). Flags as FlowMod's.
type FlowStats struct {
	TableID      uint8
	DurationSec  uint32
	DurationNsec uint32
	Priority     uint16
	IdleTimeout  uint16
	HardTimeout  uint16
	Flags        uint16
	Importance   uint16
	Cookie       uint64
	PacketCount  uint64
	ByteCount    uint64
	IdleAge      int
	HardAge      int
	Match        Match
	Actions      []Action
}

// FlowStatsReply (OFPST_FLOW or NXST_FLOW reply).
type FlowStatsReply struct {
	Multipart
	NX    bool
	Flows []FlowStats
}

func (m *FlowStatsReply) raw(v uint8) (Raw, error) {
	if m.NX {
		return rawNXFlowStatsReply, nil
	}
	return pick(v, raw10FlowStatsReply, raw11FlowStatsReply, raw13FlowStatsReply, raw15FlowStatsReply)
}

func (m *FlowStatsReply) entries() int { return len(m.Flows) }
func (m *FlowStatsReply) appendBody(b []byte, v uint8) ([]byte, error) {
	return appendEntries(m, b, v)
}
func (m *FlowStatsReply) part(i, j int) Msg {
	return &FlowStatsReply{NX: m.NX, Flows: m.Flows[i:j]}
}

func unknownToZero(c uint64) uint64 {
	if c == ^uint64(0) {
		return 0
	}
	return c
}

func ageWire(age int) uint16 {
	switch {
	case age < 0:
		return 0
	case age < 0xffff:
		return uint16(age + 1)
	}
	return 0xffff
}

func (m *FlowStatsReply) appendEntry(b []byte, v uint8, i int) ([]byte, error) {
	fs := &m.Flows[i]
	start := len(b)
	switch {
	case m.NX:
		b = put16(b, 0)
		b = put8(b, fs.TableID)
		b = pad(b, 1)
		b = put32(b, fs.DurationSec)
		b = put32(b, fs.DurationNsec)
		b = put16(b, fs.Priority)
		b = put16(b, fs.IdleTimeout)
		b = put16(b, fs.HardTimeout)
		b = put16(b, 0) // match_len
		b = put16(b, ageWire(fs.IdleAge))
		b = put16(b, ageWire(fs.HardAge))
		b = put64(b, fs.Cookie)
		b = put64(b, fs.PacketCount)
		b = put64(b, fs.ByteCount)
		var n int
		b, n = appendNXMatch(b, &fs.Match, 0, 0, 0)
		binary.BigEndian.PutUint16(b[start+18:], uint16(n))
		b = pad(b, roundUp8(n)-n)
		b = appendActions(b, fs.Actions, v)
	case v == Version10:
		b = put16(b, 0)
		b = put8(b, fs.TableID)
		b = pad(b, 1)
		b = append10Match(b, &fs.Match)
		b = put32(b, fs.DurationSec)
		b = put32(b, fs.DurationNsec)
		b = put16(b, fs.Priority)
		b = put16(b, fs.IdleTimeout)
		b = put16(b, fs.HardTimeout)
		b = pad(b, 6)
		b = put64(b, fs.Cookie)
		b = put64(b, unknownToZero(fs.PacketCount))
		b = put64(b, unknownToZero(fs.ByteCount))
		b = appendActions(b, fs.Actions, v)
	case v <= Version14:
		b = put16(b, 0)
		b = put8(b, fs.TableID)
		b = pad(b, 1)
		b = put32(b, fs.DurationSec)
		b = put32(b, fs.DurationNsec)
		b = put16(b, fs.Priority)
		b = put16(b, fs.IdleTimeout)
		b = put16(b, fs.HardTimeout)
		if v >= Version13 {
			b = put16(b, encodeFlowModFlags(fs.Flags, v))
		} else {
			b = put16(b, 0)
		}
		if v >= Version14 {
			b = put16(b, fs.Importance)
		} else {
			b = put16(b, 0)
		}
		b = pad(b, 2)
		b = put64(b, fs.Cookie)
		b = put64(b, unknownToZero(fs.PacketCount))
		b = put64(b, unknownToZero(fs.ByteCount))
		b = appendOXMMatch(b, &fs.Match, v) // OXM even in 1.1, as Open vSwitch
		b = appendInstructions(b, fs.Actions, v)
	default:
		b = put16(b, 0)
		b = pad(b, 2)
		b = put8(b, fs.TableID)
		b = pad(b, 1)
		b = put16(b, fs.Priority)
		b = put16(b, fs.IdleTimeout)
		b = put16(b, fs.HardTimeout)
		b = put16(b, encodeFlowModFlags(fs.Flags, v))
		b = put16(b, fs.Importance)
		b = put64(b, fs.Cookie)
		b = appendOXMMatch(b, &fs.Match, v)
		idle := ^uint32(0)
		if fs.IdleAge >= 0 {
			idle = uint32(fs.IdleAge)
		}
		b = appendOXS(b, &OXSStats{DurationSec: fs.DurationSec, DurationNsec: fs.DurationNsec, IdleAge: idle,
			PacketCount: fs.PacketCount, ByteCount: fs.ByteCount, FlowCount: ^uint32(0)})
		b = appendInstructions(b, fs.Actions, v)
	}
	setLen16(b, start, 0)
	return b, nil
}

func pullFlowStatsReply(m *FlowStatsReply, h *Header, r *reader) error {
	v := h.Version
	m.NX = h.Raw == rawNXFlowStatsReply
	for r.len() > 0 {
		if r.len() < 2 {
			return ofperr.OFPBRC_BAD_LEN
		}
		n := int(binary.BigEndian.Uint16(r.b))
		fixed := map[bool]int{true: 48, false: 0}[m.NX]
		switch {
		case m.NX:
		case v == Version10:
			fixed = 88
		case v <= Version14:
			fixed = 48
		default:
			fixed = 24
		}
		if n < fixed || r.len() < fixed {
			return ofperr.OFPBRC_BAD_LEN
		}
		if n > r.len() {
			if m.NX {
				matchLen := int(binary.BigEndian.Uint16(r.b[18:]))
				if _, _, _, _, err := pullNXMatchCookie(r.b[fixed:], matchLen, false); err != nil {
					return err
				}
				return ofperr.OFPBRC_BAD_LEN
			}
			if v == Version10 {
				return ofperr.OFPBRC_BAD_LEN
			}
			// Open vSwitch does not check the entry's length against the
			// message: the match decodes, then the instructions run short.
			if _, _, err := pullMatch11(r.b[fixed:], v); err != nil {
				return err
			}
			return ofperr.OFPBIC_BAD_LEN
		}
		e := reader{b: r.take(n)}
		fs := FlowStats{IdleAge: -1, HardAge: -1}
		var rest []byte
		var err error
		switch {
		case m.NX:
			e.skip(2)
			fs.TableID = e.u8()
			e.skip(1)
			fs.DurationSec, fs.DurationNsec = e.u32(), e.u32()
			fs.Priority, fs.IdleTimeout, fs.HardTimeout = e.u16(), e.u16(), e.u16()
			matchLen := int(e.u16())
			idle, hard := e.u16(), e.u16()
			fs.IdleAge, fs.HardAge = int(idle)-1, int(hard)-1
			fs.Cookie, fs.PacketCount, fs.ByteCount = e.u64(), e.u64(), e.u64()
			fs.Match, _, _, rest, err = pullNXMatchCookie(e.rest(), matchLen, false)
			if err == nil {
				fs.Actions, err = pullActions(rest, v)
			}
		case v == Version10:
			e.skip(2)
			fs.TableID = e.u8()
			e.skip(1)
			fs.Match, err = pull10Match(e.take(40))
			fs.DurationSec, fs.DurationNsec = e.u32(), e.u32()
			fs.Priority, fs.IdleTimeout, fs.HardTimeout = e.u16(), e.u16(), e.u16()
			e.skip(6)
			fs.Cookie, fs.PacketCount, fs.ByteCount = e.u64(), e.u64(), e.u64()
			if err == nil {
				fs.Actions, err = pullActions(e.rest(), v)
			}
		case v <= Version14:
			e.skip(2)
			fs.TableID = e.u8()
			e.skip(1)
			fs.DurationSec, fs.DurationNsec = e.u32(), e.u32()
			fs.Priority, fs.IdleTimeout, fs.HardTimeout = e.u16(), e.u16(), e.u16()
			flags := e.u16()
			importance := e.u16()
			e.skip(2)
			fs.Cookie, fs.PacketCount, fs.ByteCount = e.u64(), e.u64(), e.u64()
			if v >= Version13 {
				fs.Flags, err = decodeFlowModFlags(flags, 0xff, v)
			}
			if v >= Version14 {
				fs.Importance = importance
			}
			if err == nil {
				fs.Match, rest, err = pullMatch11(e.rest(), v)
			}
			if err == nil {
				fs.Actions, err = pullInstructions(rest, v)
			}
		default:
			e.skip(4)
			fs.TableID = e.u8()
			e.skip(1)
			fs.Priority, fs.IdleTimeout, fs.HardTimeout = e.u16(), e.u16(), e.u16()
			flags := e.u16()
			fs.Importance = e.u16()
			fs.Cookie = e.u64()
			fs.Flags, err = decodeFlowModFlags(flags, 0xff, v)
			if err == nil {
				fs.Match, rest, err = pullOXMMatch(e.rest())
			}
			var st OXSStats
			if err == nil {
				st, rest, err = pullOXS(rest)
			}
			if err == nil {
				fs.DurationSec, fs.DurationNsec = st.DurationSec, st.DurationNsec
				fs.PacketCount, fs.ByteCount = st.PacketCount, st.ByteCount
				if st.IdleAge != ^uint32(0) {
					fs.IdleAge = int(st.IdleAge)
				}
				fs.Actions, err = pullInstructions(rest, v)
			}
		}
		if err != nil {
			return err
		}
		if e.err != nil {
			return e.err
		}
		m.Flows = append(m.Flows, fs)
	}
	return nil
}

// AggregateReply (OFPST_AGGREGATE, NXST_AGGREGATE reply).
type AggregateReply struct {
	Multipart
	NX          bool
	PacketCount uint64
	ByteCount   uint64
	FlowCount   uint32
}

func (m *AggregateReply) raw(v uint8) (Raw, error) {
	if m.NX {
		return rawNXAggregateReply, nil
	}
	return pick(v, rawAggregateReply, raw15AggregateReply)
}

func (m *AggregateReply) appendBody(b []byte, v uint8) ([]byte, error) {
	if !m.NX && v >= Version15 {
		return appendOXS(b, &OXSStats{DurationSec: ^uint32(0), IdleAge: ^uint32(0), FlowCount: m.FlowCount,
			PacketCount: m.PacketCount, ByteCount: m.ByteCount}), nil
	}
	b = put64(b, unknownToZero(m.PacketCount))
	b = put64(b, unknownToZero(m.ByteCount))
	b = put32(b, m.FlowCount)
	return pad(b, 4), nil
}

func pullAggregateReply(m *AggregateReply, h *Header, r *reader) error {
	m.NX = h.Raw == rawNXAggregateReply
	if h.Raw == raw15AggregateReply {
		st, rest, err := pullOXS(r.rest())
		if err != nil {
			return err
		}
		if len(rest) != 0 {
			return ofperr.OFPBRC_BAD_LEN
		}
		m.PacketCount, m.ByteCount, m.FlowCount = st.PacketCount, st.ByteCount, st.FlowCount
		return nil
	}
	m.PacketCount, m.ByteCount, m.FlowCount = r.u64(), r.u64(), r.u32()
	r.skip(4)
	return nil
}

// entryReply is a reply made of entries that EncodeReplies can split
// across messages.
type entryReply interface {
	Msg
	multipart
	entries() int
	appendEntry(b []byte, v uint8, i int) ([]byte, error)
	part(i, j int) Msg
}

func appendEntries(m entryReply, b []byte, v uint8) ([]byte, error) {
	var err error
	for i := range m.entries() {
		if b, err = m.appendEntry(b, v, i); err != nil {
			return b, err
		}
	}
	return b, nil
}

// EncodeReplies encodes a multipart reply as as many messages as its
// entries need (each at most 65535 bytes), all but the last with
// StatsFlagReplyMore, as Open vSwitch's ofpmp_postappend does. Replies
// that are not made of entries are encoded as one message.
func EncodeReplies(version uint8, xid uint32, m Msg) ([][]byte, error) {
	er, ok := m.(entryReply)
	if !ok {
		b, err := Encode(version, xid, m)
		if err != nil {
			return nil, err
		}
		return [][]byte{b}, nil
	}
	r, err := m.raw(version)
	if err != nil {
		return nil, err
	}
	room := maxMsgLen - raws[r].hdrLen(version)
	var out [][]byte
	first, size := 0, 0
	var scratch []byte
	flush := func(last int, more bool) error {
		p := er.part(first, last)
		if more {
			p.(multipart).setFlags(StatsFlagReplyMore)
		}
		b, err := Encode(version, xid, p)
		if err != nil {
			return err
		}
		out = append(out, b)
		return nil
	}
	for i := range er.entries() {
		scratch, err = er.appendEntry(scratch[:0], version, i)
		if err != nil {
			return nil, err
		}
		if len(scratch) > room {
			continue // cannot be sent at all; Open vSwitch drops it too
		}
		if size+len(scratch) > room {
			if err := flush(i, true); err != nil {
				return nil, err
			}
			first, size = i, 0
		}
		size += len(scratch)
	}
	if err := flush(er.entries(), false); err != nil {
		return nil, err
	}
	return out, nil
}

func init() {
	register(decoderFor(func(*DescRequest, *Header, *reader) error { return nil }), rawDescRequest)
	register(decoderFor(func(m *DescReply, _ *Header, r *reader) error {
		m.MfrDesc, m.HWDesc, m.SWDesc, m.SerialNum, m.DPDesc = r.str(256), r.str(256), r.str(256), r.str(32), r.str(256)
		return nil
	}), rawDescReply)
	register(decoderFor(pullFlowStatsRequest), raw10FlowStatsRequest, raw11FlowStatsRequest, rawNXFlowStatsRequest)
	register(decoderFor(func(m *AggregateRequest, h *Header, r *reader) error {
		return pullFlowStatsRequest((*FlowStatsRequest)(m), h, r)
	}), raw10AggregateRequest, raw11AggregateRequest, raw15AggregateRequest, rawNXAggregateRequest)
	register(decoderFor(pullFlowStatsReply), raw10FlowStatsReply, raw11FlowStatsReply, raw13FlowStatsReply, raw15FlowStatsReply, rawNXFlowStatsReply)
	register(decoderFor(pullAggregateReply), rawAggregateReply, raw15AggregateReply, rawNXAggregateReply)
}

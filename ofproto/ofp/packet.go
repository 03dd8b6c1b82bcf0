package ofp

import (
	"encoding/binary"

	"gvs/ofproto/mf"
	"gvs/ofproto/ofperr"
)

// Packet-in formats (NXT_SET_PACKET_IN_FORMAT's values).
const (
	PacketInStandard uint8 = 0 // OFPT_PACKET_IN of the connection's version
	PacketInNXT      uint8 = 1 // NXT_PACKET_IN (nx_match metadata)
	PacketInNXT2     uint8 = 2 // NXT_PACKET_IN2 (properties)
)

// Packet-in reasons (OFPR_*), and Open vSwitch's two internal ones for
// table misses, which encoding maps per version as it does
// (encode_packet_in_reason): a miss the pipeline sends to the controller
// with an explicit flow is "action" from 1.3 on, "no match" before; the
// 1.4 reasons are "action" before 1.4.
const (
	ReasonNoMatch      uint8 = 0
	ReasonAction       uint8 = 1
	ReasonInvalidTTL   uint8 = 2
	ReasonActionSet    uint8 = 3 // 1.4+
	ReasonGroup        uint8 = 4 // 1.4+
	ReasonPacketOut    uint8 = 5 // 1.4+
	ReasonExplicitMiss uint8 = 6 // internal
	ReasonImplicitMiss uint8 = 7 // internal
)

// wireReason is encode_packet_in_reason.
func wireReason(r uint8, v uint8) uint8 {
	switch r {
	case ReasonActionSet, ReasonGroup, ReasonPacketOut:
		if v < Version14 {
			return ReasonAction
		}
	case ReasonExplicitMiss:
		if v < Version13 {
			return ReasonNoMatch
		}
		return ReasonAction
	case ReasonImplicitMiss:
		return ReasonNoMatch
	}
	return r
}

// PacketIn (OFPT_PACKET_IN, NXT_PACKET_IN, NXT_PACKET_IN2 by Format), as
// Open vSwitch's ofputil_packet_in:
//   - Packet: the bytes included; TotalLen: the whole packet's length.
//   - Metadata: the pipeline fields (in_port always; tunnel, metadata,
//     registers... in the OXM/NXM forms).
//   - Cookie is CookieNone when the form has none (1.0-1.2).
//   - Userdata and Continuation (the opaque nested properties a paused
//     translation resumes from, see Continuation) exist in NXT_PACKET_IN2.
type PacketIn struct {
	Format       uint8
	Packet       []byte
	TotalLen     uint32
	BufferID     uint32
	TableID      uint8
	Cookie       uint64
	Reason       uint8
	Metadata     Match
	Userdata     []byte
	Continuation []byte
}

// NXT_PACKET_IN2 property types (NXPINT_*).
const (
	pinPacket       = 0
	pinFullLen      = 1
	pinBufferID     = 2
	pinTableID      = 3
	pinCookie       = 4
	pinReason       = 5
	pinMetadata     = 6
	pinUserdata     = 7
	pinContinuation = 8
)

func (m *PacketIn) raw(v uint8) (Raw, error) {
	switch m.Format {
	case PacketInNXT:
		return rawNXPacketIn, nil
	case PacketInNXT2:
		return rawNXPacketIn2, nil
	}
	return pick(v, raw10PacketIn, raw11PacketIn, raw12PacketIn, raw13PacketIn)
}

func (m *PacketIn) appendBody(b []byte, v uint8) ([]byte, error) {
	switch {
	case m.Format == PacketInNXT2:
		b = m.appendProps(b, v, false)
		if len(m.Userdata) > 0 {
			b = appendProp(b, pinUserdata, m.Userdata, 8)
		}
		return b, nil
	case m.Format == PacketInNXT:
		start := len(b)
		b = put32(b, m.BufferID)
		b = put16(b, uint16(m.TotalLen))
		b = put8(b, wireReason(m.Reason, v))
		b = put8(b, m.TableID)
		b = put64(b, m.Cookie)
		b = put16(b, 0)
		b = pad(b, 6)
		var n int
		b, n = appendNXMatch(b, &m.Metadata, 0, 0, 0)
		binary.BigEndian.PutUint16(b[start+16:], uint16(n))
		b = pad(b, roundUp8(n)-n+2)
	case v == Version10:
		b = put32(b, m.BufferID)
		b = put16(b, uint16(m.TotalLen))
		b = put16(b, uint16(matchInPort(&m.Metadata)))
		b = put8(b, wireReason(m.Reason, v))
		b = pad(b, 1)
	case v == Version11:
		b = put32(b, m.BufferID)
		in := PortTo11(matchInPort(&m.Metadata))
		b = put32(b, in)
		b = put32(b, in)
		b = put16(b, uint16(m.TotalLen))
		b = put8(b, wireReason(m.Reason, v))
		b = put8(b, m.TableID)
	default:
		b = put32(b, m.BufferID)
		b = put16(b, uint16(m.TotalLen))
		b = put8(b, wireReason(m.Reason, v))
		b = put8(b, m.TableID)
		if v >= Version13 {
			b = put64(b, m.Cookie)
		}
		b = appendOXMMatch(b, &m.Metadata, v)
		b = pad(b, 2)
	}
	return append(b, m.Packet...), nil
}

// appendProps appends the properties NXT_PACKET_IN2 and NXT_RESUME share.
func (m *PacketIn) appendProps(b []byte, v uint8, resume bool) []byte {
	b = appendProp(b, pinPacket, m.Packet, 8)
	if int(m.TotalLen) != len(m.Packet) {
		b = appendPropU32(b, pinFullLen, m.TotalLen)
	}
	if m.BufferID != BufferNone {
		b = appendPropU32(b, pinBufferID, m.BufferID)
	}
	b = appendPropU8(b, pinTableID, m.TableID)
	if m.Cookie != CookieNone {
		b = appendPropBE64(b, pinCookie, m.Cookie)
	}
	b = appendPropU8(b, pinReason, wireReason(m.Reason, v))
	start := len(b)
	b = put16(b, pinMetadata)
	b = put16(b, 0)
	b, _ = appendNXMatch(b, &m.Metadata, v, 0, 0)
	setLen16(b, start, 2)
	b = pad8(b, start)
	if len(m.Continuation) > 0 {
		start := len(b)
		b = put16(b, pinContinuation)
		b = put16(b, 0)
		b = pad(b, 4)
		b = append(b, m.Continuation...)
		setLen16(b, start, 2)
		b = pad8(b, start)
	}
	return b
}

func decodePacketIn(h *Header, body []byte) (Msg, error) {
	m := &PacketIn{Cookie: CookieNone}
	v := h.Version
	r := reader{b: body}
	switch h.Raw {
	case raw12PacketIn, raw13PacketIn:
		m.BufferID = r.u32()
		m.TotalLen = uint32(r.u16())
		m.Reason = r.u8()
		m.TableID = r.u8()
		if h.Raw == raw13PacketIn {
			m.Cookie = r.u64()
		}
		if r.err != nil {
			return nil, r.err
		}
		match, rest, err := pullOXMMatchLoose(r.rest(), false)
		if err != nil {
			return nil, err
		}
		if len(rest) < 2 {
			return nil, ofperr.OFPBRC_BAD_LEN
		}
		m.Metadata, m.Packet = match, rest[2:]
	case raw10PacketIn:
		m.BufferID = r.u32()
		m.TotalLen = uint32(r.u16())
		setMatchInPort(&m.Metadata, uint32(r.u16()))
		m.Reason = r.u8()
		r.skip(1)
		m.Packet = r.rest()
	case raw11PacketIn:
		m.BufferID = r.u32()
		in, err := PortFrom11(r.u32())
		if err != nil {
			return nil, err
		}
		setMatchInPort(&m.Metadata, in)
		r.skip(4)
		m.TotalLen = uint32(r.u16())
		m.Reason = r.u8()
		m.TableID = r.u8()
		m.Packet = r.rest()
	case rawNXPacketIn:
		m.Format = PacketInNXT
		m.BufferID = r.u32()
		m.TotalLen = uint32(r.u16())
		m.Reason = r.u8()
		m.TableID = r.u8()
		m.Cookie = r.u64()
		matchLen := int(r.u16())
		r.skip(6)
		if r.err != nil {
			return nil, r.err
		}
		match, rest, err := pullNXMatchLoose(r.rest(), matchLen)
		if err != nil {
			return nil, err
		}
		if len(rest) < 2 {
			return nil, ofperr.OFPBRC_BAD_LEN
		}
		m.Metadata, m.Packet = match, rest[2:]
	case rawNXPacketIn2:
		m.Format = PacketInNXT2
		if err := m.decodeProps(body, v, true); err != nil {
			return nil, err
		}
	}
	return m, r.err
}

// decodeProps decodes NXT_PACKET_IN2 or NXT_RESUME properties.
func (m *PacketIn) decodeProps(body []byte, v uint8, userdata bool) error {
	_ = v
	props, err := pullProps(body, 8)
	if err != nil {
		return err
	}
	m.BufferID = BufferNone
	m.TotalLen = 0
	havePacket := false
	for _, p := range props {
		switch p.Type {
		case pinPacket:
			m.Packet, havePacket = p.Body, true
		case pinFullLen:
			if m.TotalLen, err = propU32(p); err != nil {
				return err
			}
		case pinBufferID:
			if m.BufferID, err = propU32(p); err != nil {
				return err
			}
		case pinTableID, pinReason:
			if len(p.Body) < 1 {
				return ofperr.OFPBPC_BAD_LEN
			}
			if p.Type == pinTableID {
				m.TableID = p.Body[0]
			} else {
				m.Reason = p.Body[0]
			}
		case pinCookie:
			if len(p.Body) != 12 { // padded to 8 before the value
				return ofperr.OFPBPC_BAD_LEN
			}
			m.Cookie = binary.BigEndian.Uint64(p.Body[4:])
		case pinMetadata:
			match, err := decodeMatchEntries(p.Body)
			if err != nil {
				return err
			}
			m.Metadata = match
		case pinUserdata:
			if !userdata {
				return unknownProp(p)
			}
			m.Userdata = p.Body
		case pinContinuation:
			if len(p.Body) < 4 {
				return ofperr.OFPBPC_BAD_LEN
			}
			m.Continuation = p.Body[4:]
		default:
			return unknownProp(p)
		}
	}
	if !havePacket || len(m.Packet) == 0 {
		return ofperr.OFPBRC_BAD_LEN
	}
	if m.TotalLen == 0 {
		m.TotalLen = uint32(len(m.Packet))
	} else if m.TotalLen < uint32(len(m.Packet)) {
		return ofperr.OFPBRC_BAD_LEN
	}
	return nil
}

// Resume (NXT_RESUME) continues a translation paused by a controller
// action with "pause": the packet-in's packet, metadata and continuation,
// as the controller echoes them back (possibly with the packet changed).
type Resume struct {
	PacketIn
}

func (*Resume) raw(uint8) (Raw, error) { return rawNXResume, nil }

func (m *Resume) appendBody(b []byte, v uint8) ([]byte, error) {
	return m.appendProps(b, v, true), nil
}

func decodeResume(h *Header, body []byte) (Msg, error) {
	m := &Resume{PacketIn{Format: PacketInNXT2, Cookie: CookieNone}}
	if err := m.decodeProps(body, h.Version, true); err != nil {
		return nil, err
	}
	return m, nil
}

// PacketOut (OFPT_PACKET_OUT): Metadata holds in_port (and in 1.5 any
// other pipeline fields); Packet is empty when BufferID names a buffered
// packet.
type PacketOut struct {
	BufferID uint32
	Metadata Match
	Actions  []Action
	Packet   []byte
}

func (*PacketOut) raw(v uint8) (Raw, error) {
	return pick(v, raw10PacketOut, raw11PacketOut, raw15PacketOut)
}

func (m *PacketOut) appendBody(b []byte, v uint8) ([]byte, error) {
	start := len(b)
	var lenAt int
	b = put32(b, m.BufferID)
	switch {
	case v == Version10:
		b = put16(b, uint16(matchInPort(&m.Metadata)))
		lenAt = len(b)
		b = put16(b, 0)
	case v <= Version14:
		b = put32(b, PortTo11(matchInPort(&m.Metadata)))
		lenAt = len(b)
		b = put16(b, 0)
		b = pad(b, 6)
	default:
		lenAt = len(b)
		b = put16(b, 0)
		b = pad(b, 2)
		b = appendOXMMatch(b, &m.Metadata, v)
	}
	actsStart := len(b)
	b = appendActions(b, m.Actions, v)
	binary.BigEndian.PutUint16(b[lenAt:], uint16(len(b)-actsStart))
	_ = start
	return append(b, m.Packet...), nil
}

func decodePacketOut(h *Header, body []byte) (Msg, error) {
	m := &PacketOut{}
	r := reader{b: body}
	m.BufferID = r.u32()
	var actsLen int
	switch h.Raw {
	case raw15PacketOut:
		actsLen = int(r.u16())
		r.skip(2)
		if r.err != nil {
			return nil, r.err
		}
		match, rest, err := pullOXMMatchLoose(r.rest(), true)
		if err != nil {
			return nil, err
		}
		if match.Wildcards.Masks.InPort == 0 {
			return nil, ofperr.OFPBRC_BAD_PORT
		}
		m.Metadata = match
		r = reader{b: rest}
	case raw11PacketOut:
		in, err := PortFrom11(r.u32())
		if err != nil {
			return nil, err
		}
		setMatchInPort(&m.Metadata, in)
		actsLen = int(r.u16())
		r.skip(6)
	case raw10PacketOut:
		setMatchInPort(&m.Metadata, uint32(r.u16()))
		actsLen = int(r.u16())
	}
	acts := r.take(actsLen)
	if r.err != nil {
		return nil, r.err
	}
	var err error
	if m.Actions, err = pullActions(acts, h.Version); err != nil {
		return nil, err
	}
	in := matchInPort(&m.Metadata)
	if in >= mf.PortMax && in != mf.PortLocal && in != mf.PortNone && in != mf.PortController {
		return nil, ofperr.OFPBRC_BAD_PORT
	}
	if m.BufferID == BufferNone {
		m.Packet = r.rest()
	}
	return m, nil
}

func init() {
	register(decodePacketIn, raw10PacketIn, raw11PacketIn, raw12PacketIn, raw13PacketIn, rawNXPacketIn, rawNXPacketIn2)
	register(decodeResume, rawNXResume)
	register(decodePacketOut, raw10PacketOut, raw11PacketOut, raw15PacketOut)
}

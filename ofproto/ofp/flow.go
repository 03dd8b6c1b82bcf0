package ofp

import (
	"encoding/binary"

	"gvs/ofproto/mf"
	"gvs/ofproto/ofpact"

	"gvs/ofproto/ofperr"
)

// Flow mod commands (OFPFC_*).
const (
	FlowAdd          uint8 = 0
	FlowModify       uint8 = 1
	FlowModifyStrict uint8 = 2
	FlowDelete       uint8 = 3
	FlowDeleteStrict uint8 = 4
)

// Flow mod flags, version-independent (Open vSwitch's
// ofputil_flow_mod_flags); the codec converts to each version's bits.
const (
	FlowFlagSendFlowRem  uint16 = 1 << 0
	FlowFlagResetCounts  uint16 = 1 << 1
	FlowFlagNoPktCounts  uint16 = 1 << 2
	FlowFlagNoBytCounts  uint16 = 1 << 3
	FlowFlagCheckOverlap uint16 = 1 << 4
	FlowFlagEmerg        uint16 = 1 << 5
)

var flowModFlags = []struct {
	wire, flag uint16
	v1, v2     uint8
}{
	{1, FlowFlagSendFlowRem, Version10, MaxVersion},
	{2, FlowFlagCheckOverlap, Version10, MaxVersion},
	{4, FlowFlagEmerg, Version10, Version10},
	{4, FlowFlagResetCounts, Version12, MaxVersion},
	{8, FlowFlagNoPktCounts, Version13, MaxVersion},
	{16, FlowFlagNoBytCounts, Version13, MaxVersion},
}

func encodeFlowModFlags(flags uint16, v uint8) uint16 {
	var w uint16
	for _, f := range flowModFlags {
		if flags&f.flag != 0 && v >= f.v1 && v <= f.v2 {
			w |= f.wire
		}
	}
	return w
}

func decodeFlowModFlags(w uint16, command uint8, v uint8) (uint16, error) {
	var flags uint16
	for _, f := range flowModFlags {
		if w&f.wire != 0 && v >= f.v1 && v <= f.v2 {
			w &^= f.wire
			flags |= f.flag
		}
	}
	// In 1.0 and 1.1 an add always resets the counters.
	if v <= Version11 && command == FlowAdd {
		flags |= FlowFlagResetCounts
	}
	if w != 0 {
		return flags, ofperr.OFPFMFC_BAD_FLAGS
	}
	return flags, nil
}

// Special numbers.
const (
	TableAll   uint8  = 0xff       // OFPTT_ALL
	GroupAny   uint32 = 0xffffffff // OFPG_ANY
	GroupAll   uint32 = 0xfffffffc // OFPG_ALL
	BufferNone uint32 = 0xffffffff // no buffered packet
	CookieNone uint64 = ^uint64(0)
	NoTimeout  uint16 = 0
)

// FlowMod (OFPT_FLOW_MOD, NXT_FLOW_MOD when NX) in Open vSwitch's
// decoded form (ofputil_flow_mod):
//   - Cookie/CookieMask select flows to modify or delete (1.1+, or the
//     NXM_NX_COOKIE entry of an NXT_FLOW_MOD); NewCookie is the cookie an
//     add (or, in 1.0 and Nicira, a modify) gives, CookieNone if none.
//   - TableID: 1.1+ as sent; in 1.0 and NXT_FLOW_MOD the high byte of the
//     command, which means a table only once NXT_FLOW_MOD_TABLE_ID has
//     enabled it (the connection knows; otherwise treat it as TableAll).
//     Encoding puts TableID there unless it is TableAll.
//   - OutPort in the 16-bit port space (mf.PortNone for any).
//   - Flags version-independent (FlowFlag*); 1.0/1.1 adds get
//     FlowFlagResetCounts, as Open vSwitch decodes them.
//   - Actions: the instructions (1.1+) or actions, as ofpact.Actions.
type FlowMod struct {
	NX          bool
	Match       Match
	Priority    uint16
	Cookie      uint64
	CookieMask  uint64
	NewCookie   uint64
	TableID     uint8
	Command     uint8
	IdleTimeout uint16
	HardTimeout uint16
	Importance  uint16
	BufferID    uint32
	OutPort     uint32
	OutGroup    uint32
	Flags       uint16
	Actions     []Action
}

// ModifyCookie reports whether the flow mod sets flows' cookies.
func (m *FlowMod) ModifyCookie() bool { return m.NewCookie != CookieNone }

func (m *FlowMod) raw(v uint8) (Raw, error) {
	if m.NX {
		return rawNXFlowMod, nil
	}
	return pick(v, raw10FlowMod, raw11FlowMod)
}

func tidCommand(m *FlowMod) uint16 {
	if m.TableID == TableAll {
		return uint16(m.Command)
	}
	return uint16(m.Command) | uint16(m.TableID)<<8
}

func (m *FlowMod) appendBody(b []byte, v uint8) ([]byte, error) {
	flags := encodeFlowModFlags(m.Flags, v)
	switch {
	case m.NX:
		start := len(b)
		b = put64(b, m.NewCookie)
		b = put16(b, tidCommand(m))
		b = put16(b, m.IdleTimeout)
		b = put16(b, m.HardTimeout)
		b = put16(b, m.Priority)
		b = put32(b, m.BufferID)
		b = put16(b, uint16(m.OutPort))
		b = put16(b, flags)
		b = put16(b, 0) // match_len, below
		b = pad(b, 6)
		var n int
		b, n = appendNXMatch(b, &m.Match, 0, m.Cookie, m.CookieMask)
		binary.BigEndian.PutUint16(b[start+24:], uint16(n))
		b = pad(b, roundUp8(n)-n)
		return appendActions(b, m.Actions, v), nil
	case v == Version10:
		b = append10Match(b, &m.Match)
		b = put64(b, m.NewCookie)
		b = put16(b, tidCommand(m))
		b = put16(b, m.IdleTimeout)
		b = put16(b, m.HardTimeout)
		b = put16(b, m.Priority)
		b = put32(b, m.BufferID)
		b = put16(b, uint16(m.OutPort))
		b = put16(b, flags)
		return appendActions(b, m.Actions, v), nil
	}
	cookie := m.Cookie & m.CookieMask
	if m.Command == FlowAdd || v == Version11 && (m.Command == FlowModify || m.Command == FlowModifyStrict) && m.CookieMask == 0 {
		cookie = m.NewCookie
	}
	b = put64(b, cookie)
	b = put64(b, m.CookieMask)
	table := m.TableID
	if table == TableAll && (v == Version11 || m.Command != FlowDelete && m.Command != FlowDeleteStrict) {
		table = 0
	}
	b = put8(b, table)
	b = put8(b, m.Command)
	b = put16(b, m.IdleTimeout)
	b = put16(b, m.HardTimeout)
	b = put16(b, m.Priority)
	b = put32(b, m.BufferID)
	b = put32(b, PortTo11(m.OutPort))
	b = put32(b, m.OutGroup)
	b = put16(b, flags)
	if v >= Version14 && m.Command == FlowAdd {
		b = put16(b, m.Importance)
	} else {
		b = put16(b, 0)
	}
	if v == Version11 {
		b = append11Match(b, &m.Match)
	} else {
		b = appendOXMMatch(b, &m.Match, v)
	}
	return appendInstructions(b, m.Actions, v), nil
}

func decodeFlowMod(h *Header, body []byte) (Msg, error) {
	m := &FlowMod{}
	v := h.Version
	var rawFlags uint16
	var rest []byte
	switch h.Raw {
	case raw11FlowMod:
		r := reader{b: body}
		cookie, cookieMask := r.u64(), r.u64()
		m.TableID = r.u8()
		m.Command = r.u8()
		m.IdleTimeout = r.u16()
		m.HardTimeout = r.u16()
		m.Priority = r.u16()
		m.BufferID = r.u32()
		outPort := r.u32()
		outGroup := r.u32()
		rawFlags = r.u16()
		importance := r.u16()
		match, after, err := pullMatch11(r.rest(), v)
		if err != nil {
			return nil, err
		}
		m.Match, rest = match, after
		if m.Command == FlowAdd || v == Version11 && (m.Command == FlowModify || m.Command == FlowModifyStrict) && cookieMask == 0 {
			m.NewCookie = cookie
		} else {
			m.Cookie, m.CookieMask, m.NewCookie = cookie, cookieMask, CookieNone
		}
		if m.TableID == TableAll && (v == Version11 || m.Command != FlowDelete && m.Command != FlowDeleteStrict) {
			return nil, ofperr.OFPFMFC_BAD_TABLE_ID
		}
		if v >= Version14 && m.Command == FlowAdd {
			m.Importance = importance
		}
		if m.OutPort, err = PortFrom11(outPort); err != nil {
			return nil, err
		}
		m.OutGroup = GroupAny
		if m.Command == FlowDelete || m.Command == FlowDeleteStrict {
			m.OutGroup = outGroup
		}
	case raw10FlowMod, rawNXFlowMod:
		r := reader{b: body}
		var command uint16
		if h.Raw == raw10FlowMod {
			wire := r.take(40)
			match, err := pull10Match(wire)
			if err != nil {
				return nil, err
			}
			m.Match = match
			m.NewCookie = r.u64()
			command = r.u16()
			m.IdleTimeout = r.u16()
			m.HardTimeout = r.u16()
			m.Priority = r.u16()
			// OpenFlow 1.0 gives exact-match flows the highest priority.
			if binary.BigEndian.Uint32(wire)&0x3fffff == 0 {
				m.Priority = 0xffff
			}
			m.BufferID = r.u32()
			m.OutPort = uint32(r.u16())
			rawFlags = r.u16()
			rest = r.rest()
		} else {
			m.NX = true
			m.NewCookie = r.u64()
			command = r.u16()
			m.IdleTimeout = r.u16()
			m.HardTimeout = r.u16()
			m.Priority = r.u16()
			m.BufferID = r.u32()
			m.OutPort = uint32(r.u16())
			rawFlags = r.u16()
			matchLen := int(r.u16())
			r.skip(6)
			if r.err != nil {
				return nil, r.err
			}
			match, cookie, cookieMask, after, err := pullNXMatchCookie(r.rest(), matchLen, true)
			if err != nil {
				return nil, err
			}
			m.Match, m.Cookie, m.CookieMask, rest = match, cookie, cookieMask, after
			if uint8(command) == FlowAdd && m.CookieMask != 0 {
				return nil, ofperr.NXBRC_NXM_INVALID
			}
		}
		m.Command = uint8(command)
		m.TableID = uint8(command >> 8)
		m.OutGroup = GroupAny
	}
	// Conntrack original-direction addresses need the matching IP version.
	wm, fl := &m.Match.Wildcards.Masks, &m.Match.Flow
	if (wm.CTNwSrc != [4]byte{} || wm.CTNwDst != [4]byte{}) && fl.EtherType != 0x0800 ||
		(wm.CTIPv6Src != [16]byte{} || wm.CTIPv6Dst != [16]byte{}) && fl.EtherType != 0x86dd {
		return nil, ofperr.OFPBAC_MATCH_INCONSISTENT
	}
	if m.Command > FlowDeleteStrict {
		return nil, ofperr.OFPFMFC_BAD_COMMAND
	}
	var err error
	if h.Raw == raw11FlowMod {
		m.Actions, err = pullInstructions(rest, v)
	} else {
		m.Actions, err = pullActions(rest, v)
	}
	if err != nil {
		return nil, err
	}
	if m.Flags, err = decodeFlowModFlags(rawFlags, m.Command, v); err != nil {
		return nil, err
	}
	if m.Flags&FlowFlagEmerg != 0 {
		if m.HardTimeout != 0 || m.IdleTimeout != 0 {
			return nil, ofperr.OFPFMFC_BAD_EMERG_TIMEOUT
		}
		return nil, ofperr.OFPFMFC_TABLE_FULL
	}
	// Open vSwitch's decoder checks the actions against the match
	// (ofpacts_check_consistency), which also records in them what
	// chooses their encodings. It does so with the switch's port and
	// table limits; without them here (any port below OFPP_MAX, any
	// table), the switch checks again with its own (ofpact.Check).
	if err := ofpact.CheckVersion(m.Actions, &m.Match, mf.PortMax, m.TableID, 255, v); err != nil {
		return nil, err
	}
	return m, nil
}

// Flow removed reasons (OFPRR_*).
const (
	RemovedIdleTimeout uint8 = 0
	RemovedHardTimeout uint8 = 1
	RemovedDelete      uint8 = 2
	RemovedGroupDelete uint8 = 3
	RemovedMeterDelete uint8 = 4
	RemovedEviction    uint8 = 5
)

// FlowRemoved (OFPT_FLOW_REMOVED, NXT_FLOW_REMOVED when NX).
// TableID is TableAll when the form does not carry it (1.0).
type FlowRemoved struct {
	NX           bool
	Match        Match
	Cookie       uint64
	Priority     uint16
	Reason       uint8
	TableID      uint8
	DurationSec  uint32
	DurationNsec uint32
	IdleTimeout  uint16
	HardTimeout  uint16
	PacketCount  uint64
	ByteCount    uint64
}

func (m *FlowRemoved) raw(v uint8) (Raw, error) {
	if m.NX {
		return rawNXFlowRemoved, nil
	}
	return pick(v, raw10FlowRemoved, raw11FlowRemoved, raw15FlowRemoved)
}

func (m *FlowRemoved) appendBody(b []byte, v uint8) ([]byte, error) {
	reason := m.Reason
	if reason == RemovedMeterDelete && v < Version14 {
		reason = RemovedDelete // as Open vSwitch: the reason is 1.4's
	}
	switch {
	case m.NX:
		start := len(b)
		b = put64(b, m.Cookie)
		b = put16(b, m.Priority)
		b = put8(b, reason)
		b = put8(b, m.TableID+1)
		b = put32(b, m.DurationSec)
		b = put32(b, m.DurationNsec)
		b = put16(b, m.IdleTimeout)
		b = put16(b, 0)
		b = put64(b, m.PacketCount)
		b = put64(b, m.ByteCount)
		var n int
		b, n = appendNXMatch(b, &m.Match, 0, 0, 0)
		binary.BigEndian.PutUint16(b[start+22:], uint16(n))
		return pad(b, roundUp8(n)-n), nil
	case v == Version10:
		b = append10Match(b, &m.Match)
		b = put64(b, m.Cookie)
		b = put16(b, m.Priority)
		b = put8(b, reason)
		b = pad(b, 1)
		b = put32(b, m.DurationSec)
		b = put32(b, m.DurationNsec)
		b = put16(b, m.IdleTimeout)
		b = pad(b, 2)
		b = put64(b, m.PacketCount)
		return put64(b, m.ByteCount), nil
	case v <= Version14:
		b = put64(b, m.Cookie)
		b = put16(b, m.Priority)
		b = put8(b, reason)
		b = put8(b, m.TableID)
		b = put32(b, m.DurationSec)
		b = put32(b, m.DurationNsec)
		b = put16(b, m.IdleTimeout)
		b = put16(b, m.HardTimeout)
		b = put64(b, m.PacketCount)
		b = put64(b, m.ByteCount)
		if v == Version11 {
			return append11Match(b, &m.Match), nil
		}
		return appendOXMMatch(b, &m.Match, v), nil
	}
	b = put8(b, m.TableID)
	b = put8(b, reason)
	b = put16(b, m.Priority)
	b = put16(b, m.IdleTimeout)
	b = put16(b, m.HardTimeout)
	b = put64(b, m.Cookie)
	b = appendOXMMatch(b, &m.Match, v)
	return appendOXS(b, &OXSStats{DurationSec: m.DurationSec, DurationNsec: m.DurationNsec, IdleAge: ^uint32(0),
		PacketCount: m.PacketCount, ByteCount: m.ByteCount, FlowCount: ^uint32(0)}), nil
}

func decodeFlowRemoved(h *Header, body []byte) (Msg, error) {
	r := reader{b: body}
	m := &FlowRemoved{}
	v := h.Version
	switch h.Raw {
	case rawNXFlowRemoved:
		m.NX = true
		m.Cookie = r.u64()
		m.Priority = r.u16()
		m.Reason = r.u8()
		m.TableID = r.u8() - 1 // sent plus one; 0 (unknown) becomes TableAll
		m.DurationSec = r.u32()
		m.DurationNsec = r.u32()
		m.IdleTimeout = r.u16()
		matchLen := int(r.u16())
		m.PacketCount = r.u64()
		m.ByteCount = r.u64()
		if r.err != nil {
			return nil, r.err
		}
		match, _, _, rest, err := pullNXMatchCookie(r.rest(), matchLen, false)
		if err != nil {
			return nil, err
		}
		if len(rest) != 0 {
			return nil, ofperr.OFPBRC_BAD_LEN
		}
		m.Match = match
	case raw10FlowRemoved:
		match, err := pull10Match(r.take(40))
		if err != nil {
			return nil, err
		}
		m.Match = match
		m.Cookie = r.u64()
		m.Priority = r.u16()
		m.Reason = r.u8()
		r.skip(1)
		m.TableID = TableAll
		m.DurationSec = r.u32()
		m.DurationNsec = r.u32()
		m.IdleTimeout = r.u16()
		r.skip(2)
		m.PacketCount = r.u64()
		m.ByteCount = r.u64()
	case raw11FlowRemoved:
		m.Cookie = r.u64()
		m.Priority = r.u16()
		m.Reason = r.u8()
		m.TableID = r.u8()
		m.DurationSec = r.u32()
		m.DurationNsec = r.u32()
		m.IdleTimeout = r.u16()
		m.HardTimeout = r.u16()
		m.PacketCount = r.u64()
		m.ByteCount = r.u64()
		match, rest, err := pullMatch11(r.rest(), v)
		if err != nil {
			return nil, err
		}
		if len(rest) != 0 {
			return nil, ofperr.OFPBRC_BAD_LEN
		}
		m.Match = match
	case raw15FlowRemoved:
		m.TableID = r.u8()
		m.Reason = r.u8()
		m.Priority = r.u16()
		m.IdleTimeout = r.u16()
		m.HardTimeout = r.u16()
		m.Cookie = r.u64()
		match, rest, err := pullOXMMatch(r.rest())
		if err != nil {
			return nil, err
		}
		m.Match = match
		st, rest, err := pullOXS(rest)
		if err != nil {
			return nil, err
		}
		if len(rest) != 0 {
			return nil, ofperr.OFPBRC_BAD_LEN
		}
		m.DurationSec, m.DurationNsec = st.DurationSec, st.DurationNsec
		m.PacketCount, m.ByteCount = st.PacketCount, st.ByteCount
	}
	return m, r.err
}

// OXSStats are OpenFlow 1.5 flow statistics (ofp_oxs_stat); all-ones
// fields are absent.
type OXSStats struct {
	DurationSec, DurationNsec uint32
	IdleAge                   uint32
	FlowCount                 uint32
	PacketCount, ByteCount    uint64
}

// OXS fields (class OFPXSC_OPENFLOW_BASIC 0x8002).
const (
	oxsDuration    = 0
	oxsIdleTime    = 1
	oxsFlowCount   = 3
	oxsPacketCount = 4
	oxsByteCount   = 5
)

func oxsHeader(field, length int) uint32 { return 0x8002<<16 | uint32(field)<<9 | uint32(length) }

func appendOXS(b []byte, s *OXSStats) []byte {
	start := len(b)
	b = put32(b, 0)
	if s.DurationSec != ^uint32(0) {
		b = put32(b, oxsHeader(oxsDuration, 8))
		b = put32(b, s.DurationSec)
		b = put32(b, s.DurationNsec)
	}
	if s.IdleAge != ^uint32(0) {
		b = put32(b, oxsHeader(oxsIdleTime, 8))
		b = put32(b, s.IdleAge)
		b = put32(b, 0)
	}
	if s.PacketCount != ^uint64(0) {
		b = put32(b, oxsHeader(oxsPacketCount, 8))
		b = put64(b, s.PacketCount)
	}
	if s.ByteCount != ^uint64(0) {
		b = put32(b, oxsHeader(oxsByteCount, 8))
		b = put64(b, s.ByteCount)
	}
	if s.FlowCount != ^uint32(0) {
		b = put32(b, oxsHeader(oxsFlowCount, 4))
		b = put32(b, s.FlowCount)
	}
	setLen16(b, start, 2)
	return pad8(b, start)
}

func pullOXS(b []byte) (OXSStats, []byte, error) {
	s := OXSStats{^uint32(0), ^uint32(0), ^uint32(0), ^uint32(0), ^uint64(0), ^uint64(0)}
	if len(b) < 4 {
		return s, b, ofperr.OFPBMC_BAD_LEN
	}
	n := int(binary.BigEndian.Uint16(b[2:]))
	if n < 4 || roundUp8(n) > len(b) {
		return s, b, ofperr.OFPBMC_BAD_LEN
	}
	r := reader{b: b[4:n]}
	for r.len() > 0 && r.err == nil {
		h := r.u32()
		length := int(h & 0xff)
		if h>>16 != 0x8002 {
			r.skip(length) // other classes are ignored, as Open vSwitch does
			continue
		}
		switch field := int(h>>9) & 0x7f; {
		case field == oxsDuration && length == 8:
			s.DurationSec, s.DurationNsec = r.u32(), r.u32()
		case field == oxsIdleTime && length == 8:
			s.IdleAge = r.u32()
			r.skip(4)
		case field == oxsPacketCount && length == 8:
			s.PacketCount = r.u64()
		case field == oxsByteCount && length == 8:
			s.ByteCount = r.u64()
		case field == oxsFlowCount && length == 4:
			s.FlowCount = r.u32()
		default:
			r.skip(length)
		}
	}
	if r.err != nil {
		return s, b, ofperr.OFPBMC_BAD_LEN
	}
	return s, b[roundUp8(n):], nil
}

func init() {
	register(decodeFlowMod, raw10FlowMod, raw11FlowMod, rawNXFlowMod)
	register(decodeFlowRemoved, raw10FlowRemoved, raw11FlowRemoved, raw15FlowRemoved, rawNXFlowRemoved)
}

package ofp

import (
	"errors"
	"math/bits"

	"gvs/ofproto/ofperr"
)

// Hello (OFPT_HELLO) offers the versions its sender speaks: Versions has
// bit v set for each version v. Decoding without a version bitmap element
// gives every version from 1.0 to the header's; BadElements records
// elements Open vSwitch would complain about (it negotiates anyway).
//
// Elements keeps the hello elements as received; encoding sends them
// verbatim when set, otherwise the bitmap Open vSwitch would send.
type Hello struct {
	Versions    uint32
	BadElements bool
	Elements    []byte
}

// VersionBitmap returns the bitmap of versions lo..hi.
func VersionBitmap(lo, hi uint8) uint32 {
	var m uint32
	for v := lo; v <= hi && v < 32; v++ {
		m |= 1 << v
	}
	return m
}

// HighestVersion is the highest version in bitmap m (0 if none).
func HighestVersion(m uint32) uint8 {
	if m == 0 {
		return 0
	}
	return uint8(31 - bits.LeadingZeros32(m))
}

func (*Hello) raw(uint8) (Raw, error) { return rawHello, nil }

func (m *Hello) appendBody(b []byte, v uint8) ([]byte, error) {
	if m.Elements != nil {
		return append(b, m.Elements...), nil
	}
	// Open vSwitch sends the bitmap only when the versions are not simply
	// 1.0 up to the highest (ofputil_encode_hello).
	if m.Versions != 0 && (m.Versions>>1+1)&(m.Versions>>1) != 0 {
		b = put16(b, 1) // OFPHET_VERSIONBITMAP
		b = put16(b, 8)
		b = put32(b, m.Versions)
	}
	return b, nil
}

func decodeHello(h *Header, body []byte) (Msg, error) {
	m := &Hello{Versions: VersionBitmap(1, h.Version)}
	if len(body) > 0 {
		m.Elements = body
	}
	for len(body) > 0 {
		if len(body) < 4 {
			m.BadElements = true
			break
		}
		typ := uint16(body[0])<<8 | uint16(body[1])
		n := int(body[2])<<8 | int(body[3])
		if n < 4 || roundUp8(n) > len(body) {
			m.BadElements = true
			break
		}
		if typ == 1 {
			bm := body[4:n]
			if len(bm) == 0 || len(bm)%4 != 0 {
				m.BadElements = true
			} else if v := (uint32(bm[0])<<24 | uint32(bm[1])<<16 | uint32(bm[2])<<8 | uint32(bm[3])) &^ 1; v == 0 {
				m.BadElements = true
			} else {
				m.Versions = v
			}
		}
		body = body[roundUp8(n):]
	}
	return m, nil
}

// Error (OFPT_ERROR). Err is the error; when the sender used an encoding
// no ofperr.Error has, Err is 0 and Unknown says what it was. Data is the
// offending request (as much as fits) or, for OFPET_HELLO_FAILED, text.
type Error struct {
	Err     ofperr.Error
	Unknown *ofperr.WireError
	Data    []byte
}

// NewErrorReply is the error Open vSwitch sends for a failed request: the
// request echoed (as much as fits in one message). err that is not an
// ofperr.Error is sent as NXBRC_UNENCODABLE_ERROR... unless it wraps one.
func NewErrorReply(err error, request []byte) *Error {
	var e ofperr.Error
	if !errors.As(err, &e) {
		e = ofperr.NXBRC_UNENCODABLE_ERROR
	}
	return &Error{Err: e, Data: request}
}

func (*Error) raw(uint8) (Raw, error) { return rawError, nil }

func (m *Error) appendBody(b []byte, v uint8) ([]byte, error) {
	start := len(b) - 8
	if m.Err == 0 && m.Unknown != nil {
		u := m.Unknown
		switch {
		case u.Vendor == 0:
			b = put16(b, u.Type)
			b = put16(b, u.Code)
		case v <= Version11:
			b = put16(b, ofperr.TypeNXVendor)
			b = put16(b, ofperr.CodeNXVendorError)
			b = put32(b, u.Vendor)
			b = put16(b, u.Type)
			b = put16(b, u.Code)
		default:
			b = put16(b, ofperr.TypeExperimenter)
			b = put16(b, u.Type)
			b = put32(b, u.Vendor)
		}
	} else {
		b = m.Err.AppendWire(b, v)
	}
	data := m.Data
	if room := maxMsgLen - (len(b) - start); len(data) > room {
		data = data[:room]
	}
	return append(b, data...), nil
}

func decodeError(h *Header, body []byte) (Msg, error) {
	e, data, err := ofperr.ParseWire(h.Version, body)
	var we *ofperr.WireError
	switch {
	case errors.As(err, &we):
		return &Error{Unknown: we, Data: data}, nil
	case err != nil:
		return nil, err
	}
	return &Error{Err: e, Data: data}, nil
}

// EchoRequest and EchoReply (OFPT_ECHO_*) carry arbitrary data.
type EchoRequest struct{ Data []byte }
type EchoReply struct{ Data []byte }

func (*EchoRequest) raw(uint8) (Raw, error) { return rawEchoRequest, nil }
func (*EchoReply) raw(uint8) (Raw, error)   { return rawEchoReply, nil }
func (m *EchoRequest) appendBody(b []byte, _ uint8) ([]byte, error) {
	return append(b, m.Data...), nil
}
func (m *EchoReply) appendBody(b []byte, _ uint8) ([]byte, error) {
	return append(b, m.Data...), nil
}

// Messages without a body.
type (
	FeaturesRequest    struct{}
	GetConfigRequest   struct{}
	BarrierRequest     struct{}
	BarrierReply       struct{}
	GetAsyncRequest    struct{}
	TLVTableRequest    struct{}
	FlowAge            struct{} // NXT_FLOW_AGE
	FlowMonitorPaused  struct{} // NXT/ONFT_FLOW_MONITOR_PAUSED
	FlowMonitorResumed struct{}
)

func (*FeaturesRequest) raw(uint8) (Raw, error)  { return rawFeaturesRequest, nil }
func (*GetConfigRequest) raw(uint8) (Raw, error) { return rawGetConfigRequest, nil }
func (*BarrierRequest) raw(v uint8) (Raw, error) {
	return pick(v, raw10BarrierRequest, raw11BarrierRequest)
}
func (*BarrierReply) raw(v uint8) (Raw, error) { return pick(v, raw10BarrierReply, raw11BarrierReply) }
func (*GetAsyncRequest) raw(v uint8) (Raw, error) {
	return pick(v, raw13GetAsyncRequest, raw14GetAsyncRequest)
}
func (*TLVTableRequest) raw(uint8) (Raw, error) { return rawNXTLVTableRequest, nil }
func (*FlowAge) raw(uint8) (Raw, error)         { return rawNXFlowAge, nil }
func (*FlowMonitorPaused) raw(v uint8) (Raw, error) {
	return pick(v, rawNXFlowMonitorPaused, rawONF13FlowMonitorPaused)
}
func (*FlowMonitorResumed) raw(v uint8) (Raw, error) {
	return pick(v, rawNXFlowMonitorResumed, rawONF13FlowMonitorResumed)
}

func (*FeaturesRequest) appendBody(b []byte, _ uint8) ([]byte, error)    { return b, nil }
func (*GetConfigRequest) appendBody(b []byte, _ uint8) ([]byte, error)   { return b, nil }
func (*BarrierRequest) appendBody(b []byte, _ uint8) ([]byte, error)     { return b, nil }
func (*BarrierReply) appendBody(b []byte, _ uint8) ([]byte, error)       { return b, nil }
func (*GetAsyncRequest) appendBody(b []byte, _ uint8) ([]byte, error)    { return b, nil }
func (*TLVTableRequest) appendBody(b []byte, _ uint8) ([]byte, error)    { return b, nil }
func (*FlowAge) appendBody(b []byte, _ uint8) ([]byte, error)            { return b, nil }
func (*FlowMonitorPaused) appendBody(b []byte, _ uint8) ([]byte, error)  { return b, nil }
func (*FlowMonitorResumed) appendBody(b []byte, _ uint8) ([]byte, error) { return b, nil }

// Switch capabilities, version-independent (Open vSwitch's OFPUTIL_C_*):
// the codec maps them to each version's bits and drops those a version
// lacks.
const (
	CapFlowStats      uint32 = 1 << 0
	CapTableStats     uint32 = 1 << 1
	CapPortStats      uint32 = 1 << 2
	CapSTP            uint32 = 1 << 3 // 1.0
	CapGroupStats     uint32 = 1 << 4 // 1.1+
	CapIPReasm        uint32 = 1 << 5
	CapQueueStats     uint32 = 1 << 6
	CapARPMatchIP     uint32 = 1 << 7 // 1.0, 1.1
	CapPortBlocked    uint32 = 1 << 8 // 1.2+
	CapBundles        uint32 = 1 << 9 // 1.4+
	CapFlowMonitoring uint32 = 1 << 10

	capCommon = CapFlowStats | CapTableStats | CapPortStats | CapIPReasm | CapQueueStats
	wireCap3  = 1 << 3 // OFPC10_STP, OFPC11_GROUP_STATS
)

// capabilitiesMask is ofputil_capabilities_mask: the bits that mean the
// same on the wire as in Cap*.
func capabilitiesMask(v uint8) uint32 {
	switch {
	case v <= Version11:
		return capCommon | CapARPMatchIP
	case v <= Version13:
		return capCommon | CapPortBlocked
	}
	return capCommon | CapPortBlocked | CapBundles | CapFlowMonitoring
}

// FeaturesReply (OFPT_FEATURES_REPLY). Capabilities are Cap* bits.
// Actions is OpenFlow 1.0's supported-actions bitmap, as sent. Ports are
// sent in 1.0-1.2 only (later versions use a PORT_DESC request);
// AuxiliaryID in 1.3+.
type FeaturesReply struct {
	DatapathID   uint64
	NBuffers     uint32
	NTables      uint8
	AuxiliaryID  uint8
	Capabilities uint32
	Actions      uint32
	Ports        []Port
}

func (*FeaturesReply) raw(v uint8) (Raw, error) {
	return pick(v, raw10FeaturesReply, raw11FeaturesReply, raw13FeaturesReply)
}

func (m *FeaturesReply) appendBody(b []byte, v uint8) ([]byte, error) {
	b = put64(b, m.DatapathID)
	b = put32(b, m.NBuffers)
	b = put8(b, m.NTables)
	aux, actions := m.AuxiliaryID, uint32(0)
	caps := m.Capabilities & capabilitiesMask(v)
	switch {
	case v == Version10:
		aux, actions = 0, m.Actions
		if m.Capabilities&CapSTP != 0 {
			caps |= wireCap3
		}
	case m.Capabilities&CapGroupStats != 0:
		caps |= wireCap3
	}
	if v < Version13 {
		aux = 0
	}
	b = put8(b, aux)
	b = pad(b, 2)
	b = put32(b, caps)
	b = put32(b, actions)
	if v <= Version12 {
		for i := range m.Ports {
			b = appendPort(b, &m.Ports[i], v)
		}
	}
	return b, nil
}

func decodeFeaturesReply(h *Header, body []byte) (Msg, error) {
	r := reader{b: body}
	m := &FeaturesReply{DatapathID: r.u64(), NBuffers: r.u32(), NTables: r.u8(), AuxiliaryID: r.u8()}
	r.skip(2)
	caps := r.u32()
	m.Capabilities = caps & capabilitiesMask(h.Version)
	actions := r.u32()
	switch {
	case h.Version == Version10:
		m.Actions, m.AuxiliaryID = actions, 0
		if caps&wireCap3 != 0 {
			m.Capabilities |= CapSTP
		}
	default:
		if caps&wireCap3 != 0 {
			m.Capabilities |= CapGroupStats
		}
		if h.Version < Version13 {
			m.AuxiliaryID = 0
		}
	}
	ports, err := pullPorts(&r, h.Version)
	if err != nil {
		return nil, err
	}
	m.Ports = ports
	return m, r.err
}

// Switch configuration flags (ofp_switch_config.flags).
const (
	FragNormal  uint16 = 0
	FragDrop    uint16 = 1
	FragReasm   uint16 = 2
	FragNxMatch uint16 = 3 // Open vSwitch's "nx-match" fragment handling
	FragMask    uint16 = 3
	// OFPC_INVALID_TTL_TO_CONTROLLER (OpenFlow 1.1 and 1.2).
	ConfigInvalidTTLToController uint16 = 4
)

// SwitchConfig is the body of GET_CONFIG_REPLY and SET_CONFIG.
type SwitchConfig struct {
	Flags       uint16
	MissSendLen uint16
}

type (
	GetConfigReply struct{ SwitchConfig }
	SetConfig      struct{ SwitchConfig }
)

func (*GetConfigReply) raw(uint8) (Raw, error) { return rawGetConfigReply, nil }
func (*SetConfig) raw(uint8) (Raw, error)      { return rawSetConfig, nil }
func (c *SwitchConfig) appendBody(b []byte, _ uint8) ([]byte, error) {
	return put16(put16(b, c.Flags), c.MissSendLen), nil
}

func pullSwitchConfig(body []byte) SwitchConfig {
	r := reader{b: body}
	return SwitchConfig{Flags: r.u16(), MissSendLen: r.u16()}
}

// Controller roles, OpenFlow 1.2's numbering (OFPCR12_ROLE_*); Nicira's
// NXT_ROLE_* (other, master, slave) are these minus one.
const (
	RoleNoChange  uint32 = 0
	RoleEqual     uint32 = 1
	RolePrimary   uint32 = 2
	RoleSecondary uint32 = 3
)

// RoleRequest and RoleReply (OFPT12_ROLE_*, or NXT_ROLE_* when NX).
// GenerationID is not sent in the Nicira form.
type RoleRequest struct {
	NX           bool
	Role         uint32
	GenerationID uint64
}
type RoleReply RoleRequest

// HasGenerationID reports whether the request carries a generation id
// that matters: an OpenFlow 1.2+ request for the primary or secondary
// role (Open vSwitch's have_generation_id).
func (m *RoleRequest) HasGenerationID() bool {
	return !m.NX && (m.Role == RolePrimary || m.Role == RoleSecondary)
}

func (m *RoleRequest) raw(v uint8) (Raw, error) {
	if m.NX {
		return rawNXRoleRequest, nil
	}
	return pick(v, raw12RoleRequest)
}

func (m *RoleReply) raw(v uint8) (Raw, error) {
	if m.NX {
		return rawNXRoleReply, nil
	}
	return pick(v, raw12RoleReply)
}

func (m *RoleRequest) appendBody(b []byte, _ uint8) ([]byte, error) {
	if m.NX {
		if m.Role == RoleNoChange || m.Role > RoleSecondary {
			return b, ofperr.OFPRRFC_BAD_ROLE
		}
		return put32(b, m.Role-1), nil
	}
	b = put32(b, m.Role)
	b = pad(b, 4)
	return put64(b, m.GenerationID), nil
}

func (m *RoleReply) appendBody(b []byte, v uint8) ([]byte, error) {
	return (*RoleRequest)(m).appendBody(b, v)
}

func decodeRole(h *Header, body []byte) (Msg, error) {
	r := reader{b: body}
	var m RoleRequest
	switch h.Raw {
	case rawNXRoleRequest, rawNXRoleReply:
		m.NX = true
		role := r.u32()
		if role > 2 {
			return nil, ofperr.OFPRRFC_BAD_ROLE
		}
		m.Role = role + 1
	default:
		m.Role = r.u32()
		r.skip(4)
		m.GenerationID = r.u64()
		if m.Role > RoleSecondary {
			return nil, ofperr.OFPRRFC_BAD_ROLE
		}
	}
	if h.Raw == raw12RoleReply || h.Raw == rawNXRoleReply {
		rr := RoleReply(m)
		return &rr, nil
	}
	return &m, nil
}

// Role status reasons (OFPCRR_*).
const (
	RoleReasonPrimaryRequest uint8 = 0
	RoleReasonConfig         uint8 = 1
	RoleReasonExperimenter   uint8 = 2
)

// RoleStatus (OFPT14_ROLE_STATUS, ONFT13_ROLE_STATUS in 1.3) tells a
// controller its role changed.
type RoleStatus struct {
	Role         uint32
	Reason       uint8
	GenerationID uint64
	Props        []Prop
}

func (*RoleStatus) raw(v uint8) (Raw, error) {
	return pick(v, rawONF13RoleStatus, raw14RoleStatus)
}

func (m *RoleStatus) appendBody(b []byte, _ uint8) ([]byte, error) {
	b = put32(b, m.Role)
	b = put8(b, m.Reason)
	b = pad(b, 3)
	b = put64(b, m.GenerationID)
	return appendProps(b, m.Props), nil
}

func decodeRoleStatus(h *Header, body []byte) (Msg, error) {
	r := reader{b: body}
	m := &RoleStatus{Role: r.u32(), Reason: r.u8()}
	r.skip(3)
	m.GenerationID = r.u64()
	if m.Role != RolePrimary && m.Role != RoleSecondary && m.Role != RoleEqual {
		return nil, ofperr.OFPRRFC_BAD_ROLE
	}
	props, err := pullProps(r.rest(), 8)
	if err != nil {
		return nil, err
	}
	m.Props = props
	return m, r.err
}

func init() {
	register(decodeHello, rawHello)
	register(decodeError, rawError)
	register(func(_ *Header, b []byte) (Msg, error) { return &EchoRequest{Data: b}, nil }, rawEchoRequest)
	register(func(_ *Header, b []byte) (Msg, error) { return &EchoReply{Data: b}, nil }, rawEchoReply)
	register(func(*Header, []byte) (Msg, error) { return &FeaturesRequest{}, nil }, rawFeaturesRequest)
	register(func(*Header, []byte) (Msg, error) { return &GetConfigRequest{}, nil }, rawGetConfigRequest)
	register(func(*Header, []byte) (Msg, error) { return &BarrierRequest{}, nil }, raw10BarrierRequest, raw11BarrierRequest)
	register(func(*Header, []byte) (Msg, error) { return &BarrierReply{}, nil }, raw10BarrierReply, raw11BarrierReply)
	register(func(*Header, []byte) (Msg, error) { return &GetAsyncRequest{}, nil }, raw13GetAsyncRequest, raw14GetAsyncRequest)
	register(func(*Header, []byte) (Msg, error) { return &TLVTableRequest{}, nil }, rawNXTLVTableRequest)
	register(func(*Header, []byte) (Msg, error) { return &FlowAge{}, nil }, rawNXFlowAge)
	register(func(*Header, []byte) (Msg, error) { return &FlowMonitorPaused{}, nil }, rawNXFlowMonitorPaused, rawONF13FlowMonitorPaused)
	register(func(*Header, []byte) (Msg, error) { return &FlowMonitorResumed{}, nil }, rawNXFlowMonitorResumed, rawONF13FlowMonitorResumed)
	register(decodeFeaturesReply, raw10FeaturesReply, raw11FeaturesReply, raw13FeaturesReply)
	register(func(_ *Header, b []byte) (Msg, error) { return &GetConfigReply{pullSwitchConfig(b)}, nil }, rawGetConfigReply)
	register(func(_ *Header, b []byte) (Msg, error) { return &SetConfig{pullSwitchConfig(b)}, nil }, rawSetConfig)
	register(decodeRole, raw12RoleRequest, rawNXRoleRequest, raw12RoleReply, rawNXRoleReply)
	register(decodeRoleStatus, rawONF13RoleStatus, raw14RoleStatus)
}

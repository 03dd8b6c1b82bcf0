package ofp

import (
	"encoding/binary"

	"gvs/ofproto/ofperr"
)

// TableMod (OFPT_TABLE_MOD). Config is the wire config (1.1-1.2 miss
// behaviour, 1.4+ OFPTC14_EVICTION 4 / OFPTC14_VACANCY_EVENTS 8). The
// 1.4+ properties: eviction flags and vacancy thresholds, when Has*.
type TableMod struct {
	TableID          uint8
	Config           uint32
	HasEvictionFlags bool
	EvictionFlags    uint32
	HasVacancy       bool
	VacancyDown      uint8
	VacancyUp        uint8
	// Version is the version the message came in (decoding only): the
	// meaning of Config depends on it.
	Version uint8
}

const (
	tableModPropEviction = 2
	tableModPropVacancy  = 3
)

func (*TableMod) raw(v uint8) (Raw, error) { return pick(v, raw11TableMod, raw14TableMod) }

func (m *TableMod) appendBody(b []byte, v uint8) ([]byte, error) {
	b = put8(b, m.TableID)
	b = pad(b, 3)
	b = put32(b, m.Config)
	if v >= Version14 {
		if m.HasEvictionFlags {
			b = appendProp(b, tableModPropEviction, u32Body(m.EvictionFlags), 8)
		}
		if m.HasVacancy {
			b = appendProp(b, tableModPropVacancy, []byte{m.VacancyDown, m.VacancyUp, 0, 0}, 8)
		}
	}
	return b, nil
}

func decodeTableMod(h *Header, body []byte) (Msg, error) {
	r := reader{b: body}
	m := &TableMod{TableID: r.u8(), Version: h.Version}
	r.skip(3)
	m.Config = r.u32()
	if h.Raw == raw14TableMod {
		props, err := pullProps(r.rest(), 8)
		if err != nil {
			return nil, err
		}
		for _, p := range props {
			switch p.Type {
			case tableModPropEviction:
				if m.EvictionFlags, err = propU32(p); err != nil {
					return nil, err
				}
				m.HasEvictionFlags = true
			case tableModPropVacancy:
				if len(p.Body) != 4 {
					return nil, ofperr.OFPBPC_BAD_LEN
				}
				m.HasVacancy, m.VacancyDown, m.VacancyUp = true, p.Body[0], p.Body[1]
				if m.VacancyDown > m.VacancyUp || m.VacancyUp > 100 {
					return nil, ofperr.OFPBPC_BAD_VALUE
				}
			default:
				return nil, unknownProp(p)
			}
		}
	}
	return m, r.err
}

// Asynchronous message types (Open vSwitch's OAM_*), the index into
// AsyncConfig's masks.
const (
	AsyncPacketIn = iota
	AsyncPortStatus
	AsyncFlowRemoved
	AsyncRoleStatus
	AsyncTableStatus
	AsyncRequestForward
	NumAsyncTypes
)

// AsyncConfig says which reasons of each asynchronous message a
// connection in the primary (or equal) and in the secondary role gets:
// bit r of Primary[AsyncPacketIn] enables packet-ins of reason r, etc.
type AsyncConfig struct {
	Primary   [NumAsyncTypes]uint32
	Secondary [NumAsyncTypes]uint32
}

// asyncAllowed are the reasons each type may enable (1.0-1.3, 1.4+).
var asyncAllowed = [NumAsyncTypes][2]uint32{
	AsyncPacketIn:       {0x07, 0x3f},
	AsyncPortStatus:     {0x07, 0x07},
	AsyncFlowRemoved:    {0x3f, 0x3f},
	AsyncRoleStatus:     {0x07, 0x07},
	AsyncTableStatus:    {0x18, 0x18},
	AsyncRequestForward: {0x03, 0x03},
}

func allowedAsync(typ int, v uint8) uint32 {
	if v >= Version14 {
		return asyncAllowed[typ][1]
	}
	return asyncAllowed[typ][0]
}

// SetAsync is OFPT13_SET_ASYNC, OFPT14_SET_ASYNC, NXT_SET_ASYNC_CONFIG and
// NXT_SET_ASYNC_CONFIG2, and GetAsyncReply the OFPT13/14_GET_ASYNC_REPLY
// with the same body. The legacy forms (1.3, NXT_SET_ASYNC_CONFIG) carry
// packet-in, port-status and flow-removed masks; the property forms
// carry any subset of types: Set has bit (2*type + 1 for primary, 2*type
// for secondary) per property present (Open vSwitch's property type).
type SetAsync struct {
	NX     bool
	Config AsyncConfig
	Set    uint32
	// props records that a decoded message used the property form.
	props bool
}
type GetAsyncReply SetAsync

const asyncLegacySet = 1<<(2*AsyncFlowRemoved+2) - 1

func (m *SetAsync) raw(v uint8) (Raw, error) {
	switch {
	case v >= Version14:
		return raw14SetAsync, nil
	case m.NX && m.Set&^asyncLegacySet != 0:
		return rawNXSetAsyncConfig2, nil
	case m.NX || v < Version13:
		return rawNXSetAsyncConfig, nil
	}
	return raw13SetAsync, nil
}

func (m *GetAsyncReply) raw(v uint8) (Raw, error) {
	return pick(v, raw13GetAsyncReply, raw14GetAsyncReply)
}

func appendAsync(b []byte, c *AsyncConfig, set uint32, props bool, v uint8) []byte {
	if !props {
		for typ := AsyncPacketIn; typ <= AsyncFlowRemoved; typ++ {
			b = put32(b, c.Primary[typ]&allowedAsync(typ, v))
			b = put32(b, c.Secondary[typ]&allowedAsync(typ, v))
		}
		return b
	}
	for pt := 0; pt < 2*NumAsyncTypes; pt++ {
		if set&(1<<pt) == 0 {
			continue
		}
		typ := pt / 2
		mask := c.Secondary[typ]
		if pt%2 == 1 {
			mask = c.Primary[typ]
		}
		b = appendProp(b, uint16(pt), u32Body(mask&allowedAsync(typ, v)), 8)
	}
	return b
}

func (m *SetAsync) appendBody(b []byte, v uint8) ([]byte, error) {
	r, _ := m.raw(v)
	return appendAsync(b, &m.Config, m.Set, r == raw14SetAsync || r == rawNXSetAsyncConfig2, v), nil
}

func (m *GetAsyncReply) appendBody(b []byte, v uint8) ([]byte, error) {
	set := m.Set
	if set == 0 {
		set = 1<<(2*NumAsyncTypes) - 1
	}
	return appendAsync(b, &m.Config, set, v >= Version14, v), nil
}

func decodeAsync(h *Header, body []byte) (Msg, error) {
	m := &SetAsync{NX: h.Raw == rawNXSetAsyncConfig || h.Raw == rawNXSetAsyncConfig2}
	switch h.Raw {
	case raw13SetAsync, rawNXSetAsyncConfig, raw13GetAsyncReply:
		r := reader{b: body}
		for typ := AsyncPacketIn; typ <= AsyncFlowRemoved; typ++ {
			m.Config.Primary[typ] = r.u32()
			m.Config.Secondary[typ] = r.u32()
		}
		m.Set = asyncLegacySet
	default:
		m.props = true
		props, err := pullProps(body, 8)
		if err != nil {
			return nil, err
		}
		for _, p := range props {
			if p.Type >= 2*NumAsyncTypes {
				return nil, ofperr.OFPACFC_UNSUPPORTED
			}
			mask, err := propU32(p)
			if err != nil {
				return nil, err
			}
			typ := int(p.Type) / 2
			if p.Type%2 == 1 {
				m.Config.Primary[typ] = mask
			} else {
				m.Config.Secondary[typ] = mask
			}
			m.Set |= 1 << p.Type
		}
	}
	if h.Raw == raw13GetAsyncReply || h.Raw == raw14GetAsyncReply {
		r := GetAsyncReply(*m)
		return &r, nil
	}
	// A switch decodes a set-async strictly (Open vSwitch's loose=false):
	// reasons the version does not define are OFPACFC_INVALID.
	if _, err := m.Apply(AsyncConfig{}, h.Version, false); err != nil {
		return nil, err
	}
	return m, nil
}

// Apply is Open vSwitch's ofputil_decode_set_async_config for the
// decoded message: the legacy forms replace the whole configuration, the
// property forms change only the properties present, starting from basis.
// A property with reasons the version does not define is OFPACFC_INVALID
// unless loose; the legacy forms, and loose, drop the extra bits.
func (m *SetAsync) Apply(basis AsyncConfig, version uint8, loose bool) (AsyncConfig, error) {
	out := basis
	if !m.props {
		out, loose = AsyncConfig{}, true
	}
	for pt := 0; pt < 2*NumAsyncTypes; pt++ {
		if m.Set&(1<<pt) == 0 {
			continue
		}
		typ := pt / 2
		arr, mask := &out.Secondary, m.Config.Secondary[typ]
		if pt%2 == 1 {
			arr, mask = &out.Primary, m.Config.Primary[typ]
		}
		if allowed := allowedAsync(typ, version); mask&^allowed != 0 {
			if !loose {
				return basis, ofperr.OFPACFC_INVALID
			}
			mask &= allowed
		}
		arr[typ] = mask
	}
	return out, nil
}

// Nicira flow formats (NXFF_*) for NXT_SET_FLOW_FORMAT.
const (
	FlowFormatOpenFlow10 uint32 = 0
	FlowFormatNXM        uint32 = 2
)

// SetFlowFormat (NXT_SET_FLOW_FORMAT, OpenFlow 1.0 only).
type SetFlowFormat struct{ Format uint32 }

func (*SetFlowFormat) raw(v uint8) (Raw, error) { return pick(v, rawNXSetFlowFormat) }
func (m *SetFlowFormat) appendBody(b []byte, _ uint8) ([]byte, error) {
	return put32(b, m.Format), nil
}

// FlowModTableID (NXT_FLOW_MOD_TABLE_ID) turns on (Set) the table id in
// the high byte of 1.0 and Nicira flow mod commands.
type FlowModTableID struct{ Set bool }

func (*FlowModTableID) raw(uint8) (Raw, error) { return rawNXFlowModTableID, nil }
func (m *FlowModTableID) appendBody(b []byte, _ uint8) ([]byte, error) {
	var s uint8
	if m.Set {
		s = 1
	}
	return pad(put8(b, s), 7), nil
}

// SetPacketInFormat (NXT_SET_PACKET_IN_FORMAT): PacketInStandard,
// PacketInNXT or PacketInNXT2.
type SetPacketInFormat struct{ Format uint32 }

func (*SetPacketInFormat) raw(uint8) (Raw, error) { return rawNXSetPacketInFormat, nil }
func (m *SetPacketInFormat) appendBody(b []byte, _ uint8) ([]byte, error) {
	return put32(b, m.Format), nil
}

// SetControllerID (NXT_SET_CONTROLLER_ID): the id controller actions name.
type SetControllerID struct{ ID uint16 }

func (*SetControllerID) raw(uint8) (Raw, error) { return rawNXSetControllerID, nil }
func (m *SetControllerID) appendBody(b []byte, _ uint8) ([]byte, error) {
	return put16(pad(b, 6), m.ID), nil
}

// TLVMap maps a Geneve option (class, type, length) to tun_metadata<Index>.
type TLVMap struct {
	OptionClass uint16
	OptionType  uint8
	OptionLen   uint8
	Index       uint16
}

// TLV table commands (NXTTMC_*).
const (
	TLVAdd    uint16 = 0
	TLVDelete uint16 = 1
	TLVClear  uint16 = 2
)

// TLVTableMod (NXT_TLV_TABLE_MOD).
type TLVTableMod struct {
	Command uint16
	Maps    []TLVMap
}

// TLVTableReply (NXT_TLV_TABLE_REPLY).
type TLVTableReply struct {
	MaxOptionSpace uint32
	MaxFields      uint16
	Maps           []TLVMap
}

func (*TLVTableMod) raw(uint8) (Raw, error)   { return rawNXTLVTableMod, nil }
func (*TLVTableReply) raw(uint8) (Raw, error) { return rawNXTLVTableReply, nil }

func appendTLVMaps(b []byte, maps []TLVMap) []byte {
	for _, tm := range maps {
		b = put16(b, tm.OptionClass)
		b = put8(b, tm.OptionType)
		b = put8(b, tm.OptionLen)
		b = put16(b, tm.Index)
		b = pad(b, 2)
	}
	return b
}

func pullTLVMaps(r *reader) []TLVMap {
	var maps []TLVMap
	for r.len() >= 8 {
		tm := TLVMap{OptionClass: r.u16(), OptionType: r.u8(), OptionLen: r.u8(), Index: r.u16()}
		r.skip(2)
		maps = append(maps, tm)
	}
	return maps
}

func (m *TLVTableMod) appendBody(b []byte, _ uint8) ([]byte, error) {
	return appendTLVMaps(pad(put16(b, m.Command), 6), m.Maps), nil
}

func (m *TLVTableReply) appendBody(b []byte, _ uint8) ([]byte, error) {
	b = put32(b, m.MaxOptionSpace)
	b = put16(b, m.MaxFields)
	return appendTLVMaps(pad(b, 10), m.Maps), nil
}

func decodeTLVTableMod(_ *Header, body []byte) (Msg, error) {
	r := reader{b: body}
	m := &TLVTableMod{Command: r.u16()}
	r.skip(6)
	if m.Command > TLVClear {
		return nil, ofperr.NXTTMFC_BAD_COMMAND
	}
	m.Maps = pullTLVMaps(&r)
	if err := checkTLVMaps(m.Maps, 64); err != nil {
		return nil, err
	}
	return m, r.err
}

// checkTLVMaps is Open vSwitch's check of TLV mappings: option lengths
// are multiples of 4 up to 124 bytes, indexes below maxFields
// (tun_metadata0..63 for a mod).
func checkTLVMaps(maps []TLVMap, maxFields int) error {
	for _, tm := range maps {
		if tm.OptionLen%4 != 0 || tm.OptionLen > 124 {
			return ofperr.NXTTMFC_BAD_OPT_LEN
		}
		if int(tm.Index) >= maxFields {
			return ofperr.NXTTMFC_BAD_FIELD_IDX
		}
	}
	return nil
}

func decodeTLVTableReply(_ *Header, body []byte) (Msg, error) {
	r := reader{b: body}
	m := &TLVTableReply{MaxOptionSpace: r.u32(), MaxFields: r.u16()}
	r.skip(10)
	m.Maps = pullTLVMaps(&r)
	if err := checkTLVMaps(m.Maps, int(m.MaxFields)); err != nil {
		return nil, err
	}
	return m, r.err
}

// CTFlushZone (NXT_CT_FLUSH_ZONE) flushes one conntrack zone.
type CTFlushZone struct{ Zone uint16 }

func (*CTFlushZone) raw(uint8) (Raw, error) { return rawNXCTFlushZone, nil }
func (m *CTFlushZone) appendBody(b []byte, _ uint8) ([]byte, error) {
	return put16(pad(b, 6), m.Zone), nil
}

// CTTuple is one direction of a connection to flush: addresses as IPv6
// (IPv4 mapped into ::ffff:0:0/96), zero when not matched.
type CTTuple struct {
	Src, Dst         [16]byte
	SrcPort, DstPort uint16
	ICMPID           uint16
	ICMPType         uint8
	ICMPCode         uint8
}

// CTFlush (NXT_CT_FLUSH) flushes the conntrack entries matching the IP
// protocol and tuples (zero fields match anything), in Zone if HasZone.
type CTFlush struct {
	IPProto uint8
	Orig    CTTuple
	Reply   CTTuple
	HasZone bool
	Zone    uint16
}

// NXT_CT_FLUSH property types.
const (
	ctFlushOrig  = 0
	ctFlushReply = 1
	ctFlushZone  = 2

	ctTupleSrc      = 0
	ctTupleDst      = 1
	ctTupleSrcPort  = 2
	ctTupleDstPort  = 3
	ctTupleICMPID   = 4
	ctTupleICMPType = 5
	ctTupleICMPCode = 6
)

func (*CTFlush) raw(uint8) (Raw, error) { return rawNXCTFlush, nil }

func appendCTTuple(b []byte, t *CTTuple, typ uint16, proto uint8) []byte {
	var in []byte
	if t.Src != [16]byte{} {
		in = appendProp(in, ctTupleSrc, t.Src[:], 8)
	}
	if t.Dst != [16]byte{} {
		in = appendProp(in, ctTupleDst, t.Dst[:], 8)
	}
	if proto == 1 || proto == 58 {
		in = appendProp(in, ctTupleICMPID, []byte{byte(t.ICMPID >> 8), byte(t.ICMPID), 0, 0}, 8)
		in = appendProp(in, ctTupleICMPType, []byte{t.ICMPType}, 8)
		in = appendProp(in, ctTupleICMPCode, []byte{t.ICMPCode}, 8)
	} else {
		if t.SrcPort != 0 {
			in = appendProp(in, ctTupleSrcPort, []byte{byte(t.SrcPort >> 8), byte(t.SrcPort), 0, 0}, 8)
		}
		if t.DstPort != 0 {
			in = appendProp(in, ctTupleDstPort, []byte{byte(t.DstPort >> 8), byte(t.DstPort), 0, 0}, 8)
		}
	}
	if len(in) == 0 {
		return b
	}
	return appendNested(b, typ, func(b []byte) []byte { return append(b, in...) })
}

func (m *CTFlush) appendBody(b []byte, _ uint8) ([]byte, error) {
	b = pad(put8(b, m.IPProto), 7)
	b = appendCTTuple(b, &m.Orig, ctFlushOrig, m.IPProto)
	b = appendCTTuple(b, &m.Reply, ctFlushReply, m.IPProto)
	if m.HasZone {
		b = appendProp(b, ctFlushZone, []byte{byte(m.Zone >> 8), byte(m.Zone), 0, 0}, 8)
	}
	return b, nil
}

// l3Of is 4 for an IPv4-mapped address, 6 for another, 0 for zero.
func l3Of(a *[16]byte) int {
	switch {
	case *a == [16]byte{}:
		return 0
	case [12]byte(a[:12]) == [12]byte{10: 0xff, 11: 0xff}:
		return 4
	}
	return 6
}

// pullCTTuple is Open vSwitch's ofp_ct_tuple_decode_nested; l3 carries
// the address family across both tuples (a mismatch is OFPBPC_BAD_VALUE).
func pullCTTuple(body []byte, t *CTTuple, l3 *int) error {
	if len(body) < 4 {
		return ofperr.OFPBPC_BAD_LEN
	}
	props, err := pullProps(body[4:], 8)
	if err != nil {
		return err
	}
	for _, p := range props {
		switch p.Type {
		case ctTupleSrc, ctTupleDst:
			if len(p.Body) < 16 {
				return ofperr.OFPBPC_BAD_LEN
			}
			a := &t.Src
			if p.Type == ctTupleDst {
				a = &t.Dst
			}
			copy(a[:], p.Body)
			f := l3Of(a)
			if *l3 != 0 && f != 0 && *l3 != f {
				return ofperr.OFPBPC_BAD_VALUE
			}
			*l3 = f
		case ctTupleSrcPort, ctTupleDstPort, ctTupleICMPID:
			if len(p.Body) < 2 {
				return ofperr.OFPBPC_BAD_LEN
			}
			v := binary.BigEndian.Uint16(p.Body)
			switch p.Type {
			case ctTupleSrcPort:
				t.SrcPort = v
			case ctTupleDstPort:
				t.DstPort = v
			default:
				t.ICMPID = v
			}
		case ctTupleICMPType, ctTupleICMPCode:
			if len(p.Body) < 1 {
				return ofperr.OFPBPC_BAD_LEN
			}
			if p.Type == ctTupleICMPType {
				t.ICMPType = p.Body[0]
			} else {
				t.ICMPCode = p.Body[0]
			}
		}
	}
	return nil
}

func decodeCTFlush(_ *Header, body []byte) (Msg, error) {
	m := &CTFlush{IPProto: body[0]}
	for _, z := range body[1:8] {
		if z != 0 {
			return nil, ofperr.NXBRC_MUST_BE_ZERO
		}
	}
	props, err := pullProps(body[8:], 8)
	if err != nil {
		return nil, err
	}
	l3 := 0
	for _, p := range props {
		switch p.Type {
		case ctFlushOrig:
			err = pullCTTuple(p.Body, &m.Orig, &l3)
		case ctFlushReply:
			err = pullCTTuple(p.Body, &m.Reply, &l3)
		case ctFlushZone:
			if len(p.Body) < 2 {
				err = ofperr.OFPBPC_BAD_LEN
			} else {
				m.HasZone, m.Zone = true, binary.BigEndian.Uint16(p.Body)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Bundle control types (OFPBCT_*) and flags (OFPBF_*).
const (
	BundleOpenRequest    uint16 = 0
	BundleOpenReply      uint16 = 1
	BundleCloseRequest   uint16 = 2
	BundleCloseReply     uint16 = 3
	BundleCommitRequest  uint16 = 4
	BundleCommitReply    uint16 = 5
	BundleDiscardRequest uint16 = 6
	BundleDiscardReply   uint16 = 7

	BundleAtomic  uint16 = 1
	BundleOrdered uint16 = 2
)

// BundleControl (OFPT14_BUNDLE_CONTROL; ONFT13_BUNDLE_CONTROL in 1.3).
type BundleControl struct {
	BundleID uint32
	Type     uint16
	Flags    uint16
	Props    []Prop
}

func (*BundleControl) raw(v uint8) (Raw, error) {
	return pick(v, rawONF13BundleControl, raw14BundleControl)
}

func (m *BundleControl) appendBody(b []byte, _ uint8) ([]byte, error) {
	b = put32(b, m.BundleID)
	b = put16(b, m.Type)
	b = put16(b, m.Flags)
	return appendProps(b, m.Props), nil
}

func decodeBundleControl(_ *Header, body []byte) (Msg, error) {
	r := reader{b: body}
	m := &BundleControl{BundleID: r.u32(), Type: r.u16(), Flags: r.u16()}
	props, err := pullProps(r.rest(), 8)
	if err != nil {
		return nil, err
	}
	m.Props = props
	// An unknown Type decodes; the switch answers it with
	// OFPBFC_BAD_TYPE, as Open vSwitch's handle_bundle_control does.
	return m, nil
}

// BundleAdd (OFPT14_BUNDLE_ADD_MESSAGE; ONFT13_BUNDLE_ADD_MESSAGE in 1.3)
// adds Message, a whole OpenFlow message of the same version and xid (a
// flow mod, group mod, port mod or packet out), to a bundle. Encode it
// with Message's xid: a bundle add must carry its message's.
type BundleAdd struct {
	BundleID uint32
	Flags    uint16
	Message  []byte
}

func (*BundleAdd) raw(v uint8) (Raw, error) {
	return pick(v, rawONF13BundleAddMessage, raw14BundleAddMessage)
}

func (m *BundleAdd) appendBody(b []byte, _ uint8) ([]byte, error) {
	b = put32(b, m.BundleID)
	b = pad(b, 2)
	b = put16(b, m.Flags)
	return append(b, m.Message...), nil
}

// Inner decodes the bundled message.
func (m *BundleAdd) Inner() (Header, Msg, error) { return Decode(m.Message) }

func decodeBundleAdd(h *Header, body []byte) (Msg, error) {
	r := reader{b: body}
	m := &BundleAdd{BundleID: r.u32()}
	r.skip(2)
	m.Flags = r.u16()
	inner := r.rest()
	if len(inner) < headerLen {
		return nil, ofperr.OFPBFC_MSG_BAD_LEN
	}
	if inner[0] != h.Version {
		return nil, ofperr.OFPBFC_BAD_VERSION
	}
	n := int(binary.BigEndian.Uint16(inner[2:]))
	if n < headerLen || n > len(inner) {
		return nil, ofperr.OFPBFC_MSG_BAD_LEN
	}
	if binary.BigEndian.Uint32(inner[4:]) != h.Xid {
		return nil, ofperr.OFPBFC_MSG_BAD_XID
	}
	m.Message = inner[:n:n]
	ih, _, err := decodeHeader(m.Message)
	if err != nil {
		return nil, ofperr.OFPBFC_MSG_UNSUP
	}
	switch ih.Raw {
	case raw10PortMod, raw11PortMod, raw14PortMod, raw10FlowMod, raw11FlowMod, rawNXFlowMod,
		rawNXGroupMod, raw11GroupMod, raw15GroupMod, raw10PacketOut, raw11PacketOut, raw15PacketOut:
	default:
		return nil, ofperr.OFPBFC_MSG_UNSUP
	}
	return m, nil
}

// RequestForward (OFPT14_REQUESTFORWARD, ONFT13_ in 1.3, NXT_ before)
// forwards a group or meter mod another controller made: Request is
// that whole message.
type RequestForward struct {
	Request []byte
}

func (*RequestForward) raw(v uint8) (Raw, error) {
	return pick(v, rawNXRequestForward, rawONF13RequestForward, raw14RequestForward)
}

func (m *RequestForward) appendBody(b []byte, _ uint8) ([]byte, error) {
	start := len(b)
	b = append(b, m.Request...)
	return pad8(b, start), nil
}

func decodeRequestForward(h *Header, body []byte) (Msg, error) {
	if len(body) < headerLen {
		return nil, ofperr.OFPBFC_MSG_BAD_LEN
	}
	n := int(binary.BigEndian.Uint16(body[2:]))
	if n < headerLen || n > len(body) {
		return nil, ofperr.OFPBFC_MSG_BAD_LEN
	}
	if body[0] != h.Version {
		return nil, ofperr.OFPBRC_BAD_VERSION
	}
	_, inner, err := Decode(body[:n:n])
	if err != nil {
		return nil, err
	}
	switch inner.(type) {
	case *GroupMod, *MeterMod:
	default:
		return nil, ofperr.OFPBFC_MSG_UNSUP
	}
	return &RequestForward{Request: body[:n:n]}, nil
}

// Inner decodes the forwarded request (a *GroupMod or *MeterMod).
func (m *RequestForward) Inner() (Header, Msg, error) { return Decode(m.Request) }

func init() {
	register(decodeTableMod, raw11TableMod, raw14TableMod)
	register(decodeAsync, raw13SetAsync, raw14SetAsync, rawNXSetAsyncConfig, rawNXSetAsyncConfig2, raw13GetAsyncReply, raw14GetAsyncReply)
	register(func(_ *Header, b []byte) (Msg, error) {
		m := &SetFlowFormat{Format: binary.BigEndian.Uint32(b)}
		if m.Format != FlowFormatOpenFlow10 && m.Format != FlowFormatNXM {
			return nil, ofperr.OFPBRC_EPERM
		}
		return m, nil
	}, rawNXSetFlowFormat)
	register(func(_ *Header, b []byte) (Msg, error) { return &FlowModTableID{Set: b[0] != 0}, nil }, rawNXFlowModTableID)
	register(func(_ *Header, b []byte) (Msg, error) {
		m := &SetPacketInFormat{Format: binary.BigEndian.Uint32(b)}
		if m.Format > uint32(PacketInNXT2) {
			return nil, ofperr.OFPBRC_EPERM
		}
		return m, nil
	}, rawNXSetPacketInFormat)
	register(func(_ *Header, b []byte) (Msg, error) {
		return &SetControllerID{ID: binary.BigEndian.Uint16(b[6:])}, nil
	}, rawNXSetControllerID)
	register(decodeTLVTableMod, rawNXTLVTableMod)
	register(decodeTLVTableReply, rawNXTLVTableReply)
	register(func(_ *Header, b []byte) (Msg, error) { return &CTFlushZone{Zone: binary.BigEndian.Uint16(b[6:])}, nil }, rawNXCTFlushZone)
	register(decodeCTFlush, rawNXCTFlush)
	register(decodeBundleControl, raw14BundleControl, rawONF13BundleControl)
	register(decodeBundleAdd, raw14BundleAddMessage, rawONF13BundleAddMessage)
	register(decodeRequestForward, rawNXRequestForward, rawONF13RequestForward, raw14RequestForward)
}

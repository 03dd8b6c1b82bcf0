package ofp

import (
	"encoding/binary"

	"gvs/ofproto/ofperr"
)

// Prop is one OpenFlow 1.4+ style property (TLV): Type and the bytes after
// the 4-byte property header, without padding. For experimenter
// properties (Type >= the message's experimenter threshold, usually
// 0xffff) Body starts with the experimenter id and exp_type.
type Prop struct {
	Type uint16
	Body []byte
}

// pullProps splits b into properties padded to align bytes, with Open
// vSwitch's errors for bad lengths (OFPBPC_BAD_LEN).
func pullProps(b []byte, align int) ([]Prop, error) {
	var props []Prop
	for len(b) > 0 {
		if len(b) < 4 {
			return nil, ofperr.OFPBPC_BAD_LEN
		}
		typ := binary.BigEndian.Uint16(b)
		n := int(binary.BigEndian.Uint16(b[2:]))
		padded := n
		if align > 1 {
			padded = (n + align - 1) / align * align
		}
		if n < 4 || padded > len(b) {
			return nil, ofperr.OFPBPC_BAD_LEN
		}
		if typ == propExperimenter {
			// ofp_prop_experimenter: experimenter id and type follow;
			// id 0 would be ambiguous with standard properties.
			if n < 12 {
				return nil, ofperr.OFPBPC_BAD_LEN
			}
			if binary.BigEndian.Uint32(b[4:]) == 0 {
				return nil, ofperr.OFPBPC_BAD_EXPERIMENTER
			}
		}
		props = append(props, Prop{Type: typ, Body: b[4:n:n]})
		b = b[padded:]
	}
	return props, nil
}

// appendProp appends one property (header, body, padding to align).
// propExperimenter is the experimenter property type.
const propExperimenter = 0xffff

// unknownProp is Open vSwitch's OFPPROP_UNKNOWN for a strict decoder:
// OFPBPC_BAD_EXP_TYPE for an experimenter property it does not know,
// OFPBPC_BAD_TYPE for another.
func unknownProp(p Prop) error {
	if p.Type == propExperimenter {
		return ofperr.OFPBPC_BAD_EXP_TYPE
	}
	return ofperr.OFPBPC_BAD_TYPE
}

func appendProp(b []byte, typ uint16, body []byte, align int) []byte {
	b = put16(b, typ)
	b = put16(b, uint16(4+len(body)))
	b = append(b, body...)
	if align > 1 {
		b = pad(b, (align-(4+len(body))%align)%align)
	}
	return b
}

func appendProps(b []byte, props []Prop) []byte {
	for _, p := range props {
		b = appendProp(b, p.Type, p.Body, 8)
	}
	return b
}

func propU32(p Prop) (uint32, error) {
	if len(p.Body) != 4 {
		return 0, ofperr.OFPBPC_BAD_LEN
	}
	return binary.BigEndian.Uint32(p.Body), nil
}

func u32Body(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

// appendPropU32 appends a property holding a 32-bit value without
// allocating.
func appendPropU32(b []byte, typ uint16, v uint32) []byte {
	b = put16(b, typ)
	b = put16(b, 8)
	return put32(b, v)
}

// appendPropU8 appends a property holding one byte (length 5, padded).
func appendPropU8(b []byte, typ uint16, v uint8) []byte {
	b = put16(b, typ)
	b = put16(b, 5)
	return pad(put8(b, v), 3)
}

// appendPropBE64 appends a 64-bit property as Open vSwitch does: the
// value 8-byte aligned after 4 bytes of padding (length 16).
func appendPropBE64(b []byte, typ uint16, v uint64) []byte {
	b = put16(b, typ)
	b = put16(b, 16)
	return put64(pad(b, 4), v)
}

package ofperr

import (
	"encoding/binary"
	"fmt"
)

// Error is an OpenFlow error, independent of version. The zero value is
// not an error Open vSwitch defines (its name is "<invalid>").
type Error uint16

var _ error = Error(0)

// numVersions is the number of OpenFlow versions errors are defined for
// (wire versions 1..numVersions, OpenFlow 1.0..1.5).
const numVersions = 6

// Wire type numbers that carry vendor (experimenter) errors.
const (
	// NXET_VENDOR with code NXVC_VENDOR_ERROR, then struct
	// nx_vendor_error: Nicira's form for OpenFlow 1.0 and 1.1.
	TypeNXVendor      uint16 = 0xb0c2
	CodeNXVendorError uint16 = 0
	// OFPET12_EXPERIMENTER: OpenFlow 1.2+; the code is the error's type
	// and a 32-bit experimenter id follows.
	TypeExperimenter uint16 = 0xffff
	// OFPET_HELLO_FAILED, whose data is text rather than a message.
	TypeHelloFailed uint16 = 0
)

type wire struct {
	vendor    uint32
	typ, code uint16
	ok        bool
}

type wireKey struct {
	version   uint8
	vendor    uint32
	typ, code uint16
}

// Valid reports whether e is one of the defined errors.
func (e Error) Valid() bool { return e >= 1 && e <= numErrors }

// Error returns Open vSwitch's name for e, e.g. "OFPBRC_BAD_LEN".
func (e Error) Error() string { return e.String() }

// String returns Open vSwitch's name for e, "<invalid>" if it has none.
func (e Error) String() string {
	if !e.Valid() {
		return names[0]
	}
	return names[e]
}

// Description is Open vSwitch's one-line explanation of e.
func (e Error) Description() string {
	if !e.Valid() {
		return descriptions[0]
	}
	return descriptions[e]
}

// Wire is how e is sent in OpenFlow version (0x01..0x06): the vendor
// (0 for standard OpenFlow errors; otherwise the experimenter id, e.g.
// VendorNX), type and code (0 for experimenter errors in 1.2+, which have
// none). ok is false when the version cannot express e.
func (e Error) Wire(version uint8) (vendor uint32, typ, code uint16, ok bool) {
	if !e.Valid() || version < 1 || version > numVersions {
		return 0, 0, 0, false
	}
	w := wires[e][version-1]
	return w.vendor, w.typ, w.code, w.ok
}

// Lookup returns the error sent as (vendor, type, code) in version, as
// Wire gives them; ok is false if none is. When one encoding means two
// errors in an old version, the one Open vSwitch defines first wins.
func Lookup(version uint8, vendor uint32, typ, code uint16) (e Error, ok bool) {
	e, ok = decodes[wireKey{version, vendor, typ, code}]
	return e, ok
}

// Decode returns the standard error sent as (type, code) in version.
func Decode(version uint8, typ, code uint16) (Error, bool) {
	return Lookup(version, 0, typ, code)
}

// ByName returns the error named name (Open vSwitch's name without the
// OFPERR_ prefix).
func ByName(name string) (Error, bool) {
	for e := Error(1); e <= numErrors; e++ {
		if names[e] == name {
			return e, true
		}
	}
	return 0, false
}

// All returns every defined error, in Open vSwitch's order.
func All() []Error {
	all := make([]Error, numErrors)
	for i := range all {
		all[i] = Error(i + 1)
	}
	return all
}

// AppendWire appends the part of an OFPT_ERROR body that names e in
// version: type and code, then for vendor errors nx_vendor_error (1.0,
// 1.1) or the experimenter id (1.2+). An error version cannot express (or
// an invalid one) is sent as NXBRC_UNENCODABLE_ERROR, as Open vSwitch
// does; an unknown version is treated as OpenFlow 1.0.
func (e Error) AppendWire(b []byte, version uint8) []byte {
	if version < 1 || version > numVersions {
		version = 1
	}
	vendor, typ, code, ok := e.Wire(version)
	if !ok {
		vendor, typ, code, _ = NXBRC_UNENCODABLE_ERROR.Wire(version)
	}
	switch {
	case vendor == 0:
		b = binary.BigEndian.AppendUint16(b, typ)
		b = binary.BigEndian.AppendUint16(b, code)
	case version <= 2:
		b = binary.BigEndian.AppendUint16(b, TypeNXVendor)
		b = binary.BigEndian.AppendUint16(b, CodeNXVendorError)
		b = binary.BigEndian.AppendUint32(b, vendor)
		b = binary.BigEndian.AppendUint16(b, typ)
		b = binary.BigEndian.AppendUint16(b, code)
	default:
		b = binary.BigEndian.AppendUint16(b, TypeExperimenter)
		b = binary.BigEndian.AppendUint16(b, typ)
		b = binary.BigEndian.AppendUint32(b, vendor)
	}
	return b
}

// WireError is an error whose encoding no defined Error has in that
// version: what ParseWire returns for it, so the caller can still show
// and echo it.
type WireError struct {
	Version uint8
	Vendor  uint32
	Type    uint16
	Code    uint16
}

func (w *WireError) Error() string {
	if w.Vendor != 0 {
		return fmt.Sprintf("unknown error vendor 0x%08x type %d code %d", w.Vendor, w.Type, w.Code)
	}
	return fmt.Sprintf("unknown error type %d code %d", w.Type, w.Code)
}

// ParseWire reads the error named at the start of an OFPT_ERROR body (the
// bytes after the OpenFlow header) in version and returns it with the
// rest of the body (the data: the offending request, or text for
// OFPET_HELLO_FAILED). An encoding no Error has gives *WireError with
// the data still split off; a body too short for its form gives
// OFPBRC_BAD_LEN.
func ParseWire(version uint8, body []byte) (Error, []byte, error) {
	if len(body) < 4 {
		return 0, nil, OFPBRC_BAD_LEN
	}
	var vendor uint32
	typ := binary.BigEndian.Uint16(body)
	code := binary.BigEndian.Uint16(body[2:])
	rest := body[4:]
	switch {
	case typ == TypeNXVendor && code == CodeNXVendorError:
		if len(rest) < 8 {
			return 0, nil, OFPBRC_BAD_LEN
		}
		vendor = binary.BigEndian.Uint32(rest)
		typ = binary.BigEndian.Uint16(rest[4:])
		code = binary.BigEndian.Uint16(rest[6:])
		rest = rest[8:]
	case typ == TypeExperimenter:
		if len(rest) < 4 {
			return 0, nil, OFPBRC_BAD_LEN
		}
		vendor = binary.BigEndian.Uint32(rest)
		typ, code = code, 0
		rest = rest[4:]
	}
	if e, ok := Lookup(version, vendor, typ, code); ok {
		return e, rest, nil
	}
	return 0, rest, &WireError{Version: version, Vendor: vendor, Type: typ, Code: code}
}

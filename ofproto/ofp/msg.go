package ofp

import (
	"encoding/binary"
	"fmt"

	"gvs/ofproto/ofperr"
)

// Msg is a decoded OpenFlow message: one of the types of this package
// (*Hello, *FlowMod, *PortStatsReply, ...).
type Msg interface {
	// raw is the wire form m takes in version, or an error (typically
	// OFPBRC_BAD_VERSION) when version cannot carry it.
	raw(version uint8) (Raw, error)
	// appendBody appends the bytes after the headers.
	appendBody(b []byte, version uint8) ([]byte, error)
}

// statsMsg is a multipart message: its flags go into the header.
type statsMsg interface {
	statsFlags() uint16
}

// decoder decodes the body of one raw form.
type decoder func(h *Header, body []byte) (Msg, error)

// decoders is filled by each message file's init with the raws it decodes.
var decoders [numRaws]decoder

func register(d decoder, rs ...Raw) {
	for _, r := range rs {
		decoders[r] = d
	}
}

// Decode decodes b, which must be exactly one OpenFlow message. Errors are
// Open vSwitch's (ofperr.Error) for the same input: OFPBRC_BAD_VERSION,
// OFPBRC_BAD_LEN, OFPBRC_BAD_TYPE, OFPBRC_BAD_STAT, OFPBRC_BAD_VENDOR,
// OFPBRC_BAD_SUBTYPE, and the message's own (e.g. OFPBMC_* from its match).
// The header is returned whenever the fixed part could be read, so the
// caller can answer with the request's xid and version.
func Decode(b []byte) (Header, Msg, error) {
	h, body, err := decodeHeader(b)
	if err != nil {
		return h, nil, err
	}
	d := decoders[h.Raw]
	if d == nil {
		return h, nil, ofperr.OFPBRC_BAD_TYPE
	}
	m, err := d(&h, body)
	if err != nil {
		return h, nil, err
	}
	return h, m, nil
}

// maxMsgLen is the largest OpenFlow message (ofp_header.length is 16 bits).
const maxMsgLen = 0xffff

// Append appends m encoded as an OpenFlow message of version with xid.
// It fails (without appending) when version cannot carry m or m does not
// fit in one message.
func Append(b []byte, version uint8, xid uint32, m Msg) ([]byte, error) {
	r, err := m.raw(version)
	if err != nil {
		return b, err
	}
	if !r.supports(version) {
		return b, fmt.Errorf("ofp: %s cannot be sent in version %#x: %w", r, version, ofperr.OFPBRC_BAD_VERSION)
	}
	var flags uint16
	if s, ok := m.(statsMsg); ok {
		flags = s.statsFlags()
	}
	start := len(b)
	out := appendHeader(b, r, version, xid, flags)
	out, err = m.appendBody(out, version)
	if err != nil {
		return b[:start], err
	}
	if len(out)-start > maxMsgLen {
		return b[:start], fmt.Errorf("ofp: %s of %d bytes: %w", r, len(out)-start, ofperr.OFPBRC_BAD_LEN)
	}
	binary.BigEndian.PutUint16(out[start+2:], uint16(len(out)-start))
	return out, nil
}

// Encode is Append to a new slice.
func Encode(version uint8, xid uint32, m Msg) ([]byte, error) {
	return Append(nil, version, xid, m)
}

// RawOf returns the wire form m takes in version (for logging and tests).
func RawOf(version uint8, m Msg) (Raw, error) { return m.raw(version) }

// pick returns the first of rs that exists in version, or
// OFPBRC_BAD_VERSION.
func pick(version uint8, rs ...Raw) (Raw, error) {
	for _, r := range rs {
		if r.supports(version) {
			return r, nil
		}
	}
	return rawInvalid, ofperr.OFPBRC_BAD_VERSION
}

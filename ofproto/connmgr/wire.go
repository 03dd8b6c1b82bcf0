package connmgr

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"strings"
)

// The connection layer reads and writes whole OpenFlow messages and
// negotiates the version itself (Open vSwitch's vconn does the same below
// its message codecs): it needs only the header, HELLO with its version
// bitmap element, and the ERROR messages that go with a failed
// negotiation or a wrong version.

const (
	headerLen = 8
	// maxMsgLen is the largest OpenFlow message (the 16-bit length).
	maxMsgLen = 0xffff

	typeHello       = 0
	typeError       = 1
	typeEchoRequest = 2
	typeEchoReply   = 3

	helloElemVersionBitmap = 1

	// Error types and codes the transport sends itself: the same numbers
	// in every OpenFlow version.
	errTypeHelloFailed       = 0
	errCodeHelloIncompatible = 0
	errTypeBadRequest        = 1
	errCodeBadVersion        = 0
)

// OpenFlow versions as wire values.
const (
	OF10 uint8 = 0x01
	OF11 uint8 = 0x02
	OF12 uint8 = 0x03
	OF13 uint8 = 0x04
	OF14 uint8 = 0x05
	OF15 uint8 = 0x06
)

// Versions is a bitmap of OpenFlow versions: bit N set means wire version N
// is allowed, as in a HELLO version bitmap element.
type Versions uint32

// DefaultVersions is what a bridge allows when Bridge.protocols is empty:
// Open vSwitch 3.1's OFPUTIL_DEFAULT_VERSIONS, OpenFlow 1.0 to 1.5.
const DefaultVersions Versions = 1<<OF10 | 1<<OF11 | 1<<OF12 | 1<<OF13 | 1<<OF14 | 1<<OF15

// Has reports whether version v is in the set.
func (vs Versions) Has(v uint8) bool { return v < 32 && vs&(1<<v) != 0 }

// highest is the newest version of the set (0 for none).
func (vs Versions) highest() uint8 {
	if vs == 0 {
		return 0
	}
	return uint8(31 - bits.LeadingZeros32(uint32(vs)))
}

// versionName is Open vSwitch's ofputil_format_version ("0x04").
func versionName(v uint8) string { return fmt.Sprintf("0x%02x", v) }

// String formats the set as Open vSwitch's vconn logs do
// (version_bitmap_to_string): "version 0x04", "version 0x06 and earlier",
// "versions 0x01, 0x04".
func (vs Versions) String() string {
	switch {
	case vs == 0:
		return "no versions"
	case vs&(vs-1) == 0:
		return "version " + versionName(vs.highest())
	case ((vs>>1)+1)&(vs>>1) == 0:
		return "version " + versionName(vs.highest()) + " and earlier"
	}
	var names []string
	for v := uint8(0); v < 32; v++ {
		if vs.Has(v) {
			names = append(names, versionName(v))
		}
	}
	return "versions " + strings.Join(names, ", ")
}

// ParseProtocols turns Bridge.protocols ("OpenFlow10".."OpenFlow15") into
// a version set; empty means DefaultVersions. Unknown names are skipped
// and returned, as Open vSwitch ignores them with a warning.
func ParseProtocols(names []string) (vs Versions, unknown []string) {
	for _, n := range names {
		switch n {
		case "OpenFlow10":
			vs |= 1 << OF10
		case "OpenFlow11":
			vs |= 1 << OF11
		case "OpenFlow12":
			vs |= 1 << OF12
		case "OpenFlow13":
			vs |= 1 << OF13
		case "OpenFlow14":
			vs |= 1 << OF14
		case "OpenFlow15":
			vs |= 1 << OF15
		default:
			unknown = append(unknown, n)
		}
	}
	if vs == 0 {
		vs = DefaultVersions
	}
	return vs, unknown
}

// header is the fixed OpenFlow header.
type header struct {
	Version uint8
	Type    uint8
	Length  uint16
	XID     uint32
}

func parseHeader(b []byte) header {
	return header{Version: b[0], Type: b[1], Length: binary.BigEndian.Uint16(b[2:]), XID: binary.BigEndian.Uint32(b[4:])}
}

func putHeader(b []byte, h header) {
	b[0], b[1] = h.Version, h.Type
	binary.BigEndian.PutUint16(b[2:], h.Length)
	binary.BigEndian.PutUint32(b[4:], h.XID)
}

// errShortHeader is the stream's complaint about a length below 8
// (Open vSwitch: "received too-short ofp_header").
type errShortHeader int

func (e errShortHeader) Error() string {
	return fmt.Sprintf("received too-short ofp_header (%d bytes)", int(e))
}

// msgReader reads whole messages from a stream through a buffer big enough
// for the largest message, so that many small messages cost one read, and
// a read that fails (a deadline) consumes nothing: the next call starts
// where this one did.
type msgReader struct {
	br *bufio.Reader
}

func newMsgReader(r io.Reader) *msgReader {
	return &msgReader{br: bufio.NewReaderSize(r, maxMsgLen+1)}
}

// buffered reports whether a whole message is already buffered, so that
// next will not read.
func (mr *msgReader) buffered() bool {
	n := mr.br.Buffered()
	if n < headerLen {
		return false
	}
	h, _ := mr.br.Peek(headerLen)
	return n >= int(binary.BigEndian.Uint16(h[2:]))
}

// next returns the next message in a new buffer.
func (mr *msgReader) next() ([]byte, error) {
	h, err := mr.br.Peek(headerLen)
	if err != nil {
		if err == io.EOF && len(h) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	n := int(binary.BigEndian.Uint16(h[2:]))
	if n < headerLen {
		return nil, errShortHeader(n)
	}
	b, err := mr.br.Peek(n)
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	out := make([]byte, n)
	copy(out, b)
	mr.br.Discard(n)
	return out, nil
}

// readMsg reads one whole message into a new buffer.
func readMsg(r io.Reader) ([]byte, error) {
	var h [headerLen]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint16(h[2:]))
	if n < headerLen {
		return nil, errShortHeader(n)
	}
	b := make([]byte, n)
	copy(b, h[:])
	if _, err := io.ReadFull(r, b[headerLen:]); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return b, nil
}

// encodeHello is Open vSwitch's ofputil_encode_hello: the header carries
// the highest version; a bitmap element follows unless the set is every
// version from 1.0 up to that one.
func encodeHello(vs Versions, xid uint32) []byte {
	n := headerLen
	contiguous := ((vs>>1)+1)&(vs>>1) == 0
	if !contiguous {
		n += 8
	}
	b := make([]byte, n)
	putHeader(b, header{Version: vs.highest(), Type: typeHello, Length: uint16(n), XID: xid})
	if !contiguous {
		binary.BigEndian.PutUint16(b[8:], helloElemVersionBitmap)
		binary.BigEndian.PutUint16(b[10:], 8)
		binary.BigEndian.PutUint32(b[12:], uint32(vs))
	}
	return b
}

// decodeHello is ofputil_decode_hello: the versions the peer offers (every
// version up to the header's, or the first word of its bitmap element)
// and whether the message was entirely understood.
func decodeHello(b []byte) (vs Versions, ok bool) {
	// Every version up to the header's (OVS's version_bitmap_from_version:
	// from version 32 on, all of them).
	h := parseHeader(b)
	var upTo uint32 // 1 << (version), 0 past 31
	if h.Version < 32 {
		upTo = 1 << h.Version
	}
	vs = Versions((upTo - 1) << 1)
	ok = true
	rest := b[headerLen:]
	for len(rest) > 0 {
		if len(rest) < 4 {
			return vs, false
		}
		typ, n := binary.BigEndian.Uint16(rest), int(binary.BigEndian.Uint16(rest[2:]))
		padded := (n + 7) &^ 7
		if n < 4 || padded > len(rest) {
			return vs, false
		}
		elem := rest[4:n]
		rest = rest[padded:]
		if typ != helloElemVersionBitmap || len(elem) == 0 || len(elem)%4 != 0 {
			ok = false
			continue
		}
		bm := Versions(binary.BigEndian.Uint32(elem)) &^ 1 // there is no version 0
		if bm == 0 {
			ok = false
			continue
		}
		vs = bm
	}
	return vs, ok
}

// encodeRawError builds an OFPT_ERROR with the given type, code and data.
func encodeRawError(version uint8, xid uint32, typ, code uint16, data []byte) []byte {
	b := make([]byte, headerLen+4+len(data))
	putHeader(b, header{Version: version, Type: typeError, Length: uint16(len(b)), XID: xid})
	binary.BigEndian.PutUint16(b[8:], typ)
	binary.BigEndian.PutUint16(b[10:], code)
	copy(b[12:], data)
	return b
}

// errorData is what an error echoes of the offending message: all of it,
// as Open vSwitch 3.1's ofperr_encode_reply (cut to what fits in one
// message).
func errorData(req []byte) []byte {
	return req[:min(len(req), maxMsgLen-headerLen-4)]
}

// encodeEcho builds an echo request or reply with payload.
func encodeEcho(version, typ uint8, xid uint32, payload []byte) []byte {
	b := make([]byte, headerLen+len(payload))
	putHeader(b, header{Version: version, Type: typ, Length: uint16(len(b)), XID: xid})
	copy(b[headerLen:], payload)
	return b
}

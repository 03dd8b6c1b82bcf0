package ofp

// The match and action codecs of the messages are ofproto/mf's and
// ofproto/ofpact's; these wrappers name the forms the messages use.

import (
	"encoding/binary"

	"gvs/ofproto/mf"
	"gvs/ofproto/ofpact"
	"gvs/ofproto/ofperr"
)

// Action is an OpenFlow action or instruction (instructions are actions,
// as in Open vSwitch).
type Action = ofpact.Action

// Match is a flow match.
type Match = mf.Match

func pullActions(b []byte, version uint8) ([]Action, error) {
	return ofpact.PullActions(b, version)
}

func appendActions(b []byte, acts []Action, version uint8) []byte {
	return ofpact.AppendActions(b, acts, version)
}

func pullInstructions(b []byte, version uint8) ([]Action, error) {
	return ofpact.PullInstructions(b, version)
}

func appendInstructions(b []byte, acts []Action, version uint8) []byte {
	return ofpact.AppendInstructions(b, acts, version)
}

func appendOXMMatch(b []byte, m *Match, version uint8) []byte {
	return mf.AppendOXMMatch(b, m, version)
}

// pullNXMatchCookie decodes an nx_match of n bytes plus padding to 8,
// with the NXM_NX_COOKIE pseudo-field when withCookie.
func pullNXMatchCookie(b []byte, n int, withCookie bool) (Match, uint64, uint64, []byte, error) {
	return mf.PullNXMatchCookie(b, n, withCookie)
}

// appendNXMatch appends m as NXM (version 0) or OXM entries without
// padding and returns the length appended.
func appendNXMatch(b []byte, m *Match, version uint8, cookie, cookieMask uint64) ([]byte, int) {
	return mf.AppendNXMatch(b, m, version, cookie, cookieMask)
}

// pull10Match decodes OpenFlow 1.0's 40-byte ofp10_match.
func pull10Match(b []byte) (Match, error) {
	m, _, err := mf.PullMatch(b, Version10)
	return m, err
}

func append10Match(b []byte, m *Match) []byte { return mf.AppendMatch(b, Version10, m) }

// pullMatch11 pulls an OpenFlow 1.1 standard match or an OXM match: like
// Open vSwitch's ofputil_pull_ofp11_match, by the match's type in any
// version (it sends OXM even in 1.1 flow stats).
func pullMatch11(b []byte, v uint8) (Match, []byte, error) {
	if v == Version10 {
		v = Version11
	}
	return mf.PullMatch(b, v)
}

func append11Match(b []byte, m *Match) []byte { return mf.AppendMatch(b, Version11, m) }

// decodeMatchEntries decodes OXM entries without framing (the metadata of
// NXT_PACKET_IN2), loosely as Open vSwitch does for packet-ins.
func decodeMatchEntries(b []byte) (Match, error) {
	m, _, _, err := mf.DecodeNXMatch(b, false, false, false)
	return m, err
}

var inPortField = mf.FieldByID(mf.InPort)

func matchInPort(m *Match) uint32 { return m.Flow.InPort }

func setMatchInPort(m *Match, port uint32) {
	inPortField.SetMatch(m, mf.ValueFromUint(uint64(port), 2))
}

// pullOXMMatchLoose is Open vSwitch's oxm_pull_match_loose: unknown
// fields are skipped; pipelineOnly rejects non-pipeline fields with
// OFPBRC_PIPELINE_FIELDS_ONLY (packet-out metadata).
func pullOXMMatchLoose(b []byte, pipelineOnly bool) (Match, []byte, error) {
	if len(b) < 4 {
		return Match{}, b, ofperr.OFPBMC_BAD_LEN
	}
	typ, n := binary.BigEndian.Uint16(b), int(binary.BigEndian.Uint16(b[2:]))
	if n < 4 {
		return Match{}, b, ofperr.OFPBMC_BAD_LEN
	}
	if typ != 1 {
		return Match{}, b, ofperr.OFPBMC_BAD_TYPE
	}
	if roundUp8(n) > len(b) {
		return Match{}, b, ofperr.OFPBMC_BAD_LEN
	}
	m, _, _, err := mf.DecodeNXMatch(b[4:n], false, false, pipelineOnly)
	return m, b[roundUp8(n):], err
}

// pullNXMatchLoose is nx_pull_match_loose (NXT_PACKET_IN metadata).
func pullNXMatchLoose(b []byte, n int) (Match, []byte, error) {
	if n < 0 || roundUp8(n) > len(b) {
		return Match{}, b, ofperr.OFPBMC_BAD_LEN
	}
	m, _, _, err := mf.DecodeNXMatch(b[:n], false, false, false)
	return m, b[roundUp8(n):], err
}

package ofp

// STAND-IN until ofproto/mf's match codecs and ofproto/ofpact reach main
// (expected at the 19:45 merge): the message codecs call these helpers,
// which will then be thin calls into mf (PullOXMMatch, AppendOXMMatch,
// PullNXMatch(Cookie), AppendNXMatch(Padded), the OpenFlow 1.0/1.1
// matches) and ofpact (PullActions, AppendActions, PullInstructions,
// AppendInstructions). Meanwhile matches decode only when empty (any
// entry gives errMatchStandIn) and actions are kept in wire form.

import (
	"errors"

	"gvs/ofproto/mf"
	"gvs/ofproto/ofperr"
)

// Action is an OpenFlow action or instruction. STAND-IN: becomes
// ofpact.Action.
type Action interface{}

// RawActions is the stand-in's only Action: an action list in wire form.
type RawActions []byte

var errMatchStandIn = errors.New("ofp: match codec not available yet (stand-in until ofproto/mf's codecs are merged)")

func pullActions(b []byte, version uint8) ([]Action, error) {
	if len(b)%8 != 0 {
		return nil, ofperr.OFPBRC_BAD_LEN
	}
	if len(b) == 0 {
		return nil, nil
	}
	return []Action{RawActions(b)}, nil
}

func appendActions(b []byte, acts []Action, version uint8) []byte {
	for _, a := range acts {
		if r, ok := a.(RawActions); ok {
			b = append(b, r...)
		}
	}
	return b
}

func pullInstructions(b []byte, version uint8) ([]Action, error) { return pullActions(b, version) }
func appendInstructions(b []byte, acts []Action, version uint8) []byte {
	return appendActions(b, acts, version)
}

// Match is a flow match (mf.Match).
type Match = mf.Match

func pullOXMMatch(b []byte) (Match, []byte, error) {
	if len(b) < 4 {
		return Match{}, b, ofperr.OFPBRC_BAD_LEN
	}
	typ, n := int(b[0])<<8|int(b[1]), int(b[2])<<8|int(b[3])
	if typ != 1 {
		return Match{}, b, ofperr.OFPBMC_BAD_TYPE
	}
	if n < 4 || roundUp8(n) > len(b) {
		return Match{}, b, ofperr.OFPBRC_BAD_LEN
	}
	if n != 4 {
		return Match{}, b, errMatchStandIn
	}
	return Match{}, b[8:], nil
}

func appendOXMMatch(b []byte, m *Match, version uint8) []byte {
	return append(b, 0, 1, 0, 4, 0, 0, 0, 0)
}

// pullNXMatchCookie decodes an nx_match of n bytes plus padding to 8,
// with the NXM_NX_COOKIE pseudo-field when withCookie.
func pullNXMatchCookie(b []byte, n int, withCookie bool) (Match, uint64, uint64, []byte, error) {
	if n < 0 || roundUp8(n) > len(b) {
		return Match{}, 0, 0, b, ofperr.OFPBRC_BAD_LEN
	}
	if n != 0 {
		return Match{}, 0, 0, b, errMatchStandIn
	}
	return Match{}, 0, 0, b, nil
}

// appendNXMatch appends m as NXM (version 0) or OXM entries without
// padding and returns the length appended.
func appendNXMatch(b []byte, m *Match, version uint8, cookie, cookieMask uint64) ([]byte, int) {
	return b, 0
}

// OpenFlow 1.0's ofp10_match (40 bytes) and 1.1's standard match (88).
func pull10Match(b []byte) (Match, error) {
	if len(b) == 40 && b[0] == 0 && b[1]&0xc0 == 0 && b[1]&0x3f == 0x38 && b[2] == 0x20 && b[3] == 0xff {
		return Match{}, nil // OFPFW10_ALL; the wildcards' nw bits vary
	}
	return Match{}, errMatchStandIn
}
func append10Match(b []byte, m *Match) []byte {
	b = put32(b, 0x003820ff) // OFPFW10_ALL
	return pad(b, 36)
}
func pull11Match(b []byte) (Match, error) { return Match{}, errMatchStandIn }
func append11Match(b []byte, m *Match) []byte {
	b = put16(b, 0)
	b = put16(b, 88)
	return pad(b, 84)
}

func matchInPort(m *Match) uint32 { return m.Flow.InPort }
func setMatchInPort(m *Match, port uint32) {
	m.Flow.InPort = port
	m.Wildcards.Masks.InPort = ^uint32(0)
}

// decodeMatchEntries decodes OXM entries without framing (the metadata of
// NXT_PACKET_IN2).
func decodeMatchEntries(b []byte) (Match, error) {
	if len(b) != 0 {
		return Match{}, errMatchStandIn
	}
	return Match{}, nil
}

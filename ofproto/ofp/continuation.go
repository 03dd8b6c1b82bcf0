package ofp

import (
	"encoding/binary"

	"gvs/ofproto/ofperr"
)

// Continuation is the state a translation paused by a controller action
// with "pause" resumes from (Open vSwitch's ofputil_packet_in_private
// minus the packet-in itself). It travels opaquely to the controller in
// PacketIn.Continuation and comes back in Resume.Continuation; only the
// switch that made it reads it, so its encoding is Open vSwitch's
// NXCPT_* properties, for interoperability with tools that print it.
type Continuation struct {
	Bridge      [16]byte // the bridge's id, opaque (Open vSwitch puts its struct uuid in host order); zero when absent
	Stack       [][]byte // the NXAST_STACK stack, top first (as sent)
	Mirrors     uint32
	Conntracked bool
	// Steps are the actions still to run, in the groups Open vSwitch
	// writes: each with the table and cookie of the rule they came from
	// (the first step starts at table 0, cookie 0).
	Steps     []ContinuationStep
	ActionSet []Action
	ODPPort   uint32 // datapath in_port; 0 when absent
}

// ContinuationStep is a group of actions from one rule.
type ContinuationStep struct {
	TableID uint8
	Cookie  uint64
	Actions []Action
}

// NXCPT_* continuation property types.
const (
	cptBridge      = 0x8000
	cptStack       = 0x8001
	cptMirrors     = 0x8002
	cptConntracked = 0x8003
	cptTableID     = 0x8004
	cptCookie      = 0x8005
	cptActions     = 0x8006
	cptActionSet   = 0x8007
	cptODPPort     = 0x8008
)

// appendNested appends a property whose body starts 8-byte aligned (4
// bytes of padding after the header), as ofpprop_start_nested does.
func appendNested(b []byte, typ uint16, body func([]byte) []byte) []byte {
	start := len(b)
	b = put16(b, typ)
	b = put16(b, 0)
	b = pad(b, 4)
	b = body(b)
	setLen16(b, start, 2)
	return pad8(b, start)
}

// Append encodes c for version (the actions' encoding depends on it).
func (c *Continuation) Append(b []byte, version uint8) []byte {
	if c.Bridge != [16]byte{} {
		b = appendProp(b, cptBridge, c.Bridge[:], 8)
	}
	for _, v := range c.Stack {
		b = appendProp(b, cptStack, v, 8)
	}
	if c.Mirrors != 0 {
		b = appendProp(b, cptMirrors, u32Body(c.Mirrors), 8)
	}
	if c.Conntracked {
		b = appendProp(b, cptConntracked, nil, 8)
	}
	var table uint8
	var cookie uint64
	for _, s := range c.Steps {
		if s.TableID != table {
			b = appendProp(b, cptTableID, []byte{s.TableID}, 8)
			table = s.TableID
		}
		if s.Cookie != cookie {
			b = appendProp(b, cptCookie, binary.BigEndian.AppendUint64(make([]byte, 4), s.Cookie), 8)
			cookie = s.Cookie
		}
		if len(s.Actions) > 0 {
			b = appendNested(b, cptActions, func(b []byte) []byte { return appendActions(b, s.Actions, version) })
		}
	}
	if len(c.ActionSet) > 0 {
		b = appendNested(b, cptActionSet, func(b []byte) []byte { return appendActions(b, c.ActionSet, version) })
	}
	if c.ODPPort != 0 {
		b = appendProp(b, cptODPPort, u32Body(c.ODPPort), 8)
	}
	return b
}

// ParseContinuation decodes a continuation made by Append (as echoed in a
// Resume), with Open vSwitch's errors for malformed ones.
func ParseContinuation(b []byte, version uint8) (*Continuation, error) {
	props, err := pullProps(b, 8)
	if err != nil {
		return nil, err
	}
	c := &Continuation{}
	var table uint8
	var cookie uint64
	for _, p := range props {
		switch p.Type {
		case cptBridge:
			if len(p.Body) != 16 {
				return nil, ofperr.OFPBPC_BAD_LEN
			}
			copy(c.Bridge[:], p.Body)
		case cptStack:
			c.Stack = append(c.Stack, p.Body)
		case cptMirrors:
			if c.Mirrors, err = propU32(p); err != nil {
				return nil, err
			}
		case cptConntracked:
			c.Conntracked = true
		case cptTableID:
			if len(p.Body) < 1 {
				return nil, ofperr.OFPBPC_BAD_LEN
			}
			table = p.Body[0]
		case cptCookie:
			if len(p.Body) != 12 {
				return nil, ofperr.OFPBPC_BAD_LEN
			}
			cookie = binary.BigEndian.Uint64(p.Body[4:])
		case cptActions, cptActionSet:
			if len(p.Body) < 4 {
				return nil, ofperr.OFPBPC_BAD_LEN
			}
			acts, err := pullActions(p.Body[4:], version)
			if err != nil {
				return nil, err
			}
			if p.Type == cptActions {
				c.Steps = append(c.Steps, ContinuationStep{TableID: table, Cookie: cookie, Actions: acts})
			} else {
				c.ActionSet = acts
			}
		case cptODPPort:
			if c.ODPPort, err = propU32(p); err != nil {
				return nil, err
			}
		default:
			return nil, ofperr.OFPBPC_BAD_TYPE
		}
	}
	return c, nil
}

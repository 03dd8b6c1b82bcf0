package ofproto

import (
	"encoding/binary"
	"sync"

	"gvs/ofproto/ofpact"
	"gvs/ofproto/ofperr"
	"gvs/ofproto/xlate"
)

// Continuations of paused translations (controller(pause)). Open vSwitch
// serializes the frozen state into the packet-in; gvs keeps it here and
// sends an id the controller hands back with NXT_RESUME. A bridge keeps
// the latest maxContinuations; an older one is stale (NXR_STALE).
const maxContinuations = 4096

// A continuation is what Open vSwitch's NXPINT_CONTINUATION carries: its
// private properties, which controllers (ovn-controller, ovs-ofctl)
// decode. NXCPT_BRIDGE holds the bridge's tag and the state's id (Open
// vSwitch puts the bridge's UUID there); NXCPT_ACTIONS the actions still
// to run and NXCPT_ODP_PORT the input's datapath port, for the
// controller's information: resuming needs only the id.
const (
	nxcptBridge  = 0x8000
	nxcptActions = 0x8006
	nxcptODPPort = 0x8008
)

type continuations struct {
	mu    sync.Mutex
	next  uint64
	byID  map[uint64]*xlate.Frozen
	order []uint64
	tag   uint64
}

// saveContinuation keeps fz and returns the continuation bytes for it.
func (b *Bridge) saveContinuation(fz *xlate.Frozen) []byte {
	c := &b.conts
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byID == nil {
		c.byID = map[uint64]*xlate.Frozen{}
		c.tag = uint64(b.now().UnixNano())
	}
	c.next++
	id := c.next
	c.byID[id] = fz
	c.order = append(c.order, id)
	if len(c.order) > maxContinuations {
		delete(c.byID, c.order[0])
		c.order = c.order[1:]
	}
	return b.encodeContinuation(c.tag, id, fz)
}

// encodeContinuation builds the private properties of a continuation.
func (b *Bridge) encodeContinuation(tag, id uint64, fz *xlate.Frozen) []byte {
	prop := func(out []byte, typ uint16, body []byte) []byte {
		n := 4 + len(body)
		out = binary.BigEndian.AppendUint16(out, typ)
		out = binary.BigEndian.AppendUint16(out, uint16(n))
		out = append(out, body...)
		for n%8 != 0 {
			out, n = append(out, 0), n+1
		}
		return out
	}
	var uuid [16]byte
	binary.BigEndian.PutUint64(uuid[:], tag)
	binary.BigEndian.PutUint64(uuid[8:], id)
	out := prop(nil, nxcptBridge, uuid[:])
	if acts := ofpacts(fz.Actions); len(acts) > 0 {
		// A nested property: its content starts 8-byte aligned.
		out = prop(out, nxcptActions, ofpact.AppendActions(make([]byte, 4), acts, continuationVersion))
	}
	if fz.HasODPInPort {
		out = prop(out, nxcptODPPort, binary.BigEndian.AppendUint32(nil, fz.ODPInPort))
	} else if p := b.Port(fz.Flow.InPort); p != nil {
		out = prop(out, nxcptODPPort, binary.BigEndian.AppendUint32(nil, p.DPPort))
	}
	return out
}

// continuationVersion is the OpenFlow version a continuation's actions
// are encoded in (Nicira's NXT_PACKET_IN2 is an OpenFlow 1.0 extension).
const continuationVersion = 0x01

// continuation finds the frozen state of continuation bytes.
func (b *Bridge) continuation(p []byte) (*xlate.Frozen, error) {
	c := &b.conts
	c.mu.Lock()
	defer c.mu.Unlock()
	// The NXCPT_BRIDGE property comes first.
	if len(p) < 20 || binary.BigEndian.Uint16(p) != nxcptBridge || binary.BigEndian.Uint16(p[2:]) != 20 ||
		c.byID == nil || binary.BigEndian.Uint64(p[4:]) != c.tag {
		return nil, ofperr.NXR_STALE
	}
	fz := c.byID[binary.BigEndian.Uint64(p[12:])]
	if fz == nil {
		return nil, ofperr.NXR_STALE
	}
	return fz, nil
}

// ResumeFunc continues a paused translation on frame (the switch layer
// installs it).
type ResumeFunc func(b *Bridge, fz *xlate.Frozen, frame []byte) error

// SetResume installs the function that resumes paused translations.
func (b *Bridge) SetResume(fn ResumeFunc) { b.resumeFn.Store(&fn) }

// Resume continues the translation a continuation froze, on frame.
func (b *Bridge) Resume(cont, frame []byte) error {
	fz, err := b.continuation(cont)
	if err != nil {
		return err
	}
	fn := b.resumeFn.Load()
	if fn == nil {
		return ofperr.NXR_NOT_SUPPORTED
	}
	return (*fn)(b, fz, frame)
}

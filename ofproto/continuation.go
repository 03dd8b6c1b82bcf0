package ofproto

import (
	"encoding/binary"
	"sync"

	"gvs/ofproto/connmgr"
	"gvs/ofproto/ofp"
	"gvs/ofproto/ofperr"
	"gvs/ofproto/xlate"
)

// Continuations of paused translations (controller(pause)). Open vSwitch
// serializes the frozen state into the packet-in; gvs keeps it here and
// sends an id the controller hands back with NXT_RESUME. A bridge keeps
// the latest maxContinuations; an older one is stale (NXR_STALE).
const maxContinuations = 4096

// continuationMagic marks gvs's continuations (and which bridge made
// them cannot be confused: ids are per bridge and the magic includes a
// per-bridge random part).
const continuationLen = 16

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
	out := make([]byte, continuationLen)
	binary.BigEndian.PutUint64(out, c.tag)
	binary.BigEndian.PutUint64(out[8:], id)
	return out
}


// encodeContinuation keeps fz and returns its continuation in Open
// vSwitch's NXCPT_* form, so that controllers and ovs-ofctl can read it:
// the bridge property carries gvs's id for the kept state (what Resume
// looks up), the rest describes the state as Open vSwitch would (the
// actions still to run with their rule's table and cookie, the action
// set, the datapath input port).
// TODO: the push/pop stack (NXCPT_STACK) is not described.
func (b *Bridge) encodeContinuation(fz *xlate.Frozen) []byte {
	c := ofp.Continuation{
		Steps:     []ofp.ContinuationStep{{TableID: fz.Table, Cookie: fz.Cookie, Actions: fz.Actions}},
		ActionSet: fz.ActionSet,
	}
	copy(c.Bridge[:], b.saveContinuation(fz))
	if p := b.Port(fz.Flow.InPort); p != nil {
		c.ODPPort = p.DPPort
	}
	return c.Append(nil, connmgr.ContinuationVersion)
}

// continuation finds the frozen state of continuation bytes.
func (b *Bridge) continuation(p []byte) (*xlate.Frozen, error) {
	// The NXCPT_BRIDGE property comes first: a 4-byte header, then the
	// 16 bytes saveContinuation made.
	if len(p) >= 20 && binary.BigEndian.Uint16(p) == 0x8000 && binary.BigEndian.Uint16(p[2:]) == 20 {
		p = p[4:20]
	}
	c := &b.conts
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(p) != continuationLen || c.byID == nil || binary.BigEndian.Uint64(p) != c.tag {
		return nil, ofperr.NXR_STALE
	}
	fz := c.byID[binary.BigEndian.Uint64(p[8:])]
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

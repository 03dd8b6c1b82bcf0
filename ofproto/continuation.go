package ofproto

import (
	"encoding/binary"
	"sync"

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

// continuation finds the frozen state of continuation bytes.
func (b *Bridge) continuation(p []byte) (*xlate.Frozen, error) {
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

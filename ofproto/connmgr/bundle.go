package connmgr

import (
	"time"

	"gvs/ofproto/ofp"
	"gvs/ofproto/ofperr"
)

// bundleIdleTimeout is Open vSwitch's default bundle idle timeout: an
// open bundle untouched this long is discarded with OFPBFC_TIMEOUT.
const bundleIdleTimeout = 10 * time.Second

// bundle is one open or closed bundle of a connection (struct
// ofp_bundle): its messages, each with the BUNDLE_ADD_MESSAGE that
// carried it (errors echo that one).
type bundle struct {
	id     uint32
	flags  uint16
	closed bool
	used   time.Time
	open   []byte // the request that opened it (its timeout error echoes it)
	msgs   []BundleMsg
	adds   [][]byte
}

// bundleOpen is ofp_bundle_open.
func (c *ofconn) bundleOpen(id uint32, flags uint16, req []byte, now time.Time) error {
	if _, ok := c.state.bundles[id]; ok {
		delete(c.state.bundles, id)
		return ofperr.OFPBFC_BAD_ID
	}
	c.state.bundles[id] = &bundle{id: id, flags: flags, used: now, open: req}
	return nil
}

// bundleClose is ofp_bundle_close.
func (c *ofconn) bundleClose(id uint32, flags uint16, now time.Time) error {
	b := c.state.bundles[id]
	switch {
	case b == nil:
		return ofperr.OFPBFC_BAD_ID
	case b.closed:
		delete(c.state.bundles, id)
		return ofperr.OFPBFC_BUNDLE_CLOSED
	case b.flags != flags:
		delete(c.state.bundles, id)
		return ofperr.OFPBFC_BAD_FLAGS
	}
	b.used, b.closed = now, true
	return nil
}

// bundleDiscard is ofp_bundle_discard.
func (c *ofconn) bundleDiscard(id uint32) error {
	if _, ok := c.state.bundles[id]; !ok {
		return ofperr.OFPBFC_BAD_ID
	}
	delete(c.state.bundles, id)
	return nil
}

// bundleAdd is ofp_bundle_add_message: a message for a bundle not open
// yet opens it implicitly.
func (c *ofconn) bundleAdd(id uint32, flags uint16, msg BundleMsg, req []byte, now time.Time) error {
	b := c.state.bundles[id]
	switch {
	case b == nil:
		b = &bundle{id: id, flags: flags, open: req}
		c.state.bundles[id] = b
	case b.closed:
		delete(c.state.bundles, id)
		return ofperr.OFPBFC_BUNDLE_CLOSED
	case b.flags != flags:
		delete(c.state.bundles, id)
		return ofperr.OFPBFC_BAD_FLAGS
	}
	b.used = now
	b.msgs = append(b.msgs, msg)
	b.adds = append(b.adds, req)
	return nil
}

// bundleCommit is do_bundle_commit: the bridge applies the bundle all or
// nothing; on failure the failing message's error goes back for its
// BUNDLE_ADD_MESSAGE, and the commit fails with OFPBFC_MSG_FAILED. The
// bundle is gone afterwards either way.
func (m *Manager) bundleCommit(c *ofconn, id uint32, flags uint16, o Origin) error {
	b := c.state.bundles[id]
	if b == nil {
		return ofperr.OFPBFC_BAD_ID
	}
	delete(c.state.bundles, id)
	if b.flags != flags {
		return ofperr.OFPBFC_BAD_FLAGS
	}
	failed, err := m.br.CommitBundle(b.msgs, flags, o)
	if err != nil {
		if failed >= 0 && failed < len(b.adds) {
			m.sendError(c, b.adds[failed], err)
		}
		return ofperr.OFPBFC_MSG_FAILED
	}
	return nil
}

// expireBundles is bundle_remove_expired: bundles idle for too long are
// discarded, each with an OFPBFC_TIMEOUT error echoing the request that
// opened it.
func (m *Manager) expireBundles(c *ofconn) {
	now := m.now()
	for id, b := range c.state.bundles {
		if now.Sub(b.used) >= bundleIdleTimeout {
			delete(c.state.bundles, id)
			m.sendError(c, b.open, ofperr.OFPBFC_TIMEOUT)
		}
	}
}

// bundleControl is handle_bundle_control.
func (m *Manager) bundleControl(c *ofconn, h *ofp.Header, bc *ofp.BundleControl, req []byte) error {
	if err := rejectSlave(c); err != nil {
		return err
	}
	now := m.now()
	var err error
	var replyType uint16
	switch bc.Type {
	case ofp.BundleOpenRequest:
		err, replyType = c.bundleOpen(bc.BundleID, bc.Flags, req, now), ofp.BundleOpenReply
	case ofp.BundleCloseRequest:
		err, replyType = c.bundleClose(bc.BundleID, bc.Flags, now), ofp.BundleCloseReply
	case ofp.BundleCommitRequest:
		err, replyType = m.bundleCommit(c, bc.BundleID, bc.Flags, m.origin(c, h)), ofp.BundleCommitReply
	case ofp.BundleDiscardRequest:
		err, replyType = c.bundleDiscard(bc.BundleID), ofp.BundleDiscardReply
	default:
		return ofperr.OFPBFC_BAD_TYPE
	}
	if err != nil {
		return err
	}
	m.reply(c, h.Xid, &ofp.BundleControl{BundleID: bc.BundleID, Type: replyType})
	return nil
}

// bundleAddMessage is handle_bundle_add: the inner message is decoded
// now (its errors answer the add), applied at commit.
func (m *Manager) bundleAddMessage(c *ofconn, h *ofp.Header, ba *ofp.BundleAdd, req []byte) error {
	if err := rejectSlave(c); err != nil {
		return err
	}
	_, inner, err := ba.Inner()
	if err != nil {
		return err
	}
	var bm BundleMsg
	switch inner := inner.(type) {
	case *ofp.FlowMod:
		m.fixFlowModTable(c, inner)
		bm.FlowMod = inner
	case *ofp.GroupMod:
		bm.GroupMod = inner
	case *ofp.PortMod:
		bm.PortMod = inner
	case *ofp.PacketOut:
		bm.PacketOut = inner
	default:
		return ofperr.OFPBFC_MSG_UNSUP
	}
	if bp, ok := m.br.(BundlePreparer); ok {
		bp.PrepareBundleMsg(&bm)
	}
	return c.bundleAdd(ba.BundleID, ba.Flags, bm, req, m.now())
}

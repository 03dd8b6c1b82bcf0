package ofproto

import (
	"gvs/ofproto/mf"
	"gvs/ofproto/ofperr"
	"gvs/ofproto/pipeline"
	"gvs/ofproto/xlate"
)

// PortMod is a decoded port mod (struct ofputil_port_mod).
type PortMod struct {
	OFPort       uint32
	HWAddr       [6]byte
	Config, Mask xlate.PortFlags
}

// PacketOut is a decoded packet out: a packet to run through actions (or,
// with an output to TABLE, through the tables) as if it came in on
// InPort (a port, mf.PortController or mf.PortLocal).
type PacketOut struct {
	InPort  uint32
	Packet  []byte
	Actions []pipeline.Action
	// Flow, when not nil, is the packet's metadata (OpenFlow 1.5's
	// packet-out match: registers, metadata, tunnel...).
	Flow *mf.Flow
}

// BundleMsg is one message of a bundle; exactly one field is set
// (AddRequester goes with Add).
type BundleMsg struct {
	FlowMod   *pipeline.FlowMod
	GroupMod  *pipeline.GroupMod
	PortMod   *PortMod
	PacketOut *PacketOut
	// Add is an add flow mod prepared when it was added to the bundle.
	Add          *pipeline.PreparedAdd
	AddRequester any
}

// PacketOutFunc runs a packet out through the pipeline at a version (the
// switch layer installs it; translation and execution are not the
// bridge's).
type PacketOutFunc func(b *Bridge, po *PacketOut, version uint64) error

// SetPacketOut installs the function that executes packet outs.
func (b *Bridge) SetPacketOut(fn PacketOutFunc) { b.packetOut.Store(&fn) }

// PacketOut runs a packet out at the current version.
func (b *Bridge) PacketOut(po *PacketOut) error {
	if err := b.checkPacketOut(po); err != nil {
		return err
	}
	if err := b.checkPacketOutActions(po); err != nil {
		return err
	}
	return b.runPacketOut(po, b.Version())
}

func (b *Bridge) runPacketOut(po *PacketOut, version uint64) error {
	fn := b.packetOut.Load()
	if fn == nil {
		return ofperr.OFPBRC_EPERM
	}
	return (*fn)(b, po, version)
}

// checkPacketOut is ofproto_packet_out_init's check of the input port:
// a real port of the bridge, LOCAL, CONTROLLER or NONE.
func (b *Bridge) checkPacketOut(po *PacketOut) error {
	switch po.InPort {
	case mf.PortLocal, mf.PortController, mf.PortNone:
		return nil
	}
	if po.InPort >= mf.PortMax || b.Port(po.InPort) == nil {
		return ofperr.OFPBRC_BAD_PORT
	}
	return nil
}

// checkPacketOutActions is ofproto_packet_out_start's
// ofproto_check_ofpacts: groups and meters the actions name must exist.
func (b *Bridge) checkPacketOutActions(po *PacketOut) error { return b.pipe.CheckActions(po.Actions) }

// ApplyPortMod applies a port mod now.
func (b *Bridge) ApplyPortMod(pm *PortMod) error {
	return b.PortMod(pm.OFPort, pm.HWAddr, pm.Config, pm.Mask)
}

// checkPortMod is port_mod_start: the port exists with that address.
func (b *Bridge) checkPortMod(pm *PortMod) error {
	p := b.Port(pm.OFPort)
	if p == nil {
		return ofperr.OFPPMFC_BAD_PORT
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if st := b.byName[p.Name]; st == nil || st.hw != pm.HWAddr {
		return ofperr.OFPPMFC_BAD_HW_ADDR
	}
	return nil
}

// CommitBundle applies a bundle as Open vSwitch's do_bundle_commit: every
// flow and group mod starts in one transaction at the next version (port
// mods, which are not atomic, fail an atomic bundle with
// OFPBFC_MSG_FAILED, and are only checked here otherwise); on the first
// error everything is reverted and failed is that message's index, err
// its error. On success the version is published at once (no lookup sees
// part of the bundle), then the port mods and packet outs run in order.
func (b *Bridge) CommitBundle(msgs []BundleMsg, atomic bool) (failed int, err error) {
	return b.commitBundle(len(msgs), func(i int, m *BundleMsg) error { *m = msgs[i]; return nil }, atomic)
}

// commitBundle is CommitBundle over n messages that get converts one at a
// time (into m, reused: a flow mod is applied before the next is
// converted, so a bundle of 100,000 flows holds no second copy of them).
// A conversion error fails the bundle at that message.
func (b *Bridge) commitBundle(n int, get func(i int, m *BundleMsg) error, atomic bool) (failed int, err error) {
	t := b.pipe.Begin()
	var later []BundleMsg // port mods and packet outs, run after the commit
	var m BundleMsg
	for i := range n {
		m = BundleMsg{}
		if err = get(i, &m); err == nil {
			switch {
			case m.FlowMod != nil:
				err = t.FlowMod(m.FlowMod)
			case m.Add != nil:
				err = t.AddPrepared(m.Add, m.AddRequester)
			case m.GroupMod != nil:
				err = t.GroupMod(m.GroupMod)
			case m.PortMod != nil:
				if atomic {
					err = ofperr.OFPBFC_MSG_FAILED
				} else if err = b.checkPortMod(m.PortMod); err == nil {
					later = append(later, m)
				}
			case m.PacketOut != nil:
				if err = b.checkPacketOut(m.PacketOut); err == nil {
					err = t.CheckActions(m.PacketOut.Actions)
				}
				if err == nil {
					later = append(later, m)
				}
			}
		}
		if err != nil {
			t.Abort()
			return i, err
		}
	}
	version := t.Version()
	t.Commit()
	for _, m := range later {
		switch {
		case m.PortMod != nil:
			if err := b.ApplyPortMod(m.PortMod); err != nil {
				b.log.Warn("bundle port mod", "bridge", b.name, "err", err)
			}
		case m.PacketOut != nil:
			if err := b.runPacketOut(m.PacketOut, version); err != nil {
				b.log.Warn("bundle packet out", "bridge", b.name, "err", err)
			}
		}
	}
	return -1, nil
}

package upcall

import (
	"time"

	"errors"
	"slices"

	"gvs/dpif"
	"gvs/ofproto/mf"
	"gvs/ofproto/xlate"
	"gvs/packet"
)

// Executor runs datapath actions on one packet (dpif.Datapath.Execute).
type Executor interface {
	Execute(frame []byte, inPort uint32, actions dpif.Actions) error
}

// ErrShortPacket is PacketOut's error for a frame without an Ethernet
// header.
var ErrShortPacket = errors.New("upcall: packet shorter than an Ethernet header")

// PacketOut runs an OpenFlow packet-out: actions applied to frame as if
// it had arrived on OpenFlow port inPort (mf.PortController or
// mf.PortNone for "from the controller"), with their side effects
// (packet-ins, NORMAL learning, learned flows), then executed by dp. It
// returns the translation's error, if any (the packet is then dropped).
func (h *Handler) PacketOut(dp Executor, br Bridge, inPort uint32, frame []byte, actions []xlate.Action) error {
	return h.execute(dp, br, inPort, frame, xlate.Input{Actions: actions, PacketOut: true})
}

// PacketOutSpec is a packet-out with everything OpenFlow 1.5 can give
// it: the pipeline fields (registers, metadata, tun_id, pkt_mark: the
// packet-out's match) and the table version (a bundle's packet-out runs
// at the version the bundle committed).
type PacketOutSpec struct {
	InPort  uint32
	Frame   []byte
	Actions []xlate.Action
	// Meta, if non-nil, gives the pipeline fields: Metadata, Regs, TunID,
	// PktMark (its packet fields are ignored: the frame's are used).
	Meta *mf.Flow
	// Version, if non-zero, is the table version to translate at.
	Version uint64
}

// PacketOutSpec runs a packet-out as PacketOut does, with metadata and a
// version.
func (h *Handler) PacketOutSpec(dp Executor, br Bridge, po PacketOutSpec) error {
	in := xlate.Input{Actions: po.Actions, PacketOut: true, Version: po.Version}
	if po.Meta != nil {
		in.Flow.Metadata, in.Flow.Regs = po.Meta.Metadata, po.Meta.Regs
		in.Flow.TunID, in.Flow.PktMark = po.Meta.TunID, po.Meta.PktMark
	}
	return h.execute(dp, br, po.InPort, po.Frame, in)
}

// Resume continues a paused translation (NXT_RESUME) on frame, the
// packet the controller sends back with the continuation.
func (h *Handler) Resume(dp Executor, br Bridge, fz *xlate.Frozen, frame []byte) error {
	in := xlate.Input{Frozen: fz, Table: fz.Table, Actions: fz.Actions}
	return h.execute(dp, br, fz.Flow.InPort, frame, in)
}

func (h *Handler) execute(dp Executor, br Bridge, inPort uint32, frame []byte, in xlate.Input) error {
	if len(frame) < 14 {
		return ErrShortPacket
	}
	var k packet.Key
	packet.Parse(frame, &k)
	dpIn := uint32(mf.PortNone)
	if p := br.Port(inPort); p != nil {
		dpIn = p.DPPort
	}
	k.InPort = dpIn
	if in.Version == 0 {
		in.Version = br.Version()
	}
	in.Bridge, in.Packet, in.SideEffects, in.Recirc = br, frame, true, h.recirc
	if in.Frozen != nil {
		in.Flow = in.Frozen.Thaw(&k)
		if in.Frozen.Pause {
			// The frame carries no conntrack state: the continuation
			// does (Open vSwitch's continuation metadata).
			copyConntrack(&in.Flow, &in.Frozen.Flow)
		}
	} else {
		tun, mark := in.Flow.TunID, in.Flow.PktMark
		in.Flow.Key = k
		in.Flow.InPort = inPort
		in.Flow.TunID, in.Flow.PktMark = tun, mark
	}
	t := h.xl.Get().(*xlate.Translator)
	defer h.xl.Put(t)
	res := t.Translate(&in)
	for i := range res.Cache.Learned {
		_ = br.Learn(&res.Cache.Learned[i])
	}
	for i := range res.PacketIns {
		pi := res.PacketIns[i]
		pi.Packet = slices.Clone(pi.Packet) // the caller's frame
		br.SendPacketIn(&pi)
	}
	if len(res.Cache.Learned) > 0 {
		h.Changed()
	}
	if res.Error != nil {
		return res.Error
	}
	// The packet counts where it went, as Open vSwitch's packet-out
	// translation credits its resubmit statistics (rules, groups, patch
	// ports crossed).
	xlate.PushStats(br, &res.Cache, xlate.Stats{Packets: 1, Bytes: uint64(len(frame)), Used: time.Now()})
	if len(res.Actions) == 0 {
		return nil
	}
	return dp.Execute(frame, dpIn, res.Actions)
}

// copyConntrack copies the conntrack fields of src into dst.
func copyConntrack(dst, src *mf.Flow) {
	dst.CTState, dst.CTZone, dst.CTMark, dst.CTLabel = src.CTState, src.CTZone, src.CTMark, src.CTLabel
	dst.CTNwProto, dst.CTNwSrc, dst.CTNwDst = src.CTNwProto, src.CTNwSrc, src.CTNwDst
	dst.CTIPv6Src, dst.CTIPv6Dst, dst.CTTpSrc, dst.CTTpDst = src.CTIPv6Src, src.CTIPv6Dst, src.CTTpSrc, src.CTTpDst
}

package upcall

import (
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
	in.Bridge, in.Version, in.Packet, in.SideEffects, in.Recirc = br, br.Version(), frame, true, h.recirc
	if in.Frozen != nil {
		in.Flow = in.Frozen.Thaw(&k)
	} else {
		in.Flow.Key = k
		in.Flow.InPort = inPort
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
	if len(res.Actions) == 0 {
		return nil
	}
	return dp.Execute(frame, dpIn, res.Actions)
}

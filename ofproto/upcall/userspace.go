package upcall

import (
	"slices"
	"time"

	"gvs/dpif"
	"gvs/ofproto/xlate"
)

var _ dpif.UserspaceHandler = (*Handler)(nil)

// UserspaceAction implements dpif.UserspaceHandler: a packet took a
// cached flow's controller action; its cookie names the frozen state
// that holds the rest of the packet-in.
func (h *Handler) UserspaceAction(u *dpif.UserspaceUpcall) {
	c := u.Cookie
	if c != nil && c.Type == dpif.CookieSlowPath {
		h.slowPathPacket(u)
		return
	}
	if c == nil || c.Type != dpif.CookieController || c.DontSend {
		return
	}
	fz := h.recirc.Lookup(c.RecircID)
	if fz == nil {
		return
	}
	br, ok := fz.Bridge.(Bridge)
	if !ok {
		return
	}
	pi := xlate.PacketIn{
		Reason: xlate.PacketInReason(c.Reason), TableID: fz.Table, Cookie: c.RuleCookie,
		ControllerID: c.ControllerID, MaxLen: c.MaxLen, Userdata: fz.Userdata,
		Flow: fz.Thaw(u.Key), Packet: slices.Clone(u.Packet),
	}
	if c.Continuation {
		// Frozen states are shared by every packet that pauses at the
		// same place; the continuation also carries this packet's
		// conntrack state, which resuming restores.
		cont := *fz
		copyConntrack(&cont.Flow, &pi.Flow)
		cont.ODPInPort, cont.HasODPInPort = u.Key.InPort, true
		pi.Continuation = &cont
	}
	br.SendPacketIn(&pi)
}

// slowPathPacket handles a packet of a slow-pathed flow: translated with
// the packet, its side effects carried out, its actions executed.
func (h *Handler) slowPathPacket(u *dpif.UserspaceUpcall) {
	b, ok := (*h.ports.Load())[u.Key.InPort]
	if !ok || b.Bridge == nil || b.Port == nil {
		return
	}
	in, ok := h.input(&b, u.Key)
	if !ok {
		return
	}
	in.Packet = u.Packet
	t := h.xl.Get().(*xlate.Translator)
	defer h.xl.Put(t)
	res := t.Translate(&in)
	h.sideEffects(b.Bridge, res)
	if res.Error != nil || len(res.Actions) == 0 {
		return
	}
	meta := *u.Key
	if err := h.dp.ExecuteKey(u.Packet, &meta, res.Actions); err != nil {
		h.log.Debug("slow path execute", "err", err)
	}
}

// noteRecircIDs records the frozen states an installed flow refers to.
func (r *revalidator) noteRecircIDs(fe *dpif.FlowEntry) {
	var walk func(dpif.Actions)
	walk = func(as dpif.Actions) {
		for i := range as {
			a := &as[i]
			switch a.Kind {
			case dpif.ActUserspace:
				if a.Userspace != nil {
					r.live[a.Userspace.RecircID] = true
				}
			case dpif.ActRecirc:
				r.live[a.Arg] = true
			}
			walk(a.Nested[0])
			walk(a.Nested[1])
		}
	}
	walk(fe.Actions)
	r.live[fe.Key.RecircID] = true
}

// sweepRecirc frees the frozen states no installed flow refers to and no
// translation used for a while.
func (r *revalidator) sweepRecirc() {
	r.h.recirc.Sweep(func(id uint32) bool { return r.live[id] }, time.Now().Add(-recircGrace))
}

// recircGrace keeps a frozen state this long after its last use, for
// packets already on their way up.
const recircGrace = 10 * time.Second

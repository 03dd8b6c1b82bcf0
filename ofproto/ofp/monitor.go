package ofp

import (
	"encoding/binary"

	"gvs/ofproto/ofperr"
)

// Flow monitor flags (OpenFlow 1.4's OFPFMF_*; the Nicira and ONF forms
// are converted) and commands (OFPFMC_*).
const (
	MonitorInitial      uint16 = 1 << 0
	MonitorAdd          uint16 = 1 << 1
	MonitorRemoved      uint16 = 1 << 2
	MonitorModify       uint16 = 1 << 3
	MonitorInstructions uint16 = 1 << 4
	MonitorNoAbbrev     uint16 = 1 << 5
	MonitorOnlyOwn      uint16 = 1 << 6

	MonitorCommandAdd    uint8 = 0
	MonitorCommandModify uint8 = 1
	MonitorCommandDelete uint8 = 2
)

// Flow update events (OpenFlow 1.4's OFPFME_*; Nicira's are converted).
const (
	UpdateInitial  uint16 = 0
	UpdateAdded    uint16 = 1
	UpdateRemoved  uint16 = 2
	UpdateModified uint16 = 3
	UpdateAbbrev   uint16 = 4
	UpdatePaused   uint16 = 5
	UpdateResumed  uint16 = 6
)

func nxToMonitorFlags(f uint16) uint16 {
	return f&0x1f | (f&0x20)<<1
}

func monitorToNXFlags(f uint16) uint16 {
	return f&0x1f | (f&MonitorOnlyOwn)>>1
}

// FlowMonitor is one monitor of a flow monitor request
// (ofputil_flow_monitor_request). OutPort in the 16-bit space.
type FlowMonitor struct {
	ID       uint32
	Command  uint8
	Flags    uint16
	OutPort  uint32
	OutGroup uint32
	TableID  uint8
	Match    Match
}

// FlowMonitorRequest (NXST_FLOW_MONITOR in 1.0-1.2, ONFST13_ in 1.3,
// OFPST14_ in 1.4+).
type FlowMonitorRequest struct {
	Multipart
	Monitors []FlowMonitor
}

func (*FlowMonitorRequest) raw(v uint8) (Raw, error) {
	return pick(v, rawNXFlowMonitorRequest, rawONF13FlowMonitorRequest, raw14FlowMonitorRequest)
}

func (m *FlowMonitorRequest) appendBody(b []byte, v uint8) ([]byte, error) {
	for i := range m.Monitors {
		fm := &m.Monitors[i]
		start := len(b)
		switch {
		case v <= Version12:
			b = put32(b, fm.ID)
			b = put16(b, monitorToNXFlags(fm.Flags))
			b = put16(b, uint16(fm.OutPort))
			b = put16(b, 0)
			b = put8(b, fm.TableID)
			b = pad(b, 5)
			var n int
			b, n = appendNXMatch(b, &fm.Match, 0, 0, 0)
			binary.BigEndian.PutUint16(b[start+8:], uint16(n))
			b = pad(b, roundUp8(n)-n)
		case v == Version13:
			b = put32(b, fm.ID)
			b = put16(b, monitorToNXFlags(fm.Flags))
			b = put16(b, 0)
			b = put32(b, PortTo11(fm.OutPort))
			b = put8(b, fm.TableID)
			b = pad(b, 3)
			ms := len(b)
			b = appendOXMMatch(b, &fm.Match, v)
			binary.BigEndian.PutUint16(b[start+6:], binary.BigEndian.Uint16(b[ms+2:]))
		default:
			b = put32(b, fm.ID)
			b = put32(b, PortTo11(fm.OutPort))
			b = put32(b, fm.OutGroup)
			b = put16(b, fm.Flags)
			b = put8(b, fm.TableID)
			b = put8(b, fm.Command)
			b = appendOXMMatch(b, &fm.Match, v)
		}
	}
	return b, nil
}

func pullFlowMonitorRequest(m *FlowMonitorRequest, h *Header, r *reader) error {
	for r.len() > 0 {
		if r.len() < 16 {
			return ofperr.OFPBRC_BAD_LEN
		}
		fm := FlowMonitor{OutGroup: GroupAny}
		var err error
		switch h.Raw {
		case rawNXFlowMonitorRequest, rawONF13FlowMonitorRequest:
			fm.ID = r.u32()
			flags := r.u16()
			var matchLen int
			if h.Raw == rawNXFlowMonitorRequest {
				fm.OutPort = uint32(r.u16())
				matchLen = int(r.u16())
			} else {
				r.u16()
				fm.OutPort, err = PortFrom11(r.u32())
			}
			fm.TableID = r.u8()
			zeros := r.take(map[bool]int{true: 5, false: 3}[h.Raw == rawNXFlowMonitorRequest])
			if flags&(2|4|8) == 0 || flags&^0x3f != 0 {
				return ofperr.OFPMOFC_BAD_FLAGS
			}
			for _, z := range zeros {
				if z != 0 {
					return ofperr.NXBRC_MUST_BE_ZERO
				}
			}
			if err != nil {
				return err
			}
			fm.Flags = nxToMonitorFlags(flags)
			var rest []byte
			if h.Raw == rawNXFlowMonitorRequest {
				fm.Match, _, _, rest, err = pullNXMatchCookie(r.rest(), matchLen, false)
			} else {
				fm.Match, rest, err = pullMatch11(r.rest(), h.Version)
			}
			if err != nil {
				return err
			}
			r.b = rest
		default:
			fm.ID = r.u32()
			out := r.u32()
			fm.OutGroup = r.u32()
			fm.Flags = r.u16()
			fm.TableID = r.u8()
			fm.Command = r.u8()
			if fm.Command != MonitorCommandDelete {
				if fm.Flags&(MonitorAdd|MonitorRemoved|MonitorModify) == 0 ||
					fm.Flags&^(MonitorInitial|MonitorAdd|MonitorRemoved|MonitorModify|MonitorInstructions|MonitorOnlyOwn) != 0 {
					return ofperr.OFPMOFC_BAD_FLAGS
				}
				if fm.OutPort, err = PortFrom11(out); err != nil {
					return err
				}
			} else {
				fm.Flags, fm.OutGroup, fm.TableID = 0, GroupAny, 0
				fm.OutPort = 0
			}
			var rest []byte
			if fm.Match, rest, err = pullMatch11(r.rest(), h.Version); err != nil {
				return err
			}
			r.b = rest
		}
		m.Monitors = append(m.Monitors, fm)
	}
	return nil
}

// FlowMonitorCancel cancels a monitor: NXT_FLOW_MONITOR_CANCEL (1.0-1.2),
// ONFT13_FLOW_MONITOR_CANCEL (1.3); 1.4+ has no such message (a flow
// monitor request with MonitorCommandDelete does it).
type FlowMonitorCancel struct{ ID uint32 }

func (*FlowMonitorCancel) raw(v uint8) (Raw, error) {
	return pick(v, rawNXFlowMonitorCancel, rawONF13FlowMonitorCancel)
}
func (m *FlowMonitorCancel) appendBody(b []byte, _ uint8) ([]byte, error) {
	return put32(b, m.ID), nil
}

// FlowUpdate is one event of a flow monitor reply (ofputil_flow_update).
type FlowUpdate struct {
	Event       uint16
	Reason      uint16
	IdleTimeout uint16
	HardTimeout uint16
	Priority    uint16
	TableID     uint8
	Cookie      uint64
	Match       Match
	Actions     []Action
	Xid         uint32 // UpdateAbbrev
}

// FlowMonitorReply (NXST/ONFST13/OFPST14_FLOW_MONITOR reply): updates.
type FlowMonitorReply struct {
	Multipart
	Updates []FlowUpdate
}

func (*FlowMonitorReply) raw(v uint8) (Raw, error) {
	return pick(v, rawNXFlowMonitorReply, rawONF13FlowMonitorReply, raw14FlowMonitorReply)
}
func (m *FlowMonitorReply) entries() int { return len(m.Updates) }
func (m *FlowMonitorReply) appendBody(b []byte, v uint8) ([]byte, error) {
	return appendEntries(m, b, v)
}
func (m *FlowMonitorReply) part(i, j int) Msg { return &FlowMonitorReply{Updates: m.Updates[i:j]} }

func nxUpdateEvent(e uint16) (uint16, error) {
	switch e {
	case UpdateInitial, UpdateAdded:
		return 0, nil
	case UpdateRemoved:
		return 1, nil
	case UpdateModified:
		return 2, nil
	case UpdateAbbrev:
		return 3, nil
	}
	return 0, ofperr.NXBRC_FM_BAD_EVENT
}

func (m *FlowMonitorReply) appendEntry(b []byte, v uint8, i int) ([]byte, error) {
	u := &m.Updates[i]
	start := len(b)
	if v <= Version13 {
		ev, err := nxUpdateEvent(u.Event)
		if err != nil {
			return b, err
		}
		b = put16(b, 0)
		b = put16(b, ev)
		if u.Event == UpdateAbbrev {
			b = put32(b, u.Xid)
		} else {
			b = put16(b, u.Reason)
			b = put16(b, u.Priority)
			b = put16(b, u.IdleTimeout)
			b = put16(b, u.HardTimeout)
			b = put16(b, 0)
			b = put8(b, u.TableID)
			b = pad(b, 1)
			b = put64(b, u.Cookie)
			if v == Version13 {
				ms := len(b)
				b = appendOXMMatch(b, &u.Match, v)
				binary.BigEndian.PutUint16(b[start+12:], binary.BigEndian.Uint16(b[ms+2:]))
				b = appendInstructions(b, u.Actions, v)
			} else {
				var n int
				b, n = appendNXMatch(b, &u.Match, 0, 0, 0)
				binary.BigEndian.PutUint16(b[start+12:], uint16(n))
				b = pad(b, roundUp8(n)-n)
				b = appendActions(b, u.Actions, v)
			}
		}
	} else {
		b = put16(b, 0)
		b = put16(b, u.Event)
		switch u.Event {
		case UpdateAbbrev:
			b = put32(b, u.Xid)
		case UpdatePaused, UpdateResumed:
			b = pad(b, 4)
		default:
			b = put8(b, u.TableID)
			b = put8(b, uint8(u.Reason))
			b = put16(b, u.IdleTimeout)
			b = put16(b, u.HardTimeout)
			b = put16(b, u.Priority)
			b = pad(b, 4)
			b = put64(b, u.Cookie)
			b = appendOXMMatch(b, &u.Match, v)
			b = appendInstructions(b, u.Actions, v)
		}
	}
	setLen16(b, start, 0)
	return b, nil
}

func pullFlowMonitorReply(m *FlowMonitorReply, h *Header, r *reader) error {
	v := h.Version
	for r.len() > 0 {
		if r.len() < 4 {
			return ofperr.OFPBRC_BAD_LEN
		}
		n := int(binary.BigEndian.Uint16(r.b))
		if n > r.len() || n%8 != 0 || n < 8 {
			return ofperr.OFPBRC_BAD_LEN
		}
		e := reader{b: r.take(n)}
		e.skip(2)
		ev := e.u16()
		var u FlowUpdate
		var err error
		if h.Raw != raw14FlowMonitorReply {
			switch ev {
			case 3:
				if n != 8 {
					return ofperr.OFPBRC_BAD_LEN
				}
				u.Event, u.Xid = UpdateAbbrev, e.u32()
			case 0, 1, 2:
				if n < 24 {
					return ofperr.OFPBRC_BAD_LEN
				}
				u.Event = ev + 1
				u.Reason, u.Priority, u.IdleTimeout, u.HardTimeout = e.u16(), e.u16(), e.u16(), e.u16()
				matchLen := int(e.u16())
				u.TableID = e.u8()
				e.skip(1)
				u.Cookie = e.u64()
				var rest []byte
				if h.Raw == rawONF13FlowMonitorReply {
					u.Match, rest, err = pullMatch11(e.rest(), v)
					if err == nil {
						u.Actions, err = pullInstructions(rest, v)
					}
				} else {
					u.Match, _, _, rest, err = pullNXMatchCookie(e.rest(), matchLen, false)
					if err == nil {
						u.Actions, err = pullActions(rest, v)
					}
				}
			default:
				return ofperr.NXBRC_FM_BAD_EVENT
			}
		} else {
			u.Event = ev
			switch ev {
			case UpdateAbbrev:
				if n != 8 {
					return ofperr.OFPBRC_BAD_LEN
				}
				u.Xid = e.u32()
			case UpdatePaused, UpdateResumed:
				if n != 8 {
					return ofperr.OFPBRC_BAD_LEN
				}
			case UpdateInitial, UpdateAdded, UpdateRemoved, UpdateModified:
				if n < 24 {
					return ofperr.OFPBRC_BAD_LEN
				}
				u.TableID = e.u8()
				u.Reason = uint16(e.u8())
				u.IdleTimeout, u.HardTimeout, u.Priority = e.u16(), e.u16(), e.u16()
				e.skip(4)
				u.Cookie = e.u64()
				var rest []byte
				u.Match, rest, err = pullMatch11(e.rest(), v)
				if err == nil {
					u.Actions, err = pullInstructions(rest, v)
				}
			default:
				return ofperr.NXBRC_FM_BAD_EVENT
			}
		}
		if err != nil {
			return err
		}
		m.Updates = append(m.Updates, u)
	}
	return nil
}

func init() {
	register(decoderFor(pullFlowMonitorRequest), rawNXFlowMonitorRequest, rawONF13FlowMonitorRequest, raw14FlowMonitorRequest)
	register(decoderFor(pullFlowMonitorReply), rawNXFlowMonitorReply, rawONF13FlowMonitorReply, raw14FlowMonitorReply)
	register(func(_ *Header, b []byte) (Msg, error) {
		return &FlowMonitorCancel{ID: binary.BigEndian.Uint32(b)}, nil
	}, rawNXFlowMonitorCancel, rawONF13FlowMonitorCancel)
}

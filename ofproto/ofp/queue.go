package ofp

import (
	"encoding/binary"

	"gvs/ofproto/ofperr"
)

// RateNone marks a queue rate that is not configured.
const RateNone uint16 = 0xffff

// QueueConfig is one queue's configuration (ofputil_queue_config): rates
// in tenths of a percent, RateNone if unset.
type QueueConfig struct {
	PortNo  uint32
	QueueID uint32
	MinRate uint16
	MaxRate uint16
}

// QueueGetConfigRequest (OFPT_QUEUE_GET_CONFIG_REQUEST in 1.0-1.3, the
// OFPST14_QUEUE_DESC request in 1.4+, which also names a queue).
type QueueGetConfigRequest struct {
	Multipart
	PortNo  uint32
	QueueID uint32
}

func (*QueueGetConfigRequest) raw(v uint8) (Raw, error) {
	return pick(v, raw10QueueGetConfigRequest, raw11QueueGetConfigRequest, raw14QueueDescRequest)
}

func (m *QueueGetConfigRequest) appendBody(b []byte, v uint8) ([]byte, error) {
	switch {
	case v == Version10:
		return pad(put16(b, uint16(m.PortNo)), 2), nil
	case v <= Version13:
		return pad(put32(b, PortTo11(m.PortNo)), 4), nil
	}
	return put32(put32(b, PortTo11(m.PortNo)), m.QueueID), nil
}

// QueueGetConfigReply (OFPT_QUEUE_GET_CONFIG_REPLY, OFPST14_QUEUE_DESC
// reply). PortNo is the port asked about (1.0-1.3).
type QueueGetConfigReply struct {
	Multipart
	PortNo uint32
	Queues []QueueConfig
}

func (*QueueGetConfigReply) raw(v uint8) (Raw, error) {
	return pick(v, raw10QueueGetConfigReply, raw11QueueGetConfigReply, raw14QueueDescReply)
}

func (m *QueueGetConfigReply) appendBody(b []byte, v uint8) ([]byte, error) {
	switch {
	case v == Version10:
		b = pad(put16(b, uint16(m.PortNo)), 6)
	case v <= Version13:
		b = pad(put32(b, PortTo11(m.PortNo)), 4)
	}
	return appendEntries(m, b, v)
}

func (m *QueueGetConfigReply) entries() int { return len(m.Queues) }
func (m *QueueGetConfigReply) part(i, j int) Msg {
	return &QueueGetConfigReply{PortNo: m.PortNo, Queues: m.Queues[i:j]}
}

func appendRate10(b []byte, prop uint16, rate uint16) []byte {
	if rate == RateNone {
		return b
	}
	b = put16(b, prop)
	b = put16(b, 16)
	b = pad(b, 4)
	return pad(put16(b, rate), 6)
}

func (m *QueueGetConfigReply) appendEntry(b []byte, v uint8, i int) ([]byte, error) {
	q := &m.Queues[i]
	start := len(b)
	lenAt := start + 4
	switch {
	case v <= Version11:
		b = put32(b, q.QueueID)
		b = pad(b, 4)
	case v <= Version13:
		b = put32(b, q.QueueID)
		b = put32(b, PortTo11(q.PortNo))
		b = pad(b, 8)
		lenAt = start + 8
	default:
		b = put32(b, PortTo11(q.PortNo))
		b = put32(b, q.QueueID)
		b = pad(b, 8)
		lenAt = start + 8
	}
	if v <= Version13 {
		b = appendRate10(b, 1, q.MinRate)
		b = appendRate10(b, 2, q.MaxRate)
	} else {
		if q.MinRate != RateNone {
			b = appendProp(b, 1, []byte{byte(q.MinRate >> 8), byte(q.MinRate), 0, 0}, 8)
		}
		if q.MaxRate != RateNone {
			b = appendProp(b, 2, []byte{byte(q.MaxRate >> 8), byte(q.MaxRate), 0, 0}, 8)
		}
	}
	binary.BigEndian.PutUint16(b[lenAt:], uint16(len(b)-start))
	return b, nil
}

func pullQueueGetConfigReply(m *QueueGetConfigReply, h *Header, r *reader) error {
	v := h.Version
	switch {
	case v == Version10:
		m.PortNo = uint32(r.u16())
		r.skip(6)
	case v <= Version13:
		no, err := PortFrom11(r.u32())
		if err != nil {
			return err
		}
		m.PortNo = no
		r.skip(4)
	}
	for r.len() > 0 {
		q := QueueConfig{PortNo: m.PortNo, MinRate: RateNone, MaxRate: RateNone}
		var n, fixed int
		switch {
		case v <= Version11:
			if r.len() < 8 {
				return ofperr.OFPBRC_BAD_LEN
			}
			q.QueueID, n, fixed = binary.BigEndian.Uint32(r.b), int(binary.BigEndian.Uint16(r.b[4:])), 8
		case v <= Version13:
			if r.len() < 16 {
				return ofperr.OFPBRC_BAD_LEN
			}
			// The queue's own port field is not checked (Open vSwitch
			// reports the reply's port).
			q.QueueID, n, fixed = binary.BigEndian.Uint32(r.b), int(binary.BigEndian.Uint16(r.b[8:])), 16
		default:
			if r.len() < 16 {
				return ofperr.OFPBRC_BAD_LEN
			}
			no, err := PortFrom11(binary.BigEndian.Uint32(r.b))
			if err != nil {
				return err
			}
			q.PortNo, q.QueueID, n, fixed = no, binary.BigEndian.Uint32(r.b[4:]), int(binary.BigEndian.Uint16(r.b[8:])), 16
		}
		if n < fixed || n > r.len() {
			return ofperr.OFPBRC_BAD_LEN
		}
		props := r.take(n)[fixed:]
		if v <= Version13 {
			for len(props) > 0 {
				if len(props) < 8 {
					return ofperr.OFPBRC_BAD_LEN
				}
				typ, pl := binary.BigEndian.Uint16(props), int(binary.BigEndian.Uint16(props[2:]))
				if pl < 8 || pl > len(props) {
					return ofperr.OFPBRC_BAD_LEN
				}
				if (typ == 1 || typ == 2) && pl >= 10 {
					rate := binary.BigEndian.Uint16(props[8:])
					if typ == 1 {
						q.MinRate = rate
					} else {
						q.MaxRate = rate
					}
				}
				props = props[pl:]
			}
		} else {
			ps, err := pullProps(props, 8)
			if err != nil {
				return err
			}
			for _, p := range ps {
				if (p.Type == 1 || p.Type == 2) && len(p.Body) >= 2 {
					rate := binary.BigEndian.Uint16(p.Body)
					if p.Type == 1 {
						q.MinRate = rate
					} else {
						q.MaxRate = rate
					}
				}
			}
		}
		m.Queues = append(m.Queues, q)
	}
	return nil
}

// IPFIXBridgeRequest and IPFIXFlowRequest (NXST_IPFIX_*) ask for IPFIX
// exporter statistics (the bridge exporter's, each flow exporter's).
type IPFIXBridgeRequest struct{ Multipart }
type IPFIXFlowRequest struct{ Multipart }

func (*IPFIXBridgeRequest) raw(uint8) (Raw, error)                       { return rawNXIPFIXBridgeRequest, nil }
func (*IPFIXBridgeRequest) appendBody(b []byte, _ uint8) ([]byte, error) { return b, nil }
func (*IPFIXFlowRequest) raw(uint8) (Raw, error)                         { return rawNXIPFIXFlowRequest, nil }
func (*IPFIXFlowRequest) appendBody(b []byte, _ uint8) ([]byte, error)   { return b, nil }

// IPFIXStats are one IPFIX exporter's counters (nx_ipfix_stats_reply);
// CollectorSetID names a flow exporter.
type IPFIXStats struct {
	TotalFlows, CurrentFlows, Packets, IPv4Packets, IPv6Packets uint64
	ErrorPackets, IPv4ErrorPackets, IPv6ErrorPackets            uint64
	TxPackets, TxErrors                                         uint64
	CollectorSetID                                              uint32
}

// IPFIXBridgeReply and IPFIXFlowReply (NXST_IPFIX_BRIDGE/FLOW replies).
type IPFIXBridgeReply struct {
	Multipart
	Stats IPFIXStats
}
type IPFIXFlowReply struct {
	Multipart
	Stats []IPFIXStats
}

func appendIPFIX(b []byte, s *IPFIXStats) []byte {
	for _, c := range []uint64{s.TotalFlows, s.CurrentFlows, s.Packets, s.IPv4Packets, s.IPv6Packets,
		s.ErrorPackets, s.IPv4ErrorPackets, s.IPv6ErrorPackets, s.TxPackets, s.TxErrors} {
		b = put64(b, c)
	}
	return pad(put32(b, s.CollectorSetID), 4)
}

func pullIPFIX(r *reader) IPFIXStats {
	s := IPFIXStats{TotalFlows: r.u64(), CurrentFlows: r.u64(), Packets: r.u64(), IPv4Packets: r.u64(), IPv6Packets: r.u64(),
		ErrorPackets: r.u64(), IPv4ErrorPackets: r.u64(), IPv6ErrorPackets: r.u64(), TxPackets: r.u64(), TxErrors: r.u64(),
		CollectorSetID: r.u32()}
	r.skip(4)
	return s
}

func (*IPFIXBridgeReply) raw(uint8) (Raw, error) { return rawNXIPFIXBridgeReply, nil }
func (m *IPFIXBridgeReply) appendBody(b []byte, _ uint8) ([]byte, error) {
	return appendIPFIX(b, &m.Stats), nil
}
func (*IPFIXFlowReply) raw(uint8) (Raw, error) { return rawNXIPFIXFlowReply, nil }
func (m *IPFIXFlowReply) entries() int         { return len(m.Stats) }
func (m *IPFIXFlowReply) appendBody(b []byte, v uint8) ([]byte, error) {
	return appendEntries(m, b, v)
}
func (m *IPFIXFlowReply) part(i, j int) Msg { return &IPFIXFlowReply{Stats: m.Stats[i:j]} }
func (m *IPFIXFlowReply) appendEntry(b []byte, _ uint8, i int) ([]byte, error) {
	return appendIPFIX(b, &m.Stats[i]), nil
}

func init() {
	register(decoderFor(func(m *IPFIXBridgeReply, _ *Header, r *reader) error {
		m.Stats = pullIPFIX(r)
		return nil
	}), rawNXIPFIXBridgeReply)
	register(decoderFor(func(m *IPFIXFlowReply, _ *Header, r *reader) error {
		for r.len() > 0 {
			m.Stats = append(m.Stats, pullIPFIX(r))
		}
		return nil
	}), rawNXIPFIXFlowReply)
	register(decoderFor(func(m *QueueGetConfigRequest, h *Header, r *reader) error {
		m.QueueID = QueueAll
		switch h.Raw {
		case raw10QueueGetConfigRequest:
			m.PortNo = uint32(r.u16())
			r.skip(2)
		default:
			no, err := PortFrom11(r.u32())
			if err != nil {
				return err
			}
			m.PortNo = no
			if h.Raw == raw14QueueDescRequest {
				m.QueueID = r.u32()
			} else {
				r.skip(4)
			}
		}
		return nil
	}), raw10QueueGetConfigRequest, raw11QueueGetConfigRequest, raw14QueueDescRequest)
	register(decoderFor(pullQueueGetConfigReply), raw10QueueGetConfigReply, raw11QueueGetConfigReply, raw14QueueDescReply)
	register(decoderFor(func(*IPFIXBridgeRequest, *Header, *reader) error { return nil }), rawNXIPFIXBridgeRequest)
	register(decoderFor(func(*IPFIXFlowRequest, *Header, *reader) error { return nil }), rawNXIPFIXFlowRequest)
}

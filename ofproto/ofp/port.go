package ofp

import (
	"gvs/ofproto/mf"
	"gvs/ofproto/ofperr"
)

// Port is a port's description (Open vSwitch's ofputil_phy_port), as in
// FEATURES_REPLY (1.0-1.2), PORT_STATUS and PORT_DESC replies.
//
// PortNo is in Open vSwitch's 16-bit port space (mf.PortLocal etc.).
// Features (Curr, Advertised, Supported, Peer) use OpenFlow 1.1's bit
// layout (OFPPF_10MB_HD = 1 ... OFPPF_OTHER = 1<<12, COPPER 1<<13 ...),
// converted for 1.0. Speeds are in kbps (1.1+; derived from the features
// for 1.0 as Open vSwitch does).
type Port struct {
	PortNo     uint32
	HWAddr     [6]byte
	Name       string
	Config     uint32 // OFPPC_*
	State      uint32 // OFPPS_* (1.0 keeps its STP bits)
	Curr       uint32
	Advertised uint32
	Supported  uint32
	Peer       uint32
	CurrSpeed  uint32
	MaxSpeed   uint32
}

// Port config and state bits.
const (
	PortConfigPortDown   uint32 = 1 << 0
	PortConfigNoSTP      uint32 = 1 << 1 // 1.0
	PortConfigNoRecv     uint32 = 1 << 2
	PortConfigNoRecvSTP  uint32 = 1 << 3 // 1.0
	PortConfigNoFlood    uint32 = 1 << 4 // 1.0
	PortConfigNoFwd      uint32 = 1 << 5
	PortConfigNoPacketIn uint32 = 1 << 6

	PortStateLinkDown uint32 = 1 << 0
	PortStateBlocked  uint32 = 1 << 1 // 1.1+
	PortStateLive     uint32 = 1 << 2 // 1.1+

	portConfig10All = 0x7f
	portConfig11All = PortConfigPortDown | PortConfigNoRecv | PortConfigNoFwd | PortConfigNoPacketIn
	portState10All  = PortStateLinkDown | 3<<8 // STP state mask
	portState11All  = PortStateLinkDown | PortStateBlocked | PortStateLive
)

// Port features (OpenFlow 1.1 layout).
const (
	PortFeature10MBHD    uint32 = 1 << 0
	PortFeature10MBFD    uint32 = 1 << 1
	PortFeature100MBHD   uint32 = 1 << 2
	PortFeature100MBFD   uint32 = 1 << 3
	PortFeature1GBHD     uint32 = 1 << 4
	PortFeature1GBFD     uint32 = 1 << 5
	PortFeature10GBFD    uint32 = 1 << 6
	PortFeature40GBFD    uint32 = 1 << 7
	PortFeature100GBFD   uint32 = 1 << 8
	PortFeature1TBFD     uint32 = 1 << 9
	PortFeatureOther     uint32 = 1 << 10
	PortFeatureCopper    uint32 = 1 << 11
	PortFeatureFiber     uint32 = 1 << 12
	PortFeatureAutoneg   uint32 = 1 << 13
	PortFeaturePause     uint32 = 1 << 14
	PortFeaturePauseAsym uint32 = 1 << 15
)

func features10To11(f uint32) uint32 { return f&0x7f | (f&0xf80)<<4 }
func features11To10(f uint32) uint32 { return f&0x7f | (f&0xf800)>>4 }

// featuresToKbps is the speed of the fastest rate in f, as Open vSwitch's
// netdev_features_to_bps (0 if none).
func featuresToKbps(f uint32) uint32 {
	switch {
	case f&PortFeature1TBFD != 0:
		return 1000000000
	case f&PortFeature100GBFD != 0:
		return 100000000
	case f&PortFeature40GBFD != 0:
		return 40000000
	case f&PortFeature10GBFD != 0:
		return 10000000
	case f&(PortFeature1GBHD|PortFeature1GBFD) != 0:
		return 1000000
	case f&(PortFeature100MBHD|PortFeature100MBFD) != 0:
		return 100000
	case f&(PortFeature10MBHD|PortFeature10MBFD) != 0:
		return 10000
	}
	return 0
}

// PortTo11 converts a 16-bit port number to OpenFlow 1.1+'s 32 bits
// (reserved ports move to 0xffffff00 + their low byte).
func PortTo11(p uint32) uint32 {
	if p >= mf.PortMax {
		return p + 0xffff0000
	}
	return p
}

// PortFrom11 converts an OpenFlow 1.1+ port number to the 16-bit space,
// with OFPBAC_BAD_OUT_PORT for numbers that have no 16-bit equivalent, as
// Open vSwitch's ofputil_port_from_ofp11.
func PortFrom11(p uint32) (uint32, error) {
	switch {
	case p < mf.PortMax:
		return p, nil
	case p >= 0xffff0000+mf.PortMax:
		return p - 0xffff0000, nil
	}
	return 0, ofperr.OFPBAC_BAD_OUT_PORT
}

func pullPort(r *reader, version uint8) (Port, error) {
	var p Port
	switch {
	case version == Version10:
		p.PortNo = uint32(r.u16())
		p.HWAddr = r.mac()
		p.Name = r.str(16)
		p.Config = r.u32() & portConfig10All
		p.State = r.u32() & portState10All
		p.Curr = features10To11(r.u32())
		p.Advertised = features10To11(r.u32())
		p.Supported = features10To11(r.u32())
		p.Peer = features10To11(r.u32())
		p.CurrSpeed = featuresToKbps(p.Curr)
		p.MaxSpeed = featuresToKbps(p.Supported)
	case version <= Version13:
		no, err := PortFrom11(r.u32())
		if err != nil {
			return p, err
		}
		p.PortNo = no
		r.skip(4)
		p.HWAddr = r.mac()
		r.skip(2)
		p.Name = r.str(16)
		p.Config = r.u32() & portConfig11All
		p.State = r.u32() & portState11All
		p.Curr = r.u32()
		p.Advertised = r.u32()
		p.Supported = r.u32()
		p.Peer = r.u32()
		p.CurrSpeed = r.u32()
		p.MaxSpeed = r.u32()
	default:
		no, err := PortFrom11(r.u32())
		if err != nil {
			return p, err
		}
		p.PortNo = no
		n := int(r.u16())
		if n < 40 || n > r.len()+6 {
			return p, ofperr.OFPBRC_BAD_LEN
		}
		r.skip(2)
		p.HWAddr = r.mac()
		r.skip(2)
		p.Name = r.str(16)
		p.Config = r.u32() & portConfig11All
		p.State = r.u32() & portState11All
		props, err := pullProps(r.take(n-40), 8)
		if err != nil {
			return p, err
		}
		for _, pr := range props {
			if pr.Type == 0 { // OFPPDPT14_ETHERNET
				if len(pr.Body) != 28 {
					return p, ofperr.OFPBPC_BAD_LEN
				}
				er := reader{b: pr.Body[4:]}
				p.Curr = er.u32()
				p.Advertised = er.u32()
				p.Supported = er.u32()
				p.Peer = er.u32()
				p.CurrSpeed = er.u32()
				p.MaxSpeed = er.u32()
			}
		}
	}
	return p, r.err
}

func appendPort(b []byte, p *Port, version uint8) []byte {
	switch {
	case version == Version10:
		b = put16(b, uint16(p.PortNo))
		b = append(b, p.HWAddr[:]...)
		b = putStr(b, p.Name, 16)
		b = put32(b, p.Config&portConfig10All)
		b = put32(b, p.State&portState10All)
		b = put32(b, features11To10(p.Curr))
		b = put32(b, features11To10(p.Advertised))
		b = put32(b, features11To10(p.Supported))
		b = put32(b, features11To10(p.Peer))
	case version <= Version13:
		b = put32(b, PortTo11(p.PortNo))
		b = pad(b, 4)
		b = append(b, p.HWAddr[:]...)
		b = pad(b, 2)
		b = putStr(b, p.Name, 16)
		b = put32(b, p.Config&portConfig11All)
		b = put32(b, p.State&portState11All)
		b = put32(b, p.Curr)
		b = put32(b, p.Advertised)
		b = put32(b, p.Supported)
		b = put32(b, p.Peer)
		b = put32(b, p.CurrSpeed)
		b = put32(b, p.MaxSpeed)
	default:
		b = put32(b, PortTo11(p.PortNo))
		b = put16(b, 72)
		b = pad(b, 2)
		b = append(b, p.HWAddr[:]...)
		b = pad(b, 2)
		b = putStr(b, p.Name, 16)
		b = put32(b, p.Config&portConfig11All)
		b = put32(b, p.State&portState11All)
		b = put16(b, 0) // OFPPDPT14_ETHERNET
		b = put16(b, 32)
		b = pad(b, 4)
		b = put32(b, p.Curr)
		b = put32(b, p.Advertised)
		b = put32(b, p.Supported)
		b = put32(b, p.Peer)
		b = put32(b, p.CurrSpeed)
		b = put32(b, p.MaxSpeed)
	}
	return b
}

// pullPorts decodes an array of ports filling the rest of r.
func pullPorts(r *reader, version uint8) ([]Port, error) {
	var ports []Port
	for r.len() > 0 && r.err == nil {
		p, err := pullPort(r, version)
		if err != nil {
			return nil, err
		}
		ports = append(ports, p)
	}
	return ports, r.err
}

// Port status reasons (OFPPR_*).
const (
	PortReasonAdd    uint8 = 0
	PortReasonDelete uint8 = 1
	PortReasonModify uint8 = 2
)

// PortStatus (OFPT_PORT_STATUS) tells a controller a port was added,
// deleted or changed.
type PortStatus struct {
	Reason uint8
	Desc   Port
}

func (*PortStatus) raw(v uint8) (Raw, error) {
	return pick(v, raw10PortStatus, raw11PortStatus, raw14PortStatus)
}

func (m *PortStatus) appendBody(b []byte, v uint8) ([]byte, error) {
	b = put8(b, m.Reason)
	b = pad(b, 7)
	return appendPort(b, &m.Desc, v), nil
}

func decodePortStatus(h *Header, body []byte) (Msg, error) {
	r := reader{b: body}
	m := &PortStatus{Reason: r.u8()}
	r.skip(7)
	p, err := pullPort(&r, h.Version)
	if err != nil {
		return nil, err
	}
	m.Desc = p
	if r.len() != 0 {
		return nil, ofperr.OFPBRC_BAD_LEN
	}
	return m, nil
}

// PortMod (OFPT_PORT_MOD) changes a port's configuration bits under Mask
// and its advertised features (0 = leave alone).
type PortMod struct {
	PortNo    uint32
	HWAddr    [6]byte
	Config    uint32
	Mask      uint32
	Advertise uint32
}

func (*PortMod) raw(v uint8) (Raw, error) {
	return pick(v, raw10PortMod, raw11PortMod, raw14PortMod)
}

func (m *PortMod) appendBody(b []byte, v uint8) ([]byte, error) {
	switch {
	case v == Version10:
		b = put16(b, uint16(m.PortNo))
		b = append(b, m.HWAddr[:]...)
		b = put32(b, m.Config&portConfig10All)
		b = put32(b, m.Mask&portConfig10All)
		b = put32(b, features11To10(m.Advertise))
		b = pad(b, 4)
	case v <= Version13:
		b = put32(b, PortTo11(m.PortNo))
		b = pad(b, 4)
		b = append(b, m.HWAddr[:]...)
		b = pad(b, 2)
		b = put32(b, m.Config&portConfig11All)
		b = put32(b, m.Mask&portConfig11All)
		b = put32(b, m.Advertise)
		b = pad(b, 4)
	default:
		b = put32(b, PortTo11(m.PortNo))
		b = pad(b, 4)
		b = append(b, m.HWAddr[:]...)
		b = pad(b, 2)
		b = put32(b, m.Config&portConfig11All)
		b = put32(b, m.Mask&portConfig11All)
		if m.Advertise != 0 {
			b = appendProp(b, 0, u32Body(m.Advertise), 8) // OFPPMPT14_ETHERNET
		}
	}
	return b, nil
}

func decodePortMod(h *Header, body []byte) (Msg, error) {
	r := reader{b: body}
	m := &PortMod{}
	switch {
	case h.Version == Version10:
		m.PortNo = uint32(r.u16())
		m.HWAddr = r.mac()
		m.Config = r.u32() & portConfig10All
		m.Mask = r.u32() & portConfig10All
		m.Advertise = features10To11(r.u32())
	case h.Version <= Version13:
		no, err := PortFrom11(r.u32())
		if err != nil {
			return nil, err
		}
		m.PortNo = no
		r.skip(4)
		m.HWAddr = r.mac()
		r.skip(2)
		m.Config = r.u32() & portConfig11All
		m.Mask = r.u32() & portConfig11All
		m.Advertise = r.u32()
	default:
		no, err := PortFrom11(r.u32())
		if err != nil {
			return nil, err
		}
		m.PortNo = no
		r.skip(4)
		m.HWAddr = r.mac()
		r.skip(2)
		m.Config = r.u32() & portConfig11All
		m.Mask = r.u32() & portConfig11All
		props, err := pullProps(r.rest(), 8)
		if err != nil {
			return nil, err
		}
		for _, p := range props {
			switch p.Type {
			case 0:
				if m.Advertise, err = propU32(p); err != nil {
					return nil, err
				}
			default:
				return nil, unknownProp(p)
			}
		}
	}
	return m, r.err
}

func init() {
	register(decodePortStatus, raw10PortStatus, raw11PortStatus, raw14PortStatus)
	register(decodePortMod, raw10PortMod, raw11PortMod, raw14PortMod)
}

package tunnel

import (
	"encoding/binary"
	"errors"
	"net/netip"

	"gvs/packet"
)

// BuildParams is what one outer header depends on: the port's kind and
// settings and the flow's tunnel fields, resolved (route and neighbour)
// by the caller.
type BuildParams struct {
	Kind           Kind
	DstMAC, SrcMAC [6]byte    // underlay next hop and our interface
	Src, Dst       netip.Addr // underlay addresses, both IPv4 or both IPv6
	TOS            uint8      // outer TOS / traffic class
	TTL            uint8      // outer TTL / hop limit
	DontFragment   bool       // IPv4 DF bit (the flow's FlagDontFragment)
	Csum           bool       // UDP checksum over IPv4 (always over IPv6), GRE checksum
	OAM            bool       // geneve O bit
	TunID          uint64     // VNI (24 bits) or GRE key (32 bits)
	DstPort        uint16     // UDP destination port
	GeneveOptions  []byte     // raw geneve option TLVs, a multiple of 4 bytes
	GBP            bool       // vxlan GBP extension: GBPID and GBPFlags go on the wire
	GBPID          uint16
	GBPFlags       uint8  // Open vSwitch's tun_gbp_flags: 0x40 don't learn, 0x08 policy applied
	GREKey         bool   // GRE key present (the port's out_key)
	GRESeq         bool   // GRE sequence numbers (the port's seq=true)
	GREProto       uint16 // GRE protocol; 0 means 0x6558, an Ethernet payload

	// Source port range; zero values mean DefaultSrcPortMin/Max.
	SrcPortMin, SrcPortMax uint16
}

// Header is a prebuilt outer header with what Push fills per packet. It
// is a value without pointers: copy it, compare it, publish it.
type Header struct {
	Kind                   Kind
	IPv6                   bool
	Len                    uint16 // bytes of Bytes in use
	L4                     uint16 // offset of the UDP or GRE header
	UDPCsum                bool   // Push computes the UDP checksum
	GRECsum                bool   // Push computes the GRE checksum
	GRESeq                 bool   // Push writes the GRE sequence number
	SrcPortMin, SrcPortMax uint16
	Bytes                  [MaxHeaderLen]byte
}

// Data returns the header bytes.
func (h *Header) Data() []byte { return h.Bytes[:h.Len] }

// Build errors.
var (
	ErrFamily   = errors.New("tunnel: underlay source and destination must both be IPv4 or both IPv6")
	ErrOptions  = errors.New("tunnel: geneve options must be whole 4-byte words, at most 252 bytes")
	ErrKind     = errors.New("tunnel: unknown tunnel kind")
	ErrHeadroom = errors.New("tunnel: not enough headroom for the outer header")
	// ErrGSO: Push takes no GSO super-frame (a virtio_net_hdr cannot ask
	// the outer device to segment a tunnelled packet); segment first
	// (packet.Segmenter).
	ErrGSO = errors.New("tunnel: segment the frame before encapsulating it")
)

// Build makes the outer header for p, as Open vSwitch's
// netdev_*_build_header do: IP length and checksum, UDP source port and
// length and the checksums are left for Push; the IPv4 header checksum
// is computed with a zero total length, the IP id stays zero.
func Build(p *BuildParams) (Header, error) {
	var h Header
	if !p.Src.IsValid() || !p.Dst.IsValid() || p.Src.Is4() != p.Dst.Is4() {
		return h, ErrFamily
	}
	h.Kind = p.Kind
	h.IPv6 = !p.Dst.Is4()
	h.SrcPortMin, h.SrcPortMax = p.SrcPortMin, p.SrcPortMax
	if h.SrcPortMin == 0 && h.SrcPortMax == 0 {
		h.SrcPortMin, h.SrcPortMax = DefaultSrcPortMin, DefaultSrcPortMax
	}
	b := h.Bytes[:]
	copy(b[0:6], p.DstMAC[:])
	copy(b[6:12], p.SrcMAC[:])
	var proto uint8
	switch p.Kind {
	case Geneve, VXLAN:
		proto = protoUDP
	case GRE:
		proto = protoGRE
	default:
		return h, ErrKind
	}
	l4 := ethLen
	if h.IPv6 {
		binary.BigEndian.PutUint16(b[12:], ethTypeIPv6)
		ip := b[ethLen:]
		binary.BigEndian.PutUint32(ip[0:], 6<<28|uint32(p.TOS)<<20)
		ip[6] = proto
		ip[7] = p.TTL
		src, dst := p.Src.As16(), p.Dst.As16()
		copy(ip[8:24], src[:])
		copy(ip[24:40], dst[:])
		l4 += ipv6Len
	} else {
		binary.BigEndian.PutUint16(b[12:], ethTypeIPv4)
		ip := b[ethLen : ethLen+ipv4Len]
		ip[0] = 0x45
		ip[1] = p.TOS
		if p.DontFragment {
			binary.BigEndian.PutUint16(ip[6:], ipDF)
		}
		ip[8] = p.TTL
		ip[9] = proto
		src, dst := p.Src.As4(), p.Dst.As4()
		copy(ip[12:16], src[:])
		copy(ip[16:20], dst[:])
		binary.BigEndian.PutUint16(ip[10:], packet.IPv4HeaderChecksum(ip))
		l4 += ipv4Len
	}
	h.L4 = uint16(l4)
	n := l4
	switch p.Kind {
	case Geneve, VXLAN:
		udp := b[l4:]
		binary.BigEndian.PutUint16(udp[2:], p.DstPort)
		if h.IPv6 || p.Csum {
			// Open vSwitch marks "compute it" with 0xffff, which is
			// also what dpctl prints for such a header.
			binary.BigEndian.PutUint16(udp[6:], 0xffff)
			h.UDPCsum = true
		}
		n += udpLen
		t := b[n:]
		if p.Kind == VXLAN {
			flags := uint32(vxlanFlagVNI)
			if p.GBP {
				flags |= vxlanFlagGBP | uint32(p.GBPID)
				if p.GBPFlags&0x40 != 0 {
					flags |= vxlanGBPDontLearn
				}
				if p.GBPFlags&0x08 != 0 {
					flags |= vxlanGBPApplied
				}
			}
			binary.BigEndian.PutUint32(t[0:], flags)
			binary.BigEndian.PutUint32(t[4:], uint32(p.TunID)<<8)
			n += vxlanLen
		} else {
			opts := p.GeneveOptions
			if len(opts)%4 != 0 || len(opts) > MaxGeneveOptions {
				return Header{}, ErrOptions
			}
			t[0] = byte(len(opts) / 4)
			if p.OAM {
				t[1] |= 0x80
			}
			if geneveCritical(opts) {
				t[1] |= 0x40
			}
			binary.BigEndian.PutUint16(t[2:], ethTypeTEB)
			binary.BigEndian.PutUint32(t[4:], uint32(p.TunID)<<8)
			copy(t[geneveBaseLen:], opts)
			n += geneveBaseLen + len(opts)
		}
	case GRE:
		g := b[l4:]
		proto := p.GREProto
		if proto == 0 {
			proto = ethTypeTEB
		}
		binary.BigEndian.PutUint16(g[2:], proto)
		var flags uint16
		o := greBaseLen
		if p.Csum {
			flags |= greFlagCsum
			h.GRECsum = true
			o += 4
		}
		if p.GREKey {
			flags |= greFlagKey
			binary.BigEndian.PutUint32(g[o:], uint32(p.TunID))
			o += 4
		}
		if p.GRESeq {
			flags |= greFlagSeq
			h.GRESeq = true
			o += 4
		}
		binary.BigEndian.PutUint16(g[0:], flags)
		n += o
	}
	h.Len = uint16(n)
	return h, nil
}

// geneveCritical reports whether any option has the critical bit (the
// top bit of its type) set. Malformed lists stop the walk.
func geneveCritical(opts []byte) bool {
	for len(opts) >= 4 {
		if opts[2]&0x80 != 0 {
			return true
		}
		l := 4 + int(opts[3]&0x1f)*4
		if l > len(opts) {
			return false
		}
		opts = opts[l:]
	}
	return false
}

// Push prepends h to the frame in b and fills the per-packet fields.
// flowHash is the inner packet's flow hash (the RSS or 5-tuple hash the
// datapath already has), mapped onto the UDP source port; seq is the
// port's next GRE sequence number, used when h carries one. It returns
// ErrHeadroom, changing nothing, if b lacks the headroom.
//
// A partial inner checksum (b.HasVnet with VnetNeedsCsum) stays for the
// outer device to complete: its offsets move with the frame, and the
// outer UDP or GRE checksum counts it as completed (local checksum
// offload: after completion the inner L4 bytes sum to the complement of
// the pseudo-header sum the field holds now). Push refuses GSO frames
// (ErrGSO), changing nothing.
func Push(b *packet.Buffer, h *Header, flowHash uint32, seq uint32) error {
	n := int(h.Len)
	if b.Headroom() < n {
		return ErrHeadroom
	}
	partial := -1 // where the inner partial checksum starts, in the outer frame
	if b.HasVnet {
		v := &b.Vnet
		if v.IsGSO() {
			return ErrGSO
		}
		if v.Flags&packet.VnetNeedsCsum != 0 {
			if int(v.CsumStart)%2 != 0 || int(v.CsumStart)+int(v.CsumOffset)+2 > b.Len() {
				// Odd or out of range: finish it here instead.
				packet.CompletePartialChecksum(b.Data(), int(v.CsumStart), int(v.CsumOffset))
				v.Flags &^= packet.VnetNeedsCsum
				v.CsumStart, v.CsumOffset = 0, 0
			} else {
				v.CsumStart += uint16(n)
				partial = int(v.CsumStart)
			}
		}
		if v.HdrLen != 0 {
			v.HdrLen += uint16(n)
		}
	}
	inner := b.Len()
	d := b.Prepend(n)
	copy(d, h.Bytes[:n])
	d = b.Data()
	l4 := int(h.L4)
	l4Len := inner + n - l4
	if h.IPv6 {
		binary.BigEndian.PutUint16(d[ethLen+4:], uint16(l4Len))
	} else {
		ip := d[ethLen : ethLen+ipv4Len]
		binary.BigEndian.PutUint16(ip[2:], uint16(l4Len+ipv4Len))
		binary.BigEndian.PutUint16(ip[10:], 0)
		binary.BigEndian.PutUint16(ip[10:], packet.IPv4HeaderChecksum(ip))
	}
	seg := d[l4:]
	switch h.Kind {
	case Geneve, VXLAN:
		binary.BigEndian.PutUint16(seg[0:], SourcePort(flowHash, h.SrcPortMin, h.SrcPortMax))
		binary.BigEndian.PutUint16(seg[4:], uint16(l4Len))
		if h.UDPCsum {
			binary.BigEndian.PutUint16(seg[6:], 0)
			c := ^l4Sum(d, l4, partial, b.Vnet.CsumOffset, pseudoSum(d, h.IPv6, protoUDP, l4Len))
			if c == 0 {
				c = 0xffff
			}
			binary.BigEndian.PutUint16(seg[6:], c)
		}
	case GRE:
		if h.GRESeq {
			o := greBaseLen
			if h.GRECsum {
				o += 4
			}
			if seg[0]&(greFlagKey>>8) != 0 {
				o += 4
			}
			binary.BigEndian.PutUint32(seg[o:], seq)
		}
		if h.GRECsum {
			binary.BigEndian.PutUint16(seg[4:], 0)
			binary.BigEndian.PutUint16(seg[4:], ^l4Sum(d, l4, partial, b.Vnet.CsumOffset, 0))
		}
	}
	b.Offsets = packet.Offsets{L3: ethLen, L4: uint16(l4)}
	return nil
}

// l4Sum is the one's complement sum of d[l4:] added to initial; with an
// inner partial checksum starting at partial (even, after l4), the bytes
// from there count as they will once the field at partial+offset is
// completed: the complement of the pseudo-header sum it holds now.
func l4Sum(d []byte, l4, partial int, offset uint16, initial uint16) uint16 {
	if partial < 0 {
		return packet.Checksum(d[l4:], initial)
	}
	s := packet.Checksum(d[l4:partial], initial)
	return packet.CombineChecksum(s, ^binary.BigEndian.Uint16(d[partial+int(offset):]))
}

// pseudoSum returns the folded pseudo-header sum of the IP header after
// the Ethernet header of frame d.
func pseudoSum(d []byte, ipv6 bool, proto uint8, l4Len int) uint16 {
	if ipv6 {
		var src, dst [16]byte
		copy(src[:], d[ethLen+8:])
		copy(dst[:], d[ethLen+24:])
		return packet.PseudoHeaderSumV6(src, dst, proto, uint32(l4Len))
	}
	var src, dst [4]byte
	copy(src[:], d[ethLen+12:])
	copy(dst[:], d[ethLen+16:])
	return packet.PseudoHeaderSumV4(src, dst, proto, uint16(l4Len))
}

package ipf

import (
	"encoding/binary"

	"gvs/packet"
)

// fragInfo is what one fragment tells about its place in its packet.
type fragInfo struct {
	key listKey
	// end is the frame length without Ethernet padding.
	end int
	// dataOff is where the fragment's share of the fragmentable part
	// starts in the frame (after the IPv4 header, or after the IPv6
	// fragment header).
	dataOff int
	// first and last data byte it carries, counted in the fragmentable
	// part; last < first never happens for an accepted fragment.
	first, last int
	isFirst     bool // offset 0, more fragments
	isLast      bool // offset > 0, no more fragments
	// IPv6 only: where the fragment header is, and the byte naming it
	// (the IPv6 header's next header or the preceding extension
	// header's), both from the start of the frame.
	fragHdrOff, prevNextOff int
}

// classify is the result of looking at a frame that Parse called a
// fragment.
type classify uint8

const (
	notFragment classify = iota // let the tracker see it as is
	badFragment                 // malformed: +inv
	tooSmall                    // shorter than the minimum: +inv, counted
	goodFragment
)

const (
	ipv4MaxHdr    = 60
	ipPacketMax   = 65535
	v6FragHdrLen  = 8
	maxExtHeaders = 8
)

func be16(b []byte) uint16 { return binary.BigEndian.Uint16(b) }
func be32(b []byte) uint32 { return binary.BigEndian.Uint32(b) }

// inspectV4 checks the IPv4 fragment at frame[l3:] as Open vSwitch's
// ipf_is_valid_v4_frag and extracts its key.
func inspectV4(frame []byte, l3 int, minFrag uint32, fi *fragInfo) classify {
	if l3 <= 0 || len(frame) < l3+packet.IPv4MinLen {
		return badFragment
	}
	h := frame[l3:]
	if h[0]>>4 != 4 {
		return badFragment
	}
	ihl := int(h[0]&0x0f) * 4
	total := int(be16(h[2:]))
	if ihl < packet.IPv4MinLen || total < ihl || len(h) < total {
		return badFragment
	}
	frag := be16(h[6:])
	const moreFragments, offsetMask = 0x2000, 0x1fff
	if frag&(moreFragments|offsetMask) == 0 {
		return notFragment
	}
	if packet.IPv4HeaderChecksum(h[:ihl]) != be16(h[10:]) {
		return badFragment
	}
	fi.isFirst = frag&offsetMask == 0 && frag&moreFragments != 0
	fi.isLast = frag&offsetMask != 0 && frag&moreFragments == 0
	if !fi.isLast && uint32(total) < minFrag {
		return tooSmall
	}
	if total == ihl {
		return badFragment // no data: nothing to place
	}
	fi.end = l3 + total
	fi.dataOff = l3 + ihl
	fi.first = int(frag&offsetMask) * 8
	fi.last = fi.first + total - ihl - 1
	fi.key = listKey{
		recircID: 0, // the caller fills recirc_id and zone
		id:       uint32(be16(h[4:])),
		dlType:   packet.EtherTypeIPv4,
		proto:    h[9],
	}
	copy(fi.key.src[:4], h[12:16])
	copy(fi.key.dst[:4], h[16:20])
	return goodFragment
}

// inspectV6 finds the fragment header of the IPv6 packet at frame[l3:]
// and checks it as Open vSwitch's ipf_is_valid_v6_frag.
func inspectV6(frame []byte, l3 int, minFrag uint32, fi *fragInfo) classify {
	if l3 <= 0 || len(frame) < l3+packet.IPv6HeaderLen {
		return badFragment
	}
	h := frame[l3:]
	if h[0]>>4 != 6 {
		return badFragment
	}
	total := packet.IPv6HeaderLen + int(be16(h[4:]))
	if len(h) < total {
		return badFragment
	}
	h = h[:total]
	next, off, prevNext := h[6], packet.IPv6HeaderLen, 6
	for n := 0; ; n++ {
		if n > maxExtHeaders {
			return badFragment
		}
		var hdrLen int
		switch next {
		case packet.ProtoHopByHop, packet.ProtoRouting, packet.ProtoDstOpts,
			packet.ProtoMobility, packet.ProtoHIP, packet.ProtoShim6:
			if len(h) < off+2 {
				return badFragment
			}
			hdrLen = (int(h[off+1]) + 1) * 8
		case packet.ProtoAH:
			if len(h) < off+2 {
				return badFragment
			}
			hdrLen = (int(h[off+1]) + 2) * 4
		case packet.ProtoFragment:
			if len(h) < off+v6FragHdrLen {
				return badFragment
			}
			offlg := be16(h[off+2:])
			offset, more := int(offlg&0xfff8), offlg&1 != 0
			if offset == 0 && !more {
				return notFragment // an atomic fragment: the tracker's to judge
			}
			fi.isFirst = offset == 0 && more
			fi.isLast = offset != 0 && !more
			if !fi.isLast && uint32(total) < minFrag {
				return tooSmall
			}
			dataLen := total - off - v6FragHdrLen
			if dataLen <= 0 {
				return badFragment
			}
			fi.end = l3 + total
			fi.fragHdrOff = l3 + off
			fi.prevNextOff = l3 + prevNext
			fi.dataOff = l3 + off + v6FragHdrLen
			fi.first = offset
			fi.last = offset + dataLen - 1
			fi.key = listKey{
				id:     be32(h[off+4:]),
				dlType: packet.EtherTypeIPv6,
				// Open vSwitch leaves nw_proto out of the IPv6 key.
			}
			copy(fi.key.src[:], h[8:24])
			copy(fi.key.dst[:], h[24:40])
			return goodFragment
		default:
			return notFragment
		}
		if len(h) < off+hdrLen {
			return badFragment
		}
		prevNext = off
		next = h[off]
		off += hdrLen
	}
}

package packet

// maxIPv6ExtHeaders bounds the extension-header walk so a crafted packet
// cannot make the parser loop thousands of times; more is malformed.
const maxIPv6ExtHeaders = 8

// parseIPv4 parses the IPv4 header at frame[l3:] and what follows it.
// It returns the L4 offset, or 0 if there is no L4 header to look at.
func parseIPv4(frame []byte, l3 int, k *Key) (Status, int) {
	b := frame[l3:]
	if len(b) < IPv4MinLen {
		return StatusTruncatedL3, 0
	}
	if b[0]>>4 != 4 {
		return StatusMalformedL3, 0
	}
	ihl := int(b[0]&0x0f) * 4
	if ihl < IPv4MinLen {
		return StatusMalformedL3, 0
	}
	if ihl > len(b) {
		return StatusTruncatedL3, 0
	}
	total := int(be16(b[2:]))
	if total < ihl {
		return StatusMalformedL3, 0
	}
	if total > len(b) {
		return StatusTruncatedL3, 0
	}
	b = b[:total] // drop Ethernet padding

	k.IPTOS = b[1]
	k.IPTTL = b[8]
	k.IPProto = b[9]
	k.SrcIPv4 = [4]byte(b[12:16])
	k.DstIPv4 = [4]byte(b[16:20])

	frag := be16(b[6:])
	const moreFragments, offsetMask = 0x2000, 0x1fff
	if frag&(moreFragments|offsetMask) != 0 {
		k.IPFrag = FragAny
		if frag&offsetMask != 0 {
			k.IPFrag |= FragLater
			return StatusOK, 0
		}
	}
	return parseL4(b[ihl:], k.IPProto, false, k), l3 + ihl
}

// parseIPv6 parses the IPv6 header at frame[l3:], walks extension headers
// and parses the transport header. It returns the L4 offset, or 0.
func parseIPv6(frame []byte, l3 int, k *Key) (Status, int) {
	b := frame[l3:]
	if len(b) < IPv6HeaderLen {
		return StatusTruncatedL3, 0
	}
	if b[0]>>4 != 6 {
		return StatusMalformedL3, 0
	}
	end := IPv6HeaderLen + int(be16(b[4:]))
	if end == IPv6HeaderLen && b[6] == ProtoHopByHop {
		// Payload length 0 with a hop-by-hop header: a jumbogram
		// (RFC 2675); its length is in an option we do not read, so
		// the frame's length stands.
		end = len(b)
	}
	if end > len(b) {
		return StatusTruncatedL3, 0
	}
	b = b[:end]

	k.IPTOS = b[0]<<4 | b[1]>>4
	k.FlowLabel = uint32(b[1]&0x0f)<<16 | uint32(b[2])<<8 | uint32(b[3])
	k.IPTTL = b[7]
	k.SrcIPv6 = [16]byte(b[8:24])
	k.DstIPv6 = [16]byte(b[24:40])

	next, off := b[6], IPv6HeaderLen
	for n := 0; ; n++ {
		var hdrLen int
		switch next {
		case ProtoHopByHop, ProtoRouting, ProtoDstOpts, ProtoMobility, ProtoHIP, ProtoShim6:
			if len(b) < off+2 {
				return StatusTruncatedL3, 0
			}
			hdrLen = (int(b[off+1]) + 1) * 8
		case ProtoAH:
			if len(b) < off+2 {
				return StatusTruncatedL3, 0
			}
			hdrLen = (int(b[off+1]) + 2) * 4
		case ProtoFragment:
			const fragHdrLen = 8
			if len(b) < off+fragHdrLen {
				return StatusTruncatedL3, 0
			}
			// An atomic fragment (offset 0, no more fragments) is a
			// whole packet, as Open vSwitch's parser treats it.
			if be16(b[off+2:]) != 0 {
				k.IPFrag |= FragAny
			}
			if be16(b[off+2:])&0xfff8 != 0 {
				k.IPFrag |= FragLater
				k.IPProto = b[off]
				return StatusOK, 0
			}
			hdrLen = fragHdrLen
		default:
			k.IPProto = next
			return parseL4(b[off:], next, true, k), l3 + off
		}
		if n == maxIPv6ExtHeaders {
			k.IPProto = next
			return StatusMalformedL3, 0
		}
		if len(b) < off+hdrLen {
			return StatusTruncatedL3, 0
		}
		next = b[off]
		off += hdrLen
	}
}

// parseL4 fills the transport fields from b, which spans from the start of
// the transport header to the end of the IP payload. Protocols it does not
// know (including ESP and "no next header") leave them zero.
func parseL4(b []byte, proto uint8, v6 bool, k *Key) Status {
	switch proto {
	case ProtoTCP:
		if len(b) < TCPMinLen {
			return StatusTruncatedL4
		}
		dataOff := int(b[12]>>4) * 4
		if dataOff < TCPMinLen {
			return StatusMalformedL4
		}
		if dataOff > len(b) {
			return StatusTruncatedL4
		}
		k.SrcPort = be16(b[0:])
		k.DstPort = be16(b[2:])
		k.TCPFlags = be16(b[12:]) & 0x0fff
	case ProtoUDP, ProtoUDPLite:
		if len(b) < UDPHeaderLen {
			return StatusTruncatedL4
		}
		k.SrcPort = be16(b[0:])
		k.DstPort = be16(b[2:])
	case ProtoSCTP:
		if len(b) < SCTPMinLen {
			return StatusTruncatedL4
		}
		k.SrcPort = be16(b[0:])
		k.DstPort = be16(b[2:])
	case ProtoICMP:
		if v6 {
			return StatusOK
		}
		if len(b) < ICMPv4MinLen {
			return StatusTruncatedL4
		}
		k.ICMPType, k.ICMPCode = b[0], b[1]
	case ProtoICMPv6:
		if !v6 {
			return StatusOK
		}
		if len(b) < ICMPv6MinLen {
			return StatusTruncatedL4
		}
		k.ICMPType, k.ICMPCode = b[0], b[1]
		if k.ICMPCode == 0 && (k.ICMPType == ICMPv6NeighborSolicit || k.ICMPType == ICMPv6NeighborAdvert) {
			parseND(b, k)
		}
	}
	return StatusOK
}

// ICMPv6 neighbour discovery message types and the link-layer address
// options the key records.
const (
	ICMPv6NeighborSolicit uint8 = 135
	ICMPv6NeighborAdvert  uint8 = 136
	NDOptSourceLinkAddr   uint8 = 1
	NDOptTargetLinkAddr   uint8 = 2
)

// parseND fills the neighbour discovery fields from a solicitation or
// advertisement b (from the ICMPv6 header on), as Open vSwitch's
// flow_extract does: NDReserved is the 32 bits after the checksum (an
// advertisement's R/S/O flags), NDTarget the target address, ARPSHA and
// ARPTHA the source and target link-layer address options, NDOptionsType
// the type of the first of those. A message cut short keeps what was
// read; one with a link-layer option twice has no target and no
// addresses (OVS's "invalid").
func parseND(b []byte, k *Key) {
	const hdrLen, targetLen, optLen = 8, 16, 8
	if len(b) < hdrLen {
		return
	}
	k.NDReserved = uint32(b[4])<<24 | uint32(b[5])<<16 | uint32(b[6])<<8 | uint32(b[7])
	if len(b) < hdrLen+targetLen {
		return
	}
	k.NDTarget = [16]byte(b[hdrLen : hdrLen+targetLen])
	for opts := b[hdrLen+targetLen:]; len(opts) >= optLen; {
		n := int(opts[1]) * 8
		if n == 0 || n > len(opts) {
			return
		}
		if n == optLen && (opts[0] == NDOptSourceLinkAddr || opts[0] == NDOptTargetLinkAddr) {
			addr := &k.ARPSHA
			if opts[0] == NDOptTargetLinkAddr {
				addr = &k.ARPTHA
			}
			if *addr != ([6]byte{}) {
				k.NDTarget, k.ARPSHA, k.ARPTHA = [16]byte{}, [6]byte{}, [6]byte{}
				return
			}
			*addr = [6]byte(opts[2:8])
			if k.NDOptionsType == 0 {
				k.NDOptionsType = opts[0]
			}
		}
		opts = opts[n:]
	}
}

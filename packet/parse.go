package packet

import "encoding/binary"

// Parse fills k from the Ethernet frame and reports how far it got. It
// never allocates, never panics on any input, and overwrites every packet
// field of k; the metadata fields (InPort, RecircID, conntrack, tunnel:
// everything before EtherType) are the caller's and stay as they are.
//
// A frame that is malformed or truncated is not an error for the packet
// path: the key holds every field parsed before the problem (the rest are
// zero) and the caller counts the returned Status.
func Parse(frame []byte, k *Key) Status {
	st, _, _ := parse(frame, k)
	return st
}

// Offsets reports where Parse found the network and transport headers,
// counted from the start of the frame; 0 means "not found" (no header can
// start at 0 but the Ethernet one).
type Offsets struct {
	L3 uint16 // first byte after Ethernet and VLAN headers (and SNAP)
	L4 uint16 // first byte of TCP/UDP/SCTP/ICMP; 0 for later fragments
}

// ParseOffsets is Parse that also reports header offsets, for checksum
// work and header rewriting.
func ParseOffsets(frame []byte, k *Key, o *Offsets) Status {
	st, l3, l4 := parse(frame, k)
	// Offsets fit in 16 bits: a frame longer than 64 KiB + headers cannot
	// carry its L3 header past 65535 bytes (at most 14 + 8 + 8 + IPv6
	// extension headers bounded by maxIPv6ExtHeaders * 2 KiB).
	*o = Offsets{L3: uint16(l3), L4: uint16(l4)}
	return st
}

func be16(b []byte) uint16 { return binary.BigEndian.Uint16(b) }

// parse does the work of Parse and returns the L3 and L4 offsets (0 when
// absent).
func parse(frame []byte, k *Key) (st Status, l3, l4 int) {
	k.clearPacketFields()
	if len(frame) < EthHeaderLen {
		return StatusTruncatedL2, 0, 0
	}
	k.DstMAC = [6]byte(frame[0:6])
	k.SrcMAC = [6]byte(frame[6:12])

	// off is the position of the current EtherType/TPID field.
	off := 12
	et := be16(frame[off:])
	for i := 0; i < MaxVLANs && (et == EtherTypeVLAN || et == EtherTypeQinQ); i++ {
		// A tag is the TPID already read, the TCI, and the next EtherType.
		if len(frame) < off+2+VLANHeaderLen {
			return StatusTruncatedL2, 0, 0
		}
		k.VLANs[i] = VLANTag{TPID: et, TCI: be16(frame[off+2:])}
		off += VLANHeaderLen
		et = be16(frame[off:])
	}
	l3 = off + 2
	if et < 0x0600 {
		et, l3 = llcEtherType(frame, l3)
	}
	k.EtherType = et

	switch et {
	case EtherTypeIPv4:
		st, l4 = parseIPv4(frame, l3, k)
	case EtherTypeIPv6:
		st, l4 = parseIPv6(frame, l3, k)
	case EtherTypeARP, EtherTypeRARP:
		st = parseARP(frame[l3:], k)
	}
	return st, l3, l4
}

// llcEtherType handles an 802.3 frame (length field instead of EtherType):
// an LLC/SNAP header with OUI 0 carries a real EtherType; anything else is
// EtherTypeNone. It returns the EtherType and where its payload starts.
func llcEtherType(frame []byte, l3 int) (uint16, int) {
	const snapLen = 8 // DSAP, SSAP, control, OUI (3), EtherType (2)
	if len(frame) < l3+snapLen {
		return EtherTypeNone, l3
	}
	h := frame[l3 : l3+snapLen]
	if h[0] != 0xaa || h[1] != 0xaa || h[2] != 0x03 || h[3] != 0 || h[4] != 0 || h[5] != 0 {
		return EtherTypeNone, l3
	}
	et := be16(h[6:])
	if et < 0x0600 {
		return EtherTypeNone, l3
	}
	return et, l3 + snapLen
}

// parseARP fills the ARP fields for Ethernet/IPv4 ARP and RARP; other
// hardware or protocol types leave them zero.
func parseARP(b []byte, k *Key) Status {
	const fixedLen = 8 // htype, ptype, hlen, plen, op
	if len(b) < fixedLen {
		return StatusTruncatedL3
	}
	if be16(b[0:]) != 1 || be16(b[2:]) != EtherTypeIPv4 || b[4] != 6 || b[5] != 4 {
		return StatusOK
	}
	if len(b) < ARPIPv4Len {
		return StatusTruncatedL3
	}
	k.ARPOp = be16(b[6:])
	k.ARPSHA = [6]byte(b[8:14])
	k.SrcIPv4 = [4]byte(b[14:18])
	k.ARPTHA = [6]byte(b[18:24])
	k.DstIPv4 = [4]byte(b[24:28])
	return StatusOK
}

package packet

import "encoding/binary"

// VnetHdrLen is the size of struct virtio_net_hdr, which AF_PACKET (with
// PACKET_VNET_HDR) and tap devices (IFF_VNET_HDR) put in front of a frame.
const VnetHdrLen = 10

// VnetHdr flags (virtio_net_hdr.flags).
const (
	// VnetNeedsCsum: the L4 checksum is partial. The field at
	// CsumStart+CsumOffset holds the folded pseudo-header sum; the sum
	// of everything from CsumStart to the end must be folded,
	// complemented and stored there (CompletePartialChecksum).
	VnetNeedsCsum uint8 = 1
	// VnetDataValid: the checksum was verified by the sender.
	VnetDataValid uint8 = 2
)

// VnetHdr GSO types (virtio_net_hdr.gso_type).
const (
	VnetGSONone  uint8 = 0
	VnetGSOTCPv4 uint8 = 1
	VnetGSOUDP   uint8 = 3 // UDP fragmentation offload (UFO)
	VnetGSOTCPv6 uint8 = 4
	VnetGSOUDPL4 uint8 = 5 // UDP segmentation offload (USO)
	VnetGSOECN   uint8 = 0x80
)

// VnetHdr is struct virtio_net_hdr. Offsets are counted from the start of
// the Ethernet frame.
type VnetHdr struct {
	Flags      uint8
	GSOType    uint8
	HdrLen     uint16 // length of all headers up to the end of L4 (a hint)
	GSOSize    uint16 // payload bytes per segment
	CsumStart  uint16 // where checksumming starts (the L4 header)
	CsumOffset uint16 // where the checksum field is, relative to CsumStart
}

// Encode writes h to b[:VnetHdrLen] in little-endian order (the virtio 1.0
// layout, and what the kernel uses on little-endian hosts). It panics if b
// is shorter than VnetHdrLen, like any slice overrun.
func (h *VnetHdr) Encode(b []byte) {
	_ = b[VnetHdrLen-1]
	b[0] = h.Flags
	b[1] = h.GSOType
	binary.LittleEndian.PutUint16(b[2:], h.HdrLen)
	binary.LittleEndian.PutUint16(b[4:], h.GSOSize)
	binary.LittleEndian.PutUint16(b[6:], h.CsumStart)
	binary.LittleEndian.PutUint16(b[8:], h.CsumOffset)
}

// Decode reads h from b[:VnetHdrLen]. It reports false, leaving h
// unchanged, if b is too short.
func (h *VnetHdr) Decode(b []byte) bool {
	if len(b) < VnetHdrLen {
		return false
	}
	*h = VnetHdr{
		Flags:      b[0],
		GSOType:    b[1],
		HdrLen:     binary.LittleEndian.Uint16(b[2:]),
		GSOSize:    binary.LittleEndian.Uint16(b[4:]),
		CsumStart:  binary.LittleEndian.Uint16(b[6:]),
		CsumOffset: binary.LittleEndian.Uint16(b[8:]),
	}
	return true
}

// IsGSO reports whether the frame is a GSO super-frame to be segmented.
func (h *VnetHdr) IsGSO() bool { return h.GSOType&^VnetGSOECN != VnetGSONone }

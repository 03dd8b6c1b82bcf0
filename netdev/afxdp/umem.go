package afxdp

import "golang.org/x/sys/unix"

// Chunk geometry. In copy mode the kernel writes a received frame
// XDP_PACKET_HEADROOM (256) bytes into the chunk it took from the fill
// ring, so the largest frame is the chunk size minus that headroom.
const (
	smallChunk   = 2048
	largeChunk   = 4096
	rxHeadroom   = unix.XDP_PACKET_HEADROOM
	maxSmallData = smallChunk - rxHeadroom // 1792
)

// chunkSizeFor picks the smallest chunk whose data room holds a frame of
// the given MTU with an Ethernet header and one VLAN tag.
func chunkSizeFor(mtu int) int {
	if mtu+ethVLANOverhead <= maxSmallData {
		return smallChunk
	}
	return largeChunk
}

// ethVLANOverhead is what the kernel lets a frame carry beyond the MTU
// (is_skb_forwardable: Ethernet header plus one VLAN tag).
const ethVLANOverhead = 14 + 4

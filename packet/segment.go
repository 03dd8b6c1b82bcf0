package packet

import (
	"encoding/binary"
	"errors"
)

// Software GSO: a frame that came with a virtio_net_hdr asking for
// segmentation (a 64 KiB TCP frame from a veth or tap with TSO on) must
// be cut before it leaves on a port that takes no virtio_net_hdr
// (AF_XDP), or TCP between such ports stalls. Segmenter does what the
// kernel's GSO would:
//
//   - TCP (VnetGSOTCPv4, VnetGSOTCPv6): segments of GSOSize payload bytes,
//     each with the headers copied, IPv4 total length, ID (incremented per
//     segment) and header checksum, or the IPv6 payload length, the TCP
//     sequence number advanced, FIN and PSH on the last segment only, CWR
//     on the first only, and a complete TCP checksum.
//   - USO (VnetGSOUDPL4): datagrams of GSOSize payload bytes, each with its
//     own UDP length and complete checksum, IPv4 IDs incremented.
//   - UFO (VnetGSOUDP): one UDP datagram, checksummed whole, carried in IP
//     fragments of GSOSize bytes (rounded down to a multiple of 8): IPv4
//     fragment offsets and MF (DF cleared, one ID for all), or an IPv6
//     fragment header inserted after the fixed header (no extension
//     headers allowed before UDP). A datagram that fits one fragment
//     goes out whole, only its checksum completed.
//
// Segments go into buffers the caller supplies (from its pool), and the
// last one is made in place in the source buffer, so a frame of n
// segments takes n-1 buffers. Nothing allocates.

// Errors from Segmenter.Start. The caller drops the frame and counts it.
var (
	ErrNotGSO         = errors.New("packet: frame asks for no segmentation")
	ErrGSOUnsupported = errors.New("packet: unsupported GSO frame")
	ErrGSOMalformed   = errors.New("packet: malformed GSO frame")
	// ErrSegmentRoom: a segment does not fit the destination buffer.
	ErrSegmentRoom = errors.New("packet: segment does not fit the buffer")
)

type segKind uint8

const (
	segTCP segKind = iota + 1
	segUDPL4
	segUFO
)

// fragHdrLen is the size of an IPv6 fragment header.
const fragHdrLen = 8

// Segmenter cuts one GSO frame at a time. The zero value is ready; one
// Segmenter belongs to one goroutine and is reused for every frame (it
// holds no pointers into a frame between Start calls other than src).
type Segmenter struct {
	src  *Buffer
	key  Key
	offs Offsets

	kind   segKind
	v4     bool
	l3, l4 int
	hdrLen int // template bytes copied in front of every segment
	outHdr int // header bytes of a segment (hdrLen, +8 for IPv6 UFO)
	end    int // end of the IP packet in the source frame
	mss    int // payload bytes per segment
	next   int // source offset of the next segment's payload
	segs   int // segments in all
	index  int // segments made so far
	seq    uint32
	ipID   uint16
	flags  byte   // TCP flags of the source
	fragID uint32 // IPv6 fragment identification (UFO)
	ufoN   uint32 // UFO datagrams seen, varies fragID
	whole  bool   // UFO that fits one fragment: no fragmenting at all
}

// Start prepares to segment src, which must carry a virtio_net_hdr
// asking for GSO (HasVnet and Vnet.IsGSO()). The frame is parsed afresh,
// so actions applied since it was received (a pushed VLAN tag) are seen.
// A GSOSize below 8 is malformed. On error nothing is changed and the
// Segmenter is idle.
func (s *Segmenter) Start(src *Buffer) error {
	s.Abort()
	if !src.HasVnet || !src.Vnet.IsGSO() {
		return ErrNotGSO
	}
	frame := src.Data()
	if ParseOffsets(frame, &s.key, &s.offs) != StatusOK || s.key.IsFragment() || s.offs.L4 == 0 {
		return ErrGSOMalformed
	}
	s.l3, s.l4 = int(s.offs.L3), int(s.offs.L4)
	if be16(frame[s.l3-2:]) != s.key.EtherType {
		return ErrGSOUnsupported // 802.3 with SNAP: its length field would need fixing too
	}
	switch s.key.EtherType {
	case EtherTypeIPv4:
		s.v4 = true
		s.end = s.l3 + int(be16(frame[s.l3+2:]))
		s.ipID = be16(frame[s.l3+4:])
	case EtherTypeIPv6:
		s.v4 = false
		plen := int(be16(frame[s.l3+4:]))
		if plen == 0 {
			return ErrGSOUnsupported // jumbogram
		}
		s.end = s.l3 + IPv6HeaderLen + plen
	default:
		return ErrGSOUnsupported
	}
	s.mss = int(src.Vnet.GSOSize)
	switch gso := src.Vnet.GSOType &^ VnetGSOECN; {
	case (gso == VnetGSOTCPv4 || gso == VnetGSOTCPv6) && s.key.IPProto == ProtoTCP:
		s.kind = segTCP
		s.hdrLen = s.l4 + int(frame[s.l4+12]>>4)*4
		s.seq = binary.BigEndian.Uint32(frame[s.l4+4:])
		s.flags = frame[s.l4+13]
	case gso == VnetGSOUDPL4 && s.key.IPProto == ProtoUDP:
		s.kind = segUDPL4
		s.hdrLen = s.l4 + UDPHeaderLen
	case gso == VnetGSOUDP && s.key.IPProto == ProtoUDP:
		if !s.v4 && s.l4 != s.l3+IPv6HeaderLen {
			return ErrGSOUnsupported // extension headers: where the fragment header goes is not ours to decide
		}
		s.kind = segUFO
		s.hdrLen = s.l4
		s.mss &^= 7 // fragment offsets count 8-byte units
	default:
		return ErrGSOUnsupported
	}
	s.outHdr = s.hdrLen
	if s.kind == segUFO && !s.v4 {
		s.outHdr += fragHdrLen
	}
	if s.mss < 8 || s.end > len(frame) || s.end < s.hdrLen {
		return ErrGSOMalformed
	}
	if s.kind == segUFO {
		if be16(frame[s.l4+4:]) != uint16(s.end-s.l4) {
			return ErrGSOMalformed
		}
		// The datagram's checksum covers all of it: complete it once,
		// before it is cut into fragments.
		s.l4Checksum(frame[:s.end], s.end-s.l4)
		s.ufoN++
		s.fragID = uint32(s.key.Hash()) ^ s.ufoN<<16 ^ uint32(s.ipID)
	}
	s.segs = max(1, (s.end-s.hdrLen+s.mss-1)/s.mss)
	s.whole = s.kind == segUFO && s.segs == 1
	s.next = s.hdrLen
	s.src = src
	return nil
}

// Abort forgets the frame being segmented (the caller drops it); the
// Segmenter is idle afterwards.
func (s *Segmenter) Abort() { s.src, s.segs, s.index = nil, 0, 0 }

// Remaining returns how many segments are still to be made (by Next,
// or the last one by Last).
func (s *Segmenter) Remaining() int { return s.segs - s.index }

// SegmentLen returns the length of the next segment.
func (s *Segmenter) SegmentLen() int {
	if s.whole {
		return s.end
	}
	return s.outHdr + min(s.mss, s.end-s.next)
}

// Next writes the next segment into dst, a buffer the caller owns (reset,
// from its pool), copying the source's metadata without the
// virtio_net_hdr. It may make every segment, the last included (then the
// source frame is left as it was, but for the datagram checksum that
// Start completes for UFO, and the Segmenter is idle); a caller that owns
// the source can have Last make the last one in place instead. On
// ErrSegmentRoom dst is unchanged.
func (s *Segmenter) Next(dst *Buffer) error {
	if s.src == nil || s.Remaining() < 1 {
		return ErrNotGSO
	}
	if s.whole {
		if s.end > len(dst.Room()) {
			return ErrSegmentRoom
		}
		dst.SetLen(copy(dst.Room(), s.src.Data()[:s.end]))
		s.copyMeta(dst)
		s.Abort()
		return nil
	}
	n := min(s.mss, s.end-s.next)
	room := dst.Room()
	if s.outHdr+n > len(room) {
		return ErrSegmentRoom
	}
	frame := s.src.Data()
	out := room[:s.outHdr+n]
	copy(out, frame[:s.hdrLen])
	copy(out[s.outHdr:], frame[s.next:s.next+n])
	s.fixup(out, s.Remaining() == 1)
	dst.SetLen(len(out))
	s.copyMeta(dst)
	if s.Remaining() == 0 {
		s.src = nil
	}
	return nil
}

// copyMeta gives a segment the source's metadata and key, without the
// virtio_net_hdr.
func (s *Segmenter) copyMeta(dst *Buffer) {
	dst.Meta = s.src.Meta
	dst.Key = s.src.Key
	s.clearVnet(dst)
}

// Last turns the source buffer into the last segment, in place, and
// returns it; the Segmenter is idle afterwards.
func (s *Segmenter) Last() *Buffer {
	b := s.src
	if b == nil {
		return nil
	}
	if s.whole {
		b.SetLen(s.end)
		s.clearVnet(b)
		s.index = s.segs
		s.src = nil
		return b
	}
	frame := b.Data()
	pos := s.next - s.outHdr // payload stays; headers move up to it
	copy(frame[pos:pos+s.hdrLen], frame[:s.hdrLen])
	b.Pull(pos)
	b.SetLen(s.end - s.next + s.outHdr) // drops Ethernet padding too
	s.fixup(b.Data(), true)
	s.clearVnet(b)
	s.src = nil
	return b
}

func (s *Segmenter) clearVnet(b *Buffer) {
	b.HasVnet = false
	b.Vnet = VnetHdr{}
	b.Offsets = s.offs
}

// fixup fills in the per-segment header fields of out, whose payload is
// the n bytes after its headers, taken from s.next; it advances s.
func (s *Segmenter) fixup(out []byte, last bool) {
	n := len(out) - s.outHdr
	off := s.next - s.hdrLen // of this payload within the source payload
	l3, l4 := s.l3, s.l4
	switch {
	case s.kind == segUFO && s.v4:
		field := uint16(off >> 3) // DF goes, as in the kernel's UFO
		if !last {
			field |= 0x2000 // more fragments
		}
		binary.BigEndian.PutUint16(out[l3+6:], field)
		s.ipv4Fixup(out, s.ipID)
	case s.kind == segUFO:
		binary.BigEndian.PutUint16(out[l3+4:], uint16(fragHdrLen+n))
		out[l3+6] = ProtoFragment
		h := out[l4 : l4+fragHdrLen]
		h[0], h[1] = ProtoUDP, 0
		field := uint16(off)
		if !last {
			field |= 1
		}
		binary.BigEndian.PutUint16(h[2:], field)
		binary.BigEndian.PutUint32(h[4:], s.fragID)
	default:
		if s.v4 {
			s.ipv4Fixup(out, s.ipID+uint16(s.index))
		} else {
			binary.BigEndian.PutUint16(out[l3+4:], uint16(len(out)-l3-IPv6HeaderLen))
		}
		if s.kind == segTCP {
			binary.BigEndian.PutUint32(out[l4+4:], s.seq+uint32(off))
			flags := s.flags
			if !last {
				flags &^= byte(TCPFlagFIN | TCPFlagPSH)
			}
			if s.index > 0 {
				flags &^= byte(TCPFlagCWR)
			}
			out[l4+13] = flags
		} else {
			binary.BigEndian.PutUint16(out[l4+4:], uint16(len(out)-l4))
		}
		s.l4Checksum(out, len(out)-l4)
	}
	s.next += n
	s.index++
}

// ipv4Fixup sets the total length, ID and header checksum of out's IPv4
// header.
func (s *Segmenter) ipv4Fixup(out []byte, id uint16) {
	ip := out[s.l3:s.l4]
	binary.BigEndian.PutUint16(ip[2:], uint16(len(out)-s.l3))
	binary.BigEndian.PutUint16(ip[4:], id)
	binary.BigEndian.PutUint16(ip[10:], IPv4HeaderChecksum(ip))
}

// l4Checksum computes the TCP or UDP checksum of the segment at
// frame[s.l4:] of length n from scratch (whatever the field held).
func (s *Segmenter) l4Checksum(frame []byte, n int) {
	field := s.l4 + 16
	if s.kind != segTCP {
		field = s.l4 + 6
	}
	binary.BigEndian.PutUint16(frame[field:], 0)
	c := ^Checksum(frame[s.l4:s.l4+n], pseudoSum(&s.key, n))
	if c == 0 && s.kind != segTCP {
		c = 0xffff // 0 means "no checksum" in UDP
	}
	binary.BigEndian.PutUint16(frame[field:], c)
}

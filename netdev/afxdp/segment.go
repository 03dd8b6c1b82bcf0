package afxdp

import (
	"encoding/binary"

	"gvs/packet"
)

// AF_XDP carries no GSO metadata, yet a veth peer with default offloads
// hands generic XDP whole 64 KiB TCP segments (TSO), which reach the
// socket as multi-buffer frames (XDP_USE_SG). Dropping them stalls TCP,
// so Recv cuts such a frame into segments that fit the device MTU, as the
// kernel's own GSO would: TCP is a byte stream, so any cut is valid and
// the sender's MSS need not be known. Nothing else may exceed the MTU:
// a UDP frame that does is a UDP_SEGMENT send whose datagram size is lost
// with the metadata, so it is dropped and counted instead of being cut at
// the wrong boundaries.

// scratchSize holds the largest frame GSO produces (a 64 KiB IP packet
// behind an Ethernet header and two VLAN tags), with room to spare.
const scratchSize = 64*1024 + 512

// TCP flag bits cleared on the segments that must not repeat them.
const (
	tcpFIN = 0x01
	tcpPSH = 0x08
	tcpCWR = 0x80
)

// segmenter holds one oversized TCP frame and cuts it into MTU-sized
// segments over as many Recv calls as the batch and pool allow.
type segmenter struct {
	frame []byte // scratch: the reassembled frame
	key   packet.Key
	offs  packet.Offsets

	active  bool
	ipv4    bool
	hdrLen  int // Ethernet, VLAN, IP and TCP headers
	payload []byte
	mss     int
	next    int // offset in payload of the next segment
	seq     uint32
	ipID    uint16
	index   uint16
	flags   byte
	// abandoned counts frames given up part-way (pool buffers too small
	// for a segment), for Recv's error count.
	abandoned uint64
	// lender, when set, gives each segment a free UMEM chunk to be
	// written into (the buffer borrows it), so that a member of the
	// group can send it without another copy; without a free chunk the
	// segment goes into the pool buffer's own memory.
	lender *rxLender
}

func newSegmenter() segmenter { return segmenter{frame: make([]byte, scratchSize)} }

// start prepares to cut frame (a prefix of g.frame) to fit mtu. It
// reports false for anything but a parseable, unfragmented IPv4 or IPv6
// TCP frame whose IP packet exceeds mtu.
//
// It always leaves the parse of frame in g.key and g.offs.
func (g *segmenter) start(frame []byte, mtu int) bool {
	if packet.ParseOffsets(frame, &g.key, &g.offs) != packet.StatusOK || g.key.IPProto != packet.ProtoTCP ||
		g.key.IsFragment() || g.offs.L4 == 0 {
		return false
	}
	l3, l4 := int(g.offs.L3), int(g.offs.L4)
	if l4+20 > len(frame) {
		return false
	}
	tcpLen := int(frame[l4+12]>>4) * 4
	end := 0
	switch g.key.EtherType {
	case packet.EtherTypeIPv4:
		g.ipv4 = true
		end = l3 + int(binary.BigEndian.Uint16(frame[l3+2:]))
		g.ipID = binary.BigEndian.Uint16(frame[l3+4:])
	case packet.EtherTypeIPv6:
		g.ipv4 = false
		end = l3 + packet.IPv6HeaderLen + int(binary.BigEndian.Uint16(frame[l3+4:]))
	default:
		return false
	}
	g.hdrLen = l4 + tcpLen
	if tcpLen < 20 || end > len(frame) || end <= g.hdrLen || end-l3 <= mtu {
		return false
	}
	g.mss = mtu - (g.hdrLen - l3)
	if g.mss < 8 {
		return false
	}
	g.payload = frame[g.hdrLen:end]
	g.seq = binary.BigEndian.Uint32(frame[l4+4:])
	g.flags = frame[l4+13]
	g.next, g.index, g.active = 0, 0, true
	return true
}

// emit appends segments to batch until the frame is done, the batch is
// full or the pool is empty; it returns how many and their bytes.
func (g *segmenter) emit(batch *packet.Batch, pool *packet.Pool) (pkts, bytes uint64) {
	l3, l4 := int(g.offs.L3), int(g.offs.L4)
	for g.next < len(g.payload) && !batch.Full() {
		buf := pool.Get()
		if buf == nil {
			return pkts, bytes
		}
		n := min(g.mss, len(g.payload)-g.next)
		if l := g.lender; l != nil && g.hdrLen+n <= int(l.chunk)-rxHeadroom && l.cache.ensure(l.group, 1) == 1 {
			// Behind the kernel's own headroom, as a received frame.
			base := l.cache.getNewest()
			buf.Lend(l.mem[base:base+l.chunk], rxHeadroom, 0, l, int(base))
			l.lent++
		}
		room := buf.Room()
		if g.hdrLen+n > len(room) {
			pool.Put(buf) // the pool's frames are smaller than the MTU: give up on the frame
			g.active = false
			g.abandoned++
			return pkts, bytes
		}
		out := room[:g.hdrLen+n]
		copy(out, g.frame[:g.hdrLen])
		copy(out[g.hdrLen:], g.payload[g.next:g.next+n])
		if g.ipv4 {
			binary.BigEndian.PutUint16(out[l3+2:], uint16(len(out)-l3))
			binary.BigEndian.PutUint16(out[l3+4:], g.ipID+g.index)
			binary.BigEndian.PutUint16(out[l3+10:], 0)
			binary.BigEndian.PutUint16(out[l3+10:], packet.IPv4HeaderChecksum(out[l3:l4]))
		} else {
			binary.BigEndian.PutUint16(out[l3+4:], uint16(len(out)-l3-packet.IPv6HeaderLen))
		}
		binary.BigEndian.PutUint32(out[l4+4:], g.seq+uint32(g.next))
		flags := g.flags
		if g.next+n < len(g.payload) {
			flags &^= tcpFIN | tcpPSH
		}
		if g.next > 0 {
			flags &^= tcpCWR
		}
		out[l4+13] = flags
		seg := out[l4:]
		binary.BigEndian.PutUint16(seg[16:], 0)
		var pseudo uint16
		if g.ipv4 {
			pseudo = packet.PseudoHeaderSumV4(g.key.SrcIPv4, g.key.DstIPv4, packet.ProtoTCP, uint16(len(seg)))
		} else {
			pseudo = packet.PseudoHeaderSumV6(g.key.SrcIPv6, g.key.DstIPv6, packet.ProtoTCP, uint32(len(seg)))
		}
		binary.BigEndian.PutUint16(seg[16:], ^packet.Checksum(seg, pseudo))
		buf.SetLen(len(out))
		batch.Append(buf)
		g.next += n
		g.index++
		pkts++
		bytes += uint64(len(out))
	}
	if g.next >= len(g.payload) {
		g.active = false
	}
	return pkts, bytes
}

package ipf

import (
	"encoding/binary"
	"time"

	"gvs/packet"
)

var (
	v4Src = [4]byte{198, 18, 0, 1}
	v4Dst = [4]byte{198, 19, 0, 2}
	v6Src = [16]byte{0x20, 0x01, 0x00, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}
	v6Dst = [16]byte{0x20, 0x01, 0x00, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2}
)

// udpFrame is an Ethernet frame carrying a UDP datagram of payloadLen
// bytes (a pattern seeded by seed), with valid checksums.
func udpFrame(v6 bool, payloadLen int, seed byte) []byte {
	udpLen := packet.UDPHeaderLen + payloadLen
	l3Len := packet.IPv4MinLen
	if v6 {
		l3Len = packet.IPv6HeaderLen
	}
	f := make([]byte, packet.EthHeaderLen+l3Len+udpLen)
	copy(f[0:6], []byte{2, 0, 0, 0, 0, 2})
	copy(f[6:12], []byte{2, 0, 0, 0, 0, 1})
	ip := f[packet.EthHeaderLen:]
	udp := ip[l3Len:]
	binary.BigEndian.PutUint16(udp[0:], 40000)
	binary.BigEndian.PutUint16(udp[2:], 5001)
	binary.BigEndian.PutUint16(udp[4:], uint16(udpLen))
	for i := range payloadLen {
		udp[8+i] = seed + byte(i*7)
	}
	var ph uint16
	if v6 {
		binary.BigEndian.PutUint16(f[12:], packet.EtherTypeIPv6)
		ip[0] = 0x60
		binary.BigEndian.PutUint16(ip[4:], uint16(udpLen))
		ip[6], ip[7] = packet.ProtoUDP, 64
		copy(ip[8:24], v6Src[:])
		copy(ip[24:40], v6Dst[:])
		ph = packet.PseudoHeaderSumV6(v6Src, v6Dst, packet.ProtoUDP, uint32(udpLen))
	} else {
		binary.BigEndian.PutUint16(f[12:], packet.EtherTypeIPv4)
		ip[0] = 0x45
		binary.BigEndian.PutUint16(ip[2:], uint16(l3Len+udpLen))
		binary.BigEndian.PutUint16(ip[4:], 0x1234)
		ip[8], ip[9] = 64, packet.ProtoUDP
		copy(ip[12:16], v4Src[:])
		copy(ip[16:20], v4Dst[:])
		c := packet.IPv4HeaderChecksum(ip[:20])
		binary.BigEndian.PutUint16(ip[10:], c)
		ph = packet.PseudoHeaderSumV4(v4Src, v4Dst, packet.ProtoUDP, uint16(udpLen))
	}
	c := ^packet.Checksum(udp, ph)
	if c == 0 {
		c = 0xffff
	}
	binary.BigEndian.PutUint16(udp[6:], c)
	return f
}

// piece is one fragment to cut: bytes [first, last] of the fragmentable
// part.
type piece struct{ first, last int }

// evenPieces cuts n bytes into pieces of size bytes (a multiple of 8).
func evenPieces(n, size int) []piece {
	var ps []piece
	for off := 0; off < n; off += size {
		ps = append(ps, piece{off, min(off+size, n) - 1})
	}
	return ps
}

// fragmentFrame cuts whole (from udpFrame) into fragments as ps says;
// the piece ending at the last byte has MF clear. IPv6 fragments carry a
// fragment header right after the IPv6 header.
func fragmentFrame(whole []byte, v6 bool, id uint32, ps []piece) [][]byte {
	const l3 = packet.EthHeaderLen
	hdr := packet.IPv4MinLen
	if v6 {
		hdr = packet.IPv6HeaderLen
	}
	data := whole[l3+hdr:]
	var out [][]byte
	for _, p := range ps {
		more := p.last+1 < len(data)
		chunk := data[p.first : p.last+1]
		if !v6 {
			f := make([]byte, l3+hdr+len(chunk))
			copy(f, whole[:l3+hdr])
			copy(f[l3+hdr:], chunk)
			ip := f[l3:]
			binary.BigEndian.PutUint16(ip[2:], uint16(hdr+len(chunk)))
			binary.BigEndian.PutUint16(ip[4:], uint16(id))
			fo := uint16(p.first / 8)
			if more {
				fo |= 0x2000
			}
			binary.BigEndian.PutUint16(ip[6:], fo)
			ip[10], ip[11] = 0, 0
			c := packet.IPv4HeaderChecksum(ip[:hdr])
			binary.BigEndian.PutUint16(ip[10:], c)
			out = append(out, f)
			continue
		}
		f := make([]byte, l3+hdr+8+len(chunk))
		copy(f, whole[:l3+hdr])
		ip := f[l3:]
		fh := ip[hdr:]
		fh[0] = whole[l3+6]
		ip[6] = packet.ProtoFragment
		offlg := uint16(p.first) &^ 7
		if more {
			offlg |= 1
		}
		binary.BigEndian.PutUint16(fh[2:], offlg)
		binary.BigEndian.PutUint32(fh[4:], id)
		copy(fh[8:], chunk)
		binary.BigEndian.PutUint16(ip[4:], uint16(8+len(chunk)))
		out = append(out, f)
	}
	return out
}

func bufferOf(frame []byte, inPort uint32) *packet.Buffer {
	b := packet.NewBuffer(packet.DefaultHeadroom, len(frame))
	b.SetLen(len(frame))
	copy(b.Data(), frame)
	b.InPort = inPort
	b.Parse()
	return b
}

// fakeClock is a settable clock.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }
func newClock() *fakeClock                   { return &fakeClock{t: time.Unix(1000, 0)} }
func newIPF(c *fakeClock) *IPF               { return New(c.now) }
func testPool() *packet.Pool {
	p, _ := packet.NewPool(packet.PoolConfig{Buffers: testPoolBuffers, FrameSize: 9216})
	return p
}

const testPoolBuffers = 128

func ipv4Total(frame []byte) int { return int(binary.BigEndian.Uint16(frame[packet.EthHeaderLen+2:])) }
func checksumOK(frame []byte) bool {
	h := frame[packet.EthHeaderLen : packet.EthHeaderLen+20]
	return packet.IPv4HeaderChecksum(h) == binary.BigEndian.Uint16(h[10:])
}

// setV4ID gives an IPv4 frame the identification its fragments carry.
func setV4ID(frame []byte, v6 bool, id uint32) {
	if v6 {
		return
	}
	ip := frame[packet.EthHeaderLen:]
	binary.BigEndian.PutUint16(ip[4:], uint16(id))
	ip[10], ip[11] = 0, 0
	binary.BigEndian.PutUint16(ip[10:], packet.IPv4HeaderChecksum(ip[:20]))
}

package packet

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"
)

// gsoCase is a super-frame as a TSO/USO/UFO sender hands it over: the
// headers once, the whole payload, a partial L4 checksum and a
// virtio_net_hdr.
type gsoCase struct {
	name    string
	v6      bool
	tags    []VLANTag
	gso     uint8
	mss     int
	payload int
	flags   uint16 // TCP
	ext     bool   // IPv6 hop-by-hop header before L4
}

func (c gsoCase) isTCP() bool {
	return c.gso&^VnetGSOECN == VnetGSOTCPv4 || c.gso&^VnetGSOECN == VnetGSOTCPv6
}

func payloadBytes(n int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(i*7 + i/251)
	}
	return p
}

// build returns the super-frame, its virtio_net_hdr and its payload.
func (c gsoCase) build() ([]byte, VnetHdr, []byte) {
	payload := payloadBytes(c.payload)
	var l4 []byte
	proto, field := ProtoUDP, 6
	if c.isTCP() {
		proto, field = ProtoTCP, 16
		l4 = tcp(40000, 5201, c.flags, 3, payload) // 12 bytes of options
		binary.BigEndian.PutUint32(l4[4:], 0xfffff000)
	} else {
		l4 = udp(40000, 5201, payload)
		if len(l4) > 0xffff {
			binary.BigEndian.PutUint16(l4[4:], 0)
		}
	}
	var frame []byte
	var pseudo uint16
	if c.v6 {
		next, rest := proto, l4
		if c.ext {
			next, rest = ProtoHopByHop, cat(ext6(proto, 0), l4)
		}
		frame = cat(ether(EtherTypeIPv6, c.tags...), ipv6(ipv6Spec{next: next, hop: 64}, rest))
		pseudo = refPseudo(ip6A[:], ip6B[:], proto, len(l4))
	} else {
		frame = cat(ether(EtherTypeIPv4, c.tags...), ipv4(ipv4Spec{proto: proto, ttl: 64, frag: 0x4000}, l4))
		pseudo = refPseudo(ip4A[:], ip4B[:], proto, len(l4))
	}
	start := len(frame) - len(l4)
	binary.BigEndian.PutUint16(frame[start+field:], pseudo)
	h := VnetHdr{Flags: VnetNeedsCsum, GSOType: c.gso, GSOSize: uint16(c.mss),
		CsumStart: uint16(start), CsumOffset: uint16(field), HdrLen: uint16(len(frame) - len(payload))}
	return frame, h, payload
}

func gsoCases() []gsoCase {
	return []gsoCase{
		{name: "tcp4", gso: VnetGSOTCPv4, mss: 1448, payload: 65000, flags: TCPFlagACK | TCPFlagPSH | TCPFlagFIN},
		{name: "tcp4-ecn-cwr", gso: VnetGSOTCPv4 | VnetGSOECN, mss: 1448, payload: 10000, flags: TCPFlagACK | TCPFlagCWR | TCPFlagPSH},
		{name: "tcp4-vlan", tags: []VLANTag{tagQ}, gso: VnetGSOTCPv4, mss: 1448, payload: 2 * 1448, flags: TCPFlagACK},
		{name: "tcp4-qinq-odd", tags: []VLANTag{tagAD, tagQ}, gso: VnetGSOTCPv4, mss: 1000, payload: 4321, flags: TCPFlagACK},
		{name: "tcp6", v6: true, gso: VnetGSOTCPv6, mss: 1428, payload: 64000, flags: TCPFlagACK | TCPFlagPSH},
		{name: "tcp6-vlan-ext", v6: true, ext: true, tags: []VLANTag{tagQ}, gso: VnetGSOTCPv6, mss: 1400, payload: 9001, flags: TCPFlagACK | TCPFlagFIN},
		{name: "tcp4-one-segment", gso: VnetGSOTCPv4, mss: 1448, payload: 100, flags: TCPFlagACK | TCPFlagPSH},
		{name: "tcp4-empty", gso: VnetGSOTCPv4, mss: 1448, payload: 0, flags: TCPFlagACK | TCPFlagFIN},
		{name: "uso4", gso: VnetGSOUDPL4, mss: 1472, payload: 64000},
		{name: "uso6-vlan", v6: true, tags: []VLANTag{tagQ}, gso: VnetGSOUDPL4, mss: 1200, payload: 8000},
		{name: "ufo4", gso: VnetGSOUDP, mss: 1480, payload: 8000},
		{name: "ufo4-vlan-unaligned-mss", tags: []VLANTag{tagQ}, gso: VnetGSOUDP, mss: 1475, payload: 30000},
		{name: "ufo6", v6: true, gso: VnetGSOUDP, mss: 1448, payload: 20000},
		{name: "ufo4-fits", gso: VnetGSOUDP, mss: 1480, payload: 1000},
		{name: "ufo6-fits", v6: true, gso: VnetGSOUDP, mss: 1448, payload: 1000},
	}
}

// segmentAll cuts frame as the datapath does (Next into pool buffers,
// Last in place) and returns copies of the segments.
func segmentAll(t testing.TB, s *Segmenter, pool *Pool, frame []byte, h VnetHdr) ([][]byte, error) {
	return segmentWith(t, s, pool, frame, h, true)
}

// segmentWith is segmentAll; with inPlace false Next makes the last
// segment too, and the source must come out unchanged.
func segmentWith(t testing.TB, s *Segmenter, pool *Pool, frame []byte, h VnetHdr, inPlace bool) ([][]byte, error) {
	src := NewBuffer(DefaultHeadroom, len(frame))
	src.SetLen(copy(src.Room(), frame))
	src.HasVnet, src.Vnet, src.InPort = true, h, 7
	if err := s.Start(src); err != nil {
		return nil, err
	}
	var out [][]byte
	last := 1
	if !inPlace {
		last = 0
	}
	for s.Remaining() > last {
		want := s.SegmentLen()
		dst := pool.Get()
		if err := s.Next(dst); err != nil {
			t.Fatalf("Next: %v", err)
		}
		if dst.Len() != want || dst.HasVnet || dst.InPort != 7 {
			t.Fatalf("segment of %d bytes (want %d), vnet %v, in_port %d", dst.Len(), want, dst.HasVnet, dst.InPort)
		}
		out = append(out, bytes.Clone(dst.Data()))
		pool.Put(dst)
	}
	if !inPlace {
		// UFO's Start completes the datagram's checksum in the source.
		changed := !bytes.Equal(src.Data(), frame) && h.GSOType != VnetGSOUDP
		if s.Remaining() != 0 || s.Last() != nil || changed {
			t.Fatalf("after Next made every segment: remaining %d, source changed %v", s.Remaining(), changed)
		}
		return out, nil
	}
	lastBuf := s.Last()
	if lastBuf != src || lastBuf.HasVnet || s.Remaining() != 0 {
		t.Fatalf("Last: %p (src %p), vnet %v, remaining %d", lastBuf, src, lastBuf.HasVnet, s.Remaining())
	}
	return append(out, bytes.Clone(lastBuf.Data())), nil
}

// l4Verifies checks a TCP or UDP checksum with the textbook sum.
func l4Verifies(k *Key, seg []byte) bool {
	var ps uint16
	if k.EtherType == EtherTypeIPv4 {
		ps = refPseudo(k.SrcIPv4[:], k.DstIPv4[:], k.IPProto, len(seg))
	} else {
		ps = refPseudo(k.SrcIPv6[:], k.DstIPv6[:], k.IPProto, len(seg))
	}
	return refSum(seg, uint32(ps)) == 0xffff
}

func TestSegment(t *testing.T) {
	pool := smallPool(t, 4)
	var s Segmenter
	for _, c := range gsoCases() {
		t.Run(c.name, func(t *testing.T) {
			frame, h, payload := c.build()
			segs, err := segmentAll(t, &s, pool, frame, h)
			if err != nil {
				t.Fatal(err)
			}
			var orig Key
			var oo Offsets
			ParseOffsets(frame, &orig, &oo)
			var got []byte
			if h.GSOType&^VnetGSOECN == VnetGSOUDP {
				got = checkFragments(t, c, segs, &orig)
			} else {
				got = checkSegments(t, c, segs, &orig, frame[oo.L4:])
			}
			if !bytes.Equal(got, payload) {
				t.Fatalf("reassembled %d bytes differ from the %d-byte payload", len(got), len(payload))
			}
			if want := max(1, (len(payload)+c.mss-1)/c.mss); c.gso&^VnetGSOECN != VnetGSOUDP && len(segs) != want {
				t.Fatalf("%d segments, want %d", len(segs), want)
			}
			copied, err := segmentWith(t, &s, pool, frame, h, false)
			if err != nil || len(copied) != len(segs) {
				t.Fatalf("all by Next: %d segments, %v", len(copied), err)
			}
			for i := range segs {
				if c.v6 && c.gso == VnetGSOUDP && len(segs) > 1 {
					// Each datagram gets its own fragment identification.
					id := EthHeaderLen + VLANHeaderLen*len(c.tags) + IPv6HeaderLen + 4
					copy(copied[i][id:id+4], segs[i][id:id+4])
				}
				if !bytes.Equal(copied[i], segs[i]) {
					t.Fatalf("segment %d made by Next differs from the one made in place", i)
				}
			}
		})
	}
	if st := pool.Stats(); st.Free != st.Buffers {
		t.Fatalf("pool leak: %+v", st)
	}
}

// checkSegments verifies TCP or USO segments one by one and returns the
// concatenated payload.
func checkSegments(t *testing.T, c gsoCase, segs [][]byte, orig *Key, origL4 []byte) []byte {
	var got []byte
	seq := binary.BigEndian.Uint32(origL4[4:])
	for i, seg := range segs {
		var k Key
		var o Offsets
		if st := ParseOffsets(seg, &k, &o); st != StatusOK {
			t.Fatalf("segment %d: %v", i, st)
		}
		k.TCPFlags = orig.TCPFlags // compared below
		if k != *orig {
			t.Fatalf("segment %d: key %+v\nwant %+v", i, k, *orig)
		}
		l4 := seg[o.L4:]
		if !l4Verifies(&k, l4) {
			t.Fatalf("segment %d: bad L4 checksum", i)
		}
		if k.EtherType == EtherTypeIPv4 {
			ip := seg[o.L3:o.L4]
			if refChecksum(ip) != 0 {
				t.Fatalf("segment %d: bad IPv4 header checksum", i)
			}
			if id := binary.BigEndian.Uint16(ip[4:]); id != 0x1234+uint16(i) {
				t.Fatalf("segment %d: IP ID %#x", i, id)
			}
		}
		var data []byte
		if c.isTCP() {
			data = l4[int(l4[12]>>4)*4:]
			if s := binary.BigEndian.Uint32(l4[4:]); s != seq+uint32(len(got)) {
				t.Fatalf("segment %d: seq %#x, want %#x", i, s, seq+uint32(len(got)))
			}
			want := c.flags
			if i < len(segs)-1 {
				want &^= TCPFlagFIN | TCPFlagPSH
			}
			if i > 0 {
				want &^= TCPFlagCWR
			}
			if f := binary.BigEndian.Uint16(l4[12:]) & 0x0fff; f != want {
				t.Fatalf("segment %d: flags %#x, want %#x", i, f, want)
			}
		} else {
			data = l4[UDPHeaderLen:]
			if n := binary.BigEndian.Uint16(l4[4:]); int(n) != len(l4) {
				t.Fatalf("segment %d: UDP length %d of %d", i, n, len(l4))
			}
		}
		if len(data) > c.mss || i < len(segs)-1 && len(data) != c.mss {
			t.Fatalf("segment %d: %d payload bytes, mss %d", i, len(data), c.mss)
		}
		got = append(got, data...)
	}
	return got
}

// checkFragments reassembles UFO fragments like a receiver's IP layer and
// returns the UDP payload after verifying the datagram's checksum.
func checkFragments(t *testing.T, c gsoCase, segs [][]byte, orig *Key) []byte {
	var datagram []byte
	for i, seg := range segs {
		var k Key
		var o Offsets
		ParseOffsets(seg, &k, &o)
		if k.EtherType != orig.EtherType || k.VLANs != orig.VLANs || k.IPProto != ProtoUDP {
			t.Fatalf("fragment %d: key %+v", i, k)
		}
		l3 := seg[o.L3:]
		var off int
		var more bool
		var body []byte
		switch {
		case c.v6 && len(segs) == 1: // fits: sent whole, no fragment header
			if l3[6] != ProtoUDP {
				t.Fatalf("whole datagram: next header %d", l3[6])
			}
			body = l3[IPv6HeaderLen:]
		case c.v6:
			fh := l3[IPv6HeaderLen:]
			if l3[6] != ProtoFragment || fh[0] != ProtoUDP || int(binary.BigEndian.Uint16(l3[4:])) != len(fh) {
				t.Fatalf("fragment %d: bad IPv6 fragment header %x", i, fh[:8])
			}
			v := binary.BigEndian.Uint16(fh[2:])
			off, more, body = int(v&^7), v&1 != 0, fh[fragHdrLen:]
		default:
			ihl := int(l3[0]&15) * 4
			if refChecksum(l3[:ihl]) != 0 || int(binary.BigEndian.Uint16(l3[2:])) != len(l3) {
				t.Fatalf("fragment %d: bad IPv4 header", i)
			}
			v := binary.BigEndian.Uint16(l3[6:])
			if len(segs) > 1 && v&0x4000 != 0 {
				t.Fatalf("fragment %d: DF set", i)
			}
			if id := binary.BigEndian.Uint16(l3[4:]); id != 0x1234 {
				t.Fatalf("fragment %d: IP ID %#x", i, id)
			}
			off, more, body = int(v&0x1fff)*8, v&0x2000 != 0, l3[ihl:]
		}
		if off != len(datagram) || more != (i < len(segs)-1) || len(body) > c.mss {
			t.Fatalf("fragment %d: offset %d (have %d), more %v, %d bytes", i, off, len(datagram), more, len(body))
		}
		datagram = append(datagram, body...)
	}
	if !l4Verifies(orig, datagram) {
		t.Fatal("reassembled datagram: bad UDP checksum")
	}
	return datagram[UDPHeaderLen:]
}

func TestSegmentRejects(t *testing.T) {
	var s Segmenter
	pool := smallPool(t, 2)
	base := gsoCases()[0]
	frame, h, _ := base.build()
	cases := []struct {
		name string
		edit func(f []byte, h *VnetHdr)
		want error
	}{
		{"no gso", func(f []byte, h *VnetHdr) { h.GSOType = VnetGSONone }, ErrNotGSO},
		{"gso size 0", func(f []byte, h *VnetHdr) { h.GSOSize = 0 }, ErrGSOMalformed},
		{"tcp type on udp", func(f []byte, h *VnetHdr) { f[23] = ProtoUDP }, ErrGSOUnsupported},
		{"truncated ip", func(f []byte, h *VnetHdr) { binary.BigEndian.PutUint16(f[16:], 0xffff) }, ErrGSOMalformed},
		{"fragment", func(f []byte, h *VnetHdr) { f[20] |= 0x20 }, ErrGSOMalformed},
		{"arp", func(f []byte, h *VnetHdr) { f[12], f[13] = 0x08, 0x06 }, ErrGSOMalformed},
	}
	for _, c := range cases {
		f := bytes.Clone(frame)
		hh := h
		c.edit(f, &hh)
		if _, err := segmentAll(t, &s, pool, f, hh); err != c.want {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	// A destination too small for a segment is refused and left alone.
	src := NewBuffer(DefaultHeadroom, len(frame))
	src.SetLen(copy(src.Room(), frame))
	src.HasVnet, src.Vnet = true, h
	if err := s.Start(src); err != nil {
		t.Fatal(err)
	}
	small := NewBuffer(0, 100)
	if err := s.Next(small); err != ErrSegmentRoom || small.Len() != 0 {
		t.Fatalf("Next into a small buffer: %v, len %d", err, small.Len())
	}
}

func ExampleSegmenter() {
	frame, h, _ := gsoCases()[0].build()
	pool, _ := NewPool(PoolConfig{Buffers: 64, FrameSize: 2048})
	src := NewBuffer(DefaultHeadroom, len(frame))
	src.SetLen(copy(src.Room(), frame))
	src.HasVnet, src.Vnet = true, h
	var s Segmenter
	var batch Batch
	if err := s.Start(src); err != nil {
		return
	}
	for s.Remaining() > 1 && !batch.Full() {
		b := pool.Get()
		if s.Next(b) != nil {
			pool.Put(b)
			return
		}
		batch.Append(b)
	}
	fmt.Println(batch.Len(), "segments so far,", s.Remaining(), "to go")
	// Output: 32 segments so far, 13 to go
}

package packet

import "testing"

// FuzzSegment: Start never panics; when it accepts a frame, every segment
// fits its buffer and the header-plus-MSS bound, TCP and USO segments
// carry valid checksums, and the payload is conserved.
func FuzzSegment(f *testing.F) {
	for _, c := range gsoCases() {
		// Small frames keep the fuzzer's minimisation fast.
		c.mss = 96
		c.payload = min(c.payload, 3*c.mss+5)
		frame, h, _ := c.build()
		f.Add(frame, h.GSOType, h.GSOSize, false)
	}
	pool, err := NewPool(PoolConfig{Buffers: 4, FrameSize: 9000})
	if err != nil {
		f.Fatal(err)
	}
	var s Segmenter
	f.Fuzz(func(t *testing.T, frame []byte, gsoType uint8, gsoSize uint16, copyLast bool) {
		if len(frame) > 9000 {
			return // the unit tests cover 64 KiB frames; minimising them is slow
		}
		src := NewBuffer(DefaultHeadroom, len(frame))
		src.SetLen(copy(src.Room(), frame))
		src.HasVnet = true
		src.Vnet = VnetHdr{Flags: VnetNeedsCsum, GSOType: gsoType, GSOSize: gsoSize}
		if s.Start(src) != nil {
			return
		}
		if s.Remaining() > 70000 {
			t.Fatalf("%d segments from a %d-byte frame", s.Remaining(), len(frame))
		}
		total := 0
		check := func(seg []byte, bound int) {
			if len(seg) > bound || len(seg) > len(frame)+fragHdrLen {
				t.Fatalf("segment of %d bytes (bound %d, frame %d)", len(seg), bound, len(frame))
			}
			var k Key
			var o Offsets
			if ParseOffsets(seg, &k, &o) != StatusOK {
				t.Fatalf("segment does not parse: %x", seg)
			}
			if s.kind != segUFO && o.L4 != 0 && !l4Verifies(&k, seg[o.L4:]) {
				t.Fatal("segment with a bad L4 checksum")
			}
			total += len(seg) - s.outHdr
		}
		last := 1 // Last makes the last segment in place
		if copyLast {
			last = 0 // Next makes it
		}
		bound, hdr, payload, whole := s.outHdr+s.mss, s.hdrLen, s.end-s.hdrLen, s.whole
		for s.Remaining() > last {
			dst := pool.Get()
			if err := s.Next(dst); err != nil {
				pool.Put(dst)
				if err == ErrSegmentRoom {
					return
				}
				t.Fatal(err)
			}
			check(dst.Data(), bound)
			pool.Put(dst)
		}
		if !copyLast {
			check(s.Last().Data(), bound)
		}
		if s.Remaining() != 0 || s.Last() != nil {
			t.Fatalf("%d segments left after the last", s.Remaining())
		}
		if whole {
			total += s.outHdr - hdr
		}
		if total != payload {
			t.Fatalf("%d payload bytes out of %d in", total, payload)
		}
	})
}

func TestSegmentAllocatesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("alloc counts are meaningful in full runs only")
	}
	pool := smallPool(t, 64)
	var s Segmenter
	for _, c := range gsoCases() {
		frame, h, _ := c.build()
		src := NewBuffer(DefaultHeadroom, len(frame))
		n := testing.AllocsPerRun(20, func() {
			src.Reset()
			src.SetLen(copy(src.Room(), frame))
			src.HasVnet, src.Vnet = true, h
			if err := s.Start(src); err != nil {
				t.Fatal(err)
			}
			for s.Remaining() > 1 {
				b := pool.Get()
				s.Next(b)
				pool.Put(b)
			}
			s.Last()
		})
		if n != 0 {
			t.Errorf("%s: %v allocations per frame", c.name, n)
		}
	}
}

func BenchmarkSegmentTCP4(b *testing.B) {
	frame, h, _ := gsoCase{gso: VnetGSOTCPv4, mss: 1448, payload: 65000, flags: TCPFlagACK}.build()
	pool := smallPool(b, 64)
	src := NewBuffer(DefaultHeadroom, len(frame))
	var s Segmenter
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		src.Reset()
		src.SetLen(copy(src.Room(), frame))
		src.HasVnet, src.Vnet = true, h
		s.Start(src)
		for s.Remaining() > 1 {
			d := pool.Get()
			s.Next(d)
			pool.Put(d)
		}
		s.Last()
	}
}

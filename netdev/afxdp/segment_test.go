package afxdp

import (
	"bytes"
	"encoding/binary"
	"testing"

	"gvs/packet"
)

// cutAll runs the segmenter over frame to completion, one batch at a time
// as Recv would, and returns the segments' bytes.
func cutAll(t *testing.T, frame []byte, mtu int) [][]byte {
	t.Helper()
	g := newSegmenter()
	n := copy(g.frame, frame)
	if !g.start(g.frame[:n], mtu) {
		t.Fatalf("start refused a %d-byte frame at MTU %d", n, mtu)
	}
	pool, err := packet.NewPool(packet.PoolConfig{Buffers: 64, FrameSize: 2048})
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	var batch packet.Batch
	for g.active {
		pkts, _ := g.emit(&batch, pool)
		if pkts == 0 {
			t.Fatal("segmenter made no progress")
		}
		for _, b := range batch.Buffers() {
			out = append(out, bytes.Clone(b.Data()))
		}
		pool.PutBatch(&batch)
	}
	return out
}

func TestSegmentTCP(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec frameSpec
	}{
		{"ipv4", frameSpec{payload: 60000, seq: 0xfffff000, flags: 0x18 | tcpFIN | tcpCWR, partial: true}},
		{"ipv6", frameSpec{ipv6: true, payload: 50001, seq: 7, flags: 0x10 | tcpPSH}},
		{"vlan-ipv4", frameSpec{vlan: 100, payload: 4000, seq: 1, flags: 0x10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const mtu = 1500
			orig := buildFrame(tc.spec)
			segs := cutAll(t, orig, mtu)
			var k packet.Key
			var o packet.Offsets
			packet.ParseOffsets(orig, &k, &o)
			hdr := int(o.L4) + 20
			var payload []byte
			for i, s := range segs {
				var sk packet.Key
				var so packet.Offsets
				if st := packet.ParseOffsets(s, &sk, &so); st != packet.StatusOK {
					t.Fatalf("segment %d: parse %v", i, st)
				}
				if ipLen := len(s) - int(so.L3); ipLen > mtu {
					t.Errorf("segment %d: IP packet %d bytes > MTU %d", i, ipLen, mtu)
				}
				if !l4ChecksumOK(s) {
					t.Errorf("segment %d: bad TCP checksum", i)
				}
				if sk.EtherType == packet.EtherTypeIPv4 {
					ip := s[so.L3:so.L4]
					if packet.IPv4HeaderChecksum(ip) != binary.BigEndian.Uint16(ip[10:]) {
						t.Errorf("segment %d: bad IPv4 header checksum", i)
					}
					if id := binary.BigEndian.Uint16(ip[4:]); id != 0x1234+uint16(i) {
						t.Errorf("segment %d: IP id %#x", i, id)
					}
				}
				if sk.VLANs != k.VLANs {
					t.Errorf("segment %d: VLANs %v, want %v", i, sk.VLANs, k.VLANs)
				}
				tcp := s[so.L4:]
				if seq := binary.BigEndian.Uint32(tcp[4:]); seq != tc.spec.seq+uint32(len(payload)) {
					t.Errorf("segment %d: seq %d, want %d", i, seq, tc.spec.seq+uint32(len(payload)))
				}
				flags := tcp[13]
				last := i == len(segs)-1
				if want := tc.spec.flags&(tcpFIN|tcpPSH) != 0 && last; (flags&(tcpFIN|tcpPSH) != 0) != want {
					t.Errorf("segment %d: flags %#x (last %v)", i, flags, last)
				}
				if flags&tcpCWR != 0 && i > 0 {
					t.Errorf("segment %d: CWR repeated", i)
				}
				payload = append(payload, s[hdr:]...)
			}
			if want := orig[hdr:]; !bytes.Equal(payload, want) {
				t.Fatalf("payload of %d segments differs (%d bytes, want %d)", len(segs), len(payload), len(want))
			}
			if wantSegs := (tc.spec.payload + (mtu - (hdr - int(o.L3))) - 1) / (mtu - (hdr - int(o.L3))); len(segs) != wantSegs {
				t.Errorf("%d segments, want %d", len(segs), wantSegs)
			}
		})
	}
}

func TestSegmentRefuses(t *testing.T) {
	g := newSegmenter()
	for _, tc := range []struct {
		name  string
		frame []byte
	}{
		{"udp", buildFrame(frameSpec{udp: true, payload: 4000})},
		{"fits", buildFrame(frameSpec{payload: 1460})},
		{"truncated", buildFrame(frameSpec{payload: 4000})[:1000]},
		{"runt", []byte{1, 2, 3}},
	} {
		n := copy(g.frame, tc.frame)
		if g.start(g.frame[:n], 1500) {
			t.Errorf("%s: start accepted it", tc.name)
		}
	}
}

// BenchmarkSegment measures cutting a 64 KiB TCP frame into 45 segments
// (checksums included), per segment.
func BenchmarkSegment(b *testing.B) {
	frame := buildFrame(frameSpec{payload: 65000, partial: true})
	g := newSegmenter()
	n := copy(g.frame, frame)
	pool, _ := packet.NewPool(packet.PoolConfig{Buffers: 64, FrameSize: 2048})
	var batch packet.Batch
	segs := 0
	b.SetBytes(int64(len(frame)))
	for b.Loop() {
		g.start(g.frame[:n], 1500)
		for g.active {
			p, _ := g.emit(&batch, pool)
			segs += int(p)
			pool.PutBatch(&batch)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(segs), "ns/segment")
}

// BenchmarkRepairChecksum measures what Recv adds per frame to detect and
// complete a partial checksum: a parse, the pseudo-header compare and,
// when partial, the sum over the segment.
func BenchmarkRepairChecksum(b *testing.B) {
	for _, tc := range []struct {
		name    string
		partial bool
	}{{"partial-1500", true}, {"complete-1500", false}} {
		b.Run(tc.name, func(b *testing.B) {
			frame := buildFrame(frameSpec{payload: 1448, partial: tc.partial})
			buf := packet.NewBuffer(packet.DefaultHeadroom, 2048)
			for b.Loop() {
				buf.Reset()
				copy(buf.Room(), frame)
				buf.SetLen(len(frame))
				repairChecksum(buf)
			}
		})
	}
}

// FuzzSegment feeds arbitrary frames to the segmenter: it must never
// panic, and whatever it emits must fit the MTU and carry valid TCP
// checksums.
func FuzzSegment(f *testing.F) {
	f.Add(buildFrame(frameSpec{payload: 3000, partial: true}), uint16(1500))
	f.Add(buildFrame(frameSpec{ipv6: true, payload: 5000}), uint16(1280))
	f.Add(buildFrame(frameSpec{vlan: 5, payload: 2000, flags: tcpFIN}), uint16(576))
	pool, err := packet.NewPool(packet.PoolConfig{Buffers: 64, FrameSize: 2048})
	if err != nil {
		f.Fatal(err)
	}
	g := newSegmenter()
	f.Fuzz(func(t *testing.T, frame []byte, mtu16 uint16) {
		mtu := int(mtu16%1500) + 68
		n := copy(g.frame, frame)
		if !g.start(g.frame[:n], mtu) {
			return
		}
		var batch packet.Batch
		for rounds := 0; g.active; rounds++ {
			if rounds > 2000 {
				t.Fatal("segmenter does not finish")
			}
			g.emit(&batch, pool)
			for _, b := range batch.Buffers() {
				var k packet.Key
				var o packet.Offsets
				packet.ParseOffsets(b.Data(), &k, &o)
				if b.Len()-int(o.L3) > mtu {
					t.Fatalf("segment of %d bytes beyond MTU %d", b.Len()-int(o.L3), mtu)
				}
				if !l4ChecksumOK(b.Data()) {
					t.Fatal("segment with a bad TCP checksum")
				}
			}
			pool.PutBatch(&batch)
		}
	})
}

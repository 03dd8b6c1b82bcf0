package ipf

import (
	"bytes"
	"encoding/binary"
	"testing"

	"gvs/packet"
)

// FuzzReassembly cuts a UDP datagram (IPv4 or IPv6) into fragments of a
// size, order, duplication and loss the input chooses: a set with every
// piece reassembles into the original exactly once, and the fragments
// that leave are the ones that came; one with a piece missing never
// reassembles; nothing panics.
func FuzzReassembly(f *testing.F) {
	f.Add([]byte{0, 0x10, 0x00, 100})
	f.Add([]byte{1, 0x1f, 0x40, 0, 3, 1, 2, 0})
	f.Add([]byte{0, 0xff, 0xff, 255, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0x80})
	f.Add([]byte{1, 0x00, 0x10, 7, 0x41, 0x01})
	f.Add([]byte{2, 0x20, 0x00, 9, 3, 200, 17, 0x85, 90})
	f.Add([]byte{3, 0x1f, 0xff, 0, 255, 0, 128, 0xc1})
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) < 4 {
			return
		}
		v6 := in[0]&1 != 0
		payload := int(binary.BigEndian.Uint16(in[1:3])) % 9000
		size := 8 * (50 + int(in[3]))
		ops := in[4:]
		whole := udpFrame(v6, payload, in[3])
		hdr := packet.IPv4MinLen
		if v6 {
			hdr = packet.IPv6HeaderLen
		}
		n := len(whole) - packet.EthHeaderLen - hdr
		pieces := evenPieces(n, size)
		if in[0]&2 != 0 && len(ops) > 0 {
			// Uneven pieces: sizes (multiples of 8, at least 400 bytes)
			// drawn from the input in turn.
			pieces = pieces[:0]
			for off, i := 0, 0; off < n; i++ {
				sz := 8 * (50 + int(ops[i%len(ops)]))
				pieces = append(pieces, piece{off, min(off+sz, n) - 1})
				off += sz
			}
		}
		if len(pieces) < 2 {
			return // not fragmented
		}
		frags := fragmentFrame(whole, v6, 0xabc, pieces)
		setV4ID(whole, v6, 0xabc)
		order := make([]int, len(frags))
		for i := range order {
			order[i] = i
		}
		drop, dup := -1, -1
		for i, op := range ops {
			switch {
			case op&0xc0 == 0xc0:
				drop = int(op&0x3f) % len(frags)
			case op&0xc0 == 0x80:
				dup = int(op&0x3f) % len(frags)
			default:
				j := int(op) % len(frags)
				k := i % len(frags)
				order[j], order[k] = order[k], order[j]
			}
		}
		var seq []int
		for _, i := range order {
			if i == drop {
				continue
			}
			seq = append(seq, i)
			if i == dup {
				seq = append(seq, i)
			}
		}
		ipf := New(nil)
		if err := ipf.SetMinFrag(v6, MinFragLowerBound); err != nil {
			t.Fatal(err)
		}
		pool := testPool()
		reassembled := 0
		for _, i := range seq {
			v, r := ipf.Preprocess(bufferOf(frags[i], 1), 0)
			if v != Reassembled {
				continue
			}
			reassembled++
			if !bytes.Equal(r.Packet.Data(), whole) {
				t.Fatalf("reassembled packet differs from the original (v6=%v payload %d size %d)", v6, payload, size)
			}
			out := ipf.Postprocess(r, pool, nil)
			if len(out) != len(frags) {
				t.Fatalf("%d fragments out of %d", len(out), len(frags))
			}
			for j, b := range out {
				if !bytes.Equal(b.Data(), frags[j]) {
					t.Fatalf("fragment %d changed on its way through", j)
				}
				b.Free()
			}
		}
		want := 1
		if drop >= 0 {
			want = 0
		}
		if reassembled != want {
			t.Fatalf("%d reassemblies, want %d (drop %d dup %d order %v)", reassembled, want, drop, dup, order)
		}
		ipf.Close()
		if pool.Stats().Free != testPoolBuffers {
			t.Fatalf("pool leaked: %d free", pool.Stats().Free)
		}
	})
}

// FuzzPreprocess feeds arbitrary frames (a sequence, each prefixed by its
// length) through Preprocess and Postprocess: nothing panics, a
// reassembled packet parses, and the held count comes back to zero on
// Close.
func FuzzPreprocess(f *testing.F) {
	whole := udpFrame(false, 3000, 1)
	frags := fragmentFrame(whole, false, 1, evenPieces(3008, 1200))
	whole6 := udpFrame(true, 3000, 1)
	frags6 := fragmentFrame(whole6, true, 1, evenPieces(3008, 1280))
	var seed, seed6 []byte
	for _, fr := range frags {
		seed = binary.BigEndian.AppendUint16(seed, uint16(len(fr)))
		seed = append(seed, fr...)
	}
	for _, fr := range frags6 {
		seed6 = binary.BigEndian.AppendUint16(seed6, uint16(len(fr)))
		seed6 = append(seed6, fr...)
	}
	f.Add(seed)
	f.Add(seed6)
	f.Add([]byte{0, 20, 1, 2, 3})
	f.Fuzz(func(t *testing.T, in []byte) {
		ipf := New(nil)
		ipf.SetMinFrag(false, MinFragLowerBound)
		ipf.SetMinFrag(true, MinFragLowerBound)
		pool := testPool()
		for len(in) >= 2 {
			n := int(binary.BigEndian.Uint16(in))
			in = in[2:]
			n = min(n, len(in))
			frame := in[:n]
			in = in[n:]
			b := bufferOf(frame, 1)
			v, r := ipf.Preprocess(b, 0)
			if v == Reassembled {
				var k packet.Key
				packet.Parse(r.Packet.Data(), &k)
				for _, o := range ipf.Postprocess(r, pool, nil) {
					o.Free()
				}
			}
		}
		ipf.Close()
		if s := ipf.Status(); s.NFrag != 0 {
			t.Fatalf("%d fragments held after Close", s.NFrag)
		}
		if pool.Stats().Free != testPoolBuffers {
			t.Fatalf("pool leaked")
		}
	})
}

package packet

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

func TestChecksumMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 70000)
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	lengths := []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 1499, 1500, 9000, 65535, 70000}
	for range 200 {
		lengths = append(lengths, rng.IntN(3000))
	}
	for _, n := range lengths {
		for _, start := range []int{0, 1, 3, 5} { // unaligned starts too
			if start+n > len(buf) {
				continue
			}
			b := buf[start : start+n]
			initial := uint16(rng.Uint32())
			if got, want := Checksum(b, initial), refSum(b, uint32(initial)); got != want {
				t.Fatalf("len %d start %d initial %#x: got %#x want %#x", n, start, initial, got, want)
			}
		}
	}
}

func TestChecksumAllOnes(t *testing.T) {
	// Sums that overflow the 64-bit accumulator on every word exercise
	// the carry chain.
	b := make([]byte, 4096)
	for i := range b {
		b[i] = 0xff
	}
	if got, want := Checksum(b, 0xffff), refSum(b, 0xffff); got != want {
		t.Fatalf("got %#x want %#x", got, want)
	}
	if Checksum(nil, 0) != 0 || Checksum(make([]byte, 100), 0) != 0 {
		t.Error("zero bytes must sum to zero")
	}
}

func TestChecksumChains(t *testing.T) {
	b := []byte("an odd-length buffer split at an even offset!")
	whole := Checksum(b, 0)
	if got := Checksum(b[20:], Checksum(b[:20], 0)); got != whole {
		t.Errorf("chained %#x, whole %#x", got, whole)
	}
	if got := CombineChecksum(Checksum(b[:20], 0), Checksum(b[20:], 0)); got != whole {
		t.Errorf("combined %#x, whole %#x", got, whole)
	}
}

func TestPseudoHeaderSums(t *testing.T) {
	for _, n := range []int{0, 20, 1480, 65515} {
		if got, want := PseudoHeaderSumV4(ip4A, ip4B, ProtoTCP, uint16(n)), refPseudo(ip4A[:], ip4B[:], ProtoTCP, n); got != want {
			t.Errorf("v4 len %d: %#x want %#x", n, got, want)
		}
	}
	ff := [16]byte{0: 0xff, 1: 0xff, 2: 0xff, 3: 0xff, 4: 0xff, 5: 0xff, 6: 0xff, 7: 0xff, 8: 0xff, 9: 0xff, 10: 0xff, 11: 0xff, 12: 0xff, 13: 0xff, 14: 0xff, 15: 0xff}
	for _, n := range []int{0, 8, 1460, 70000} {
		if got, want := PseudoHeaderSumV6(ip6A, ip6B, ProtoUDP, uint32(n)), refPseudo(ip6A[:], ip6B[:], ProtoUDP, n); got != want {
			t.Errorf("v6 len %d: %#x want %#x", n, got, want)
		}
		if got, want := PseudoHeaderSumV6(ff, ff, 0xff, uint32(n)), refPseudo(ff[:], ff[:], 0xff, n); got != want {
			t.Errorf("v6 all-ones len %d: %#x want %#x", n, got, want)
		}
	}
}

func TestIPv4HeaderChecksum(t *testing.T) {
	// The header built by the test helper carries a reference checksum;
	// a received header verifies to zero.
	h := ipv4(ipv4Spec{proto: ProtoUDP, ttl: 3, options: []byte{1, 1, 1, 0}}, nil)
	if got, want := IPv4HeaderChecksum(h), binary.BigEndian.Uint16(h[10:]); got != want {
		t.Errorf("got %#x want %#x", got, want)
	}
	if ^Checksum(h, 0) != 0 {
		t.Error("header does not verify")
	}
	if IPv4HeaderChecksum(h[:10]) != 0 {
		t.Error("short header")
	}
}

func TestCompletePartialChecksum(t *testing.T) {
	seg := tcp(1, 2, TCPFlagACK, 2, []byte("some payload, odd length"))
	pseudo := refPseudo(ip4A[:], ip4B[:], ProtoTCP, len(seg))
	binary.BigEndian.PutUint16(seg[16:], pseudo)
	frame := cat([]byte("0123456789"), seg) // start at an arbitrary offset
	if !CompletePartialChecksum(frame, 10, 16) {
		t.Fatal("refused")
	}
	// Verify like a receiver: pseudo-header plus segment sums to 0xffff.
	if got := refSum(frame[10:], uint32(pseudo)); got != 0xffff {
		t.Fatalf("segment does not verify: sum %#x", got)
	}
	for _, bad := range [][2]int{{-1, 0}, {0, -1}, {len(frame) - 1, 0}, {10, len(seg) - 1}, {len(frame) + 1, 0}} {
		if CompletePartialChecksum(frame, bad[0], bad[1]) {
			t.Errorf("accepted start %d offset %d", bad[0], bad[1])
		}
	}
	if !CompletePartialChecksum(frame, len(frame)-2, 0) {
		t.Error("refused a field at the very end")
	}
}

func TestCompleteZeroBecomesFFFF(t *testing.T) {
	// A segment whose checksum comes out as 0 is stored as 0xffff.
	seg := []byte{0xff, 0xff, 0, 0}
	if !CompletePartialChecksum(seg, 0, 2) || binary.BigEndian.Uint16(seg[2:]) != 0xffff {
		t.Errorf("got % x", seg)
	}
}

// TestUpdateChecksumMatchesRecompute: after random aligned rewrites of
// random data (many with zero words), the incrementally updated checksum
// verifies as a receiver checks it; the one exception is data that is
// all zeros, where the update cannot tell one's complement +0 from -0.
func TestUpdateChecksumMatchesRecompute(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		data := make([]byte, 2+2*r.IntN(40))
		for j := range data {
			data[j] = byte(r.Uint32())
		}
		if i%7 == 0 {
			clear(data[:len(data)/2]) // many zero words
		}
		csumAt := 2 * r.IntN(len(data)/2)
		data[csumAt], data[csumAt+1] = 0, 0
		c := ^Checksum(data, 0)
		binary.BigEndian.PutUint16(data[csumAt:], c)

		// Rewrite an aligned window that avoids the checksum field.
		w := 2 * (1 + r.IntN(8))
		if w > len(data)-2 {
			continue
		}
		at := 2 * r.IntN((len(data)-w)/2+1)
		if at <= csumAt && csumAt < at+w {
			continue
		}
		old := bytes.Clone(data[at : at+w])
		for j := at; j < at+w; j++ {
			data[j] = byte(r.Uint32())
		}
		got := UpdateChecksum(binary.BigEndian.Uint16(data[csumAt:]), old, data[at:at+w])
		binary.BigEndian.PutUint16(data[csumAt:], got)
		if s := Checksum(data, 0); s != 0xffff && !(s == 0 && allZero(data)) {
			t.Fatalf("case %d: updated checksum does not verify (sum %#x)", i, s)
		}
	}
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

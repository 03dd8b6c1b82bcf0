package packet

import (
	"encoding/binary"
	"math/bits"
)

// Checksum returns the Internet checksum sum (RFC 1071) of b added to
// initial: the 16-bit one's complement sum, folded but NOT complemented, so
// sums over pieces chain (pass one piece's result as the next initial).
// The checksum field of a header is ^Checksum(...) over the covered bytes
// with the field zero.
//
// It adds 64-bit little-endian words with carry (one's complement sums do
// not depend on byte order or word width, RFC 1071 section 2) and swaps
// to network order once at the end.
func Checksum(b []byte, initial uint16) uint16 {
	acc := uint64(bits.ReverseBytes16(initial))
	var carry uint64
	for len(b) >= 32 {
		acc, carry = bits.Add64(acc, binary.LittleEndian.Uint64(b[0:]), carry)
		acc, carry = bits.Add64(acc, binary.LittleEndian.Uint64(b[8:]), carry)
		acc, carry = bits.Add64(acc, binary.LittleEndian.Uint64(b[16:]), carry)
		acc, carry = bits.Add64(acc, binary.LittleEndian.Uint64(b[24:]), carry)
		b = b[32:]
	}
	for len(b) >= 8 {
		acc, carry = bits.Add64(acc, binary.LittleEndian.Uint64(b), carry)
		b = b[8:]
	}
	if len(b) >= 4 {
		acc, carry = bits.Add64(acc, uint64(binary.LittleEndian.Uint32(b)), carry)
		b = b[4:]
	}
	if len(b) >= 2 {
		acc, carry = bits.Add64(acc, uint64(binary.LittleEndian.Uint16(b)), carry)
		b = b[2:]
	}
	if len(b) == 1 {
		// A trailing odd byte is the high (first) byte of a word padded
		// with zero: in little-endian that is the low byte.
		acc, carry = bits.Add64(acc, uint64(b[0]), carry)
	}
	// End-around carry: if carry is 1, acc wrapped, so acc+1 cannot.
	acc, carry = bits.Add64(acc, 0, carry)
	acc += carry
	return bits.ReverseBytes16(fold64(acc))
}

// fold64 folds a 64-bit one's complement sum to 16 bits.
func fold64(s uint64) uint16 {
	s = (s >> 32) + (s & 0xffffffff) // at most 33 bits
	s = (s >> 32) + (s & 0xffffffff) // at most 32 bits
	s = (s >> 16) + (s & 0xffff)     // at most 17 bits
	s = (s >> 16) + (s & 0xffff)     // 16 bits
	return uint16(s)
}

// CombineChecksum adds two one's complement sums.
func CombineChecksum(a, b uint16) uint16 {
	return fold64(uint64(a) + uint64(b))
}

// PseudoHeaderSumV4 returns the folded sum of the IPv4 pseudo-header for a
// transport segment of length bytes: the value Linux leaves in the checksum
// field of a partial (CHECKSUM_PARTIAL) TCP or UDP checksum.
func PseudoHeaderSumV4(src, dst [4]byte, proto uint8, length uint16) uint16 {
	s := uint64(binary.BigEndian.Uint32(src[:])) +
		uint64(binary.BigEndian.Uint32(dst[:])) +
		uint64(proto) + uint64(length)
	return fold64(s)
}

// PseudoHeaderSumV6 is PseudoHeaderSumV4 for IPv6 (RFC 8200 section 8.1).
func PseudoHeaderSumV6(src, dst [16]byte, proto uint8, length uint32) uint16 {
	s := uint64(proto) + uint64(length)
	var c uint64
	for i := 0; i < 16; i += 8 {
		s, c = bits.Add64(s, uint64(binary.BigEndian.Uint32(src[i:]))+uint64(binary.BigEndian.Uint32(src[i+4:])), c)
		s, c = bits.Add64(s, uint64(binary.BigEndian.Uint32(dst[i:]))+uint64(binary.BigEndian.Uint32(dst[i+4:])), c)
	}
	s, c = bits.Add64(s, 0, c)
	return fold64(s + c)
}

// CompletePartialChecksum finishes a partial checksum in software, as a
// device does for virtio's NEEDS_CSUM: it sums b from start to the end
// (the field at start+offset already holds the pseudo-header sum),
// complements the result and stores it in the field. A result of 0 is
// stored as 0xffff, as Linux does (for UDP, 0 would mean "no checksum").
// It reports false, changing nothing, if the field is not inside b.
func CompletePartialChecksum(b []byte, start, offset int) bool {
	if start < 0 || offset < 0 || start > len(b) || offset > len(b)-start-2 {
		return false
	}
	c := ^Checksum(b[start:], 0)
	if c == 0 {
		c = 0xffff
	}
	binary.BigEndian.PutUint16(b[start+offset:], c)
	return true
}

// IPv4HeaderChecksum returns the checksum field value for the IPv4 header h
// (its own length, IHL*4 bytes), computed as if the field were zero.
func IPv4HeaderChecksum(h []byte) uint16 {
	if len(h) < IPv4MinLen {
		return 0
	}
	return ^CombineChecksum(Checksum(h[:10], 0), Checksum(h[12:], 0))
}

// UpdateChecksum returns a checksum field value (complemented, as stored
// in a header) after the bytes old, covered by it, became new (RFC 1624:
// HC' = ~(~HC + ~m + m')). old and new have the same even length and
// start at an even offset from the start of what the checksum covers.
func UpdateChecksum(field uint16, old, new []byte) uint16 {
	return ^UpdateSum(^field, old, new)
}

// UpdateSum is UpdateChecksum for a field that holds an uncomplemented
// sum: the pseudo-header sum of a partial (NEEDS_CSUM) checksum.
func UpdateSum(sum uint16, old, new []byte) uint16 {
	return CombineChecksum(CombineChecksum(sum, ^Checksum(old, 0)), Checksum(new, 0))
}

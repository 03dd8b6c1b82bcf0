package ofp

import (
	"encoding/binary"

	"gvs/ofproto/ofperr"
)

// reader pulls big-endian fields off a byte slice. Reading past the end
// yields zeros and records OFPBRC_BAD_LEN (or the error given to fail), so
// a decoder reads a whole structure and checks r.err once: no panics on
// short input.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

func (r *reader) take(n int) []byte {
	if n < 0 || len(r.b) < n {
		r.fail(ofperr.OFPBRC_BAD_LEN)
		r.b = nil
		return make([]byte, max(n, 0))
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) skip(n int)       { r.take(n) }
func (r *reader) u8() uint8        { return r.take(1)[0] }
func (r *reader) u16() uint16      { return binary.BigEndian.Uint16(r.take(2)) }
func (r *reader) u32() uint32      { return binary.BigEndian.Uint32(r.take(4)) }
func (r *reader) u64() uint64      { return binary.BigEndian.Uint64(r.take(8)) }
func (r *reader) len() int         { return len(r.b) }
func (r *reader) rest() []byte     { v := r.b; r.b = nil; return v }
func (r *reader) mac() (m [6]byte) { copy(m[:], r.take(6)); return }

// str reads a NUL-padded fixed-size string.
func (r *reader) str(n int) string {
	b := r.take(n)
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

func put8(b []byte, v uint8) []byte   { return append(b, v) }
func put16(b []byte, v uint16) []byte { return binary.BigEndian.AppendUint16(b, v) }
func put32(b []byte, v uint32) []byte { return binary.BigEndian.AppendUint32(b, v) }
func put64(b []byte, v uint64) []byte { return binary.BigEndian.AppendUint64(b, v) }
func pad(b []byte, n int) []byte {
	for range n {
		b = append(b, 0)
	}
	return b
}

// putStr appends s NUL-padded (and truncated, keeping a final NUL) to n bytes.
func putStr(b []byte, s string, n int) []byte {
	if len(s) > n-1 {
		s = s[:n-1]
	}
	b = append(b, s...)
	return pad(b, n-len(s))
}

// pad8 pads b, whose message-relative part starts at start, to a multiple of 8.
func pad8(b []byte, start int) []byte {
	return pad(b, (8-(len(b)-start)%8)%8)
}

// setLen16 writes the length of b[at:] as a 16-bit field at b[at+off].
func setLen16(b []byte, at, off int) {
	binary.BigEndian.PutUint16(b[at+off:], uint16(len(b)-at))
}

// roundUp8 is n rounded up to a multiple of 8.
func roundUp8(n int) int { return (n + 7) &^ 7 }

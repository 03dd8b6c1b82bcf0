package mf

import (
	"fmt"
	"strconv"
	"strings"
)

// Subfield is a bit range of a field: bits Ofs..Ofs+NBits-1, counted
// from the field's least significant bit (Open vSwitch's mf_subfield),
// as load, move, learn, stack, multipath and bundle name them.
type Subfield struct {
	Field *Field
	Ofs   int
	NBits int
}

// WholeField returns the subfield covering all of fd.
func WholeField(fd *Field) Subfield { return Subfield{Field: fd, NBits: fd.Bits} }

// IsWhole reports whether s covers its whole field.
func (s Subfield) IsWhole() bool { return s.Ofs == 0 && s.NBits == s.Field.Bits }

// Mask returns the field-wide mask with s's bits set.
func (s Subfield) Mask() Value {
	var m Value
	for i := s.Ofs; i < s.Ofs+s.NBits; i++ {
		m.setBit(s.Field.Bytes, i)
	}
	return m
}

// Read returns the bits of s in f, right-aligned in the 16 bytes of the
// result (as Open vSwitch's mf_subvalue): bit 0 of the subfield is the
// lowest bit of v[15].
func (s Subfield) Read(f *Flow) Value {
	return extractBits(s.Field.Get(f), s.Field.Bytes, s.Ofs, s.NBits)
}

// ReadUint returns the bits of s in f as an integer (s no wider than 64
// bits; wider subfields give their low 64 bits).
func (s Subfield) ReadUint(f *Flow) uint64 { return s.Read(f).Uint(16) }

// Write stores the low NBits of v (right-aligned as Read returns) into
// s's bits of f, leaving the field's other bits alone.
func (s Subfield) Write(f *Flow, v Value) {
	s.Field.SetMasked(f, depositBits(v, s.Field.Bytes, s.Ofs, s.NBits), s.Mask())
}

// WriteUint is Write for an integer value.
func (s Subfield) WriteUint(f *Flow, n uint64) { s.Write(f, ValueFromUint(n, 16)) }

// Unwildcard marks s's bits as consulted in w.
func (s Subfield) Unwildcard(w *Wildcards) { s.Field.UnwildcardMasked(w, s.Mask()) }

// SetMatch makes m match s's bits equal to the low NBits of v
// (right-aligned), keeping what m matches in the field's other bits.
func (s Subfield) SetMatch(m *Match, v Value) {
	fd := s.Field
	mask, val := fd.GetMask(&m.Wildcards), fd.Get(&m.Flow)
	sm := s.Mask()
	nv := depositBits(v, fd.Bytes, s.Ofs, s.NBits)
	for i := 0; i < fd.Bytes; i++ {
		val[i] = val[i]&^sm[i] | nv[i]&sm[i]
		mask[i] |= sm[i]
	}
	fd.SetMatchMasked(m, val, mask)
}

// extractBits returns bits ofs..ofs+n-1 of the nbytes-wide v, right-aligned in 16 bytes.
func extractBits(v Value, nbytes, ofs, n int) Value {
	var out Value
	for i := 0; i < n; i++ {
		if v.bit(nbytes, ofs+i) {
			out.setBit(16, i)
		}
	}
	return out
}

// depositBits places the low n bits of the 16-byte right-aligned v at
// ofs of an nbytes-wide value.
func depositBits(v Value, nbytes, ofs, n int) Value {
	var out Value
	for i := 0; i < n && ofs+i < nbytes*8; i++ {
		if v.bit(16, i) {
			out.setBit(nbytes, ofs+i)
		}
	}
	return out
}

// CopyBits copies n bits from src (starting at bit srcOfs of an
// srcBytes-wide value) to dst (at dstOfs of a dstBytes-wide value), as
// move and learn do (bitwise_copy).
func CopyBits(src Value, srcBytes, srcOfs int, dst *Value, dstBytes, dstOfs, n int) {
	for i := 0; i < n; i++ {
		if src.bit(srcBytes, srcOfs+i) {
			dst.setBit(dstBytes, dstOfs+i)
		} else {
			dst.clearBit(dstBytes, dstOfs+i)
		}
	}
}

// String formats s as Open vSwitch does: the field's NXM/OXM name and
// "[]" for the whole field, "[bit]" or "[start..end]"
// (mf_format_subfield), e.g. "NXM_NX_REG0[0..15]".
func (s Subfield) String() string {
	if s.Field == nil {
		return "<unknown>"
	}
	name := s.Field.HeaderName()
	switch {
	case s.IsWhole():
		return name + "[]"
	case s.NBits == 1:
		return name + "[" + strconv.Itoa(s.Ofs) + "]"
	default:
		return name + "[" + strconv.Itoa(s.Ofs) + ".." + strconv.Itoa(s.Ofs+s.NBits-1) + "]"
	}
}

// ParseSubfieldPrefix parses a subfield at the start of str ("reg0[0..15]",
// "NXM_NX_REG0[]", "eth_dst", "reg1[5]") and returns the rest of str.
// Errors read as Open vSwitch's (mf_parse_subfield).
func ParseSubfieldPrefix(str string) (Subfield, string, error) {
	nameLen := strings.IndexAny(str, "[-")
	if nameLen < 0 {
		nameLen = len(str)
	}
	name := str[:nameLen]
	fd := fieldByAnyName(name)
	if fd == nil {
		return Subfield{}, str, fmt.Errorf("%s: unknown field `%s'", str, name)
	}
	rest := str[nameLen:]
	start, end := 0, fd.Bits-1
	if strings.HasPrefix(rest, "[") {
		closeIdx := strings.IndexByte(rest, ']')
		inner := ""
		if closeIdx >= 0 {
			inner = rest[1:closeIdx]
		}
		ok := closeIdx >= 0
		if ok && inner != "" {
			if a, b, found := strings.Cut(inner, ".."); found {
				x, err1 := strconv.Atoi(strings.TrimSpace(a))
				y, err2 := strconv.Atoi(strings.TrimSpace(b))
				ok = err1 == nil && err2 == nil
				start, end = x, y
			} else {
				x, err := strconv.Atoi(strings.TrimSpace(inner))
				ok = err == nil
				start, end = x, x
			}
		}
		if !ok {
			return Subfield{}, str, fmt.Errorf("%s: syntax error expecting [] or [<bit>] or [<start>..<end>]", str)
		}
		rest = rest[closeIdx+1:]
	}
	switch {
	case start > end:
		return Subfield{}, str, fmt.Errorf("%s: starting bit %d is after ending bit %d", str, start, end)
	case start < 0 || start >= fd.Bits:
		return Subfield{}, str, fmt.Errorf("%s: starting bit %d is not valid because field is only %d bits wide", str, start, fd.Bits)
	case end >= fd.Bits:
		return Subfield{}, str, fmt.Errorf("%s: ending bit %d is not valid because field is only %d bits wide", str, end, fd.Bits)
	}
	return Subfield{Field: fd, Ofs: start, NBits: end - start + 1}, rest, nil
}

// ParseSubfield parses all of str as a subfield.
func ParseSubfield(str string) (Subfield, error) {
	s, rest, err := ParseSubfieldPrefix(str)
	if err != nil {
		return s, err
	}
	if rest != "" {
		return Subfield{}, fmt.Errorf("%s: trailing garbage following subfield", str)
	}
	return s, nil
}

// fieldByAnyName finds a field by NXM/OXM header name (with an optional
// "_W" suffix, as Open vSwitch accepts) or by field name.
func fieldByAnyName(name string) *Field {
	n := name
	if len(n) > 2 && strings.HasSuffix(n, "_W") {
		n = n[:len(n)-2]
	}
	if fd := FieldByHeaderName(n); fd != nil {
		return fd
	}
	return FieldByName(name)
}

// CheckSrc reports whether s can be read in a flow matching m: the bits
// are within the field and the field's prerequisites hold (mf_check_src).
func (s Subfield) CheckSrc(m *Match) error {
	if s.Field == nil || s.NBits <= 0 || s.Ofs < 0 || s.Ofs+s.NBits > s.Field.Bits {
		return errBadSubfield
	}
	if m != nil && !s.Field.PrereqsMatched(m) {
		return errPrereq
	}
	return nil
}

// CheckDst is CheckSrc that also requires the field to be writable
// (mf_check_dst).
func (s Subfield) CheckDst(m *Match) error {
	if err := s.CheckSrc(m); err != nil {
		return err
	}
	if !s.Field.Writable {
		return errReadOnly
	}
	return nil
}

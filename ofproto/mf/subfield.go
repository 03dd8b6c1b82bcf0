package mf

import (
	"fmt"
	"strconv"
	"strings"

	"gvs/ofproto/ofperr"
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
	hi, lo := toU128(s.Field.Get(f), s.Field.Bytes)
	hi, lo = shr128(hi, lo, s.Ofs)
	mh, ml := ones128(s.NBits)
	return fromU128(hi&mh, lo&ml, 16)
}

// ReadUint returns the bits of s in f as an integer (s no wider than 64
// bits; wider subfields give their low 64 bits).
func (s Subfield) ReadUint(f *Flow) uint64 {
	if a := &s.Field.acc; a.isPlainInt() {
		n := a.loadInt(a.ptr(f))
		if a.bits != 0 {
			n = n & a.bits >> a.shift
		}
		_, m := ones128(s.NBits)
		return n >> s.Ofs & m
	}
	_, lo := toU128(s.Read(f), 16)
	return lo
}

// Write stores the low NBits of v (right-aligned as Read returns) into
// s's bits of f, leaving the field's other bits alone.
func (s Subfield) Write(f *Flow, v Value) {
	fd := s.Field
	vh, vl := toU128(v, 16)
	mh, ml := ones128(s.NBits)
	vh, vl = shl128(vh&mh, vl&ml, s.Ofs)
	mh, ml = shl128(mh, ml, s.Ofs)
	ch, cl := toU128(fd.Get(f), fd.Bytes)
	fd.Set(f, fromU128(ch&^mh|vh, cl&^ml|vl, fd.Bytes))
}

// WriteUint is Write for an integer value.
func (s Subfield) WriteUint(f *Flow, n uint64) {
	if a := &s.Field.acc; a.isPlainInt() {
		// Straight to the integer in Flow (the common case: registers,
		// metadata, ports).
		_, m := ones128(s.NBits)
		m <<= s.Ofs
		n <<= s.Ofs
		if a.bits != 0 {
			m = m << a.shift & a.bits
			n = n << a.shift
		}
		p := a.ptr(f)
		a.storeInt(p, a.loadInt(p)&^m|n&m)
		return
	}
	s.Write(f, fromU128(0, n, 16))
}

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

// toU128 reads the nbytes-wide big-endian v as a 128-bit integer.
func toU128(v Value, nbytes int) (hi, lo uint64) {
	for _, b := range v[:nbytes] {
		hi = hi<<8 | lo>>56
		lo = lo<<8 | uint64(b)
	}
	return hi, lo
}

// fromU128 writes a 128-bit integer as an nbytes-wide big-endian Value.
func fromU128(hi, lo uint64, nbytes int) Value {
	var v Value
	for i := nbytes - 1; i >= 0; i-- {
		v[i] = byte(lo)
		lo = lo>>8 | hi<<56
		hi >>= 8
	}
	return v
}

func shr128(hi, lo uint64, n int) (uint64, uint64) {
	switch {
	case n == 0:
		return hi, lo
	case n >= 128:
		return 0, 0
	case n >= 64:
		return 0, hi >> (n - 64)
	}
	return hi >> n, lo>>n | hi<<(64-n)
}

func shl128(hi, lo uint64, n int) (uint64, uint64) {
	switch {
	case n == 0:
		return hi, lo
	case n >= 128:
		return 0, 0
	case n >= 64:
		return lo << (n - 64), 0
	}
	return hi<<n | lo>>(64-n), lo << n
}

// ones128 is a 128-bit integer with its low n bits set.
func ones128(n int) (hi, lo uint64) {
	switch {
	case n <= 0:
		return 0, 0
	case n >= 128:
		return ^uint64(0), ^uint64(0)
	case n >= 64:
		return ^uint64(0) >> (128 - n), ^uint64(0)
	}
	return 0, ^uint64(0) >> (64 - n)
}

// extractBits returns bits ofs..ofs+n-1 of the nbytes-wide v, right-aligned in 16 bytes.
func extractBits(v Value, nbytes, ofs, n int) Value {
	hi, lo := toU128(v, nbytes)
	hi, lo = shr128(hi, lo, ofs)
	mh, ml := ones128(n)
	return fromU128(hi&mh, lo&ml, 16)
}

// depositBits places the low n bits of the 16-byte right-aligned v at
// ofs of an nbytes-wide value.
func depositBits(v Value, nbytes, ofs, n int) Value {
	hi, lo := toU128(v, 16)
	mh, ml := ones128(n)
	hi, lo = shl128(hi&mh, lo&ml, ofs)
	mh, ml = ones128(nbytes * 8)
	return fromU128(hi&mh, lo&ml, nbytes)
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
		return ofperr.OFPBAC_BAD_SET_ARGUMENT
	}
	if m != nil && !s.Field.PrereqsMatched(m) {
		return ofperr.OFPBAC_MATCH_INCONSISTENT
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
		return ofperr.OFPBAC_BAD_SET_ARGUMENT
	}
	return nil
}

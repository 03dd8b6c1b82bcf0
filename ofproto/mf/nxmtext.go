package mf

import (
	"encoding/hex"
	"fmt"
	"strings"

	"gvs/ofproto/ofperr"
)

// FormatNXMatch writes the NXM/OXM entries in p as Open vSwitch's
// nx_match_to_string does ("NXM_OF_IN_PORT(0001), NXM_NX_REG0_W(...)"),
// "<any>" for none. It decodes entries without checking them.
func FormatNXMatch(p []byte) string {
	if len(p) == 0 {
		return "<any>"
	}
	var s strings.Builder
	for len(p) > 0 {
		e, rest, err := PullEntry(p, false)
		if err != nil && err != ofperr.OFPBMC_BAD_FIELD {
			break
		}
		p = rest
		if s.Len() > 0 {
			s.WriteString(", ")
		}
		s.WriteString(headerText(e))
		width := min(e.Header.FieldBytes(), 16)
		s.WriteByte('(')
		v, m := e.Value, e.Mask
		if e.Field != nil && e.Field.isVariableLength() {
			// Right-aligned in the Value; print the wire bytes.
			off := e.Field.Bytes - width
			copy(v[:], v[off:])
			copy(m[:], m[off:])
		}
		s.WriteString(hex.EncodeToString(v[:width]))
		if e.Header.HasMask {
			s.WriteByte('/')
			s.WriteString(hex.EncodeToString(m[:width]))
		}
		s.WriteByte(')')
	}
	if len(p) > 0 {
		if s.Len() > 0 {
			s.WriteString(", ")
		}
		fmt.Fprintf(&s, "<%d invalid bytes>", len(p))
	}
	return s.String()
}

func headerText(e Entry) string {
	h := e.Header
	name := ""
	switch {
	case e.Field != nil:
		fd := e.Field
		for _, hd := range fd.allHeaders() {
			if hd.Class == h.Class && hd.Field == h.Field && hd.Experimenter == h.Experimenter {
				name = hd.Name
			}
		}
	case h.Class == nxCookieClass && h.Field == nxCookieField:
		name = "NXM_NX_COOKIE"
	default:
		return fmt.Sprintf("%d:%d", h.Class, h.Field)
	}
	if h.HasMask {
		name += "_W"
	}
	return name
}

func (fd *Field) allHeaders() []Header {
	hs := make([]Header, 0, 1+len(fd.OXM))
	if fd.NXM != nil {
		hs = append(hs, *fd.NXM)
	}
	return append(hs, fd.OXM...)
}

// ParseNXMatchText encodes the text form of NXM/OXM entries (as
// FormatNXMatch writes and ovs-ofctl parse-nx-match reads) into bytes,
// without checking the entries' meaning (nx_match_from_string_raw).
func ParseNXMatchText(s string) ([]byte, error) {
	full := s
	var b []byte
	if s == "<any>" {
		return b, nil
	}
	for s = strings.TrimLeft(s, ", "); s != ""; s = strings.TrimLeft(s, ", ") {
		open := strings.IndexByte(s, '(')
		if open < 0 {
			return nil, fmt.Errorf("%s: missing ( at end of nx_match", full)
		}
		name := s[:open]
		wild := false
		fd := FieldByHeaderName(name)
		if fd == nil && strings.HasSuffix(name, "_W") {
			fd, wild = FieldByHeaderName(strings.TrimSuffix(name, "_W")), true
		}
		isCookie := name == "NXM_NX_COOKIE" || name == "NXM_NX_COOKIE_W"
		if raw, ok := rawHeader(name); ok && fd == nil && !isCookie {
			// A header given as hex (for testing error behaviour).
			s = s[open+1:]
			closeIdx := strings.IndexByte(s, ')')
			if closeIdx < 0 {
				return nil, fmt.Errorf("%s: missing ) following field %s", full, name)
			}
			vs, ms, masked := strings.Cut(s[:closeIdx], "/")
			s = s[closeIdx+1:]
			val, err1 := hex.DecodeString(vs)
			mask, err2 := hex.DecodeString(ms)
			if err1 != nil || err2 != nil || masked != raw.HasMask || len(val) != raw.FieldBytes() || (masked && len(mask) != len(val)) {
				return nil, fmt.Errorf("%s: bad value for raw header %s", full, name)
			}
			w := raw.Word()
			b = append(b, byte(w>>24), byte(w>>16), byte(w>>8), byte(w))
			if raw.Class == ClassExperimenter {
				b = append(b, byte(raw.Experimenter>>24), byte(raw.Experimenter>>16), byte(raw.Experimenter>>8), byte(raw.Experimenter))
			}
			b = append(append(b, val...), mask...)
			continue
		}
		if fd == nil && !isCookie {
			return nil, fmt.Errorf("%s: unknown field `%s'", full, name)
		}
		if fd != nil && wild && !fd.Maskable {
			return nil, fmt.Errorf("%s: unknown field `%s'", full, name)
		}
		s = s[open+1:]
		closeIdx := strings.IndexByte(s, ')')
		if closeIdx < 0 {
			return nil, fmt.Errorf("%s: missing ) following field %s", full, name)
		}
		body := s[:closeIdx]
		s = s[closeIdx+1:]
		vs, ms, masked := strings.Cut(body, "/")
		val, err := hex.DecodeString(vs)
		if err != nil {
			return nil, fmt.Errorf("%s: bad hex value %q", full, vs)
		}
		var mask []byte
		if masked {
			if mask, err = hex.DecodeString(ms); err != nil || len(mask) != len(val) {
				return nil, fmt.Errorf("%s: bad hex mask %q", full, ms)
			}
		}
		if isCookie {
			h := EntryHeader{Class: nxCookieClass, Field: nxCookieField, HasMask: masked, Length: uint8(len(val) + len(mask))}
			b = append(b, byte(h.Word()>>24), byte(h.Word()>>16), byte(h.Word()>>8), byte(h.Word()))
			b = append(append(b, val...), mask...)
			continue
		}
		var hd *Header
		for _, x := range fd.allHeaders() {
			if x.Name == strings.TrimSuffix(name, "_W") {
				hd = &x
				break
			}
		}
		if len(val) != fd.Bytes && !(fd.isVariableLength() && len(val) <= fd.Bytes) {
			return nil, fmt.Errorf("%s: %d-byte value for %d-byte field %s", full, len(val), fd.Bytes, name)
		}
		h := EntryHeader{Class: hd.Class, Field: hd.Field, HasMask: masked, Experimenter: hd.Experimenter}
		h.Length = uint8(len(val) + len(mask) + h.expLen())
		w := h.Word()
		b = append(b, byte(w>>24), byte(w>>16), byte(w>>8), byte(w))
		if h.Class == ClassExperimenter {
			b = append(b, byte(h.Experimenter>>24), byte(h.Experimenter>>16), byte(h.Experimenter>>8), byte(h.Experimenter))
		}
		b = append(append(b, val...), mask...)
	}
	return b, nil
}

// rawHeader reads a header written as 8 hex digits, or 16 for an
// experimenter OXM header (parse_nxm_field_name).
func rawHeader(name string) (EntryHeader, bool) {
	if len(name) != 8 && len(name) != 16 {
		return EntryHeader{}, false
	}
	raw, err := hex.DecodeString(name)
	if err != nil {
		return EntryHeader{}, false
	}
	h := HeaderFromWord(uint32(raw[0])<<24 | uint32(raw[1])<<16 | uint32(raw[2])<<8 | uint32(raw[3]))
	if len(raw) == 8 {
		if h.Class != ClassExperimenter {
			return EntryHeader{}, false
		}
		h.Experimenter = uint32(raw[4])<<24 | uint32(raw[5])<<16 | uint32(raw[6])<<8 | uint32(raw[7])
	}
	if int(h.Length) < h.expLen() {
		return EntryHeader{}, false
	}
	return h, true
}

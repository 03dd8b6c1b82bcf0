package ofpact

// Everything this package needs from ofproto/mf's field registry goes
// through this file, so the codec, formatter and checks stay independent
// of the registry's exact API.

import (
	"encoding/binary"
	"strconv"
	"strings"

	"gvs/ofproto/mf"
	"gvs/ofproto/ofperr"
)

func fieldName(f *mf.Field) string { return f.Name }
func fieldBits(f *mf.Field) int    { return f.Bits }
func fieldBytes(f *mf.Field) int   { return f.Bytes }
func fieldWritable(f *mf.Field) bool {
	return f.Writable
}

// fieldIs reports whether f is the field with id.
func fieldIs(f *mf.Field, id mf.FieldID) bool { return f != nil && f.ID == id }

func fieldByName(name string) *mf.Field { return mf.FieldByName(name) }

func fieldByID(id mf.FieldID) *mf.Field { return mf.FieldByID(id) }

// headerWord is the 32-bit form of f's header for version (0: the NXM
// header if it has one): OVS's mf_oxm_header / nxm_header_from_mff. Zero
// when the field has no header or only an experimenter one.
func headerWord(f *mf.Field, version uint8) uint32 {
	h := headerFor(f, version)
	if h == nil || h.Class == mf.ClassExperimenter {
		return 0
	}
	n := f.Bytes
	if isVariableLength(f) {
		n = tunMetadataMaxLen
	}
	return uint32(h.Class)<<16 | uint32(h.Field)<<9 | uint32(n)
}

// tunMetadataMaxLen is the length OVS's registry gives tun_metadataN
// headers (its maximum Geneve option data), whatever gvs can carry.
const tunMetadataMaxLen = 124

// headerFor is mf's HeaderFor, except that for version 0 a field with
// both an NXM header and a Nicira experimenter OXM (dp_hash) uses the NXM
// one, as OVS does (ovs-ofctl prints NXM_NX_DP_HASH[] and Nicira actions
// carry its 32-bit header).
func headerFor(f *mf.Field, version uint8) *mf.Header {
	h := f.HeaderFor(version)
	if version == 0 && h != nil && h.Class == mf.ClassExperimenter && f.NXM != nil {
		return f.NXM
	}
	return h
}

// nxmHeader is the field's 32-bit header as Nicira actions that carry a
// bare 32-bit header (reg_load, output_reg, multipath, bundle_load, learn,
// ct zone) encode it: OVS's nxm_header_from_mff.
func nxmHeader(f *mf.Field) uint32 { return headerWord(f, 0) }

// hasNXMHeader reports whether f has a 32-bit header for Nicira actions
// (OVS's mf_nxm_header(id) != 0), which decides between reg_load and
// reg_load2 and between output_reg and output_reg2.
func hasNXMHeader(f *mf.Field) bool { return headerWord(f, 0) != 0 }

// fieldByNXMHeader finds the field of a 32-bit NXM/OXM header as it
// appears in Nicira actions (OVS's mf_vl_mff_mf_from_nxm_header: the
// exact form of the header, length included).
func fieldByNXMHeader(h uint32) (*mf.Field, error) {
	if h&0x100 != 0 { // masked form: look up the exact form
		h = h&^0x1ff | (h&0xff)/2
	}
	class := uint16(h >> 16)
	if class == mf.ClassExperimenter {
		return nil, ofperr.OFPBAC_BAD_SET_TYPE
	}
	return lookupHeader(class, uint8(h>>9&0x7f), 0, int(h&0xff), false)
}

func isVariableLength(f *mf.Field) bool {
	return f.ID >= mf.TunMetadata0 && f.ID < mf.TunMetadata0+mf.NumTunMetadata
}

// lookupHeader is OVS's nxm_field_by_header for a header whose exact
// form announces n value bytes: the field must have that width
// (variable-length fields: any). OVS ignores only the low 7 bits of the
// length when it looks a header up, so a length of 128 or more finds
// nothing. In an action a known field with another width is
// OFPBAC_BAD_SET_LEN, anything else OFPBAC_BAD_SET_TYPE (OVS may answer
// BAD_SET_LEN for an unknown header too, depending on its hash table's
// layout, which gvs does not reproduce); elsewhere unknown is nil.
func lookupHeader(class uint16, field uint8, exp uint32, n int, isAction bool) (*mf.Field, error) {
	lenByte := n
	if class == mf.ClassExperimenter {
		lenByte += 4
	}
	f := mf.FieldByHeader(class, field, exp)
	if f != nil && lenByte < 128 && (n == f.Bytes || isVariableLength(f)) {
		return f, nil
	}
	if f != nil && lenByte < 128 && isAction && n > 0 {
		return nil, ofperr.OFPBAC_BAD_SET_LEN
	}
	return nil, ofperr.OFPBAC_BAD_SET_TYPE
}

// fieldFor is nxm_field_by_header for a decoded header.
func fieldFor(h mf.EntryHeader, isAction bool) (*mf.Field, error) {
	return lookupHeader(h.Class, h.Field, h.Experimenter, h.FieldBytes(), isAction)
}

// pullHeader reads one OXM/NXM header without value (4 bytes, or 8 for an
// experimenter OXM) from the front of b, as the Nicira actions that name
// fields do: OVS's nx_pull_header (OFPBMC_BAD_FIELD for an unknown
// field, OFPBMC_BAD_MASK for a masked header).
func pullHeader(b []byte) (*mf.Field, int, error) {
	h, _, err := mf.PullEntryHeader(b)
	if err != nil {
		return nil, 0, err
	}
	f, err := fieldFor(h, false)
	if err != nil {
		return nil, h.Size(), ofperr.OFPBMC_BAD_FIELD
	}
	if h.HasMask {
		return nil, h.Size(), ofperr.OFPBMC_BAD_MASK
	}
	return f, h.Size(), nil
}

// appendHeader appends f's header as version encodes it (0: the Nicira
// form Nicira actions use): OVS's nx_put_mff_header without mask.
func appendHeader(b []byte, f *mf.Field, version uint8) []byte {
	if isVariableLength(f) {
		return appendEntryHeaderLen(b, f, version, false, tunMetadataMaxLen)
	}
	return appendEntryHeader(b, f, version, false)
}

func appendEntryHeader(b []byte, f *mf.Field, version uint8, masked bool) []byte {
	return appendEntryHeaderLen(b, f, version, masked, f.Bytes)
}

func appendEntryHeaderLen(b []byte, f *mf.Field, version uint8, masked bool, n int) []byte {
	h := headerFor(f, version)
	if h == nil {
		// A field without any header (dl_vlan, dl_vlan_pcp): OVS writes
		// class 0, field 0 (NXM_OF_IN_PORT) with the value's length.
		h = &mf.Header{}
	}
	payload := n
	if masked {
		payload *= 2
	}
	if h.Class == mf.ClassExperimenter {
		payload += 4
	}
	w := uint32(h.Class)<<16 | uint32(h.Field)<<9 | uint32(payload)
	if masked {
		w |= 0x100
	}
	b = binary.BigEndian.AppendUint32(b, w)
	if h.Class == mf.ClassExperimenter {
		b = binary.BigEndian.AppendUint32(b, h.Experimenter)
	}
	return b
}

// appendEntry appends f=v/m as an OXM/NXM entry, masked unless m is all
// ones: OVS's nx_put_entry. Not mf.AppendEntry: an action sends
// tun_metadata only as wide as its non-zero bytes (mf_field_len), a match
// in whole 4-byte option units, and Nicira actions name dp_hash by its
// NXM header (headerFor).
func appendEntry(b []byte, f *mf.Field, version uint8, v, m *mf.Value) []byte {
	n := fieldBytes(f)
	exact := isAllOnes(m[:n])
	off := 0
	if isVariableLength(f) {
		// tun_metadata goes out only as wide as its non-zero bytes (OVS's
		// mf_field_len).
		w := nonZeroTail(v[:n])
		if !exact {
			w = max(w, nonZeroTail(m[:n]))
		}
		off = n - w
	}
	b = appendEntryHeaderLen(b, f, version, !exact, n-off)
	b = append(b, v[off:n]...)
	if !exact {
		b = append(b, m[off:n]...)
	}
	return b
}

// nonZeroTail is the length of b from its first non-zero byte.
func nonZeroTail(b []byte) int {
	for i, c := range b {
		if c != 0 {
			return len(b) - i
		}
	}
	return 0
}

// formatSubfield prints sf as OVS's mf_format_subfield ("NXM_NX_REG0[0..15]").
func formatSubfield(sf mf.Subfield) string {
	if sf.Field == nil {
		return "<unknown>"
	}
	if h := headerFor(sf.Field, 0); h != nil && h != sf.Field.HeaderFor(0) {
		name := h.Name
		switch {
		case sf.IsWhole():
			return name + "[]"
		case sf.NBits == 1:
			return name + "[" + strconv.Itoa(sf.Ofs) + "]"
		}
		return name + "[" + strconv.Itoa(sf.Ofs) + ".." + strconv.Itoa(sf.Ofs+sf.NBits-1) + "]"
	}
	return sf.String()
}

func isAllOnes(b []byte) bool {
	for _, c := range b {
		if c != 0xff {
			return false
		}
	}
	return true
}

// prereqsOK reports whether match m satisfies f's prerequisites (OVS's
// mf_are_match_prereqs_ok).
func prereqsOK(f *mf.Field, m *mf.Match) bool { return f.PrereqsMatched(m) }

// flowPrereqsOK reports whether flow f satisfies fd's prerequisites
// (OVS's mf_are_prereqs_ok).
func flowPrereqsOK(fd *mf.Field, f *mf.Flow) bool { return fd.PrereqsOK(f) }

// valueValid reports whether v is a valid value of f (OVS's
// mf_is_value_valid).
func valueValid(f *mf.Field, v *mf.Value) bool { return f.IsValueValid(*v) }

// parseFieldValue parses "VALUE[/MASK]" for field f in flow syntax
// (OVS's mf_parse: "*" is a zero mask; "ANY" is a port name, OFPP_ANY,
// and nothing for other fields, although mf_format prints a zero mask so).
func parseFieldValue(f *mf.Field, s string) (v, m mf.Value, err error) {
	return f.ParseValue(strings.TrimSpace(s), nil)
}

func pullEntry(b []byte, allowMask bool) (f *mf.Field, v, m mf.Value, n int, err error) {
	h, _, err := mf.PullEntryHeader(b)
	if err != nil {
		return nil, v, m, 0, err
	}
	// The field and the width it announces are judged first, with Open
	// vSwitch's 7-bit length lookup (lookupHeader).
	if f, err = fieldFor(h, true); err != nil {
		return nil, v, m, 0, err
	}
	e, rest, err := mf.PullEntry(b, true)
	switch {
	case err == ofperr.OFPBMC_BAD_LEN || err == ofperr.OFPBMC_BAD_WILDCARDS:
		return nil, v, m, 0, err
	case h.HasMask && !allowMask:
		return nil, v, m, 0, ofperr.OFPBMC_BAD_MASK
	case err != nil:
		return nil, v, m, 0, err
	}
	return e.Field, e.Value, e.Mask, len(b) - len(rest), nil
}

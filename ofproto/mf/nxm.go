package mf

import (
	"encoding/binary"

	"gvs/ofproto/ofperr"
	"gvs/packet"
)

// NXM and OXM entries: a 32-bit header (class 16 bits, field 7, hasmask
// 1, length 8), for the experimenter class a 32-bit experimenter ID, then
// the value and, if hasmask, a mask of the same width. The length counts
// everything after the first 4 bytes.

// EntryHeader is one decoded NXM/OXM header.
type EntryHeader struct {
	Class        uint16
	Field        uint8
	HasMask      bool
	Length       uint8  // payload length as on the wire (incl. experimenter ID)
	Experimenter uint32 // for ClassExperimenter
}

// Size is the header's own size in bytes (4, or 8 with an experimenter ID).
func (h EntryHeader) Size() int {
	if h.Class == ClassExperimenter {
		return 8
	}
	return 4
}

// expLen is the experimenter ID's share of Length.
func (h EntryHeader) expLen() int {
	if h.Class == ClassExperimenter {
		return 4
	}
	return 0
}

// PayloadLen is the number of value (and mask) bytes after the header.
func (h EntryHeader) PayloadLen() int { return int(h.Length) - h.expLen() }

// FieldBytes is the width of the value the header announces.
func (h EntryHeader) FieldBytes() int {
	n := h.PayloadLen()
	if h.HasMask {
		n /= 2
	}
	return n
}

// Word returns the first 32 bits of the header (the whole NXM header).
func (h EntryHeader) Word() uint32 {
	w := uint32(h.Class)<<16 | uint32(h.Field)<<9 | uint32(h.Length)
	if h.HasMask {
		w |= 1 << 8
	}
	return w
}

// HeaderFromWord decodes a 32-bit NXM header (no experimenter ID).
func HeaderFromWord(w uint32) EntryHeader {
	return EntryHeader{Class: uint16(w >> 16), Field: uint8(w >> 9 & 0x7f), HasMask: w&(1<<8) != 0, Length: uint8(w)}
}

// PullEntryHeader decodes the NXM/OXM header at the start of b and
// returns it and the bytes after it (nx_pull_header__ without the field
// lookup). Errors: OFPBMC_BAD_LEN.
func PullEntryHeader(b []byte) (EntryHeader, []byte, error) {
	if len(b) < 4 {
		return EntryHeader{}, b, ofperr.OFPBMC_BAD_LEN
	}
	h := HeaderFromWord(binary.BigEndian.Uint32(b))
	if h.Class == ClassExperimenter {
		if len(b) < 8 {
			return EntryHeader{}, b, ofperr.OFPBMC_BAD_LEN
		}
		h.Experimenter = binary.BigEndian.Uint32(b[4:])
	}
	if int(h.Length) < h.expLen() {
		return EntryHeader{}, b, ofperr.OFPBMC_BAD_LEN
	}
	return h, b[h.Size():], nil
}

// FieldForHeader returns the field h names, or nil if h names none or
// announces a width the field does not have (nxm_field_by_header).
// Variable-length fields (tun_metadataN) are found whatever their length
// (Open vSwitch looks them up without it) and take widths 0..their Bytes.
// A masked header's width is half its payload, rounded down
// (nxm_make_exact_header): an odd last byte is ignored.
func FieldForHeader(h EntryHeader) *Field {
	fd := FieldByHeader(h.Class, h.Field, h.Experimenter)
	if fd == nil {
		return nil
	}
	if n := h.FieldBytes(); n == fd.Bytes || fd.isVariableLength() && n <= fd.Bytes {
		return fd
	}
	return nil
}

func (fd *Field) isVariableLength() bool {
	return fd.ID >= TunMetadata0 && fd.ID < TunMetadata0+NumTunMetadata
}

// AppendEntryHeader appends the header for fd in version (0 for NXM) with
// a value of n bytes (n = fd.Bytes unless variable-length) and, if
// masked, a mask.
func AppendEntryHeader(b []byte, fd *Field, version uint8, masked bool, n int) []byte {
	hd := fd.HeaderFor(version)
	if hd == nil {
		return b
	}
	h := EntryHeader{Class: hd.Class, Field: hd.Field, HasMask: masked, Experimenter: hd.Experimenter}
	payload := n
	if masked {
		payload *= 2
	}
	h.Length = uint8(payload + h.expLen())
	b = binary.BigEndian.AppendUint32(b, h.Word())
	if h.Class == ClassExperimenter {
		b = binary.BigEndian.AppendUint32(b, h.Experimenter)
	}
	return b
}

// Entry is one decoded NXM/OXM entry.
type Entry struct {
	Field  *Field // nil if the header named no known field
	Header EntryHeader
	Value  Value // fd.Bytes wide (variable-length values right-aligned)
	Mask   Value // all-ones for an entry without mask
}

// PullEntry decodes one NXM/OXM entry (header, value, mask) from the
// start of b and returns the rest (nx_pull_entry__). isAction selects
// the errors of a set_field action instead of a match. An unknown field
// still consumes its bytes and returns OFPBMC_BAD_FIELD (or
// OFPBAC_BAD_SET_TYPE) with Entry.Field nil, so a loose decoder can skip
// it.
func PullEntry(b []byte, isAction bool) (Entry, []byte, error) {
	h, rest, err := PullEntryHeader(b)
	if err != nil {
		return Entry{}, b, err
	}
	e := Entry{Header: h, Field: FieldForHeader(h)}
	var fieldErr error
	if e.Field == nil {
		fieldErr = ofperr.OFPBMC_BAD_FIELD
		if isAction {
			fieldErr = ofperr.OFPBAC_BAD_SET_TYPE
			if fd := FieldByHeader(h.Class, h.Field, h.Experimenter); fd != nil && h.PayloadLen() > 0 {
				fieldErr = ofperr.OFPBAC_BAD_SET_LEN
			}
		}
	}
	pl := h.PayloadLen()
	if len(rest) < pl {
		return Entry{}, b, ofperr.OFPBMC_BAD_LEN
	}
	payload := rest[:pl]
	rest = rest[pl:]
	width := h.FieldBytes()
	if h.HasMask {
		for i := 0; i < width; i++ {
			if payload[i]&^payload[width+i] != 0 {
				return Entry{}, rest, ofperr.OFPBMC_BAD_WILDCARDS
			}
		}
	}
	e.Value = entryValue(e.Field, payload[:width])
	if h.HasMask {
		e.Mask = entryValue(e.Field, payload[width:2*width])
	} else {
		for i := range e.Mask {
			e.Mask[i] = 0xff
		}
		if e.Field != nil {
			e.Mask = onesBytes(e.Field.Bytes)
		}
	}
	return e, rest, fieldErr
}

// entryValue copies a wire value into a Value: variable-length fields
// right-aligned in their Bytes (copy_entry_value).
func entryValue(fd *Field, p []byte) Value {
	var v Value
	if fd == nil {
		copy(v[:], p)
		return v
	}
	n := min(len(p), fd.Bytes)
	if fd.isVariableLength() {
		copy(v[fd.Bytes-n:fd.Bytes], p[:n])
	} else {
		copy(v[:n], p[:n])
	}
	return v
}

// isMaskValid: a field that is not maskable takes only an all-zero or
// all-ones mask (mf_is_mask_valid).
func (fd *Field) isMaskValid(m Value) bool {
	if fd.Maskable {
		return true
	}
	return m == Value{} || m == onesBytes(fd.Bytes)
}

// PullMatchEntry is PullEntry for a match: it also checks the mask and
// value (OFPBMC_BAD_MASK, OFPBMC_BAD_VALUE).
func PullMatchEntry(b []byte) (Entry, []byte, error) {
	e, rest, err := PullEntry(b, false)
	if err != nil {
		return e, rest, err
	}
	if !e.Field.isMaskValid(e.Mask) {
		return e, rest, ofperr.OFPBMC_BAD_MASK
	}
	if !e.Field.IsValueValid(e.Value) {
		return e, rest, ofperr.OFPBMC_BAD_VALUE
	}
	return e, rest, nil
}

// AppendEntry appends fd's entry for version (0 for NXM) with value v
// and, if mask is non-nil, the mask.
func AppendEntry(b []byte, fd *Field, version uint8, v Value, mask *Value) []byte {
	n, off := fd.Bytes, 0
	if fd.isVariableLength() {
		n = tunMetadataWireLen(v, mask)
		off = fd.Bytes - n
	}
	b = AppendEntryHeader(b, fd, version, mask != nil, n)
	b = append(b, v[off:off+n]...)
	if mask != nil {
		b = append(b, mask[off:off+n]...)
	}
	return b
}

// tunMetadataWireLen is the length a tun_metadata value is sent with:
// the shortest multiple of 4 bytes (Geneve options come in 4-byte units)
// that holds every non-zero byte of the mask (or value, if exact).
func tunMetadataWireLen(v Value, mask *Value) int {
	src := v
	if mask != nil {
		src = *mask
	}
	first := TunMetadataBytes
	for i := 0; i < TunMetadataBytes; i++ {
		if src[i] != 0 {
			first = i
			break
		}
	}
	n := (TunMetadataBytes - first + 3) / 4 * 4
	if n == 0 {
		n = 4
	}
	return n
}

// nxCookie is the NXM_NX_COOKIE pseudo-field of NXST_FLOW/NXT_FLOW_MOD
// requests (class 1, field 30, 8 bytes).
const (
	nxCookieClass = ClassNXM1
	nxCookieField = 30
)

// DecodeNXMatch decodes the entries of an nx_match or OXM match body (no
// ofp11_match_header, no padding), as Open vSwitch's nx_pull_raw. strict
// rejects unknown fields and unmet prerequisites (flow_mod); otherwise
// they are skipped or allowed. withCookie accepts the NXM_NX_COOKIE
// pseudo-field and returns it. pipelineOnly rejects fields that are not
// pipeline fields (packet-in metadata).
func DecodeNXMatch(p []byte, strict, withCookie, pipelineOnly bool) (m Match, cookie, cookieMask uint64, err error) {
	for len(p) > 0 {
		var e Entry
		e, p, err = PullMatchEntry(p)
		if err != nil {
			if err == ofperr.OFPBMC_BAD_FIELD && withCookie && e.Header.Class == nxCookieClass && e.Header.Field == nxCookieField && e.Header.FieldBytes() == 8 {
				if cookieMask != 0 {
					return Match{}, 0, 0, ofperr.OFPBMC_DUP_FIELD
				}
				cookie, cookieMask = e.Value.Uint(8), e.Mask.Uint(8)
				err = nil
				continue
			}
			if err == ofperr.OFPBMC_BAD_FIELD && !strict {
				err = nil
				continue
			}
			return Match{}, 0, 0, err
		}
		fd := e.Field
		switch {
		case fd.isVariableLength() && fd.ID != TunMetadata0:
			// Only one tunnel metadata option fits in packet.Key.
			return Match{}, 0, 0, ofperr.NXFMFC_INVALID_TLV_FIELD
		case strict && !fd.PrereqsMatched(&m):
			return Match{}, 0, 0, ofperr.OFPBMC_BAD_PREREQ
		case !fd.IsWildcarded(&m.Wildcards):
			return Match{}, 0, 0, ofperr.OFPBMC_DUP_FIELD
		case pipelineOnly && !fd.IsPipelineField():
			return Match{}, 0, 0, ofperr.OFPBRC_PIPELINE_FIELDS_ONLY
		}
		fd.setMatchFromWire(&m, e.Value, e.Mask)
	}
	return m, cookie, cookieMask, nil
}

// setMatchFromWire is mf_set: an all-ones mask sets the value, an
// all-zero mask wildcards, anything else sets value and mask.
func (fd *Field) setMatchFromWire(m *Match, v, mask Value) {
	switch {
	case fd.ID == IPv6Label && mask.Uint(4)&0xfffff == 0xfffff:
		fd.SetMatch(m, v)
	case mask == onesBytes(fd.Bytes):
		fd.SetMatch(m, v)
	case mask == Value{} && !fd.isVariableLength():
		fd.SetWild(m)
	default:
		fd.SetMatchMasked(m, v, mask)
	}
}

// IsPipelineField reports whether the field is pipeline state a
// controller may see and set in packet-in/resume metadata (Open vSwitch's
// mf_is_pipeline_field): tunnel fields except ttl/tos, metadata, in_port
// and the registers.
func (fd *Field) IsPipelineField() bool {
	switch fd.ID {
	case TunID, TunSrc, TunDst, TunIPv6Src, TunIPv6Dst, TunFlags, TunGBPID, TunGBPFlags, Metadata, InPort, InPortOXM:
		return true
	}
	return fd.isVariableLength() || (fd.ID >= Reg0 && fd.ID < XXReg0+NumXXRegs)
}

// PullNXMatch decodes an nx_match of matchLen bytes at the start of b
// (followed by padding to a multiple of 8, which is skipped) and returns
// the rest of b, as nx_pull_match (strict).
func PullNXMatch(b []byte, matchLen int) (Match, []byte, error) {
	m, _, _, rest, err := PullNXMatchCookie(b, matchLen, false)
	return m, rest, err
}

// PullNXMatchCookie is PullNXMatch that also accepts (withCookie) the
// NXM_NX_COOKIE pseudo-field and returns it.
func PullNXMatchCookie(b []byte, matchLen int, withCookie bool) (m Match, cookie, cookieMask uint64, rest []byte, err error) {
	padded := (matchLen + 7) / 8 * 8
	if matchLen < 0 || len(b) < padded {
		return Match{}, 0, 0, b, ofperr.OFPBMC_BAD_LEN
	}
	m, cookie, cookieMask, err = DecodeNXMatch(b[:matchLen], true, withCookie, false)
	return m, cookie, cookieMask, b[padded:], err
}

// ofp11MatchTypeOXM and ofp11MatchTypeStandard are ofp_match.type values.
const (
	ofp11MatchTypeStandard = 0
	ofp11MatchTypeOXM      = 1
)

// PullOXMMatch decodes an OpenFlow 1.2+ ofp_match (type OXM, its length,
// the OXM entries, padding to 8) at the start of b (oxm_pull_match).
func PullOXMMatch(b []byte) (Match, []byte, error) {
	if len(b) < 4 {
		return Match{}, b, ofperr.OFPBMC_BAD_LEN
	}
	typ, length := binary.BigEndian.Uint16(b), int(binary.BigEndian.Uint16(b[2:]))
	if length < 4 {
		return Match{}, b, ofperr.OFPBMC_BAD_LEN
	}
	if typ != ofp11MatchTypeOXM {
		return Match{}, b, ofperr.OFPBMC_BAD_TYPE
	}
	padded := (length + 7) / 8 * 8
	if len(b) < padded {
		return Match{}, b, ofperr.OFPBMC_BAD_LEN
	}
	m, _, _, err := DecodeNXMatch(b[4:length], true, false, false)
	return m, b[padded:], err
}

// AppendNXMatch appends m as NXM (version 0) or OXM entries for an
// OpenFlow version (nx_put_raw, entries in Open vSwitch's order so the
// bytes compare equal), without padding, and returns the new b and the
// number of bytes appended. cookieMask non-zero adds NXM_NX_COOKIE.
func AppendNXMatch(b []byte, m *Match, version uint8, cookie, cookieMask uint64) ([]byte, int) {
	start := len(b)
	b = appendNXMatchRaw(b, m, version)
	if cookieMask != 0 {
		h := EntryHeader{Class: nxCookieClass, Field: nxCookieField, Length: 8}
		if cookieMask != ^uint64(0) {
			h.HasMask, h.Length = true, 16
		}
		b = binary.BigEndian.AppendUint32(b, h.Word())
		b = binary.BigEndian.AppendUint64(b, cookie&cookieMask)
		if h.HasMask {
			b = binary.BigEndian.AppendUint64(b, cookieMask)
		}
	}
	return b, len(b) - start
}

// AppendNXMatchPadded is AppendNXMatch followed by zero padding to a
// multiple of 8 (nx_put_match); it returns the unpadded length, which
// NXT_FLOW_MOD and NXST_FLOW carry as match_len.
func AppendNXMatchPadded(b []byte, m *Match, cookie, cookieMask uint64) ([]byte, int) {
	b, n := AppendNXMatch(b, m, 0, cookie, cookieMask)
	return appendZeros(b, pad8(n)), n
}

// AppendOXMMatch appends an OpenFlow 1.2+ ofp_match (type OXM) for
// version, padded to 8 bytes (oxm_put_match).
func AppendOXMMatch(b []byte, m *Match, version uint8) []byte {
	start := len(b)
	b = append(b, 0, ofp11MatchTypeOXM, 0, 0)
	b, n := AppendNXMatch(b, m, version, 0, 0)
	binary.BigEndian.PutUint16(b[start+2:], uint16(n+4))
	return appendZeros(b, pad8(n+4))
}

func pad8(n int) int { return (8 - n%8) % 8 }

func appendZeros(b []byte, n int) []byte {
	for ; n > 0; n-- {
		b = append(b, 0)
	}
	return b
}

// putter appends entries for one encoding.
type putter struct {
	b       []byte
	version uint8

	// impliedEthernet: some entry put has a prerequisite, which tells
	// the reader the packet is Ethernet.
	impliedEthernet bool
}

// append adds fd's entry and notes whether it implies Ethernet.
func (p *putter) append(fd *Field, v Value, mask *Value) {
	p.b = AppendEntry(p.b, fd, p.version, v, mask)
	if fd.Prereq != PrereqNone {
		p.impliedEthernet = true
	}
}

// put appends fd's entry unless mask is zero; exact if mask is all ones
// over the field's bytes (nxm_put).
func (p *putter) put(fd *Field, v, mask Value) {
	if mask.IsZero() {
		return
	}
	if mask == onesBytes(fd.Bytes) {
		p.append(fd, v, nil)
		return
	}
	p.append(fd, v, &mask)
}

// putField puts fd as m has it.
func (p *putter) putField(m *Match, id FieldID) {
	fd := &fieldTable[id]
	p.put(fd, fd.Get(&m.Flow), fd.GetMask(&m.Wildcards))
}

// putExact puts fd without mask, with m's value.
func (p *putter) putExact(m *Match, id FieldID) {
	fd := &fieldTable[id]
	p.append(fd, fd.Get(&m.Flow), nil)
}

// packetTypeEthernet is the OXM_OF_PACKET_TYPE entry for Ethernet
// (namespace 0, type 0), which Open vSwitch puts first when a match
// names a field with a prerequisite but no entry it sends has one (e.g.
// ct_tp_src without ct_nw_proto), so the reader still knows the packet
// is Ethernet.
var packetTypeEthernet = []byte{0x80, 0x00, 44 << 1, 4, 0, 0, 0, 0}

func appendNXMatchRaw(b []byte, m *Match, version uint8) []byte {
	start := len(b)
	b, implied := appendNXMatchEntries(b, m, version)
	if !implied && m.matchesPacketFields() {
		n := len(packetTypeEthernet)
		b = append(b, packetTypeEthernet...)
		copy(b[start+n:], b[start:len(b)-n])
		copy(b[start:], packetTypeEthernet)
	}
	return b
}

func appendNXMatchEntries(b []byte, m *Match, version uint8) ([]byte, bool) {
	p := &putter{b: b, version: version}
	f, w := &m.Flow, &m.Wildcards.Masks

	p.putField(m, DPHash)
	if w.RecircID != 0 {
		p.putExact(m, RecircID)
	}
	if w.ConjID != 0 {
		p.putExact(m, ConjID)
	}
	if w.InPort != 0 {
		if version != 0 {
			p.putExact(m, InPortOXM)
		} else {
			p.putExact(m, InPort)
		}
	}
	if w.ActsetOutput != 0 {
		p.putExact(m, ActsetOutput)
	}

	p.putField(m, EthSrc)
	p.putField(m, EthDst)
	p.putField(m, EthType)

	if version != 0 {
		vid := fieldTable[VLANVID].Get(f).Uint(2)
		mask := fieldTable[VLANVID].GetMask(&m.Wildcards).Uint(2)
		switch {
		case mask == vlanVIDMask|vlanCFI:
			p.append(&fieldTable[VLANVID], ValueFromUint(vid, 2), nil)
		case mask != 0:
			mv := ValueFromUint(mask, 2)
			p.append(&fieldTable[VLANVID], ValueFromUint(vid, 2), &mv)
		}
		if vid != 0 && fieldTable[VLANPCP].GetMask(&m.Wildcards).Uint(1) != 0 {
			p.putExact(m, VLANPCP)
		}
	} else {
		p.putField(m, VLANTCI)
	}

	switch f.EtherType {
	case packet.EtherTypeIPv4, packet.EtherTypeIPv6:
		p.putIP(m)
	case packet.EtherTypeARP, packet.EtherTypeRARP:
		if w.ARPOp != 0 {
			p.putExact(m, ARPOp)
		}
		p.putField(m, ARPSPA)
		p.putField(m, ARPTPA)
		p.putField(m, ARPSHA)
		p.putField(m, ARPTHA)
	}

	p.putField(m, TunID)
	p.putField(m, TunFlags)
	p.putField(m, TunSrc)
	p.putField(m, TunDst)
	p.putField(m, TunIPv6Src)
	p.putField(m, TunIPv6Dst)
	p.putField(m, TunGBPID)
	p.putField(m, TunGBPFlags)
	if w.TunMetadata != [TunMetadataBytes]byte{} {
		fd := &fieldTable[TunMetadata0]
		v, mask := fd.Get(f), fd.GetMask(&m.Wildcards)
		p.append(fd, v, &mask)
	}

	if version < 0x06 {
		for i := 0; i < NumRegs; i++ {
			p.putField(m, Reg0+FieldID(i))
		}
	} else {
		for i := 0; i < NumXRegs; i++ {
			p.putField(m, XReg0+FieldID(i))
		}
	}
	p.putField(m, PktMark)

	p.putField(m, CTState)
	p.putField(m, CTZone)
	p.putField(m, CTMark)
	p.putField(m, CTLabel)
	p.putField(m, CTNwSrc)
	p.putField(m, CTIPv6Src)
	p.putField(m, CTNwDst)
	p.putField(m, CTIPv6Dst)
	if f.CTNwProto != 0 {
		p.putField(m, CTNwProto)
		p.putField(m, CTTpSrc)
		p.putField(m, CTTpDst)
	}
	p.putField(m, Metadata)
	return p.b, p.impliedEthernet
}

// putIP is nxm_put_ip.
func (p *putter) putIP(m *Match) {
	f, w := &m.Flow, &m.Wildcards.Masks
	if f.EtherType == packet.EtherTypeIPv4 {
		p.putField(m, IPv4Src)
		p.putField(m, IPv4Dst)
	} else {
		p.putField(m, IPv6Src)
		p.putField(m, IPv6Dst)
	}
	// ip_frag: a mask covering both bits is sent as exact.
	if fm := w.IPFrag & 3; fm != 0 {
		fd := &fieldTable[IPFrag]
		v := ValueFromUint(uint64(f.IPFrag&3), 1)
		if fm == 3 {
			p.append(fd, v, nil)
		} else {
			mv := ValueFromUint(uint64(fm), 1)
			p.append(fd, v, &mv)
		}
	}
	if w.IPTOS&0xfc != 0 {
		if p.version != 0 {
			p.putExact(m, IPDSCPShifted)
		} else {
			p.putExact(m, IPDSCP)
		}
	}
	if w.IPTOS&0x03 != 0 {
		p.putExact(m, IPECN)
	}
	if w.IPTTL != 0 {
		p.putExact(m, IPTTL)
	}
	p.putField(m, IPv6Label)
	if w.IPProto == 0 {
		return
	}
	p.putExact(m, IPProto)
	switch {
	case f.IPProto == packet.ProtoTCP:
		p.putField(m, TCPSrc)
		p.putField(m, TCPDst)
		p.putField(m, TCPFlags)
	case f.IPProto == packet.ProtoUDP:
		p.putField(m, UDPSrc)
		p.putField(m, UDPDst)
	case f.IPProto == packet.ProtoSCTP:
		p.putField(m, SCTPSrc)
		p.putField(m, SCTPDst)
	case f.IPProto == packet.ProtoICMP && f.EtherType == packet.EtherTypeIPv4:
		if w.ICMPType != 0 {
			p.putExact(m, ICMPv4Type)
		}
		if w.ICMPCode != 0 {
			p.putExact(m, ICMPv4Code)
		}
	case f.IPProto == packet.ProtoICMPv6 && f.EtherType == packet.EtherTypeIPv6:
		if w.ICMPType != 0 {
			p.putExact(m, ICMPv6Type)
		}
		if w.ICMPCode != 0 {
			p.putExact(m, ICMPv6Code)
		}
		if (f.ICMPType == icmp6NeighborSolicit || f.ICMPType == icmp6NeighborAdvert) && f.ICMPCode == 0 {
			if w.NDReserved != 0 {
				p.putExact(m, NDReserved)
			}
			p.putField(m, NDTarget)
			if w.NDOptionsType != 0 {
				p.putExact(m, NDOptionsType)
			}
			if f.ICMPType == icmp6NeighborSolicit {
				p.putField(m, NDSLL)
			}
			if f.ICMPType == icmp6NeighborAdvert {
				p.putField(m, NDTLL)
			}
		}
	}
}

package mf

import (
	"encoding/binary"
	"unsafe"
)

// FieldID names one field of the registry, after Open vSwitch's enum
// mf_field_id (MFF_ETH_SRC is EthSrc here).
type FieldID uint16

// The fields, in Open vSwitch's order (meta-flow.h), limited to what
// Flow can carry.
const (
	DPHash FieldID = iota
	RecircID
	ConjID
	TunID
	TunSrc
	TunDst
	TunIPv6Src
	TunIPv6Dst
	TunFlags
	TunTTL
	TunTOS
	TunGBPID
	TunGBPFlags
	TunMetadata0 // TunMetadata0 + N is tun_metadataN
)

// NumTunMetadata is how many tun_metadataN fields exist (Open vSwitch's
// TUN_METADATA_NUM_OPTS); which of them hold data, and where in
// packet.Key.TunMetadata, is up to the tunnel TLV table.
const NumTunMetadata = 64

// The fields after tun_metadata0..63.
const (
	Metadata FieldID = TunMetadata0 + NumTunMetadata + iota
	InPort
	InPortOXM
	ActsetOutput
	SkbPriority
	PktMark
	CTState
	CTZone
	CTMark
	CTLabel
	CTNwProto
	CTNwSrc
	CTNwDst
	CTIPv6Src
	CTIPv6Dst
	CTTpSrc
	CTTpDst
	Reg0 // Reg0 + N is regN
)

// NumXRegs and NumXXRegs count the 64- and 128-bit views of the registers.
const (
	NumXRegs  = NumRegs / 2
	NumXXRegs = NumRegs / 4
)

// Register views and everything after them.
const (
	XReg0  FieldID = Reg0 + NumRegs            // XReg0 + N is xregN
	XXReg0 FieldID = Reg0 + NumRegs + NumXRegs // XXReg0 + N is xxregN
)

// Reg1..Reg15, XReg1..XReg7 and XXReg1..XXReg3 for readable code.
const (
	Reg1, Reg2, Reg3, Reg4, Reg5, Reg6, Reg7        = Reg0 + 1, Reg0 + 2, Reg0 + 3, Reg0 + 4, Reg0 + 5, Reg0 + 6, Reg0 + 7
	Reg8, Reg9, Reg10, Reg11, Reg12, Reg13, Reg14   = Reg0 + 8, Reg0 + 9, Reg0 + 10, Reg0 + 11, Reg0 + 12, Reg0 + 13, Reg0 + 14
	Reg15                                           = Reg0 + 15
	XReg1, XReg2, XReg3, XReg4, XReg5, XReg6, XReg7 = XReg0 + 1, XReg0 + 2, XReg0 + 3, XReg0 + 4, XReg0 + 5, XReg0 + 6, XReg0 + 7
	XXReg1, XXReg2, XXReg3                          = XXReg0 + 1, XXReg0 + 2, XXReg0 + 3
)

// L2 and up.
const (
	EthSrc FieldID = XXReg0 + NumXXRegs + iota
	EthDst
	EthType
	VLANTCI
	DLVLAN
	VLANVID
	DLVLANPCP
	VLANPCP
	IPv4Src
	IPv4Dst
	IPv6Src
	IPv6Dst
	IPv6Label
	IPProto
	IPDSCP        // nw_tos: the DSCP bits in place (TOS & 0xfc)
	IPDSCPShifted // ip_dscp: the DSCP shifted right by 2
	IPECN
	IPTTL
	IPFrag
	ARPOp
	ARPSPA
	ARPTPA
	ARPSHA
	ARPTHA
	TCPSrc
	TCPDst
	TCPFlags
	UDPSrc
	UDPDst
	SCTPSrc
	SCTPDst
	ICMPv4Type
	ICMPv4Code
	ICMPv6Type
	ICMPv6Code
	NDTarget
	NDSLL
	NDTLL
	NDReserved
	NDOptionsType

	// PacketType is OpenFlow 1.5's packet_type, accepted on the wire
	// only as Ethernet (0, 0), the one kind of packet gvs handles; it
	// occupies nothing in Flow.
	PacketType

	NumFields // number of fields; not a field
)

// Prereq is what a packet must be for a field to be meaningful, after
// Open vSwitch's enum mf_prereqs.
type Prereq uint8

// The prerequisites.
const (
	PrereqNone Prereq = iota
	PrereqEthernet
	PrereqARP
	PrereqVLANVID
	PrereqIPv4
	PrereqIPv6
	PrereqIPAny
	PrereqTCP
	PrereqUDP
	PrereqSCTP
	PrereqICMPv4
	PrereqICMPv6
	PrereqCTValid
	PrereqND
	PrereqNDSolicit
	PrereqNDAdvert
)

// FormatKind is how a field's value is written in flow syntax.
type FormatKind uint8

// The value formats, after Open vSwitch's enum mf_string.
const (
	FormatDecimal FormatKind = iota
	FormatHex
	FormatEthernet
	FormatIPv4
	FormatIPv6
	FormatOFP10Port // 16-bit OpenFlow port (names for reserved ports)
	FormatOFP11Port // 32-bit OpenFlow 1.1+ port
	FormatFrag      // ip_frag: no, yes, first, later, not_later
	FormatTunFlags  // tun_flags: +oam
	FormatTCPFlags  // tcp_flags: +syn-ack... or hex
	FormatCTState   // ct_state: +trk-new...
)

// Header is an OXM or NXM field header: the class, the field number and,
// for the experimenter class 0xffff, the experimenter ID. Version is the
// first OpenFlow version whose encoding chooses this header (HeaderFor):
// 0 for extension headers (NXM, Nicira and Ericsson OXM), usable with
// every version; 0xff for a header that is only accepted on input.
type Header struct {
	Name         string // e.g. "NXM_OF_ETH_SRC", "OXM_OF_ETH_SRC"
	Class        uint16
	Field        uint8
	Experimenter uint32 // only for Class == ClassExperimenter
	Version      uint8
}

// OXM classes.
const (
	ClassNXM0         uint16 = 0x0000
	ClassNXM1         uint16 = 0x0001
	ClassEricsson     uint16 = 0x1000
	ClassOpenFlow     uint16 = 0x8000
	ClassPacketRegs   uint16 = 0x8001
	ClassExperimenter uint16 = 0xffff
)

// Experimenter IDs used in experimenter OXM headers.
const (
	ExperimenterNicira uint32 = 0x00002320
	ExperimenterONF    uint32 = 0x4f4e4600
)

// Field describes one field: everything about it that does not depend on
// a particular flow. Fields are immutable; compare them by pointer or ID.
type Field struct {
	ID        FieldID
	Name      string // Open vSwitch's name, e.g. "eth_src"
	ExtraName string // its alias, e.g. "dl_src" (empty if none)
	Bytes     int    // width in bytes on the wire and in Value
	Bits      int    // significant bits (the low Bits of the Bytes)
	Maskable  bool   // arbitrary bitwise masks allowed (else exact or wildcard)
	Writable  bool   // set_field/load/move may write it
	Prereq    Prereq
	Format    FormatKind
	NXM       *Header  // NXM header (nil if none)
	OXM       []Header // OXM headers, oldest version first (empty if none)

	acc     accessor
	allOnes Value
}

// Value is a field value (or mask): the field's Bytes in network byte
// order, left-aligned in the array; the rest is zero.
type Value [16]byte

// ValueFromUint returns n as an nbytes-wide network-order value.
func ValueFromUint(n uint64, nbytes int) Value {
	var v Value
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], n)
	if nbytes > 8 {
		copy(v[nbytes-8:nbytes], b[:])
	} else {
		copy(v[:nbytes], b[8-nbytes:])
	}
	return v
}

// Uint returns the low 64 bits of the nbytes-wide value v.
func (v Value) Uint(nbytes int) uint64 {
	var n uint64
	start := 0
	if nbytes > 8 {
		start = nbytes - 8
	}
	for _, b := range v[start:nbytes] {
		n = n<<8 | uint64(b)
	}
	return n
}

// AllOnes returns the exact-match mask for f: its low Bits set (for
// nw_tos, which keeps the DSCP in place, 0xfc).
func (f *Field) AllOnes() Value { return f.allOnes }

func (f *Field) computeAllOnes() Value {
	if f.acc.bits != 0 && f.acc.shift == 0 {
		return ValueFromUint(f.acc.bits, f.Bytes)
	}
	if f.ID == TCPFlags || f.ID == IPv6Label {
		// Open vSwitch matches these exactly with an all-ones mask of
		// the whole width (match_set_tcp_flags, match_set_ipv6_label),
		// which the wire then carries without a mask.
		return onesBytes(f.Bytes)
	}
	var v Value
	for i := 0; i < f.Bits; i++ {
		v.setBit(f.Bytes, i)
	}
	return v
}

// IsAllOnes reports whether m is f's exact-match mask.
func (f *Field) IsAllOnes(m Value) bool { return m == f.AllOnes() }

func onesBytes(n int) Value {
	var v Value
	for i := 0; i < n; i++ {
		v[i] = 0xff
	}
	return v
}

// IsZero reports whether v is all zero.
func (v Value) IsZero() bool { return v == Value{} }

// bit i counts from the least significant bit of an nbytes-wide value.
func (v *Value) bit(nbytes, i int) bool { return v[nbytes-1-i/8]>>(i%8)&1 != 0 }
func (v *Value) setBit(nbytes, i int)   { v[nbytes-1-i/8] |= 1 << (i % 8) }
func (v *Value) clearBit(nbytes, i int) { v[nbytes-1-i/8] &^= 1 << (i % 8) }

// And returns v AND m.
func (v Value) And(m Value) Value {
	for i := range v {
		v[i] &= m[i]
	}
	return v
}

// accessor says where a field lives in Flow and how to convert. Most
// fields are an integer or byte array at an offset (elem > 0: native
// integers of elem bytes, count of them, concatenated big-endian; elem
// == 0: a byte array of the field's Bytes), optionally a bit range of
// it (bits, shift); the VLAN and port fields need code (get/set).
type accessor struct {
	off   uintptr
	elem  uint8  // native integer size, 0 for a byte array
	count uint8  // number of native integers
	bits  uint64 // storage bits that hold the field (0: all)
	shift uint8  // value = (storage & bits) >> shift

	get func(f *Flow, mask bool) Value
	set func(f *Flow, v Value, mask bool)
}

// isPlainInt reports whether the field is one native integer in Flow.
func (a *accessor) isPlainInt() bool { return a.get == nil && a.elem != 0 && a.count == 1 }

func (a *accessor) ptr(f *Flow) unsafe.Pointer { return unsafe.Add(unsafe.Pointer(f), a.off) }

func (a *accessor) loadInt(p unsafe.Pointer) uint64 {
	switch a.elem {
	case 1:
		return uint64(*(*uint8)(p))
	case 2:
		return uint64(*(*uint16)(p))
	case 4:
		return uint64(*(*uint32)(p))
	default:
		return *(*uint64)(p)
	}
}

func (a *accessor) storeInt(p unsafe.Pointer, n uint64) {
	switch a.elem {
	case 1:
		*(*uint8)(p) = uint8(n)
	case 2:
		*(*uint16)(p) = uint16(n)
	case 4:
		*(*uint32)(p) = uint32(n)
	default:
		*(*uint64)(p) = n
	}
}

// read returns the field's value from flow (or mask) f.
func (fd *Field) read(f *Flow, mask bool) Value {
	a := &fd.acc
	if a.get != nil {
		return a.get(f, mask)
	}
	p := a.ptr(f)
	if a.elem == 0 {
		var v Value
		copy(v[:fd.Bytes], unsafe.Slice((*byte)(p), fd.Bytes))
		return v
	}
	if a.count == 1 {
		n := a.loadInt(p)
		if a.bits != 0 {
			n = n & a.bits >> a.shift
		}
		return ValueFromUint(n, fd.Bytes)
	}
	var v Value
	for i := 0; i < int(a.count); i++ {
		n := a.loadInt(unsafe.Add(p, i*int(a.elem)))
		for j := 0; j < int(a.elem); j++ {
			v[i*int(a.elem)+j] = byte(n >> (8 * (int(a.elem) - 1 - j)))
		}
	}
	return v
}

// write stores v into flow (or mask) f.
func (fd *Field) write(f *Flow, v Value, mask bool) {
	a := &fd.acc
	if a.set != nil {
		a.set(f, v, mask)
		return
	}
	p := a.ptr(f)
	if a.elem == 0 {
		copy(unsafe.Slice((*byte)(p), fd.Bytes), v[:fd.Bytes])
		return
	}
	if a.count == 1 {
		n := v.Uint(fd.Bytes)
		if a.bits != 0 {
			n = a.loadInt(p)&^a.bits | n<<a.shift&a.bits
		}
		a.storeInt(p, n)
		return
	}
	for i := 0; i < int(a.count); i++ {
		var n uint64
		for j := 0; j < int(a.elem); j++ {
			n = n<<8 | uint64(v[i*int(a.elem)+j])
		}
		a.storeInt(unsafe.Add(p, i*int(a.elem)), n)
	}
}

// Get returns f's value of the field.
func (fd *Field) Get(f *Flow) Value { return fd.read(f, false) }

// Set stores v as f's value of the field (mf_set_flow_value).
func (fd *Field) Set(f *Flow, v Value) { fd.write(f, v, false) }

// SetMasked changes only the bits of the field that m has set to v's
// (set_field with a mask, load into a subfield).
func (fd *Field) SetMasked(f *Flow, v, m Value) {
	old := fd.read(f, false)
	for i := 0; i < fd.Bytes; i++ {
		old[i] = old[i]&^m[i] | v[i]&m[i]
	}
	fd.write(f, old, false)
}

// GetMask returns w's mask of the field.
func (fd *Field) GetMask(w *Wildcards) Value { return fd.read(&w.Masks, true) }

// SetMaskTo sets w's mask of the field to m.
func (fd *Field) SetMaskTo(w *Wildcards, m Value) { fd.write(&w.Masks, m, true) }

// Unwildcard marks every bit of the field as consulted in w.
func (fd *Field) Unwildcard(w *Wildcards) {
	m := fd.read(&w.Masks, true)
	all := fd.AllOnes()
	for i := range m {
		m[i] |= all[i]
	}
	fd.write(&w.Masks, m, true)
}

// UnwildcardMasked marks the bits of the field set in m as consulted.
func (fd *Field) UnwildcardMasked(w *Wildcards, m Value) {
	old := fd.read(&w.Masks, true)
	for i := range old {
		old[i] |= m[i]
	}
	fd.write(&w.Masks, old, true)
}

// IsWildcarded reports whether w matches none of the field's bits.
func (fd *Field) IsWildcarded(w *Wildcards) bool { return fd.GetMask(w).IsZero() }

// IsExact reports whether w matches every bit of the field.
func (fd *Field) IsExact(w *Wildcards) bool { return fd.GetMask(w) == fd.AllOnes() }

// SetMatch makes m match the field exactly equal to v (mf_set_value).
func (fd *Field) SetMatch(m *Match, v Value) {
	switch fd.ID {
	case DLVLAN:
		// dl_vlan=0xffff (OpenFlow 1.0's OFP_VLAN_NONE) means "no tag".
		if v.Uint(2) == 0xffff {
			fieldTable[VLANTCI].SetMatchMasked(m, Value{}, ValueFromUint(0xffff, 2))
			return
		}
	}
	fd.SetMatchMasked(m, v, fd.AllOnes())
}

// SetMatchMasked makes m match the bits of the field set in mask equal
// to v's (mf_set). The value is stored masked. A field that is not
// Maskable still accepts any mask here: checking masks is the codecs'
// job (they return OFPBMC_BAD_MASK).
func (fd *Field) SetMatchMasked(m *Match, v, mask Value) {
	fd.write(&m.Wildcards.Masks, mask, true)
	fd.write(&m.Flow, v.And(mask), false)
	if fd.acc.get != nil {
		// Ports and VLAN fields: their storage is not the value's bits
		// (a VLAN field's mask also covers the tag's presence, as Open
		// vSwitch's match_set_dl_vlan/vlan_pcp do), so clear what the
		// mask does not cover.
		m.Normalize()
	}
}

// SetWild makes m ignore the field (mf_set_wild).
func (fd *Field) SetWild(m *Match) {
	switch fd.ID {
	case DLVLAN, VLANVID, DLVLANPCP, VLANPCP:
		// As match_set_any_vid/pcp: keep the tag's presence while the
		// other half of vlan_tci is still matched, else match nothing.
		tciMask := tci(&m.Wildcards.Masks, true)
		clear, other := uint16(vlanVIDMask), uint16(vlanPCPMask)
		if fd.ID == DLVLANPCP || fd.ID == VLANPCP {
			clear, other = other, clear
		}
		if tciMask&other != 0 {
			setTCI(&m.Wildcards.Masks, 0, clear, true)
		} else {
			setTCI(&m.Wildcards.Masks, 0, 0xffff, true)
		}
		m.Normalize()
		return
	}
	fd.write(&m.Wildcards.Masks, Value{}, true)
	fd.write(&m.Flow, Value{}, false)
	if fd.acc.get != nil {
		m.Normalize()
	}
}

// FieldByID returns the field with the given ID, or nil.
func FieldByID(id FieldID) *Field {
	if id >= NumFields {
		return nil
	}
	return &fieldTable[id]
}

// Fields returns every field in ID order. The slice must not be modified.
func Fields() []Field { return fieldTable[:] }

// FieldByName returns the field called name (its name or its alias), or
// nil.
func FieldByName(name string) *Field {
	return fieldsByName[name]
}

// FieldByHeaderName returns the field whose NXM or OXM header is called
// name ("NXM_OF_IN_PORT", "OXM_OF_PKT_REG3"), or nil.
func FieldByHeaderName(name string) *Field { return fieldsByHeaderName[name] }

// FieldByHeader returns the field with the given NXM/OXM class and field
// number (for the experimenter class, also the experimenter ID), or nil.
// Every header a field has in any version is found.
func FieldByHeader(class uint16, field uint8, experimenter uint32) *Field {
	if class != ClassExperimenter {
		experimenter = 0
	}
	return fieldsByHeader[headerKey{class, field, experimenter}]
}

// FieldByNXM is FieldByHeader for an NXM header's class and field.
func FieldByNXM(class uint16, field uint8) *Field { return FieldByHeader(class, field, 0) }

// FieldByOXM is FieldByHeader.
func FieldByOXM(class uint16, field uint8, experimenter uint32) *Field {
	return FieldByHeader(class, field, experimenter)
}

// HeaderFor returns the header to encode the field with in OpenFlow
// version (0: prefer the NXM header), or nil if it has none. As Open
// vSwitch's nxm_field_by_mf_id: of the field's headers (NXM first, then
// the OXM ones in order) the last whose version is at most the given
// one, else the first. Extension headers (NXM, Nicira and Ericsson OXM)
// have version 0.
func (fd *Field) HeaderFor(version uint8) *Header {
	var h *Header
	if fd.NXM != nil {
		h = fd.NXM
	}
	for i := range fd.OXM {
		if h == nil || version >= fd.OXM[i].Version {
			h = &fd.OXM[i]
		}
	}
	return h
}

// HeaderName is the name Open vSwitch prints for the field in subfield
// syntax ("NXM_NX_REG0", "OXM_OF_PKT_REG1"), or the field name if it has
// no header.
func (fd *Field) HeaderName() string {
	if h := fd.HeaderFor(0); h != nil {
		return h.Name
	}
	return fd.Name
}

type headerKey struct {
	class        uint16
	field        uint8
	experimenter uint32
}

var (
	fieldsByName   = map[string]*Field{}
	fieldsByHeader = map[headerKey]*Field{}

	fieldsByHeaderName = map[string]*Field{}
)

func init() {
	for i := range fieldTable {
		fd := &fieldTable[i]
		if fd.ID != FieldID(i) {
			panic("mf: field table out of order at " + fd.Name)
		}
		fd.allOnes = fd.computeAllOnes()
		fieldsByName[fd.Name] = fd
		if fd.ExtraName != "" {
			fieldsByName[fd.ExtraName] = fd
		}
		if fd.NXM != nil {
			fieldsByHeader[headerKey{fd.NXM.Class, fd.NXM.Field, 0}] = fd
			fieldsByHeaderName[fd.NXM.Name] = fd
		}
		for _, h := range fd.OXM {
			fieldsByHeader[headerKey{h.Class, h.Field, h.Experimenter}] = fd
			fieldsByHeaderName[h.Name] = fd
		}
	}
}

// IsValueValid reports whether v is a value the field can take
// (mf_is_value_valid): codecs answer OFPBMC_BAD_VALUE (matches) or
// OFPBAC_BAD_SET_ARGUMENT (set_field) otherwise.
func (fd *Field) IsValueValid(v Value) bool {
	switch fd.ID {
	case InPortOXM, ActsetOutput:
		_, ok := PortFromOFP11(uint32(v.Uint(4)))
		return ok
	case IPDSCP:
		return v[0]&^0xfc == 0
	case IPDSCPShifted:
		return v[0]&^0x3f == 0
	case IPECN, IPFrag:
		return v[0]&^0x03 == 0
	case TCPFlags:
		return v.Uint(2)&^0x0fff == 0
	case ARPOp:
		// Open vSwitch keeps the ARP opcode in an 8-bit field.
		return v[0] == 0
	case DLVLAN:
		return v.Uint(2)&(vlanCFI|vlanPCPMask) == 0
	case VLANVID:
		return v.Uint(2)&vlanPCPMask == 0
	case DLVLANPCP, VLANPCP:
		return v[0]&^0x07 == 0
	case IPv6Label:
		return v.Uint(4)&^0xfffff == 0
	case TunFlags:
		return v.Uint(2)&^1 == 0
	case CTState:
		return v.Uint(4)&^0xff == 0
	case PacketType:
		return v.Uint(4) == 0
	}
	return true
}

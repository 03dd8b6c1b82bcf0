package ofp

import (
	"encoding/binary"

	"gvs/ofproto/mf"
	"gvs/ofproto/ofpact"
)

// OXMHeader is fd's header as table features list it for version (the
// 64-bit form TableFeatureProps uses: the 4-byte header in the high half,
// the experimenter id in the low half for experimenter fields), with the
// has-mask bit and doubled length when masked. ok is false if fd has no
// header in version.
func OXMHeader(fd *mf.Field, version uint8, masked bool) (h uint64, ok bool) {
	n := fd.Bytes
	if fd.ID >= mf.TunMetadata0 && fd.ID < mf.TunMetadata0+mf.NumTunMetadata {
		n = tunMetadataMax // Open vSwitch's width of tun_metadata fields
	}
	b := mf.AppendEntryHeader(nil, fd, version, masked, n)
	switch len(b) {
	case 4:
		return uint64(binary.BigEndian.Uint32(b)) << 32, true
	case 8:
		return binary.BigEndian.Uint64(b), true
	}
	return 0, false
}

// tunMetadataMax is the largest tun_metadata value, in bytes (Geneve
// options of up to 124 bytes): the length Open vSwitch's headers carry.
const tunMetadataMax = 124

// Instruction bitmaps Open vSwitch advertises in table features: every
// instruction of the version (1.5 dropped the meter instruction).
const (
	tableInstructions13 uint32 = 0x7e
	tableInstructions15 uint32 = 0x3e
)

// DefaultTableFeatures describes table id of a switch with nTables
// tables the way Open vSwitch's ofproto reports its tables (1.3+): every
// instruction, goto to any later table, the standard actions among those
// gvs decodes (ofpact.AllKinds, as OVS's bitmap), and every field
// gvs's registry (ofproto/mf) has a header for in version: matchable
// (masked where maskable), wildcardable, and settable where writable.
func DefaultTableFeatures(version uint8, id uint8, nTables int, maxEntries uint32) TableFeatures {
	instr := tableInstructions13
	if version >= Version15 {
		instr = tableInstructions15
	}
	var next []uint8
	for t := int(id) + 1; t < nTables; t++ {
		next = append(next, uint8(t))
	}
	var match, wild, set []uint64
	for _, fd := range fieldsInOVSOrder() {
		h, ok := OXMHeader(fd, version, fd.Maskable)
		if !ok {
			continue
		}
		match = append(match, h)
		plain, _ := OXMHeader(fd, version, false)
		wild = append(wild, plain)
		if fd.Writable {
			set = append(set, plain)
		}
	}
	tableActions := ofpact.AllKinds.ToOpenFlow(version)
	inst := TableInstructionFeatures{
		Instructions: instr,
		Next:         next,
		Write:        TableActionFeatures{Actions: tableActions, SetFields: set},
		Apply:        TableActionFeatures{Actions: tableActions, SetFields: set},
	}
	return TableFeatures{
		TableID:       id,
		MetadataMatch: ^uint64(0),
		MetadataWrite: ^uint64(0),
		MaxEntries:    maxEntries,
		Props:         &TableFeatureProps{Nonmiss: inst, Miss: inst, Match: match, Wildcards: wild},
	}
}

// fieldsInOVSOrder is mf's registry in Open vSwitch's meta-flow order
// (enum mf_field_id), which table features follow: the same as mf's
// except that packet_type comes right after recirc_id.
func fieldsInOVSOrder() []*mf.Field {
	fields := mf.Fields()
	out := make([]*mf.Field, 0, len(fields))
	pt := mf.FieldByID(mf.PacketType)
	for i := range fields {
		fd := &fields[i]
		if fd == pt {
			continue
		}
		out = append(out, fd)
		if fd.ID == mf.RecircID && pt != nil {
			out = append(out, pt)
		}
	}
	return out
}

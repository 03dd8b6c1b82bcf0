package ofpact

import (
	"encoding/binary"
	"net/netip"

	"gvs/ofproto/mf"
	"gvs/ofproto/ofperr"
)

var be = binary.BigEndian

// PullActions decodes the OpenFlow actions in b (all of it: an action list
// as in a packet-out or an apply-actions instruction) for OpenFlow
// version. Errors are Open vSwitch's (ofperr.OFPBAC_*, ...) for the same
// input. Like OVS's ofpacts_pull_openflow_actions it accepts the meter
// action/instruction but no other instruction.
func PullActions(b []byte, version uint8) ([]Action, error) {
	if len(b)%actionAlign != 0 {
		return nil, ofperr.OFPBRC_BAD_LEN
	}
	acts, err := decodeActions(b, version, 0)
	if err != nil {
		return nil, err
	}
	if err := verify(acts, version, instApplyActions|instMeter, KindInvalid); err != nil {
		return nil, err
	}
	return acts, nil
}

// pullNested decodes the actions nested in clone, ct or write_actions.
func pullNested(b []byte, version uint8, depth int, outer Kind) ([]Action, error) {
	if len(b)%actionAlign != 0 {
		return nil, ofperr.OFPBRC_BAD_LEN
	}
	acts, err := decodeActions(b, version, depth)
	if err != nil {
		return nil, err
	}
	if err := verify(acts, version, instApplyActions, outer); err != nil {
		return nil, err
	}
	return acts, nil
}

func decodeActions(b []byte, version uint8, depth int) ([]Action, error) {
	if depth > maxNestedDepth {
		return nil, ofperr.OFPBAC_BAD_ARGUMENT
	}
	var acts []Action
	for len(b) > 0 {
		w, a, arg, err := pullRaw(b, version)
		if err != nil {
			return nil, err
		}
		acts, err = decodeOne(acts, w.id, a, arg, version, depth)
		if err != nil {
			return nil, err
		}
		b = b[len(a):]
	}
	return acts, nil
}

func decodeSubfieldOfsNBits(ofsNBits uint16, header uint32) (mf.Subfield, error) {
	f, err := fieldByNXMHeader(header)
	if err != nil {
		return mf.Subfield{}, err
	}
	return mf.Subfield{Field: f, Ofs: int(ofsNBits >> 6), NBits: int(ofsNBits&63) + 1}, nil
}

func encodeOfsNBits(sf mf.Subfield) uint16 { return uint16(sf.Ofs<<6 | (sf.NBits - 1)) }

// checkSubfield is OVS's mf_check_src/mf_check_dst (m nil: no
// prerequisite check).
func checkSubfield(sf mf.Subfield, m *mf.Match, dst bool) error {
	switch {
	case sf.Field == nil:
		return ofperr.OFPBAC_BAD_SET_TYPE
	case sf.NBits == 0, sf.Ofs >= fieldBits(sf.Field), sf.Ofs+sf.NBits > fieldBits(sf.Field):
		return ofperr.OFPBAC_BAD_SET_LEN
	case m != nil && !prereqsOK(sf.Field, m):
		return ofperr.OFPBAC_MATCH_INCONSISTENT
	case dst && !fieldWritable(sf.Field):
		return ofperr.OFPBAC_BAD_SET_ARGUMENT
	}
	return nil
}

func validHashFields(f uint16) bool { return f <= HashSymmetricL3 }

func decodeOne(acts []Action, id wireID, a []byte, arg uint64, version uint8, depth int) ([]Action, error) {
	add := func(x Action) ([]Action, error) { return append(acts, x), nil }
	switch id {
	case wOF10Output:
		o := &Output{Port: uint32(be.Uint16(a[4:])), MaxLen: be.Uint16(a[6:])}
		acts = append(acts, o)
		return acts, checkOutputPort(o.Port, ofppMax)
	case wOF11Output:
		p, err := portFromOF11(be.Uint32(a[4:]))
		o := &Output{Port: p, MaxLen: be.Uint16(a[8:])}
		acts = append(acts, o)
		if err != nil {
			return acts, err
		}
		return acts, checkOutputPort(o.Port, ofppMax)
	case wOF10SetVLANVID, wOF11SetVLANVID:
		if arg&^0xfff != 0 {
			return nil, ofperr.OFPBAC_BAD_ARGUMENT
		}
		return add(&SetVLANVID{VID: uint16(arg), PushIfNeeded: id == wOF10SetVLANVID})
	case wOF10SetVLANPCP, wOF11SetVLANPCP:
		if arg&^7 != 0 {
			return nil, ofperr.OFPBAC_BAD_ARGUMENT
		}
		return add(&SetVLANPCP{PCP: uint8(arg), PushIfNeeded: id == wOF10SetVLANPCP})
	case wOF11PushVLAN:
		if arg != 0x8100 && arg != 0x88a8 {
			return nil, ofperr.OFPBAC_BAD_ARGUMENT
		}
		return add(&PushVLAN{EtherType: uint16(arg)})
	case wOF10StripVLAN:
		return add(&StripVLAN{Raw: RawOF10StripVLAN})
	case wOF11PopVLAN:
		return add(&StripVLAN{Raw: RawOF11PopVLAN})
	case wSetDLSrc:
		x := &SetEthSrc{}
		copy(x.MAC[:], a[4:10])
		return add(x)
	case wSetDLDst:
		x := &SetEthDst{}
		copy(x.MAC[:], a[4:10])
		return add(x)
	case wSetNWSrc:
		x := &SetIPv4Src{}
		be.PutUint32(x.Addr[:], uint32(arg))
		return add(x)
	case wSetNWDst:
		x := &SetIPv4Dst{}
		be.PutUint32(x.Addr[:], uint32(arg))
		return add(x)
	case wSetNWTOS:
		if arg&^0xfc != 0 {
			return nil, ofperr.OFPBAC_BAD_ARGUMENT
		}
		return add(&SetIPDSCP{DSCP: uint8(arg)})
	case wOF11SetNWECN:
		if arg&^3 != 0 {
			return nil, ofperr.OFPBAC_BAD_ARGUMENT
		}
		return add(&SetIPECN{ECN: uint8(arg)})
	case wOF11SetNWTTL:
		return add(&SetIPTTL{TTL: uint8(arg)})
	case wSetTPSrc:
		return add(&SetL4SrcPort{Port: uint16(arg)})
	case wSetTPDst:
		return add(&SetL4DstPort{Port: uint16(arg)})
	case wOF10Enqueue:
		x := &Enqueue{Port: uint32(be.Uint16(a[4:])), Queue: be.Uint32(a[12:])}
		if x.Port >= ofppMax && x.Port != mf.PortInPort && x.Port != mf.PortLocal {
			return nil, ofperr.OFPBAC_BAD_OUT_PORT
		}
		return add(x)
	case wSetMPLSLabel:
		return add(&SetMPLSLabel{Label: uint32(arg)})
	case wSetMPLSTC:
		return add(&SetMPLSTC{TC: uint8(arg)})
	case wSetMPLSTTL:
		return add(&SetMPLSTTL{TTL: uint8(arg)})
	case wDecMPLSTTL:
		return add(&DecMPLSTTL{})
	case wPushMPLS:
		if arg != 0x8847 && arg != 0x8848 {
			return nil, ofperr.OFPBAC_BAD_ARGUMENT
		}
		return add(&PushMPLS{EtherType: uint16(arg)})
	case wPopMPLS:
		return add(&PopMPLS{EtherType: uint16(arg)})
	case wSetQueue:
		return add(&SetQueue{QueueID: uint32(arg)})
	case wGroup:
		return add(&Group{ID: uint32(arg)})
	case wDecNWTTL:
		return add(&DecTTL{CntIDs: []uint16{0}})
	case wNXDecTTLCntIDs:
		n := int(be.Uint16(a[10:]))
		if !isAllZero(a[12:16]) {
			return nil, ofperr.NXBRC_MUST_BE_ZERO
		}
		if len(a)-16 < 2*n {
			return nil, ofperr.OFPBAC_BAD_LEN
		}
		x := &DecTTL{CntIDs: make([]uint16, n), Raw: RawNXDecTTLCntIDs}
		for i := range x.CntIDs {
			x.CntIDs[i] = be.Uint16(a[16+2*i:])
		}
		return add(x)
	case wOF12SetField, wOF15SetField:
		return decodeSetField(acts, a, id == wOF15SetField)
	case wNXRegLoad:
		dst, err := decodeSubfieldOfsNBits(be.Uint16(a[10:]), be.Uint32(a[12:]))
		if err != nil {
			return nil, err
		}
		if err := checkSubfield(dst, nil, true); err != nil {
			return nil, err
		}
		v := be.Uint64(a[16:])
		if dst.NBits < 64 && v>>uint(dst.NBits) != 0 {
			return nil, ofperr.OFPBAC_BAD_ARGUMENT
		}
		sf := &SetField{Field: dst.Field, Raw: RawNXRegLoad}
		n := fieldBytes(dst.Field)
		bitwisePut(v, sf.Value[:n], dst.Ofs, dst.NBits)
		bitwisePut(^uint64(0), sf.Mask[:n], dst.Ofs, dst.NBits)
		return add(sf)
	case wNXRegLoad2:
		f, v, m, n, err := pullEntry(a[nxHeaderLen:], true)
		if err != nil {
			return nil, err
		}
		if !isAllZero(a[nxHeaderLen+n:]) || !fieldWritable(f) {
			return nil, ofperr.OFPBAC_BAD_SET_ARGUMENT
		}
		return add(&SetField{Field: f, Value: v, Mask: m, Raw: RawNXRegLoad2})
	case wOF15CopyField:
		return decodeCopyField(acts, a, be.Uint16(a[4:]), be.Uint16(a[6:]), be.Uint16(a[8:]), 12, RawOF15CopyField)
	case wONF13CopyField:
		return decodeCopyField(acts, a, be.Uint16(a[12:]), be.Uint16(a[14:]), be.Uint16(a[16:]), 20, RawONFCopyField)
	case wNXRegMove:
		return decodeCopyField(acts, a, be.Uint16(a[10:]), be.Uint16(a[12:]), be.Uint16(a[14:]), 16, RawNXRegMove)
	case wOF15Meter:
		return add(&Meter{ID: uint32(arg)})
	case wNXResubmit:
		return add(&Resubmit{InPort: uint32(arg), TableID: TableInPort, Raw: RawNXResubmit})
	case wNXResubmitTable, wNXResubmitTableCT:
		if !isAllZero(a[13:16]) {
			return nil, ofperr.OFPBAC_BAD_ARGUMENT
		}
		x := &Resubmit{InPort: uint32(be.Uint16(a[10:])), TableID: a[12], Raw: RawNXResubmitTable}
		if id == wNXResubmitTableCT {
			x.WithCTOrig, x.Raw = true, RawNXResubmitTableCT
		}
		return add(x)
	case wNXSetTunnel:
		return add(&SetTunnel{TunID: arg, Raw: RawNXSetTunnel})
	case wNXSetTunnel64:
		return add(&SetTunnel{TunID: arg, Raw: RawNXSetTunnel64})
	case wNXPopQueue:
		return add(&PopQueue{})
	case wNXNote:
		return add(&Note{Data: append([]byte(nil), a[nxHeaderLen:]...)})
	case wNXMultipath:
		return decodeMultipath(acts, a)
	case wNXBundle, wNXBundleLoad:
		return decodeBundle(acts, a, id == wNXBundleLoad)
	case wNXOutputReg:
		if !isAllZero(a[18:24]) {
			return nil, ofperr.OFPBAC_BAD_ARGUMENT
		}
		src, err := decodeSubfieldOfsNBits(be.Uint16(a[10:]), be.Uint32(a[12:]))
		if err != nil {
			return nil, err
		}
		x := &OutputReg{Src: src, MaxLen: be.Uint16(a[16:]), Raw: RawNXOutputReg}
		return append(acts, x), checkSubfield(src, nil, false)
	case wNXOutputReg2:
		ofsNBits := be.Uint16(a[10:])
		f, n, err := pullHeader(a[14:])
		if err != nil {
			return nil, err
		}
		if !isAllZero(a[14+n:]) {
			return nil, ofperr.NXBRC_MUST_BE_ZERO
		}
		src := mf.Subfield{Field: f, Ofs: int(ofsNBits >> 6), NBits: int(ofsNBits&63) + 1}
		x := &OutputReg{Src: src, MaxLen: be.Uint16(a[12:]), Raw: RawNXOutputReg2}
		return append(acts, x), checkSubfield(src, nil, false)
	case wNXLearn, wNXLearn2:
		return decodeLearn(acts, a, id == wNXLearn2)
	case wNXExit:
		return add(&Exit{})
	case wNXFinTimeout:
		return add(&FinTimeout{IdleTimeout: be.Uint16(a[10:]), HardTimeout: be.Uint16(a[12:])})
	case wNXController:
		return add(&Controller{MaxLen: be.Uint16(a[10:]), ControllerID: be.Uint16(a[12:]), Reason: a[14], MeterID: NoMeter, Raw: RawNXController})
	case wNXController2:
		return decodeController2(acts, a)
	case wNXWriteMetadata:
		if !isAllZero(a[10:16]) {
			return nil, ofperr.NXBRC_MUST_BE_ZERO
		}
		return add(&WriteMetadata{Metadata: be.Uint64(a[16:]), Mask: be.Uint64(a[24:])})
	case wNXStackPush, wNXStackPop:
		ofs := int(be.Uint16(a[10:]))
		f, n, err := pullHeader(a[12:])
		if err != nil {
			return nil, err
		}
		rest := a[12+n:]
		nbits := int(be.Uint16(rest))
		if !isAllZero(rest[2:]) {
			return nil, ofperr.NXBRC_MUST_BE_ZERO
		}
		sf := mf.Subfield{Field: f, Ofs: ofs, NBits: nbits}
		if id == wNXStackPush {
			return append(acts, &StackPush{Field: sf}), checkSubfield(sf, nil, false)
		}
		return append(acts, &StackPop{Field: sf}), checkSubfield(sf, nil, true)
	case wNXSample:
		x := &Sample{Probability: be.Uint16(a[10:]), CollectorSetID: be.Uint32(a[12:]), ObsDomainID: be.Uint32(a[16:]), ObsPointID: be.Uint32(a[20:]), SamplingPort: mf.PortNone, Raw: RawNXSample}
		if x.Probability == 0 {
			return nil, ofperr.OFPBAC_BAD_ARGUMENT
		}
		return add(x)
	case wNXSample2, wNXSample3:
		x := &Sample{Probability: be.Uint16(a[10:]), CollectorSetID: be.Uint32(a[12:]), ObsDomainID: be.Uint32(a[16:]), ObsPointID: be.Uint32(a[20:]), SamplingPort: uint32(be.Uint16(a[24:])), Raw: RawNXSample2}
		if id == wNXSample3 {
			if !isAllZero(a[27:32]) {
				return nil, ofperr.NXBRC_MUST_BE_ZERO
			}
			if a[26] > SampleEgress {
				return nil, ofperr.OFPBAC_BAD_ARGUMENT
			}
			x.Direction, x.Raw = a[26], RawNXSample3
		}
		if x.Probability == 0 {
			return nil, ofperr.OFPBAC_BAD_ARGUMENT
		}
		return add(x)
	case wNXConjunction:
		clause, n := a[10], a[11]
		if n < 2 || n > 64 || clause >= n {
			return nil, ofperr.NXBAC_BAD_CONJUNCTION
		}
		return add(&Conjunction{ID: be.Uint32(a[12:]), Clause: clause, NClauses: n})
	case wNXCT:
		return decodeCT(acts, a, version, depth)
	case wNXNAT:
		return decodeNAT(acts, a)
	case wNXOutputTrunc:
		x := &OutputTrunc{Port: uint32(be.Uint16(a[10:])), MaxLen: be.Uint32(a[12:])}
		if x.MaxLen < 14 {
			return nil, ofperr.OFPBAC_BAD_ARGUMENT
		}
		return add(x)
	case wNXClone:
		nested, err := pullNested(a[extHeaderLen:], version, depth+1, KindClone)
		if err != nil {
			return nil, err
		}
		return add(&Clone{Actions: nested})
	case wNXCTClear:
		return add(&CTClear{})
	case wNXDecNSHTTL:
		return add(&DecNSHTTL{})
	case wNXCheckPktLarger:
		f, n, err := pullHeader(a[14:])
		if err != nil {
			return nil, err
		}
		if !isAllZero(a[14+n:]) {
			return nil, ofperr.NXBRC_MUST_BE_ZERO
		}
		x := &CheckPktLarger{Len: be.Uint16(a[10:]), Dst: mf.Subfield{Field: f, Ofs: int(be.Uint16(a[12:])), NBits: 1}}
		return append(acts, x), checkSubfield(x.Dst, nil, true)
	case wNXEncap:
		return decodeEncap(acts, a)
	case wNXDecap:
		if len(a) > 16 {
			return nil, ofperr.NXBAC_UNKNOWN_ED_PROP
		}
		return add(&Decap{PacketType: be.Uint32(a[12:])})
	case wNXDeleteField:
		f, _, err := pullHeader(a[nxHeaderLen:])
		if err != nil {
			return nil, err
		}
		return add(&DeleteField{Field: f})
	case wNXDebugSlow, wNXDebugRecirc:
		// OVS accepts these only in ovs-vswitchd --enable-dummy; gvs
		// never does (they exist to test OVS's datapath interface).
		return nil, ofperr.OFPBAC_BAD_VENDOR_TYPE
	}
	return nil, ofperr.OFPBAC_BAD_TYPE
}

// OXM headers of the MPLS fields, which gvs's registry lacks: set_field
// of them decodes into SetMPLSLabel/SetMPLSTC.
const (
	oxmMPLSLabel uint32 = 0x80004404
	oxmMPLSTC    uint32 = 0x80004601
)

func decodeSetField(acts []Action, a []byte, mayMask bool) ([]Action, error) {
	if len(a) >= 8 {
		switch h := be.Uint32(a[4:]); h {
		case oxmMPLSLabel, oxmMPLSTC:
			n := 4
			if h == oxmMPLSTC {
				n = 1
			}
			if len(a) < 8+n || !isAllZero(a[8+n:]) {
				return nil, ofperr.OFPBAC_BAD_SET_ARGUMENT
			}
			if h == oxmMPLSLabel {
				label := be.Uint32(a[8:])
				if label&^0xfffff != 0 {
					return nil, ofperr.OFPBAC_BAD_SET_ARGUMENT
				}
				return append(acts, &SetMPLSLabel{Label: label, Raw: RawOFSetField}), nil
			}
			if a[8]&^7 != 0 {
				return nil, ofperr.OFPBAC_BAD_SET_ARGUMENT
			}
			return append(acts, &SetMPLSTC{TC: a[8], Raw: RawOFSetField}), nil
		}
	}
	f, v, m, n, err := pullEntry(a[4:], mayMask)
	if err != nil {
		if err == ofperr.OFPBMC_BAD_MASK {
			return nil, ofperr.OFPBAC_BAD_SET_MASK
		}
		return nil, err
	}
	if !isAllZero(a[4+n:]) {
		return nil, ofperr.OFPBAC_BAD_SET_ARGUMENT
	}
	if fieldIs(f, mf.InPortOXM) || !fieldWritable(f) {
		return nil, ofperr.OFPBAC_BAD_SET_ARGUMENT
	}
	if !valueValid(f, &v) || fieldIs(f, mf.VLANVID) && (m[0]&0x10 == 0 || v[0]&0x10 == 0) {
		return nil, ofperr.OFPBAC_BAD_SET_ARGUMENT
	}
	return append(acts, &SetField{Field: f, Value: v, Mask: m, Raw: RawOFSetField}), nil
}

func decodeCopyField(acts []Action, a []byte, nBits, srcOfs, dstOfs uint16, oxmOfs int, raw Raw) ([]Action, error) {
	src, n1, err := pullHeader(a[oxmOfs:])
	if err != nil {
		return nil, err
	}
	dst, n2, err := pullHeader(a[oxmOfs+n1:])
	if err != nil {
		return nil, err
	}
	if !isAllZero(a[oxmOfs+n1+n2:]) {
		return nil, ofperr.NXBRC_MUST_BE_ZERO
	}
	mv := &RegMove{
		Src: mf.Subfield{Field: src, Ofs: int(srcOfs), NBits: int(nBits)},
		Dst: mf.Subfield{Field: dst, Ofs: int(dstOfs), NBits: int(nBits)},
		Raw: raw,
	}
	acts = append(acts, mv)
	if err := checkSubfield(mv.Src, nil, false); err != nil {
		return acts, err
	}
	return acts, checkSubfield(mv.Dst, nil, true)
}

func decodeMultipath(acts []Action, a []byte) ([]Action, error) {
	mp := &Multipath{
		Fields:    be.Uint16(a[10:]),
		Basis:     be.Uint16(a[12:]),
		Algorithm: be.Uint16(a[16:]),
		MaxLink:   be.Uint16(a[18:]),
		Arg:       be.Uint32(a[20:]),
	}
	dst, err := decodeSubfieldOfsNBits(be.Uint16(a[26:]), be.Uint32(a[28:]))
	if err != nil {
		return nil, err
	}
	mp.Dst = dst
	nLinks := uint32(mp.MaxLink) + 1
	minBits := 0
	for (uint32(1) << uint(minBits)) < nLinks {
		minBits++
	}
	switch {
	case !validHashFields(mp.Fields), mp.Algorithm > MultipathIterHash, dst.NBits < minBits:
		return nil, ofperr.OFPBAC_BAD_ARGUMENT
	}
	acts = append(acts, mp)
	return acts, checkSubfield(dst, nil, true)
}

func decodeBundle(acts []Action, a []byte, load bool) ([]Action, error) {
	bd := &Bundle{
		Algorithm: be.Uint16(a[10:]),
		Fields:    be.Uint16(a[12:]),
		Basis:     be.Uint16(a[14:]),
	}
	memberType := be.Uint32(a[16:])
	n := int(be.Uint16(a[20:]))
	ofsNBits := be.Uint16(a[22:])
	dstHdr := be.Uint32(a[24:])
	var err error
	if !validHashFields(bd.Fields) || n > 2048 || bd.Algorithm > BundleHRW ||
		memberType != nxmHeader(fieldByID(mf.InPort)) || !isAllZero(a[28:32]) {
		err = ofperr.OFPBAC_BAD_ARGUMENT
	}
	if load {
		// As OVS, the destination's lookup result replaces the errors
		// found so far.
		dst, derr := decodeSubfieldOfsNBits(ofsNBits, dstHdr)
		if derr != nil {
			return nil, derr
		}
		bd.Dst, err = dst, nil
		if dst.NBits < 16 {
			err = ofperr.OFPBAC_BAD_ARGUMENT
		}
	} else if ofsNBits != 0 || dstHdr != 0 {
		err = ofperr.OFPBAC_BAD_ARGUMENT
	}
	if len(a)-32 < 2*n {
		return nil, ofperr.OFPBAC_BAD_LEN
	}
	bd.Members = make([]uint32, n)
	for i := range bd.Members {
		bd.Members[i] = uint32(be.Uint16(a[32+2*i:]))
	}
	if err != nil {
		return nil, err
	}
	acts = append(acts, bd)
	return acts, checkBundle(bd, ofppMax, nil)
}

func decodeController2(acts []Action, a []byte) ([]Action, error) {
	if !isAllZero(a[10:16]) {
		return nil, ofperr.NXBRC_MUST_BE_ZERO
	}
	c := &Controller{MaxLen: 0xffff, Reason: ReasonAction, MeterID: NoMeter, Raw: RawNXController2}
	p := a[16:]
	for len(p) > 0 {
		typ, payload, n, err := pullProp(p)
		if err != nil {
			return nil, err
		}
		switch typ {
		case 0: // NXAC2PT_MAX_LEN (OVS accepts any length of at least 2)
			if len(payload) < 2 {
				return nil, ofperr.OFPBPC_BAD_LEN
			}
			c.MaxLen = be.Uint16(payload)
		case 1: // NXAC2PT_CONTROLLER_ID
			if len(payload) < 2 {
				return nil, ofperr.OFPBPC_BAD_LEN
			}
			c.ControllerID = be.Uint16(payload)
		case 2: // NXAC2PT_REASON
			if len(payload) < 1 {
				return nil, ofperr.OFPBPC_BAD_LEN
			}
			c.Reason = payload[0]
		case 3: // NXAC2PT_USERDATA
			c.Userdata = append([]byte(nil), payload...)
		case 4: // NXAC2PT_PAUSE
			c.Pause = true
		case 5: // NXAC2PT_METER_ID
			if len(payload) != 4 {
				return nil, ofperr.OFPBPC_BAD_LEN
			}
			c.MeterID = be.Uint32(payload)
		case 0xffff:
			return nil, ofperr.OFPBPC_BAD_EXP_TYPE
		default:
			return nil, ofperr.OFPBPC_BAD_TYPE
		}
		p = p[n:]
	}
	return append(acts, c), nil
}

// pullProp reads one OpenFlow property (type, length, payload padded to 8
// bytes): OVS's ofpprop_pull.
func pullProp(p []byte) (typ uint16, payload []byte, n int, err error) {
	if len(p) < 4 {
		return 0, nil, 0, ofperr.OFPBPC_BAD_LEN
	}
	typ = be.Uint16(p)
	l := int(be.Uint16(p[2:]))
	if l < 4 || l > len(p) {
		return 0, nil, 0, ofperr.OFPBPC_BAD_LEN
	}
	n = roundUp(l, 8)
	if n > len(p) {
		return 0, nil, 0, ofperr.OFPBPC_BAD_LEN
	}
	if typ == 0xffff { // experimenter property: no action knows any
		if l < 12 {
			return 0, nil, 0, ofperr.OFPBPC_BAD_LEN
		}
		if be.Uint32(p[4:]) == 0 {
			return 0, nil, 0, ofperr.OFPBPC_BAD_EXPERIMENTER
		}
		return typ, p[12:l], n, nil
	}
	return typ, p[4:l], n, nil
}

// appendProp appends an OpenFlow property with payload, padded to 8 bytes.
func appendProp(b []byte, typ uint16, payload []byte) []byte {
	b = be.AppendUint16(b, typ)
	b = be.AppendUint16(b, uint16(4+len(payload)))
	b = append(b, payload...)
	return append(b, make([]byte, roundUp(4+len(payload), 8)-4-len(payload))...)
}

func decodeLearn(acts []Action, a []byte, learn2 bool) ([]Action, error) {
	if learn2 && be.Uint16(a[38:]) != 0 { // OVS checks learn2's pad2 first
		return nil, ofperr.NXBAC_MUST_BE_ZERO
	}
	l := &Learn{
		IdleTimeout: be.Uint16(a[10:]),
		HardTimeout: be.Uint16(a[12:]),
		Priority:    be.Uint16(a[14:]),
		Cookie:      be.Uint64(a[16:]),
		Flags:       be.Uint16(a[24:]),
		TableID:     a[26],
		Raw:         RawNXLearn,
	}
	if a[27] != 0 { // pad
		return nil, ofperr.OFPBAC_BAD_ARGUMENT
	}
	l.FinIdleTimeout = be.Uint16(a[28:])
	l.FinHardTimeout = be.Uint16(a[30:])
	if l.TableID == 0xff {
		return nil, ofperr.OFPBAC_BAD_ARGUMENT
	}
	p := a[32:]
	if learn2 {
		l.Raw = RawNXLearn2
		if be.Uint16(a[38:]) != 0 {
			return nil, ofperr.NXBAC_MUST_BE_ZERO
		}
		l.Limit = be.Uint32(a[32:])
		if l.Flags&^(LearnSendFlowRem|LearnDeleteLearned|LearnWriteResult) != 0 {
			return nil, ofperr.OFPBAC_BAD_ARGUMENT
		}
		resultOfs := be.Uint16(a[36:])
		p = a[40:]
		if l.Flags&LearnWriteResult != 0 {
			f, n, err := pullHeader(p)
			if err != nil {
				return nil, err
			}
			if !fieldWritable(f) {
				return nil, ofperr.OFPBAC_BAD_SET_ARGUMENT
			}
			l.ResultDst = mf.Subfield{Field: f, Ofs: int(resultOfs), NBits: 1}
			p = p[n:]
		} else if resultOfs != 0 {
			return nil, ofperr.OFPBAC_BAD_ARGUMENT
		}
	} else if l.Flags&^(LearnSendFlowRem|LearnDeleteLearned) != 0 {
		return nil, ofperr.OFPBAC_BAD_ARGUMENT
	}
	for len(p) >= 2 {
		hdr := be.Uint16(p)
		if hdr == 0 {
			break
		}
		p = p[2:]
		spec := LearnSpec{
			SrcType: LearnSrc(hdr >> 13 & 1),
			DstType: LearnDst(hdr >> 11 & 3),
			NBits:   int(hdr & 0x3ff),
		}
		if spec.DstType == 3 || spec.DstType == LearnDstOutput && spec.SrcType != LearnSrcField {
			return nil, ofperr.OFPBAC_BAD_ARGUMENT
		}
		minLen := 0
		if spec.SrcType == LearnSrcField {
			minLen += 6
		} else {
			minLen += 2 * ((spec.NBits + 15) / 16)
		}
		if spec.DstType != LearnDstOutput {
			minLen += 6
		}
		if len(p) < minLen {
			return nil, ofperr.OFPBAC_BAD_LEN
		}
		if spec.SrcType == LearnSrcField {
			f, err := fieldByNXMHeader(be.Uint32(p))
			if err != nil {
				return nil, err
			}
			spec.Src = mf.Subfield{Field: f, Ofs: int(be.Uint16(p[4:])), NBits: spec.NBits}
			p = p[6:]
		} else {
			pBytes := 2 * ((spec.NBits + 15) / 16)
			immBytes := (spec.NBits + 7) / 8
			spec.Imm = append([]byte(nil), p[pBytes-immBytes:pBytes]...)
			p = p[pBytes:]
		}
		if spec.DstType != LearnDstOutput {
			f, err := fieldByNXMHeader(be.Uint32(p))
			if err != nil {
				return nil, err
			}
			spec.Dst = mf.Subfield{Field: f, Ofs: int(be.Uint16(p[4:])), NBits: spec.NBits}
			p = p[6:]
		}
		l.Specs = append(l.Specs, spec)
	}
	if !isAllZero(p) {
		return nil, ofperr.OFPBAC_BAD_ARGUMENT
	}
	return append(acts, l), nil
}

func decodeCT(acts []Action, a []byte, version uint8, depth int) ([]Action, error) {
	ct := &CT{Flags: be.Uint16(a[10:])}
	if ct.Flags&CTForce != 0 && ct.Flags&CTCommit == 0 {
		return nil, ofperr.OFPBAC_BAD_ARGUMENT
	}
	zoneSrc := be.Uint32(a[12:])
	if zoneSrc != 0 {
		zs, err := decodeSubfieldOfsNBits(be.Uint16(a[16:]), zoneSrc)
		if err != nil {
			return nil, err
		}
		if err := checkSubfield(zs, nil, false); err != nil {
			return nil, err
		}
		if zs.NBits != 16 {
			return nil, ofperr.OFPBAC_BAD_SET_LEN
		}
		ct.ZoneSrc = zs
	} else {
		ct.ZoneImm = be.Uint16(a[16:])
	}
	ct.RecircTable = a[18]
	ct.Alg = be.Uint16(a[22:])
	nested, err := pullNested(a[24:], version, depth+1, KindCT)
	if err != nil {
		return nil, err
	}
	ct.Actions = nested
	if len(nested) > 0 && ct.Flags&CTCommit == 0 {
		for _, x := range nested {
			nat, ok := x.(*NAT)
			if !ok || nat.Flags != 0 || nat.AddrMin.IsValid() {
				return nil, ofperr.OFPBAC_BAD_ARGUMENT
			}
		}
	}
	return append(acts, ct), nil
}

// NAT range_present bits.
const (
	natRangeIPv4Min  = 1 << 0
	natRangeIPv4Max  = 1 << 1
	natRangeIPv6Min  = 1 << 2
	natRangeIPv6Max  = 1 << 3
	natRangeProtoMin = 1 << 4
	natRangeProtoMax = 1 << 5
)

func decodeNAT(acts []Action, a []byte) ([]Action, error) {
	nat := &NAT{Flags: be.Uint16(a[12:])}
	present := be.Uint16(a[14:])
	opts := a[16:]
	bad := ofperr.OFPBAC_BAD_ARGUMENT
	const allFlags = NATSrc | NATDst | NATPersistent | NATProtoHash | NATProtoRandom
	if nat.Flags&^allFlags != 0 || nat.Flags&NATSrc != 0 && nat.Flags&NATDst != 0 ||
		nat.Flags&NATProtoHash != 0 && nat.Flags&NATProtoRandom != 0 {
		return nil, bad
	}
	take := func(n int) []byte {
		if len(opts) < n {
			return nil
		}
		v := opts[:n]
		opts = opts[n:]
		return v
	}
	switch {
	case present&natRangeIPv4Min != 0:
		if present&(natRangeIPv6Min|natRangeIPv6Max) != 0 {
			return nil, bad
		}
		v := take(4)
		if v == nil || isAllZero(v) {
			return nil, bad
		}
		nat.AddrMin = netip.AddrFrom4([4]byte(v))
		if present&natRangeIPv4Max != 0 {
			v := take(4)
			if v == nil {
				return nil, bad
			}
			nat.AddrMax = netip.AddrFrom4([4]byte(v))
			if nat.AddrMax.Less(nat.AddrMin) {
				return nil, bad
			}
		}
	case present&natRangeIPv4Max != 0:
		return nil, bad
	case present&natRangeIPv6Min != 0:
		v := take(16)
		if v == nil || isAllZero(v) {
			return nil, bad
		}
		nat.AddrMin = netip.AddrFrom16([16]byte(v))
		if present&natRangeIPv6Max != 0 {
			v := take(16)
			if v == nil {
				return nil, bad
			}
			nat.AddrMax = netip.AddrFrom16([16]byte(v))
			if nat.AddrMax.Less(nat.AddrMin) {
				return nil, bad
			}
		}
	case present&natRangeIPv6Max != 0:
		return nil, bad
	}
	if present&natRangeProtoMin != 0 {
		if !nat.AddrMin.IsValid() {
			return nil, bad
		}
		v := take(2)
		if v == nil || be.Uint16(v) == 0 {
			return nil, bad
		}
		nat.PortMin = be.Uint16(v)
		if present&natRangeProtoMax != 0 {
			v := take(2)
			if v == nil {
				return nil, bad
			}
			nat.PortMax = be.Uint16(v)
			if nat.PortMax < nat.PortMin {
				return nil, bad
			}
		}
	} else if present&natRangeProtoMax != 0 {
		return nil, bad
	}
	return append(acts, nat), nil
}

// bitwisePut writes the low nBits of v into the big-endian byte string dst
// at bit offset ofs (bit 0 = least significant bit of the last byte):
// OVS's bitwise_put.
func bitwisePut(v uint64, dst []byte, ofs, nBits int) {
	for i := 0; i < nBits; i++ {
		bit := ofs + i
		byteIdx := len(dst) - 1 - bit/8
		if byteIdx < 0 {
			return
		}
		if v>>uint(i)&1 != 0 {
			dst[byteIdx] |= 1 << uint(bit%8)
		} else {
			dst[byteIdx] &^= 1 << uint(bit%8)
		}
	}
}

// bitwiseGet reads nBits at bit offset ofs of the big-endian byte string
// src.
func bitwiseGet(src []byte, ofs, nBits int) uint64 {
	var v uint64
	for i := nBits - 1; i >= 0; i-- {
		bit := ofs + i
		byteIdx := len(src) - 1 - bit/8
		v <<= 1
		if byteIdx >= 0 && src[byteIdx]>>uint(bit%8)&1 != 0 {
			v |= 1
		}
	}
	return v
}

func decodeEncap(acts []Action, a []byte) ([]Action, error) {
	e := &Encap{HdrSize: be.Uint16(a[10:]), PacketType: be.Uint32(a[12:])}
	switch e.PacketType {
	case PacketTypeEthernet, PacketTypeNSH, PacketTypeMPLS, PacketTypeMPLSMC:
	default:
		return nil, ofperr.NXBAC_BAD_HEADER_TYPE
	}
	p := a[16:]
	for len(p) > 0 {
		if len(p) < 4 {
			return nil, ofperr.OFPBAC_BAD_LEN
		}
		class, typ, n := be.Uint16(p), p[2], int(p[3])
		padded := roundUp(n, 8)
		if n < 4 || padded > len(p) {
			return nil, ofperr.OFPBAC_BAD_LEN
		}
		if class != EncapPropClassNSH {
			return nil, ofperr.NXBAC_UNKNOWN_ED_PROP
		}
		switch typ {
		case EncapPropMDType:
			if n > 8 {
				return nil, ofperr.NXBAC_BAD_ED_PROP
			}
			e.Props = append(e.Props, EncapProp{Class: class, Type: typ, MDType: p[4]})
		case EncapPropTLV:
			if padded < 8 {
				return nil, ofperr.NXBAC_BAD_ED_PROP
			}
			tlvLen := int(p[7])
			if n != 8+roundUp(tlvLen, 8) {
				return nil, ofperr.NXBAC_BAD_ED_PROP
			}
			e.Props = append(e.Props, EncapProp{Class: class, Type: typ, TLVClass: be.Uint16(p[4:]), TLVType: p[6], TLVLen: p[7],
				Data: append([]byte(nil), p[8:n]...)})
		default:
			return nil, ofperr.NXBAC_UNKNOWN_ED_PROP
		}
		p = p[padded:]
	}
	return append(acts, e), nil
}

package ofpact

import (
	"gvs/ofproto/mf"
)

// AppendActions appends the OpenFlow encoding of acts for version to b,
// choosing among equivalent encodings as Open vSwitch does, so that
// actions decoded by PullActions re-encode to the same bytes.
//
// A version beyond 1.0-1.5 is treated as the nearest one.
func AppendActions(b []byte, acts []Action, version uint8) []byte {
	version = clampVersion(version)
	for _, a := range acts {
		b = appendAction(b, a, version)
	}
	return b
}

func clampVersion(v uint8) uint8 {
	return min(max(v, of10), of15)
}

// putNX appends the fixed part of a Nicira/ONF action, whose encoding does
// not depend on the version.
func putNX(b []byte, id wireID, arg uint64) ([]byte, int) {
	for i := range wireInsts {
		if wireInsts[i].id == id {
			return putRaw(b, id, wireInsts[i].minVer, arg)
		}
	}
	panic("ofpact: unknown wire action")
}

// appendSetFieldEntry appends OFPAT_SET_FIELD of f=v/m: OVS's
// set_field_to_set_field.
func appendSetFieldEntry(b []byte, version uint8, f *mf.Field, v, m *mf.Value) []byte {
	b, start := putRaw(b, wOF12SetField, of12, 0)
	b = trimTo(b, start+4)
	b = appendEntry(b, f, version, v, m)
	return padAction(b, start)
}

// appendSetFieldUint appends a whole-field set_field with an integer value
// (OVS's put_set_field).
func appendSetFieldUint(b []byte, version uint8, name string, value uint64) []byte {
	f := fieldByName(name)
	var v, m mf.Value
	n := fieldBytes(f)
	for i := n - 1; i >= 0; i-- {
		v[i] = byte(value)
		value >>= 8
		m[i] = 0xff
	}
	return appendSetFieldEntry(b, version, f, &v, &m)
}

func appendSetFieldBytes(b []byte, version uint8, name string, value []byte) []byte {
	f := fieldByName(name)
	var v, m mf.Value
	copy(v[:], value)
	for i := 0; i < fieldBytes(f); i++ {
		m[i] = 0xff
	}
	return appendSetFieldEntry(b, version, f, &v, &m)
}

// appendRegLoad appends NXAST_REG_LOAD of value into dst (≤ 64 bits).
func appendRegLoad(b []byte, dst mf.Subfield, value uint64) []byte {
	b, start := putNX(b, wNXRegLoad, 0)
	a := b[start:]
	be.PutUint16(a[10:], encodeOfsNBits(dst))
	be.PutUint32(a[12:], nxmHeader(dst.Field))
	be.PutUint64(a[16:], value)
	return b
}

// loadSegments splits a set_field's mask into the runs of one bits (at
// most 64 long) that reg_load can express: OVS's next_load_segment.
func loadSegments(sf *SetField, fn func(dst mf.Subfield, value uint64)) {
	n := fieldBytes(sf.Field)
	bits := fieldBits(sf.Field)
	mask, val := sf.Mask[:n], sf.Value[:n]
	ofs := 0
	for ofs < bits {
		for ofs < bits && bitwiseGet(mask, ofs, 1) == 0 {
			ofs++
		}
		if ofs >= bits {
			return
		}
		end := ofs + 1
		for end < bits && end < ofs+64 && bitwiseGet(mask, end, 1) == 1 {
			end++
		}
		dst := mf.Subfield{Field: sf.Field, Ofs: ofs, NBits: end - ofs}
		fn(dst, bitwiseGet(val, ofs, end-ofs))
		ofs = end
	}
}

// setFieldToNX encodes a set_field as reg_load(s) or reg_load2: OVS's
// set_field_to_nxast.
func setFieldToNX(b []byte, sf *SetField) []byte {
	if sf.Raw == RawNXRegLoad2 || !hasNXMHeader(sf.Field) || isVariableLength(sf.Field) {
		b, start := putNX(b, wNXRegLoad2, 0)
		b = trimTo(b, start+nxHeaderLen)
		b = appendEntry(b, sf.Field, 0, &sf.Value, &sf.Mask)
		return padAction(b, start)
	}
	loadSegments(sf, func(dst mf.Subfield, v uint64) { b = appendRegLoad(b, dst, v) })
	return b
}

// setFieldToLegacy encodes a set_field for OpenFlow 1.0/1.1: OVS's
// set_field_to_legacy_openflow.
func setFieldToLegacy(b []byte, sf *SetField, version uint8) []byte {
	v := sf.Value[:]
	switch sf.Field.ID {
	case mf.VLANTCI:
		tci := be.Uint16(v)
		vid, pcp := uint64(tci&0xfff), uint64(tci>>13)
		if version == of10 {
			if tci&0x1000 != 0 {
				b, _ = putRaw(b, wOF10SetVLANVID, version, vid)
				b, _ = putRaw(b, wOF10SetVLANPCP, version, pcp)
			} else {
				b, _ = putRaw(b, wOF10StripVLAN, version, 0)
			}
			return b
		}
		if tci&0x1000 != 0 {
			if !sf.FlowHasVLAN {
				b, _ = putRaw(b, wOF11PushVLAN, version, 0x8100)
			}
			b, _ = putRaw(b, wOF11SetVLANVID, version, vid)
			b, _ = putRaw(b, wOF11SetVLANPCP, version, pcp)
		} else {
			b, _ = putRaw(b, wOF11PopVLAN, version, 0)
		}
		return b
	case mf.VLANVID:
		vid := uint64(be.Uint16(v) & 0xfff)
		if version == of10 {
			b, _ = putRaw(b, wOF10SetVLANVID, version, vid)
		} else {
			b, _ = putRaw(b, wOF11SetVLANVID, version, vid)
		}
		return b
	case mf.VLANPCP:
		if version == of10 {
			b, _ = putRaw(b, wOF10SetVLANPCP, version, uint64(v[0]))
		} else {
			b, _ = putRaw(b, wOF11SetVLANPCP, version, uint64(v[0]))
		}
		return b
	case mf.EthSrc, mf.EthDst:
		id := wSetDLSrc
		if sf.Field.ID == mf.EthDst {
			id = wSetDLDst
		}
		b, start := putRaw(b, id, version, 0)
		copy(b[start+4:], v[:6])
		return b
	case mf.IPv4Src:
		b, _ = putRaw(b, wSetNWSrc, version, uint64(be.Uint32(v)))
		return b
	case mf.IPv4Dst:
		b, _ = putRaw(b, wSetNWDst, version, uint64(be.Uint32(v)))
		return b
	case mf.IPDSCP:
		b, _ = putRaw(b, wSetNWTOS, version, uint64(v[0]))
		return b
	case mf.IPDSCPShifted:
		b, _ = putRaw(b, wSetNWTOS, version, uint64(v[0]<<2))
		return b
	case mf.IPECN:
		return appendAction(b, &SetIPECN{ECN: v[0]}, version)
	case mf.TCPSrc, mf.UDPSrc:
		b, _ = putRaw(b, wSetTPSrc, version, uint64(be.Uint16(v)))
		return b
	case mf.TCPDst, mf.UDPDst:
		b, _ = putRaw(b, wSetTPDst, version, uint64(be.Uint16(v)))
		return b
	}
	return setFieldToNX(b, sf)
}

func appendSetField(b []byte, sf *SetField, version uint8) []byte {
	switch {
	case version >= of15:
		return appendSetFieldEntry(b, version, sf.Field, &sf.Value, &sf.Mask)
	case sf.Raw == RawNXRegLoad || sf.Raw == RawNXRegLoad2:
		return setFieldToNX(b, sf)
	case version < of12:
		return setFieldToLegacy(b, sf, version)
	case isAllOnes(sf.Mask[:fieldBytes(sf.Field)]):
		return appendSetFieldEntry(b, version, sf.Field, &sf.Value, &sf.Mask)
	}
	return setFieldToNX(b, sf)
}

func appendAction(b []byte, a Action, version uint8) []byte {
	var start int
	switch a := a.(type) {
	case *Output:
		if version == of10 {
			b, start = putRaw(b, wOF10Output, version, 0)
			be.PutUint16(b[start+4:], uint16(a.Port))
			be.PutUint16(b[start+6:], a.MaxLen)
		} else {
			b, start = putRaw(b, wOF11Output, version, 0)
			be.PutUint32(b[start+4:], portToOF11(a.Port))
			be.PutUint16(b[start+8:], a.MaxLen)
		}
	case *Group:
		b, _ = putRaw(b, wGroup, version, uint64(a.ID))
	case *Controller:
		b = appendController(b, a)
	case *Enqueue:
		if version == of10 {
			b, start = putRaw(b, wOF10Enqueue, version, 0)
			be.PutUint16(b[start+4:], uint16(a.Port))
			be.PutUint32(b[start+12:], a.Queue)
		} else {
			b, _ = putRaw(b, wSetQueue, version, uint64(a.Queue))
			b, start = putRaw(b, wOF11Output, version, 0)
			be.PutUint32(b[start+4:], portToOF11(a.Port))
			be.PutUint16(b[start+8:], 0xffff)
			b, _ = putNX(b, wNXPopQueue, 0)
		}
	case *OutputReg:
		if a.Raw == RawNXOutputReg2 || !hasNXMHeader(a.Src.Field) {
			b, start = putNX(b, wNXOutputReg2, 0)
			be.PutUint16(b[start+10:], encodeOfsNBits(a.Src))
			be.PutUint16(b[start+12:], a.MaxLen)
			end := len(b)
			b = appendHeader(trimTo(b, start+14), a.Src.Field, 0)
			if len(b) < end {
				b = append(b, make([]byte, end-len(b))...)
			}
		} else {
			b, start = putNX(b, wNXOutputReg, 0)
			be.PutUint16(b[start+10:], encodeOfsNBits(a.Src))
			be.PutUint32(b[start+12:], nxmHeader(a.Src.Field))
			be.PutUint16(b[start+16:], a.MaxLen)
		}
	case *OutputTrunc:
		b, start = putNX(b, wNXOutputTrunc, 0)
		be.PutUint16(b[start+10:], uint16(a.Port))
		be.PutUint32(b[start+12:], a.MaxLen)
	case *Bundle:
		b = appendBundle(b, a)
	case *SetField:
		b = appendSetField(b, a, version)
	case *SetVLANVID:
		if version > of10 && a.PushIfNeeded && !a.FlowHasVLAN {
			b, _ = putRaw(b, wOF11PushVLAN, version, 0x8100)
		}
		switch version {
		case of10:
			b, _ = putRaw(b, wOF10SetVLANVID, version, uint64(a.VID))
		case of11:
			b, _ = putRaw(b, wOF11SetVLANVID, version, uint64(a.VID))
		default:
			b = appendSetFieldUint(b, version, "vlan_vid", uint64(a.VID|0x1000))
		}
	case *SetVLANPCP:
		if version > of10 && a.PushIfNeeded && !a.FlowHasVLAN {
			b, _ = putRaw(b, wOF11PushVLAN, version, 0x8100)
		}
		switch version {
		case of10:
			b, _ = putRaw(b, wOF10SetVLANPCP, version, uint64(a.PCP))
		case of11:
			b, _ = putRaw(b, wOF11SetVLANPCP, version, uint64(a.PCP))
		default:
			b = appendSetFieldUint(b, version, "vlan_pcp", uint64(a.PCP))
		}
	case *StripVLAN:
		if version == of10 {
			b, _ = putRaw(b, wOF10StripVLAN, version, 0)
		} else {
			b, _ = putRaw(b, wOF11PopVLAN, version, 0)
		}
	case *PushVLAN:
		if version > of10 { // OpenFlow 1.0 pushes as a side effect of mod_vlan_*
			b, _ = putRaw(b, wOF11PushVLAN, version, uint64(a.EtherType))
		}
	case *SetEthSrc:
		if version < of12 {
			b, start = putRaw(b, wSetDLSrc, version, 0)
			copy(b[start+4:], a.MAC[:])
		} else {
			b = appendSetFieldBytes(b, version, "eth_src", a.MAC[:])
		}
	case *SetEthDst:
		if version < of12 {
			b, start = putRaw(b, wSetDLDst, version, 0)
			copy(b[start+4:], a.MAC[:])
		} else {
			b = appendSetFieldBytes(b, version, "eth_dst", a.MAC[:])
		}
	case *SetIPv4Src:
		if version < of12 {
			b, _ = putRaw(b, wSetNWSrc, version, uint64(be.Uint32(a.Addr[:])))
		} else {
			b = appendSetFieldBytes(b, version, "ip_src", a.Addr[:])
		}
	case *SetIPv4Dst:
		if version < of12 {
			b, _ = putRaw(b, wSetNWDst, version, uint64(be.Uint32(a.Addr[:])))
		} else {
			b = appendSetFieldBytes(b, version, "ip_dst", a.Addr[:])
		}
	case *SetIPDSCP:
		if version < of12 {
			b, _ = putRaw(b, wSetNWTOS, version, uint64(a.DSCP))
		} else {
			b = appendSetFieldUint(b, version, "ip_dscp", uint64(a.DSCP>>2))
		}
	case *SetIPECN:
		switch version {
		case of10:
			b = appendRegLoad(b, mf.Subfield{Field: fieldByID(mf.IPECN), Ofs: 0, NBits: 2}, uint64(a.ECN))
		case of11:
			b, _ = putRaw(b, wOF11SetNWECN, version, uint64(a.ECN))
		default:
			b = appendSetFieldUint(b, version, "nw_ecn", uint64(a.ECN))
		}
	case *SetIPTTL:
		if version >= of11 {
			b, _ = putRaw(b, wOF11SetNWTTL, version, uint64(a.TTL))
		} else {
			b = appendRegLoad(b, mf.Subfield{Field: fieldByID(mf.IPTTL), Ofs: 0, NBits: 8}, uint64(a.TTL))
		}
	case *SetL4SrcPort:
		if name := l4FieldName(a.IPProto, "_src"); version >= of12 && name != "" {
			b = appendSetFieldUint(b, version, name, uint64(a.Port))
		} else {
			b, _ = putRaw(b, wSetTPSrc, version, uint64(a.Port))
		}
	case *SetL4DstPort:
		if name := l4FieldName(a.IPProto, "_dst"); version >= of12 && name != "" {
			b = appendSetFieldUint(b, version, name, uint64(a.Port))
		} else {
			b, _ = putRaw(b, wSetTPDst, version, uint64(a.Port))
		}
	case *RegMove:
		b = appendRegMove(b, a, version)
	case *StackPush:
		b = appendStack(b, wNXStackPush, a.Field)
	case *StackPop:
		b = appendStack(b, wNXStackPop, a.Field)
	case *DecTTL:
		if a.Raw == RawNXDecTTLCntIDs || len(a.CntIDs) != 1 || a.CntIDs[0] != 0 {
			b, start = putNX(b, wNXDecTTLCntIDs, 0)
			be.PutUint16(b[start+10:], uint16(len(a.CntIDs)))
			ids := make([]byte, roundUp(2*len(a.CntIDs), actionAlign))
			for i, id := range a.CntIDs {
				be.PutUint16(ids[2*i:], id)
			}
			b = append(b, ids...)
			be.PutUint16(b[start+2:], uint16(len(b)-start))
		} else {
			b, _ = putRaw(b, wDecNWTTL, version, 0)
		}
	case *SetMPLSLabel:
		if version >= of12 {
			// set_field of OXM_OF_MPLS_LABEL (gvs's registry has no MPLS fields).
			b, start = putRaw(b, wOF12SetField, of12, 0)
			b = be.AppendUint32(trimTo(b, start+4), 0x80004404)
			b = padAction(be.AppendUint32(b, a.Label), start)
		} else {
			b, _ = putRaw(b, wSetMPLSLabel, version, uint64(a.Label))
		}
	case *SetMPLSTC:
		if version >= of12 {
			b, start = putRaw(b, wOF12SetField, of12, 0)
			b = be.AppendUint32(trimTo(b, start+4), 0x80004601)
			b = padAction(append(b, a.TC), start)
		} else {
			b, _ = putRaw(b, wSetMPLSTC, version, uint64(a.TC))
		}
	case *SetMPLSTTL:
		b, _ = putRaw(b, wSetMPLSTTL, version, uint64(a.TTL))
	case *DecMPLSTTL:
		b, _ = putRaw(b, wDecMPLSTTL, version, 0)
	case *PushMPLS:
		b, _ = putRaw(b, wPushMPLS, version, uint64(a.EtherType))
	case *PopMPLS:
		b, _ = putRaw(b, wPopMPLS, version, uint64(a.EtherType))
	case *DecNSHTTL:
		b, _ = putNX(b, wNXDecNSHTTL, 0)
	case *Encap:
		b, start = putNX(b, wNXEncap, 0)
		be.PutUint16(b[start+10:], a.HdrSize)
		be.PutUint32(b[start+12:], a.PacketType)
		for _, p := range a.Props {
			switch p.Type {
			case EncapPropMDType:
				// OVS writes the property's length without its padding.
				b = append(b, byte(p.Class>>8), byte(p.Class), p.Type, 5, p.MDType, 0, 0, 0)
			case EncapPropTLV:
				data := make([]byte, roundUp(int(p.TLVLen), 8))
				copy(data, p.Data)
				b = append(b, byte(p.Class>>8), byte(p.Class), p.Type, byte(8+len(data)))
				b = be.AppendUint16(b, p.TLVClass)
				b = append(b, p.TLVType, p.TLVLen)
				b = append(b, data...)
			}
		}
		b = padAction(b, start)
	case *Decap:
		b, start = putNX(b, wNXDecap, 0)
		be.PutUint32(b[start+12:], a.PacketType)
	case *DeleteField:
		b, start = putNX(b, wNXDeleteField, 0)
		end := len(b)
		b = appendHeader(trimTo(b, start+nxHeaderLen), a.Field, 0)
		if len(b) < end {
			b = append(b, make([]byte, end-len(b))...)
		}
	case *SetTunnel:
		switch {
		case version >= of12:
			b = appendSetFieldUint(b, version, "tun_id", a.TunID)
		case a.TunID <= 0xffffffff && a.Raw != RawNXSetTunnel64:
			b, _ = putNX(b, wNXSetTunnel, a.TunID)
		default:
			b, _ = putNX(b, wNXSetTunnel64, a.TunID)
		}
	case *SetQueue:
		b, _ = putRaw(b, wSetQueue, version, uint64(a.QueueID))
	case *PopQueue:
		b, _ = putNX(b, wNXPopQueue, 0)
	case *FinTimeout:
		b, start = putNX(b, wNXFinTimeout, 0)
		be.PutUint16(b[start+10:], a.IdleTimeout)
		be.PutUint16(b[start+12:], a.HardTimeout)
	case *Resubmit:
		if a.TableID == TableInPort && a.Raw == RawNXResubmit {
			b, _ = putNX(b, wNXResubmit, uint64(a.InPort))
		} else {
			id := wNXResubmitTable
			if a.WithCTOrig {
				id = wNXResubmitTableCT
			}
			b, start = putNX(b, id, 0)
			be.PutUint16(b[start+10:], uint16(a.InPort))
			b[start+12] = a.TableID
		}
	case *Learn:
		b = appendLearn(b, a)
	case *Conjunction:
		b, start = putNX(b, wNXConjunction, 0)
		b[start+10], b[start+11] = a.Clause, a.NClauses
		be.PutUint32(b[start+12:], a.ID)
	case *Multipath:
		b, start = putNX(b, wNXMultipath, 0)
		x := b[start:]
		be.PutUint16(x[10:], a.Fields)
		be.PutUint16(x[12:], a.Basis)
		be.PutUint16(x[16:], a.Algorithm)
		be.PutUint16(x[18:], a.MaxLink)
		be.PutUint32(x[20:], a.Arg)
		be.PutUint16(x[26:], encodeOfsNBits(a.Dst))
		be.PutUint32(x[28:], nxmHeader(a.Dst.Field))
	case *Note:
		b, start = putNX(b, wNXNote, 0)
		b = append(trimTo(b, start+nxHeaderLen), a.Data...)
		b = padAction(b, start)
	case *Exit:
		b, _ = putNX(b, wNXExit, 0)
	case *Sample:
		switch {
		case a.Raw == RawNXSample3 || a.Direction != SampleDefault:
			b = appendSample2(b, wNXSample3, a)
		case a.Raw == RawNXSample2 || a.SamplingPort != mf.PortNone:
			b = appendSample2(b, wNXSample2, a)
		default:
			b, start = putNX(b, wNXSample, 0)
			x := b[start:]
			be.PutUint16(x[10:], a.Probability)
			be.PutUint32(x[12:], a.CollectorSetID)
			be.PutUint32(x[16:], a.ObsDomainID)
			be.PutUint32(x[20:], a.ObsPointID)
		}
	case *CT:
		b, start = putNX(b, wNXCT, 0)
		x := b[start:]
		be.PutUint16(x[10:], a.Flags)
		if a.ZoneSrc.Field != nil {
			be.PutUint32(x[12:], nxmHeader(a.ZoneSrc.Field))
			be.PutUint16(x[16:], encodeOfsNBits(a.ZoneSrc))
		} else {
			be.PutUint16(x[16:], a.ZoneImm)
		}
		x[18] = a.RecircTable
		be.PutUint16(x[22:], a.Alg)
		b = AppendActions(b, a.Actions, version)
		be.PutUint16(b[start+2:], uint16(len(b)-start))
	case *CTClear:
		b, _ = putNX(b, wNXCTClear, 0)
	case *NAT:
		b = appendNAT(b, a)
	case *Clone:
		b, start = putNX(b, wNXClone, 0)
		b = AppendActions(b, a.Actions, version)
		be.PutUint16(b[start+2:], uint16(len(b)-start))
	case *CheckPktLarger:
		b, start = putNX(b, wNXCheckPktLarger, 0)
		be.PutUint16(b[start+10:], a.Len)
		be.PutUint16(b[start+12:], uint16(a.Dst.Ofs))
		if a.Dst.Field != nil {
			end := len(b)
			b = appendHeader(trimTo(b, start+14), a.Dst.Field, 0)
			if len(b) < end {
				b = append(b, make([]byte, end-len(b))...)
			}
		}
	case *DebugRecirc:
		b, _ = putNX(b, wNXDebugRecirc, 0)
	case *DebugSlow:
		b, _ = putNX(b, wNXDebugSlow, 0)
	case *Meter:
		switch {
		case version == of13 || version == of14:
			b = appendInstrHeader(b, instTypeMeter, 8)
			b = be.AppendUint32(b, a.ID)
		case version >= of15:
			b, _ = putRaw(b, wOF15Meter, version, uint64(a.ID))
		}
	case *ClearActions:
		if version > of10 {
			b = appendInstrHeader(b, instTypeClearActions, 8)
			b = append(b, 0, 0, 0, 0)
		}
	case *WriteActions:
		if version > of10 {
			start := len(b)
			b = appendInstrHeader(b, instTypeWriteActions, 8)
			b = append(b, 0, 0, 0, 0)
			b = AppendActions(b, a.Actions, version)
			b = finishInstrActions(b, start)
		}
	case *WriteMetadata:
		if version == of10 {
			b, start = putNX(b, wNXWriteMetadata, 0)
			be.PutUint64(b[start+16:], a.Metadata)
			be.PutUint64(b[start+24:], a.Mask)
		} else {
			b = appendInstrHeader(b, instTypeWriteMetadata, 24)
			b = append(b, 0, 0, 0, 0)
			b = be.AppendUint64(b, a.Metadata)
			b = be.AppendUint64(b, a.Mask)
		}
	case *GotoTable:
		if version == of10 {
			b, start = putNX(b, wNXResubmitTable, 0)
			be.PutUint16(b[start+10:], uint16(mf.PortInPort))
			b[start+12] = a.TableID
		} else {
			b = appendInstrHeader(b, instTypeGotoTable, 8)
			b = append(b, a.TableID, 0, 0, 0)
		}
	}
	return b
}

func l4FieldName(proto uint8, suffix string) string {
	switch proto {
	case 6:
		return "tcp" + suffix
	case 17:
		return "udp" + suffix
	case 132:
		return "sctp" + suffix
	}
	return ""
}

func appendController(b []byte, c *Controller) []byte {
	if len(c.Userdata) > 0 || c.Pause || c.MeterID != NoMeter || c.Raw == RawNXController2 {
		b, start := putNX(b, wNXController2, 0)
		if c.MaxLen != 0xffff {
			b = appendProp(b, 0, prop16(c.MaxLen))
		}
		if c.ControllerID != 0 {
			b = appendProp(b, 1, prop16(c.ControllerID))
		}
		if c.Reason != ReasonAction {
			b = appendProp(b, 2, []byte{c.Reason})
		}
		if len(c.Userdata) > 0 {
			b = appendProp(b, 3, c.Userdata)
		}
		if c.Pause {
			b = appendProp(b, 4, nil)
		}
		if c.MeterID != NoMeter {
			b = appendProp(b, 5, be.AppendUint32(nil, c.MeterID))
		}
		return padAction(b, start)
	}
	b, start := putNX(b, wNXController, 0)
	be.PutUint16(b[start+10:], c.MaxLen)
	be.PutUint16(b[start+12:], c.ControllerID)
	b[start+14] = c.Reason
	return b
}

// prop16 is a 16-bit property value: OpenFlow gives such properties a
// length of 8, the value followed by 2 bytes of padding (OVS's
// ofpprop_put_be16).
func prop16(v uint16) []byte { return []byte{byte(v >> 8), byte(v), 0, 0} }

func appendBundle(b []byte, bd *Bundle) []byte {
	id := wNXBundle
	if bd.Dst.Field != nil {
		id = wNXBundleLoad
	}
	b, start := putNX(b, id, 0)
	x := b[start:]
	be.PutUint16(x[10:], bd.Algorithm)
	be.PutUint16(x[12:], bd.Fields)
	be.PutUint16(x[14:], bd.Basis)
	be.PutUint32(x[16:], nxmHeader(fieldByID(mf.InPort)))
	be.PutUint16(x[20:], uint16(len(bd.Members)))
	if bd.Dst.Field != nil {
		be.PutUint16(x[22:], encodeOfsNBits(bd.Dst))
		be.PutUint32(x[24:], nxmHeader(bd.Dst.Field))
	}
	members := make([]byte, roundUp(2*len(bd.Members), actionAlign))
	for i, p := range bd.Members {
		be.PutUint16(members[2*i:], uint16(p))
	}
	b = append(b, members...)
	be.PutUint16(b[start+2:], uint16(len(b)-start))
	return b
}

func appendRegMove(b []byte, mv *RegMove, version uint8) []byte {
	var start int
	switch {
	case version >= of15:
		b, start = putRaw(b, wOF15CopyField, version, 0)
		be.PutUint16(b[start+4:], uint16(mv.Dst.NBits))
		be.PutUint16(b[start+6:], uint16(mv.Src.Ofs))
		be.PutUint16(b[start+8:], uint16(mv.Dst.Ofs))
		b = trimTo(b, start+12)
		b = appendHeader(b, mv.Src.Field, version)
		b = appendHeader(b, mv.Dst.Field, version)
	case version == of13 && mv.Raw == RawONFCopyField:
		b, start = putRaw(b, wONF13CopyField, version, 0)
		be.PutUint16(b[start+12:], uint16(mv.Dst.NBits))
		be.PutUint16(b[start+14:], uint16(mv.Src.Ofs))
		be.PutUint16(b[start+16:], uint16(mv.Dst.Ofs))
		b = trimTo(b, start+20)
		b = appendHeader(b, mv.Src.Field, version)
		b = appendHeader(b, mv.Dst.Field, version)
	default:
		b, start = putNX(b, wNXRegMove, 0)
		be.PutUint16(b[start+10:], uint16(mv.Dst.NBits))
		be.PutUint16(b[start+12:], uint16(mv.Src.Ofs))
		be.PutUint16(b[start+14:], uint16(mv.Dst.Ofs))
		b = appendHeader(b, mv.Src.Field, 0)
		b = appendHeader(b, mv.Dst.Field, 0)
	}
	return padAction(b, start)
}

func appendStack(b []byte, id wireID, sf mf.Subfield) []byte {
	b, start := putNX(b, id, 0)
	be.PutUint16(b[start+10:], uint16(sf.Ofs))
	end := len(b)
	b = appendHeader(trimTo(b, start+12), sf.Field, 0)
	b = be.AppendUint16(b, uint16(sf.NBits))
	if len(b) < end {
		b = append(b, make([]byte, end-len(b))...)
	}
	return b
}

func appendSample2(b []byte, id wireID, s *Sample) []byte {
	b, start := putNX(b, id, 0)
	x := b[start:]
	be.PutUint16(x[10:], s.Probability)
	be.PutUint32(x[12:], s.CollectorSetID)
	be.PutUint32(x[16:], s.ObsDomainID)
	be.PutUint32(x[20:], s.ObsPointID)
	be.PutUint16(x[24:], uint16(s.SamplingPort))
	x[26] = s.Direction
	return b
}

func appendLearn(b []byte, l *Learn) []byte {
	var start int
	learn2 := l.Raw == RawNXLearn2 || l.Limit != 0 || l.Flags&LearnWriteResult != 0
	if learn2 {
		b, start = putNX(b, wNXLearn2, 0)
		be.PutUint32(b[start+32:], l.Limit)
		be.PutUint16(b[start+36:], uint16(l.ResultDst.Ofs))
	} else {
		b, start = putNX(b, wNXLearn, 0)
	}
	x := b[start:]
	be.PutUint16(x[10:], l.IdleTimeout)
	be.PutUint16(x[12:], l.HardTimeout)
	be.PutUint16(x[14:], l.Priority)
	be.PutUint64(x[16:], l.Cookie)
	be.PutUint16(x[24:], l.Flags)
	x[26] = l.TableID
	be.PutUint16(x[28:], l.FinIdleTimeout)
	be.PutUint16(x[30:], l.FinHardTimeout)
	if l.Flags&LearnWriteResult != 0 {
		b = appendHeader(b, l.ResultDst.Field, 0)
	}
	for _, s := range l.Specs {
		b = be.AppendUint16(b, uint16(s.NBits)|uint16(s.DstType)<<11|uint16(s.SrcType)<<13)
		if s.SrcType == LearnSrcField {
			b = be.AppendUint32(b, nxmHeader(s.Src.Field))
			b = be.AppendUint16(b, uint16(s.Src.Ofs))
		} else {
			nDst := 2 * ((s.NBits + 15) / 16)
			nImm := (s.NBits + 7) / 8
			bits := make([]byte, nDst)
			imm := s.Imm
			if len(imm) > nImm {
				imm = imm[len(imm)-nImm:]
			}
			copy(bits[nDst-len(imm):], imm)
			b = append(b, bits...)
		}
		if s.DstType == LearnDstMatch || s.DstType == LearnDstLoad {
			b = be.AppendUint32(b, nxmHeader(s.Dst.Field))
			b = be.AppendUint16(b, uint16(s.Dst.Ofs))
		}
	}
	return padAction(b, start)
}

func appendNAT(b []byte, n *NAT) []byte {
	b, start := putNX(b, wNXNAT, 0)
	be.PutUint16(b[start+12:], n.Flags)
	var present uint16
	if n.AddrMin.IsValid() {
		if n.AddrMin.Is4() {
			b = append(b, n.AddrMin.AsSlice()...)
			present |= natRangeIPv4Min
			if n.AddrMax.IsValid() && !n.AddrMax.IsUnspecified() {
				b = append(b, n.AddrMax.AsSlice()...)
				present |= natRangeIPv4Max
			}
		} else {
			b = append(b, n.AddrMin.AsSlice()...)
			present |= natRangeIPv6Min
			if n.AddrMax.IsValid() && !n.AddrMax.IsUnspecified() {
				b = append(b, n.AddrMax.AsSlice()...)
				present |= natRangeIPv6Max
			}
		}
		if n.PortMin != 0 {
			b = be.AppendUint16(b, n.PortMin)
			present |= natRangeProtoMin
		}
		if n.PortMax != 0 {
			b = be.AppendUint16(b, n.PortMax)
			present |= natRangeProtoMax
		}
	}
	b = padAction(b, start)
	be.PutUint16(b[start+14:], present)
	return b
}

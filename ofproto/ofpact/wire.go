package ofpact

import (
	"encoding/binary"

	"gvs/ofproto/ofperr"
)

// OpenFlow versions (wire values).
const (
	of10 uint8 = 0x01
	of11 uint8 = 0x02
	of12 uint8 = 0x03
	of13 uint8 = 0x04
	of14 uint8 = 0x05
	of15 uint8 = 0x06
)

// Vendor (experimenter) ids of extension actions.
const (
	vendorNX  uint32 = 0x00002320
	vendorONF uint32 = 0x4f4e4600
)

const (
	ofpatVendor    = 0xffff
	actionAlign    = 8
	maxVarLen      = 65536 - actionAlign
	nxHeaderLen    = 10 // type, len, vendor, subtype
	extHeaderLen   = 16 // nxHeaderLen + 6 bytes of padding
	ofpHeaderLen   = 4
	instrAlign     = 8
	maxNestedDepth = 64
)

// wireID names one wire encoding of an action (OVS's enum
// ofp_raw_action_type).
type wireID uint8

const (
	wNone wireID = iota
	wOF10Output
	wOF11Output
	wOF10SetVLANVID
	wOF10SetVLANPCP
	wOF11SetVLANVID
	wOF11SetVLANPCP
	wOF11PushVLAN
	wOF10StripVLAN
	wOF11PopVLAN
	wSetDLSrc
	wSetDLDst
	wSetNWSrc
	wSetNWDst
	wSetNWTOS
	wOF11SetNWECN
	wSetTPSrc
	wSetTPDst
	wOF10Enqueue
	wSetMPLSLabel
	wSetMPLSTC
	wSetMPLSTTL
	wDecMPLSTTL
	wPushMPLS
	wPopMPLS
	wSetQueue
	wGroup
	wOF11SetNWTTL
	wDecNWTTL
	wNXDecTTLCntIDs
	wOF12SetField
	wOF15SetField
	wNXRegLoad
	wNXRegLoad2
	wOF15CopyField
	wONF13CopyField
	wNXRegMove
	wOF15Meter
	wNXResubmit
	wNXResubmitTable
	wNXResubmitTableCT
	wNXSetTunnel
	wNXSetTunnel64
	wNXPopQueue
	wNXNote
	wNXMultipath
	wNXBundle
	wNXBundleLoad
	wNXOutputReg
	wNXOutputReg2
	wNXLearn
	wNXLearn2
	wNXExit
	wNXFinTimeout
	wNXController
	wNXController2
	wNXWriteMetadata
	wNXStackPush
	wNXStackPop
	wNXSample
	wNXSample2
	wNXSample3
	wNXConjunction
	wNXCT
	wNXNAT
	wNXOutputTrunc
	wNXClone
	wNXCTClear
	wNXDecNSHTTL
	wNXEncap
	wNXDecap
	wNXCheckPktLarger
	wNXDeleteField
	wNXDebugSlow
	wNXDebugRecirc
)

// wireInst is one (vendor, type, versions) instance of a wire action, with
// its length limits and where a scalar argument sits: OVS's
// ofpact_raw_instance, as extract-ofp-actions derives it.
type wireInst struct {
	id             wireID
	vendor         uint32
	typ            uint16
	minVer, maxVer uint8
	minLen, maxLen int
	argOfs, argLen int
}

// Argument shapes, from which lengths follow as in extract-ofp-actions.
type argShape struct {
	size, align int // scalar argument; size 0: void
	structLen   int // fixed struct (arg at none); 0 for scalars
	variable    bool
}

var (
	argVoid = argShape{}
	argU8   = argShape{size: 1, align: 1}
	argU16  = argShape{size: 2, align: 2}
	argU32  = argShape{size: 4, align: 4}
	argU64  = argShape{size: 8, align: 8}
)

func argStruct(n int) argShape    { return argShape{structLen: n} }
func argVarStruct(n int) argShape { return argShape{structLen: n, variable: true} }

var wireInsts []wireInst

func defWire(id wireID, vendor uint32, typ uint16, minVer, maxVer uint8, a argShape) {
	hdr := ofpHeaderLen
	if vendor != 0 {
		hdr = nxHeaderLen
	}
	w := wireInst{id: id, vendor: vendor, typ: typ, minVer: minVer, maxVer: maxVer}
	switch {
	case a.structLen != 0:
		w.minLen = a.structLen
	case a.size == 0:
		w.minLen = roundUp(hdr, actionAlign)
	default:
		w.argOfs = roundUp(hdr, a.align)
		w.argLen = a.size
		w.minLen = roundUp(w.argOfs+a.size, actionAlign)
	}
	w.maxLen = w.minLen
	if a.variable {
		w.maxLen = maxVarLen
	}
	wireInsts = append(wireInsts, w)
}

func roundUp(n, a int) int { return (n + a - 1) / a * a }

func init() {
	const nx, onf = vendorNX, vendorONF
	d := defWire
	d(wOF10Output, 0, 0, of10, of10, argStruct(8))
	d(wOF11Output, 0, 0, of11, of15, argStruct(16))
	d(wOF10SetVLANVID, 0, 1, of10, of10, argU16)
	d(wOF10SetVLANPCP, 0, 2, of10, of10, argU8)
	d(wOF11SetVLANVID, 0, 1, of11, of15, argU16)
	d(wOF11SetVLANPCP, 0, 2, of11, of15, argU8)
	d(wOF11PushVLAN, 0, 17, of11, of15, argU16)
	d(wOF10StripVLAN, 0, 3, of10, of10, argVoid)
	d(wOF11PopVLAN, 0, 18, of11, of15, argVoid)
	d(wSetDLSrc, 0, 4, of10, of10, argStruct(16))
	d(wSetDLSrc, 0, 3, of11, of15, argStruct(16))
	d(wSetDLDst, 0, 5, of10, of10, argStruct(16))
	d(wSetDLDst, 0, 4, of11, of15, argStruct(16))
	d(wSetNWSrc, 0, 6, of10, of10, argU32)
	d(wSetNWSrc, 0, 5, of11, of15, argU32)
	d(wSetNWDst, 0, 7, of10, of10, argU32)
	d(wSetNWDst, 0, 6, of11, of15, argU32)
	d(wSetNWTOS, 0, 8, of10, of10, argU8)
	d(wSetNWTOS, 0, 7, of11, of15, argU8)
	d(wOF11SetNWECN, 0, 8, of11, of15, argU8)
	d(wSetTPSrc, 0, 9, of10, of15, argU16)
	d(wSetTPDst, 0, 10, of10, of15, argU16)
	d(wOF10Enqueue, 0, 11, of10, of10, argStruct(16))
	d(wSetMPLSLabel, nx, 30, of10, of10, argU32)
	d(wSetMPLSLabel, 0, 13, of11, of15, argU32)
	d(wSetMPLSTC, nx, 31, of10, of10, argU8)
	d(wSetMPLSTC, 0, 14, of11, of15, argU8)
	d(wSetMPLSTTL, nx, 25, of10, of10, argU8)
	d(wSetMPLSTTL, 0, 15, of11, of15, argU8)
	d(wDecMPLSTTL, nx, 26, of10, of10, argVoid)
	d(wDecMPLSTTL, 0, 16, of11, of15, argVoid)
	d(wPushMPLS, nx, 23, of10, of10, argU16)
	d(wPushMPLS, 0, 19, of11, of15, argU16)
	d(wPopMPLS, nx, 24, of10, of10, argU16)
	d(wPopMPLS, 0, 20, of11, of15, argU16)
	d(wSetQueue, nx, 4, of10, of10, argU32)
	d(wSetQueue, 0, 21, of11, of15, argU32)
	d(wGroup, nx, 40, of10, of10, argU32)
	d(wGroup, 0, 22, of11, of15, argU32)
	d(wOF11SetNWTTL, 0, 23, of11, of15, argU8)
	d(wDecNWTTL, nx, 18, of10, of10, argVoid)
	d(wDecNWTTL, 0, 24, of11, of15, argVoid)
	d(wNXDecTTLCntIDs, nx, 21, of10, of15, argVarStruct(16))
	d(wOF12SetField, 0, 25, of12, of14, argVarStruct(8))
	d(wOF15SetField, 0, 25, of15, of15, argVarStruct(8))
	d(wNXRegLoad, nx, 7, of10, of14, argStruct(24))
	d(wNXRegLoad2, nx, 33, of10, of14, argVarStruct(16))
	d(wOF15CopyField, 0, 28, of15, of15, argVarStruct(16))
	d(wONF13CopyField, onf, 3200, of13, of14, argVarStruct(24))
	d(wNXRegMove, nx, 6, of10, of14, argVarStruct(16))
	d(wOF15Meter, 0, 29, of15, of15, argU32)
	d(wNXResubmit, nx, 1, of10, of15, argU16)
	d(wNXResubmitTable, nx, 14, of10, of15, argStruct(16))
	d(wNXResubmitTableCT, nx, 44, of10, of15, argStruct(16))
	d(wNXSetTunnel, nx, 2, of10, of15, argU32)
	d(wNXSetTunnel64, nx, 9, of10, of15, argU64)
	d(wNXPopQueue, nx, 5, of10, of15, argVoid)
	d(wNXNote, nx, 8, of10, of15, argVarStruct(16))
	d(wNXMultipath, nx, 10, of10, of15, argStruct(32))
	d(wNXBundle, nx, 12, of10, of15, argVarStruct(32))
	d(wNXBundleLoad, nx, 13, of10, of15, argVarStruct(32))
	d(wNXOutputReg, nx, 15, of10, of15, argStruct(24))
	d(wNXOutputReg2, nx, 32, of10, of15, argStruct(24))
	d(wNXLearn, nx, 16, of10, of15, argVarStruct(32))
	d(wNXLearn2, nx, 45, of10, of15, argVarStruct(40))
	d(wNXExit, nx, 17, of10, of15, argVoid)
	d(wNXFinTimeout, nx, 19, of10, of15, argStruct(16))
	d(wNXController, nx, 20, of10, of15, argStruct(16))
	d(wNXController2, nx, 37, of10, of15, argVarStruct(16))
	d(wNXWriteMetadata, nx, 22, of10, of15, argStruct(32))
	d(wNXStackPush, nx, 27, of10, of15, argStruct(24))
	d(wNXStackPop, nx, 28, of10, of15, argStruct(24))
	d(wNXSample, nx, 29, of10, of15, argStruct(24))
	d(wNXSample2, nx, 38, of10, of15, argStruct(32))
	d(wNXSample3, nx, 41, of10, of15, argStruct(32))
	d(wNXConjunction, nx, 34, of10, of15, argStruct(16))
	d(wNXCT, nx, 35, of10, of15, argVarStruct(24))
	d(wNXNAT, nx, 36, of10, of15, argVarStruct(16))
	d(wNXOutputTrunc, nx, 39, of10, of15, argStruct(16))
	d(wNXClone, nx, 42, of10, of15, argVarStruct(16))
	d(wNXCTClear, nx, 43, of10, of15, argVoid)
	d(wNXDecNSHTTL, nx, 48, of13, of15, argVoid)
	d(wNXEncap, nx, 46, of13, of15, argVarStruct(16))
	d(wNXDecap, nx, 47, of13, of15, argVarStruct(16))
	d(wNXCheckPktLarger, nx, 49, of10, of15, argVarStruct(24))
	d(wNXDeleteField, nx, 50, of10, of15, argStruct(24))
	d(wNXDebugSlow, nx, 254, of10, of15, argVoid)
	d(wNXDebugRecirc, nx, 255, of10, of15, argVoid)
}

type decodeKey struct {
	vendor  uint32
	typ     uint16
	version uint8
}

// decodeIndex maps (vendor, type, version) to the wire instance; built at
// initialisation, read-only afterwards.
var decodeIndex = map[decodeKey]*wireInst{}

func init() {
	for i := range wireInsts {
		w := &wireInsts[i]
		for v := w.minVer; v <= w.maxVer; v++ {
			decodeIndex[decodeKey{w.vendor, w.typ, v}] = w
		}
	}
}

// lookupDecode finds the wire instance for an action's vendor and type in
// version.
func lookupDecode(vendor uint32, typ uint16, version uint8) *wireInst {
	return decodeIndex[decodeKey{vendor, typ, version}]
}

// lookupEncode finds how id is encoded in version (nil: it cannot be).
func lookupEncode(id wireID, version uint8) *wireInst {
	for i := range wireInsts {
		w := &wireInsts[i]
		if w.id == id && version >= w.minVer && version <= w.maxVer {
			return w
		}
	}
	return nil
}

// pullRaw identifies the action at the front of b: OVS's ofpact_pull_raw.
// It returns the wire instance, the action's bytes and the scalar
// argument.
func pullRaw(b []byte, version uint8) (*wireInst, []byte, uint64, error) {
	if len(b) < ofpHeaderLen+4 {
		return nil, nil, 0, ofperr.OFPBAC_BAD_LEN
	}
	typ := binary.BigEndian.Uint16(b)
	var vendor uint32
	if typ == ofpatVendor {
		vendor = binary.BigEndian.Uint32(b[4:])
		if vendor != vendorNX && vendor != vendorONF {
			return nil, nil, 0, ofperr.OFPBAC_BAD_VENDOR
		}
		if len(b) < extHeaderLen {
			return nil, nil, 0, ofperr.OFPBAC_BAD_LEN
		}
		typ = binary.BigEndian.Uint16(b[8:])
	}
	w := lookupDecode(vendor, typ, version)
	if w == nil {
		if vendor != 0 {
			return nil, nil, 0, ofperr.OFPBAC_BAD_VENDOR_TYPE
		}
		return nil, nil, 0, ofperr.OFPBAC_BAD_TYPE
	}
	n := int(binary.BigEndian.Uint16(b[2:]))
	if n > len(b) || n < w.minLen || n > w.maxLen || n%actionAlign != 0 {
		return nil, nil, 0, ofperr.OFPBAC_BAD_LEN
	}
	var arg uint64
	for _, c := range b[w.argOfs : w.argOfs+w.argLen] {
		arg = arg<<8 | uint64(c)
	}
	return w, b[:n], arg, nil
}

// putRaw appends the fixed part of action id in version (header, zeros,
// scalar argument) and returns the buffer and the action's start offset.
// It panics if id has no encoding in version: callers choose only
// encodings that exist, as OVS's do.
func putRaw(b []byte, id wireID, version uint8, arg uint64) ([]byte, int) {
	w := lookupEncode(id, version)
	if w == nil {
		panic("ofpact: no encoding for action in this OpenFlow version")
	}
	start := len(b)
	b = append(b, make([]byte, w.minLen)...)
	a := b[start:]
	if w.vendor != 0 {
		binary.BigEndian.PutUint16(a, ofpatVendor)
		binary.BigEndian.PutUint32(a[4:], w.vendor)
		binary.BigEndian.PutUint16(a[8:], w.typ)
	} else {
		binary.BigEndian.PutUint16(a, w.typ)
	}
	binary.BigEndian.PutUint16(a[2:], uint16(w.minLen))
	for i := w.argLen - 1; i >= 0; i-- {
		a[w.argOfs+i] = byte(arg)
		arg >>= 8
	}
	return b, start
}

// padAction pads the action that starts at start to a multiple of 8 bytes
// and sets its length: OVS's pad_ofpat.
func padAction(b []byte, start int) []byte {
	n := len(b) - start
	b = append(b, make([]byte, roundUp(n, actionAlign)-n)...)
	binary.BigEndian.PutUint16(b[start+2:], uint16(len(b)-start))
	return b
}

// trimTo cuts b back to n bytes (the encoders write a fixed struct and
// then overwrite its padding with variable data, as OVS does).
func trimTo(b []byte, n int) []byte { return b[:n] }

func isAllZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// Port number conversion between OVS's 16-bit space and OpenFlow 1.1+.
const (
	ofpp11Max    uint32 = 0xffffff00
	ofpp11Offset uint32 = 0xffff0000
	ofppMax      uint32 = 0xff00
)

func portFromOF11(p uint32) (uint32, error) {
	switch {
	case p < ofppMax:
		return p, nil
	case p >= ofpp11Max:
		return p - ofpp11Offset, nil
	}
	return 0xffff, ofperr.OFPBAC_BAD_OUT_PORT
}

func portToOF11(p uint32) uint32 {
	if p < ofppMax {
		return p
	}
	return p + ofpp11Offset
}

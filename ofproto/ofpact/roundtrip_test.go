package ofpact

import (
	"bytes"
	"fmt"
	"net/netip"
	"testing"

	"gvs/ofproto/mf"
)

func sub(t testing.TB, s string) mf.Subfield {
	t.Helper()
	sf, err := mf.ParseSubfield(s)
	if err != nil {
		t.Fatalf("ParseSubfield(%q): %v", s, err)
	}
	return sf
}

func setField(t testing.TB, name string, value, mask []byte) *SetField {
	t.Helper()
	f := mf.FieldByName(name)
	if f == nil {
		t.Fatalf("no field %s", name)
	}
	sf := &SetField{Field: f}
	copy(sf.Value[:], value)
	if mask == nil {
		for i := 0; i < f.Bytes; i++ {
			sf.Mask[i] = 0xff
		}
	} else {
		copy(sf.Mask[:], mask)
	}
	return sf
}

// builtActions are action lists as gvs itself would build them (Raw
// zero): each must encode, for every version that can carry it, to bytes
// OVS decodes to the text we print and re-encodes identically.
func builtActions(t testing.TB) [][]Action {
	return [][]Action{
		{&Output{Port: 1}, &Output{Port: mf.PortLocal}, &Output{Port: mf.PortController, MaxLen: 0xffff}},
		{&Output{Port: mf.PortFlood}, &Output{Port: mf.PortAll}, &Output{Port: mf.PortNormal}, &Output{Port: mf.PortInPort}},
		{&Resubmit{InPort: mf.PortInPort, TableID: 2}, &Resubmit{InPort: 3, TableID: TableInPort}, &Resubmit{InPort: 4, TableID: 9}},
		{&Resubmit{InPort: mf.PortInPort, TableID: 12, WithCTOrig: true}},
		{&Group{ID: 7}, &SetQueue{QueueID: 3}, &PopQueue{}},
		{&Controller{MaxLen: 0xffff, Reason: ReasonAction, Userdata: []byte{0, 0, 1, 2, 3}, Pause: true, MeterID: NoMeter}},
		{&Controller{MaxLen: 128, Reason: ReasonNoMatch, ControllerID: 2, MeterID: 5}},
		{&Controller{MaxLen: 0xffff, Reason: ReasonInvalidTTL, MeterID: NoMeter}},
		{setField(t, "reg0", []byte{0, 0, 0, 1}, nil), setField(t, "reg15", []byte{0xde, 0xad, 0xbe, 0xef}, nil)},
		{setField(t, "metadata", []byte{0, 0, 0, 0, 0, 0, 0, 0x2a}, nil)},
		{setField(t, "eth_src", []byte{0x02, 0, 0, 0, 0, 0x01}, nil), setField(t, "eth_dst", []byte{0x02, 0, 0, 0, 0, 0x02}, nil)},
		{setField(t, "ip_src", []byte{198, 18, 0, 1}, nil), setField(t, "ipv6_dst", []byte{0xfe, 0x80, 15: 1}, nil)},
		{setField(t, "tcp_dst", []byte{0, 80}, nil), setField(t, "nw_ttl", []byte{9}, nil)},
		{setField(t, "xreg3", []byte{1, 2, 3, 4, 5, 6, 7, 8}, nil), setField(t, "xxreg1", []byte{15: 9}, nil)},
		{setField(t, "tun_id", []byte{0, 0, 0, 0, 0, 0, 0x12, 0x34}, nil), setField(t, "pkt_mark", []byte{0, 0, 0, 5}, nil)},
		{setField(t, "reg3", []byte{0, 0, 0, 0x30}, []byte{0, 0, 0, 0xf0})},
		{&RegMove{Src: sub(t, "NXM_NX_REG0[0..15]"), Dst: sub(t, "NXM_NX_REG1[16..31]")}},
		{&RegMove{Src: sub(t, "OXM_OF_METADATA[]"), Dst: sub(t, "OXM_OF_PKT_REG0[]")}},
		{&StackPush{Field: sub(t, "NXM_NX_REG0[]")}, &StackPop{Field: sub(t, "NXM_NX_REG1[0..7]")}},
		{&DecTTL{CntIDs: []uint16{0}}, &DecTTL{CntIDs: []uint16{1, 2, 3}}},
		{&SetTunnel{TunID: 5}, &SetTunnel{TunID: 0x100000000}},
		{&FinTimeout{IdleTimeout: 10, HardTimeout: 20}},
		{&Note{Data: []byte("hello, ovs")}},
		{&Conjunction{ID: 9, Clause: 0, NClauses: 2}, &Conjunction{ID: 10, Clause: 1, NClauses: 2}},
		{&Exit{}},
		{&CTClear{}, &OutputTrunc{Port: 3, MaxLen: 100}},
		{&CheckPktLarger{Len: 1500, Dst: sub(t, "NXM_NX_REG0[3]")}},
		{&Clone{Actions: []Action{&Output{Port: 1}, &Resubmit{InPort: mf.PortInPort, TableID: 3}}}},
		{&Clone{}},
		{&CT{Flags: CTCommit, ZoneImm: 5, RecircTable: CTNoRecirc, Actions: []Action{
			&NAT{Flags: NATSrc, AddrMin: netip.MustParseAddr("198.18.0.1"), AddrMax: netip.MustParseAddr("198.18.0.9"), PortMin: 1000, PortMax: 2000},
			setField(t, "ct_mark", []byte{0, 0, 0, 1}, nil),
		}}},
		{&CT{ZoneSrc: sub(t, "NXM_NX_REG13[0..15]"), RecircTable: 8, Actions: []Action{&NAT{}}}},
		{&CT{Flags: CTCommit | CTForce, RecircTable: CTNoRecirc, Alg: CTAlgFTP}},
		{&CT{Flags: CTCommit, RecircTable: CTNoRecirc, Actions: []Action{
			&NAT{Flags: NATDst | NATPersistent | NATProtoHash, AddrMin: netip.MustParseAddr("2001:db8::1"), PortMin: 80},
		}}},
		{&Learn{TableID: 10, IdleTimeout: 30, Priority: 0x8000, Flags: LearnDeleteLearned, Cookie: 0x99, Specs: []LearnSpec{
			{SrcType: LearnSrcField, DstType: LearnDstMatch, NBits: 12, Src: sub(t, "NXM_OF_VLAN_TCI[0..11]"), Dst: sub(t, "NXM_OF_VLAN_TCI[0..11]")},
			{SrcType: LearnSrcField, DstType: LearnDstMatch, NBits: 48, Src: sub(t, "NXM_OF_ETH_SRC[]"), Dst: sub(t, "NXM_OF_ETH_DST[]")},
			{SrcType: LearnSrcImmediate, DstType: LearnDstMatch, NBits: 16, Imm: []byte{0x08, 0x00}, Dst: sub(t, "NXM_OF_ETH_TYPE[]")},
			{SrcType: LearnSrcImmediate, DstType: LearnDstLoad, NBits: 8, Imm: []byte{0x2a}, Dst: sub(t, "NXM_NX_REG0[0..7]")},
			{SrcType: LearnSrcField, DstType: LearnDstLoad, NBits: 32, Src: sub(t, "NXM_NX_REG1[]"), Dst: sub(t, "NXM_NX_REG2[]")},
			{SrcType: LearnSrcField, DstType: LearnDstOutput, NBits: 16, Src: sub(t, "NXM_OF_IN_PORT[]")},
		}}},
		{&Learn{TableID: 3, Priority: 10, Limit: 100, Flags: LearnWriteResult, ResultDst: sub(t, "NXM_NX_REG5[2]"), FinIdleTimeout: 5, FinHardTimeout: 7, Specs: []LearnSpec{
			{SrcType: LearnSrcField, DstType: LearnDstMatch, NBits: 32, Src: sub(t, "NXM_NX_REG3[]"), Dst: sub(t, "NXM_NX_REG3[]")},
		}}},
		{&Multipath{Fields: HashSymmetricL4, Basis: 50, Algorithm: MultipathHRW, MaxLink: 31, Arg: 0, Dst: sub(t, "NXM_NX_REG0[0..5]")}},
		{&Bundle{Algorithm: BundleHRW, Fields: HashEthSrc, Basis: 1, Members: []uint32{1, 2, 3}}},
		{&Bundle{Algorithm: BundleActiveBackup, Fields: HashSymmetricL4, Dst: sub(t, "NXM_NX_REG0[]"), Members: []uint32{4}}},
		{&Sample{Probability: 100, CollectorSetID: 1, ObsDomainID: 2, ObsPointID: 3, SamplingPort: mf.PortNone}},
		{&Sample{Probability: 5, SamplingPort: 7, Direction: SampleEgress}},
		{&OutputReg{Src: sub(t, "NXM_NX_REG4[]"), MaxLen: 0xffff}},
		{&OutputReg{Src: sub(t, "OXM_OF_PKT_REG1[0..15]"), MaxLen: 0xffff}},
		{&StripVLAN{}, &SetEthSrc{MAC: [6]byte{2, 0, 0, 0, 0, 3}}, &SetIPv4Dst{Addr: [4]byte{198, 18, 1, 1}}},
		{&SetIPDSCP{DSCP: 0x20}, &SetIPECN{ECN: 1}, &SetIPTTL{TTL: 3}},
		{&SetL4SrcPort{Port: 99}, &SetL4DstPort{Port: 100}},
		{&SetVLANVID{VID: 10, PushIfNeeded: true}, &SetVLANPCP{PCP: 5, PushIfNeeded: true}},
	}
}

// encodable reports whether OVS can express every action of acts in
// version (the rest it silently drops, as OVS does, which a round trip
// cannot show).
func encodable(acts []Action, version uint8) bool {
	for _, a := range acts {
		switch a := a.(type) {
		case *SetField:
			if version < of12 && a.Raw == RawDefault && !isAllOnes(a.Mask[:a.Field.Bytes]) {
				continue
			}
		case *SetIPECN:
			if version == of10 {
				return false // a reg_load, which decodes as set_field
			}
		case *SetIPTTL:
			if version == of10 {
				return false
			}
		case *SetVLANVID, *SetVLANPCP:
			if version > of10 {
				return false // push_vlan + set: OVS's own round trip differs
			}
		case *SetEthSrc, *SetIPv4Dst, *SetIPDSCP, *SetL4SrcPort, *SetL4DstPort, *StripVLAN:
			if version >= of12 {
				return false // become set_field
			}
		case *SetTunnel:
			if version >= of12 {
				return false
			}
		case *Clone:
			if len(a.Actions) == 0 {
				return true
			}
		}
	}
	return true
}

func TestBuiltActionsAgainstOVS(t *testing.T) {
	needOVS(t)
	lists := builtActions(t)
	for _, version := range []uint8{of10, of11, of12, of13, of14, of15} {
		var inputs [][]byte
		var sources [][]Action
		for _, acts := range lists {
			if !encodable(acts, version) {
				continue
			}
			b := AppendActions(nil, acts, version)
			if len(b) == 0 {
				continue
			}
			inputs = append(inputs, b)
			sources = append(sources, acts)
		}
		want := runOVS(t, false, version, inputs)
		for i, in := range inputs {
			name := fmt.Sprintf("%s %s", versionNames[version], Format(sources[i]))
			w := want[i]
			if w.err != "" {
				t.Errorf("%s: OVS rejects our encoding %x: %s", name, in, w.err)
				continue
			}
			if !bytes.Equal(w.reencoded, in) {
				t.Errorf("%s: OVS re-encodes %x as %x", name, in, w.reencoded)
			}
			acts, err := PullActions(in, version)
			if err != nil {
				t.Errorf("%s: we reject our own encoding %x: %v", name, in, err)
				continue
			}
			if got := "actions=" + Format(acts); got != w.text {
				t.Errorf("%s: decoded\n got %s\nwant %s", name, got, w.text)
			}
			if re := AppendActions(nil, acts, version); !bytes.Equal(re, in) {
				t.Errorf("%s: re-encoded\n got %x\nwant %x", name, re, in)
			}
		}
	}
}

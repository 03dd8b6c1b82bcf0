package ofp

import (
	"testing"

	"gvs/ofproto/ofperr"
)

func TestBasicMessagesPrint(t *testing.T) {
	cases := []printCase{
		{"hello 1.0-1.3", Version13, 1, &Hello{Versions: VersionBitmap(1, 4)}, "OFPT_HELLO (OF1.3) (xid=0x1):\n version bitmap: 0x01, 0x02, 0x03, 0x04"},
		{"hello 1.3+1.5", Version15, 2, &Hello{Versions: 1<<4 | 1<<6}, "OFPT_HELLO (OF1.5) (xid=0x2):\n version bitmap: 0x04, 0x06"},
		{"echo", Version10, 3, &EchoRequest{Data: []byte("ab")}, "OFPT_ECHO_REQUEST (xid=0x3): 2 bytes of payload\n00000000  61 62                                           |ab              |"},
		{"echo reply", Version14, 4, &EchoReply{}, "OFPT_ECHO_REPLY (OF1.4) (xid=0x4): 0 bytes of payload"},
		{"features request", Version13, 5, &FeaturesRequest{}, "OFPT_FEATURES_REQUEST (OF1.3) (xid=0x5):"},
		{"get config", Version15, 6, &GetConfigRequest{}, "OFPT_GET_CONFIG_REQUEST (OF1.5) (xid=0x6):"},
		{"set config", Version15, 7, &SetConfig{SwitchConfig{MissSendLen: 0xffff}}, "OFPT_SET_CONFIG (OF1.5) (xid=0x7): frags=normal miss_send_len=65535"},
		{"get config reply", Version10, 8, &GetConfigReply{SwitchConfig{Flags: FragDrop, MissSendLen: 128}}, "OFPT_GET_CONFIG_REPLY (xid=0x8): frags=drop miss_send_len=128"},
		{"barrier 1.0", Version10, 9, &BarrierRequest{}, "OFPT_BARRIER_REQUEST (xid=0x9):"},
		{"barrier 1.5", Version15, 10, &BarrierReply{}, "OFPT_BARRIER_REPLY (OF1.5) (xid=0xa):"},
		{"role", Version13, 11, &RoleRequest{Role: RolePrimary, GenerationID: 0x12}, "OFPT_ROLE_REQUEST (OF1.3) (xid=0xb): role=primary generation_id=18"},
		{"nx role", Version10, 12, &RoleReply{NX: true, Role: RoleSecondary}, "NXT_ROLE_REPLY (xid=0xc): role=secondary"},
		{"error", Version13, 13, &Error{Err: ofperr.OFPBRC_BAD_LEN, Data: []byte{4, 5, 0, 8, 0, 0, 0, 1}},
			"OFPT_ERROR (OF1.3) (xid=0xd): OFPBRC_BAD_LEN\nOFPT_FEATURES_REQUEST (OF1.3) (xid=0x1):"},
		{"nx error 1.0", Version10, 14, &Error{Err: ofperr.OFPBRC_BAD_TABLE_ID, Data: []byte{1, 5, 0, 8, 0, 0, 0, 1}},
			"OFPT_ERROR (xid=0xe): OFPBRC_BAD_TABLE_ID\nOFPT_FEATURES_REQUEST (xid=0x1):"},
		{"experimenter error 1.5", Version15, 15, &Error{Err: ofperr.NXBRC_NXM_INVALID, Data: []byte{6, 5, 0, 8, 0, 0, 0, 1}},
			"OFPT_ERROR (OF1.5) (xid=0xf): NXBRC_NXM_INVALID\nOFPT_FEATURES_REQUEST (OF1.5) (xid=0x1):"},
		{"hello failed", Version13, 0, &Error{Err: ofperr.OFPHFC_INCOMPATIBLE, Data: []byte("no")},
			"OFPT_ERROR (OF1.3) (xid=0x0): OFPHFC_INCOMPATIBLE\nno"},
	}
	for _, c := range cases {
		b := checkPrint(t, c)
		roundTrip(t, c.name, b)
	}
}

func TestFeaturesReplyPrint(t *testing.T) {
	port := Port{PortNo: 1, HWAddr: [6]byte{0xaa, 0x55, 0xaa, 0x55, 0, 1}, Name: "p1", Curr: PortFeature10GBFD | PortFeatureCopper,
		Supported: PortFeature10GBFD, CurrSpeed: 10000000, MaxSpeed: 10000000}
	local := Port{PortNo: 0xfffe, HWAddr: [6]byte{0xaa, 0x55, 0xaa, 0x55, 0, 0}, Name: "br0", Config: PortConfigPortDown, State: PortStateLinkDown}
	m := &FeaturesReply{DatapathID: 0x123, NBuffers: 0, NTables: 254, Capabilities: 0xc7, Actions: 0xfff, Ports: []Port{port, local}}
	b, err := Encode(Version10, 1, m)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(ofpPrint(t, b, 2))
	roundTrip(t, "features 1.0", b)
	for _, v := range []uint8{Version11, Version13, Version15} {
		b, err := Encode(v, 1, m)
		if err != nil {
			t.Fatal(err)
		}
		t.Log(ofpPrint(t, b, 2))
		got := roundTrip(t, "features", b).(*FeaturesReply)
		if v >= Version13 && got.Ports != nil {
			t.Errorf("1.3+ features reply carries ports")
		}
	}
	ps := &PortStatus{Reason: PortReasonModify, Desc: port}
	for v := Version10; v <= Version15; v++ {
		b, err := Encode(v, 1, ps)
		if err != nil {
			t.Fatal(err)
		}
		t.Log(ofpPrint(t, b, 2))
		roundTrip(t, "port status", b)
	}
}

// TestOVSCapabilities: the real ovs-vswitchd's FEATURES_REPLY in every
// version decodes to its share of OVSCapabilities, and encoding
// OVSCapabilities gives its bytes.
func TestOVSCapabilities(t *testing.T) {
	seen := map[uint8]bool{}
	for _, v := range loadVectors(t, "testdata/ovs-switch.txt") {
		h, m, err := Decode(v.msg)
		f, ok := m.(*FeaturesReply)
		if err != nil || !ok {
			continue
		}
		seen[h.Version] = true
		want := OVSCapabilities & capabilitiesMask(h.Version)
		if h.Version == Version10 {
			want &^= CapGroupStats
		} else {
			want |= OVSCapabilities & CapGroupStats
		}
		if f.Capabilities != want {
			t.Errorf("%s: capabilities %#x, want %#x", v.name, f.Capabilities, want)
		}
		f.Capabilities = OVSCapabilities
		if b, err := Encode(h.Version, h.Xid, f); err != nil || string(b) != string(v.msg) {
			t.Errorf("%s: OVSCapabilities encode as\n%x, OVS sent\n%x", v.name, b, v.msg)
		}
	}
	if len(seen) != 6 {
		t.Errorf("features replies for %d versions", len(seen))
	}
}

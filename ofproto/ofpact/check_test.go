package ofpact

import (
	"bytes"
	"net/netip"
	"testing"

	"gvs/ofproto/mf"
	"gvs/ofproto/ofperr"
)

func matchOf(t *testing.T, kv ...any) *mf.Match {
	t.Helper()
	var m mf.Match
	for i := 0; i < len(kv); i += 2 {
		f := mf.FieldByName(kv[i].(string))
		if f == nil {
			t.Fatalf("no field %v", kv[i])
		}
		f.SetMatch(&m, mf.ValueFromUint(uint64(kv[i+1].(int)), f.Bytes))
	}
	return &m
}

func TestCheck(t *testing.T) {
	ipv4 := matchOf(t, "eth_type", 0x0800)
	tcp := matchOf(t, "eth_type", 0x0800, "nw_proto", 6)
	vlan := matchOf(t, "vlan_tci", 0x1005)
	any := &mf.Match{}
	for _, tc := range []struct {
		name    string
		acts    []Action
		m       *mf.Match
		table   uint8
		version uint8
		want    error
	}{
		{"output in range", []Action{&Output{Port: 5}}, any, 0, of13, nil},
		{"output beyond max ports", []Action{&Output{Port: 100}}, any, 0, of13, ofperr.OFPBAC_BAD_OUT_PORT},
		{"output to reserved port", []Action{&Output{Port: mf.PortNormal}, &Output{Port: mf.PortController}}, any, 0, of13, nil},
		{"output to NONE", []Action{&Output{Port: mf.PortNone}}, any, 0, of13, ofperr.OFPBAC_BAD_OUT_PORT},
		{"goto forward", []Action{&GotoTable{TableID: 3}}, any, 2, of13, nil},
		{"goto same table", []Action{&GotoTable{TableID: 2}}, any, 2, of13, ofperr.OFPBIC_BAD_TABLE_ID},
		{"goto backward", []Action{&GotoTable{TableID: 1}}, any, 2, of13, ofperr.OFPBIC_BAD_TABLE_ID},
		{"goto past the last table", []Action{&GotoTable{TableID: 200}}, any, 0, of13, ofperr.OFPBIC_BAD_TABLE_ID},
		{"set_field ip_src needs ip", []Action{setField(t, "ip_src", []byte{1, 2, 3, 4}, nil)}, any, 0, of13, ofperr.OFPBAC_MATCH_INCONSISTENT},
		{"set_field ip_src with ip", []Action{setField(t, "ip_src", []byte{1, 2, 3, 4}, nil)}, ipv4, 0, of13, nil},
		{"set_field tcp_dst needs tcp", []Action{setField(t, "tcp_dst", []byte{0, 80}, nil)}, ipv4, 0, of13, ofperr.OFPBAC_MATCH_INCONSISTENT},
		{"set_field tcp_dst with tcp", []Action{setField(t, "tcp_dst", []byte{0, 80}, nil)}, tcp, 0, of13, nil},
		{"set_field vlan_vid needs a vlan", []Action{setField(t, "vlan_vid", []byte{0x10, 5}, nil)}, any, 0, of13, ofperr.OFPBAC_MATCH_INCONSISTENT},
		{"set_field vlan_vid after push_vlan", []Action{&PushVLAN{EtherType: 0x8100}, setField(t, "vlan_vid", []byte{0x10, 5}, nil)}, any, 0, of13, nil},
		{"set_field vlan_vid on a vlan", []Action{setField(t, "vlan_vid", []byte{0x10, 5}, nil)}, vlan, 0, of13, nil},
		{"three push_vlan", []Action{&PushVLAN{EtherType: 0x8100}, &PushVLAN{EtherType: 0x8100}, &PushVLAN{EtherType: 0x8100}}, any, 0, of13, ofperr.OFPBAC_BAD_TAG},
		{"mod_nw_src without ip in 1.3", []Action{&SetIPv4Src{}}, any, 0, of13, ofperr.OFPBAC_MATCH_INCONSISTENT},
		{"mod_nw_src without ip in 1.0", []Action{&SetIPv4Src{}}, any, 0, of10, nil},
		{"mod_tp_dst needs tcp/udp/sctp", []Action{&SetL4DstPort{Port: 1}}, ipv4, 0, of13, ofperr.OFPBAC_MATCH_INCONSISTENT},
		{"strip_vlan without vlan", []Action{&StripVLAN{}}, any, 0, of13, ofperr.OFPBAC_MATCH_INCONSISTENT},
		{"strip_vlan with vlan", []Action{&StripVLAN{}}, vlan, 0, of13, nil},
		{"dec_ttl needs ip", []Action{&DecTTL{CntIDs: []uint16{0}}}, any, 0, of13, ofperr.OFPBAC_MATCH_INCONSISTENT},
		{"meter 0", []Action{&Meter{ID: 0}}, any, 0, of13, ofperr.OFPMMFC_INVALID_METER},
		{"meter 1", []Action{&Meter{ID: 1}}, any, 0, of13, nil},
		{"ct needs ip", []Action{&CT{RecircTable: CTNoRecirc}}, any, 0, of13, ofperr.OFPBAC_MATCH_INCONSISTENT},
		{"ct with ip", []Action{&CT{RecircTable: 1}}, ipv4, 0, of13, nil},
		{"ct alg ftp needs tcp", []Action{&CT{RecircTable: 1, Alg: CTAlgFTP}}, ipv4, 0, of13, ofperr.OFPBAC_MATCH_INCONSISTENT},
		{"nat v6 range on ipv4", []Action{&CT{Flags: CTCommit, RecircTable: 1, Actions: []Action{&NAT{Flags: NATSrc, AddrMin: mustAddr("2001:db8::1")}}}}, ipv4, 0, of13, ofperr.OFPBAC_MATCH_INCONSISTENT},
		{"move needs source prerequisites", []Action{&RegMove{Src: sub(t, "NXM_OF_IP_SRC[]"), Dst: sub(t, "NXM_NX_REG0[]")}}, any, 0, of13, ofperr.OFPBAC_MATCH_INCONSISTENT},
		{"move ok", []Action{&RegMove{Src: sub(t, "NXM_OF_IP_SRC[]"), Dst: sub(t, "NXM_NX_REG0[]")}}, ipv4, 0, of13, nil},
		{"move into a read-only field", []Action{&RegMove{Src: sub(t, "NXM_NX_REG0[0..7]"), Dst: sub(t, "NXM_OF_IP_PROTO[]")}}, ipv4, 0, of13, ofperr.OFPBAC_BAD_SET_ARGUMENT},
		{"clone checks nested actions", []Action{&Clone{Actions: []Action{&Output{Port: 99}}}}, any, 0, of13, ofperr.OFPBAC_BAD_OUT_PORT},
		{"write_actions checks nested actions", []Action{&WriteActions{Actions: []Action{&Output{Port: 99}}}}, any, 0, of13, ofperr.OFPBAC_BAD_OUT_PORT},
		{"resubmit ct needs valid ct state", []Action{&Resubmit{InPort: mf.PortInPort, TableID: 1, WithCTOrig: true}}, ipv4, 0, of13, ofperr.OFPBAC_MATCH_INCONSISTENT},
		{"bundle to controller", []Action{&Bundle{Members: []uint32{1, mf.PortController}}}, any, 0, of13, ofperr.OFPBAC_BAD_OUT_PORT},
	} {
		err := CheckVersion(tc.acts, tc.m, 10, tc.table, 100, tc.version)
		if err != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
	}
}

func mustAddr(s string) netip.Addr { return netip.MustParseAddr(s) }

// Check records the match's transport protocol so that mod_tp_src goes
// out as set_field of tcp_src in OpenFlow 1.2+, as OVS sends it back in
// dump-flows.
func TestCheckChoosesEncoding(t *testing.T) {
	acts := []Action{&SetL4SrcPort{Port: 80}}
	if err := Check(acts, matchOf(t, "eth_type", 0x0800, "nw_proto", 6), 10, 0, 255); err != nil {
		t.Fatal(err)
	}
	got := AppendActions(nil, acts, of13)
	want := AppendActions(nil, []Action{setField(t, "tcp_src", []byte{0, 80}, nil)}, of13)
	if !bytes.Equal(got, want) {
		t.Errorf("mod_tp_src after Check: %x, want set_field tcp_src %x", got, want)
	}
	// Check works on a copy of the match: push_vlan does not leak.
	m := &mf.Match{}
	if err := Check([]Action{&PushVLAN{EtherType: 0x8100}}, m, 10, 0, 255); err != nil {
		t.Fatal(err)
	}
	if m.Flow.VLANs[0].Present() {
		t.Error("Check changed the caller's match")
	}
}

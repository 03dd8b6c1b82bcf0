package ofpact

import (
	"bytes"
	"fmt"
	"net/netip"
	"os/exec"
	"strings"
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
		switch v := kv[i+1].(type) {
		case int:
			f.SetMatch(&m, mf.ValueFromUint(uint64(v), f.Bytes))
		case [2]int: // value, mask
			f.SetMatchMasked(&m, mf.ValueFromUint(uint64(v[0]), f.Bytes), mf.ValueFromUint(uint64(v[1]), f.Bytes))
		}
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

// TestCheckAgainstOVS compares Check with the checks ovs-ofctl
// parse-flow makes (ports below OFPP_MAX, the flow's table, consistency
// per version: "no usable protocol" is its answer for an action OpenFlow
// 1.1+ finds inconsistent with the match).
func TestCheckAgainstOVS(t *testing.T) {
	ovs := needOVS(t)
	for _, c := range []struct {
		match string
		kv    []any
		table uint8
		acts  string
	}{
		{"ip", []any{"eth_type", 0x0800}, 0, "mod_tp_src:80"},
		{"tcp", []any{"eth_type", 0x0800, "nw_proto", 6}, 0, "mod_tp_src:80"},
		{"in_port=1", []any{"in_port", 1}, 0, "mod_nw_src:1.2.3.4"},
		{"in_port=1", []any{"in_port", 1}, 0, "set_field:1.2.3.4->ip_src"},
		{"in_port=1", []any{"in_port", 1}, 3, "goto_table:2"},
		{"in_port=1", []any{"in_port", 1}, 3, "goto_table:4"},
		{"in_port=1", []any{"in_port", 1}, 0, "output:65280"},
		{"in_port=1", []any{"in_port", 1}, 0, "output:65279"},
		{"in_port=1", []any{"in_port", 1}, 0, "strip_vlan"},
		{"dl_vlan=3", []any{"vlan_tci", 0x1003}, 0, "strip_vlan"},
		{"in_port=1", []any{"in_port", 1}, 0, "meter:0"},
		{"in_port=1", []any{"in_port", 1}, 0, "fin_timeout(idle_timeout=1)"},
		{"tcp", []any{"eth_type", 0x0800, "nw_proto", 6}, 0, "fin_timeout(idle_timeout=1)"},
		{"in_port=1", []any{"in_port", 1}, 0, "ct(commit)"},
		{"ip", []any{"eth_type", 0x0800}, 0, "ct(commit),dec_ttl,mod_nw_tos:8"},
		{"arp", []any{"eth_type", 0x0806}, 0, "set_field:1->arp_op"},
		{"ip", []any{"eth_type", 0x0800}, 0, "move:NXM_OF_TCP_SRC[]->NXM_NX_REG0[0..15]"},
		{"tcp", []any{"eth_type", 0x0800, "nw_proto", 6}, 0, "move:NXM_OF_TCP_SRC[]->NXM_NX_REG0[0..15]"},
		{"in_port=1", []any{"in_port", 1}, 0, "set_field:5->vlan_vid"},
		{"dl_vlan=2", []any{"vlan_tci", 0x1002}, 0, "set_field:4101->vlan_vid"},
		{"in_port=1", []any{"in_port", 1}, 0, "mod_vlan_vid:5"},
		{"in_port=1", []any{"in_port", 1}, 0, "set_vlan_vid:5"},
		{"ipv6", []any{"eth_type", 0x86dd}, 0, "ct(commit,nat(src=198.18.0.1))"},
		{"ip", []any{"eth_type", 0x0800}, 0, "ct(commit,nat(src=198.18.0.1))"},
		{"in_port=1", []any{"in_port", 1}, 0, "learn(table=2,NXM_OF_IP_SRC[])"},
		{"ip", []any{"eth_type", 0x0800}, 0, "learn(table=2,NXM_OF_IP_SRC[])"},
		{"in_port=1", []any{"in_port", 1}, 0, "learn(table=2,eth_type=0x800,NXM_OF_IP_DST[]=NXM_NX_REG0[])"},
		{"in_port=1", []any{"in_port", 1}, 0, "learn(table=2,NXM_OF_IP_DST[]=NXM_NX_REG0[])"},
		{"in_port=1", []any{"in_port", 1}, 0, "encap(nsh),dec_nsh_ttl"}, // OpenFlow 1.3+ only
		{"in_port=1", []any{"in_port", 1}, 0, "dec_nsh_ttl"},
	} {
		flow := fmt.Sprintf("table=%d,%s,actions=%s", c.table, c.match, c.acts)
		for _, version := range []uint8{of10, of13} {
			if version == of10 && strings.Contains(c.acts, "encap") {
				continue // OpenFlow 1.0 cannot carry encap: not a Check matter
			}
			out, _ := exec.Command(ovs, "-O", versionNames[version], "parse-flow", flow).CombinedOutput()
			want := ""
			switch s := string(out); {
			case strings.Contains(s, "no usable protocol"):
				want = "OFPBAC_MATCH_INCONSISTENT"
			case strings.Contains(s, "actions are invalid"):
				want = s[strings.LastIndex(s, "(")+1 : strings.LastIndex(s, ")")]
			case !strings.Contains(s, "FLOW_MOD"):
				t.Fatalf("ovs-ofctl parse-flow %q: %s", flow, s)
			}
			acts, err := Parse(c.acts)
			if err != nil {
				t.Fatalf("Parse(%q): %v", c.acts, err)
			}
			err = CheckVersion(acts, matchOf(t, c.kv...), uint32(mf.PortMax), c.table, 255, version)
			if errName(err) != want {
				t.Errorf("%s %s: Check %q, OVS %q", versionNames[version], flow, errName(err), want)
			}
		}
	}
}

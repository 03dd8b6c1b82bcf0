package ofpact

import (
	"os/exec"
	"strings"
	"testing"
)

// TestCheckMatrixAgainstOVS checks every action of a list against every
// match of a list, in OpenFlow 1.0 and 1.3, and requires Check to agree
// with ovs-ofctl parse-flow on accepting or rejecting each (and on the
// error).
func TestCheckMatrixAgainstOVS(t *testing.T) {
	ovs := needOVS(t)
	if testing.Short() {
		t.Skip("slow")
	}
	matches := []struct {
		text string
		kv   []any
	}{
		{"in_port=1", []any{"in_port", 1}},
		{"ip", []any{"eth_type", 0x0800}},
		{"ipv6", []any{"eth_type", 0x86dd}},
		{"tcp", []any{"eth_type", 0x0800, "nw_proto", 6}},
		{"udp6", []any{"eth_type", 0x86dd, "nw_proto", 17}},
		{"sctp", []any{"eth_type", 0x0800, "nw_proto", 132}},
		{"icmp", []any{"eth_type", 0x0800, "nw_proto", 1}},
		{"arp", []any{"eth_type", 0x0806}},
		{"dl_vlan=5", []any{"vlan_tci", 0x1005}},
		{"ip,nw_frag=later", []any{"eth_type", 0x0800, "ip_frag", 3}},
		{"ct_state=+trk", []any{"ct_state", [2]int{0x20, 0x20}}},
		{"ip,ct_state=+trk+est", []any{"eth_type", 0x0800, "ct_state", [2]int{0x22, 0x22}}},
		{"ip,ct_state=+trk-inv", []any{"eth_type", 0x0800, "ct_state", [2]int{0x20, 0x30}}},
	}
	actions := []string{
		"mod_nw_src:1.2.3.4", "mod_nw_tos:4", "mod_nw_ecn:1", "mod_nw_ttl:5", "dec_ttl",
		"mod_tp_src:1", "mod_tp_dst:2", "strip_vlan", "mod_vlan_vid:3", "set_vlan_pcp:1",
		"push_vlan:0x8100", "set_field:1.2.3.4->ip_dst", "set_field:::1->ipv6_src", "set_field:5->tcp_src",
		"set_field:5->udp_dst", "set_field:2->arp_op", "set_field:7->vlan_pcp", "ct(commit,exec(set_field:0x1->ct_mark))",
		"load:0x5->NXM_OF_TCP_DST[]", "move:NXM_OF_IP_SRC[]->NXM_NX_REG0[]", "move:NXM_NX_REG0[]->NXM_OF_IP_DST[]",
		"move:NXM_NX_CT_MARK[]->NXM_NX_REG0[]", "push:NXM_OF_TCP_SRC[]", "pop:NXM_OF_UDP_SRC[]",
		"ct(commit)", "ct(commit,alg=ftp)", "ct(commit,alg=tftp)", "ct(commit,nat(src=1.2.3.4))",
		"ct(commit,nat(dst=[::1]))", "resubmit(,1,ct)", "fin_timeout(idle_timeout=1)",
		"output:NXM_OF_TCP_SRC[]", "multipath(eth_src,0,modulo_n,2,0,NXM_OF_TCP_DST[0..1])",
		"learn(table=1,NXM_OF_TCP_DST[])", "learn(table=1,eth_type=0x800,nw_proto=6,NXM_OF_TCP_DST[])",
		"check_pkt_larger(100)->NXM_OF_TCP_DST[0]", "clone(mod_nw_src:1.2.3.4)", "write_actions(mod_tp_dst:1)",
		"pop_mpls:0x0800", "set_mpls_ttl(1)", "push_mpls:0x8847,set_mpls_ttl(2)",
	}
	compared := 0
	for _, m := range matches {
		for _, a := range actions {
			flow := "table=1," + m.text + ",actions=" + a
			acts, perr := Parse(a)
			if perr != nil {
				t.Fatalf("Parse(%q): %v", a, perr)
			}
			for _, version := range []uint8{of10, of13} {
				out, _ := exec.Command(ovs, "-O", versionNames[version], "parse-flow", flow).CombinedOutput()
				s := string(out)
				want := ""
				switch {
				case strings.Contains(s, "no usable protocol"):
					if version == of10 {
						continue // not expressible in OpenFlow 1.0: not Check's matter
					}
					want = "OFPBAC_MATCH_INCONSISTENT"
				case strings.Contains(s, "actions are invalid"):
					want = s[strings.LastIndex(s, "(")+1 : strings.LastIndex(s, ")")]
				case !strings.Contains(s, "FLOW_MOD"):
					continue // OVS rejects the flow itself (e.g. a prerequisite of the match)
				}
				err := CheckVersion(acts, matchOf(t, m.kv...), 0xff00, 1, 255, version)
				compared++
				if errName(err) != want {
					t.Errorf("%s %s: Check %q, OVS %q", versionNames[version], flow, errName(err), want)
				}
			}
		}
	}
	t.Logf("%d checks compared", compared)
}

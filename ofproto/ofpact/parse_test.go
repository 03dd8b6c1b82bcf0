package ofpact

import (
	"os/exec"
	"strings"
	"testing"

	"gvs/ofproto/mf"
)

// Format and Parse are inverse on everything gvs builds.
func TestParseFormatRoundTrip(t *testing.T) {
	for _, acts := range builtActions(t) {
		text := Format(acts)
		got, err := Parse(text)
		if err != nil {
			t.Errorf("Parse(%q): %v", text, err)
			continue
		}
		if again := Format(got); again != text {
			t.Errorf("Parse(%q) formats as %q", text, again)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, s := range []string{
		"bogus:3",
		"output:",
		"resubmit(,,,)",
		"set_field:1->nosuchfield",
		"set_field:1->nw_proto",
		"load:0x100->NXM_NX_REG0[0..7]",
		"move:NXM_NX_REG0[0..3]->NXM_NX_REG1[0..4]",
		"load:0x1->OXM_OF_VLAN_VID[0..12]", // "field is only 12 bits wide"
		"set_field:ANY->reg0",              // "bad syntax for reg0 value"
		"ct(force)",
		"conjunction(1,3/2)",
		"goto_table:1,output:2", // instruction order
		"clone(output:1",
		"drop,output:1",
		"write_actions(exit)",
	} {
		if acts, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) = %s, want an error", s, Format(acts))
		}
	}
}

// parseFlowCase is a match (in ovs-ofctl syntax and as built here) and an
// action list in ovs-ofctl syntax.
type parseFlowCase struct {
	match string
	kv    []any
	acts  string
}

var parseFlowCases = []parseFlowCase{
	{"ip", []any{"eth_type", 0x0800}, "mod_nw_src:198.18.0.1,mod_nw_dst:198.18.0.2,mod_nw_tos:32,mod_nw_ttl:3,dec_ttl,output:1"},
	{"tcp", []any{"eth_type", 0x0800, "nw_proto", 6}, "mod_tp_src:80,mod_tp_dst:8080,fin_timeout(idle_timeout=5),output:LOCAL"},
	{"udp", []any{"eth_type", 0x0800, "nw_proto", 17}, "mod_tp_dst:53,enqueue:3:7"},
	{"dl_vlan=5", []any{"vlan_tci", 0x1005}, "mod_vlan_vid:7,mod_vlan_pcp:2,strip_vlan,NORMAL"},
	{"in_port=1", []any{"in_port", 1}, "mod_dl_src:02:00:00:00:00:01,mod_dl_dst:02:00:00:00:00:02,IN_PORT"},
	{"in_port=1", []any{"in_port", 1}, "resubmit(,2),resubmit:3,resubmit(4,5),load:0x2a->NXM_NX_REG0[0..7],move:NXM_NX_REG0[]->NXM_NX_REG1[]"},
	{"in_port=1", []any{"in_port", 1}, "set_field:0x1->reg0,set_field:0x5/0xf->reg1,set_field:0x99->metadata,push:NXM_NX_REG0[],pop:NXM_NX_REG2[]"},
	{"in_port=1", []any{"in_port", 1}, "controller(userdata=00.01.02,pause),controller(reason=no_match,max_len=100,id=3),CONTROLLER:200,controller"},
	{"in_port=1", []any{"in_port", 1}, "note:01.02.03,set_tunnel:0x5,set_tunnel64:0x6,set_queue:3,pop_queue,group:4,exit"},
	{"ip", []any{"eth_type", 0x0800}, "ct(commit,zone=5,table=3,nat(src=198.18.0.1-198.18.0.9:1000-2000,random),exec(set_field:0x1->ct_mark)),ct_clear"},
	{"tcp", []any{"eth_type", 0x0800, "nw_proto", 6}, "ct(zone=NXM_NX_REG13[0..15],table=8,nat),ct(commit,force,alg=ftp)"},
	{"ipv6", []any{"eth_type", 0x86dd}, "ct(commit,nat(dst=[2001:db8::1]:80,persistent,hash))"},
	{"in_port=1", []any{"in_port", 1}, "clone(output:1,resubmit(,3)),check_pkt_larger(1500)->NXM_NX_REG0[3],output(port=2,max_len=100)"},
	{"in_port=1", []any{"in_port", 1}, "conjunction(7,1/2),conjunction(8,2/2)"},
	{"in_port=1", []any{"in_port", 1}, "output:NXM_NX_REG4[],dec_ttl(1,2)"},
	{"in_port=1", []any{"in_port", 1}, "meter:3,output:2,clear_actions,write_actions(output:3,set_field:0x2->reg0),write_metadata:0x10/0xff,goto_table:4"},
	{"in_port=1", []any{"in_port", 1}, "drop"},
	// ANY is a port (OFPP_ANY), not a zero mask.
	{"in_port=1", []any{"in_port", 1}, "set_field:ANY->in_port,set_field:NONE->in_port,set_field:LOCAL->in_port,output:2"},
	// vlan_vid is 12 bits wide for subfields: [0..11] is the whole field.
	{"dl_vlan=5", []any{"vlan_tci", 0x1005}, "load:0x7->OXM_OF_VLAN_VID[0..11],move:NXM_NX_REG0[0..11]->OXM_OF_VLAN_VID[],load:0x1->OXM_OF_VLAN_VID[3]"},
	{"dl_vlan=5", []any{"vlan_tci", 0x1005}, "move:OXM_OF_VLAN_VID[]->NXM_NX_REG1[0..11],set_field:4101->vlan_vid,set_field:0x5/0xf->vlan_vid"},
	{"mpls", []any{"eth_type", 0x8847}, "set_mpls_label(5),set_mpls_tc(1),set_mpls_ttl(9),dec_mpls_ttl,pop_mpls:0x0800"},
	{"ip", []any{"eth_type", 0x0800}, "push_mpls:0x8847,set_mpls_ttl(3)"},
	{"in_port=1", []any{"in_port", 1}, "encap(nsh(md_type=1,tlv(0x1000,10,0x12345678))),decap(),encap(ethernet),decap(packet_type(ns=1,type=0x894f))"},
	{"in_port=1", []any{"in_port", 1}, "multipath(symmetric_l4,50,hrw,32,0,NXM_NX_REG0[0..5]),bundle(eth_src,0,hrw,ofport,members:1,2),bundle_load(symmetric_l4,1,active_backup,ofport,NXM_NX_REG1[],members:3)"},
	{"in_port=1", []any{"in_port", 1}, "sample(probability=100,collector_set_id=1,obs_domain_id=2,obs_point_id=3),sample(probability=5,collector_set_id=0,obs_domain_id=0,obs_point_id=0,sampling_port=7,egress)"},
	{"in_port=1", []any{"in_port", 1}, "learn(table=10,idle_timeout=30,NXM_OF_VLAN_TCI[0..11],NXM_OF_ETH_DST[]=NXM_OF_ETH_SRC[],load:NXM_OF_IN_PORT[]->NXM_NX_REG0[0..15],output:NXM_OF_IN_PORT[])"},
	{"ip", []any{"eth_type", 0x0800}, "learn(table=78,idle_timeout=60,delete_learned,cookie=0x1234,OXM_OF_METADATA[],eth_type=0x800,NXM_OF_IP_SRC[],ip_dst=172.16.0.10,nw_proto=6,tcp_dst=80,load:0x1->NXM_NX_REG10[14],load:0xac100002->NXM_NX_REG4[],load:0x50->NXM_NX_REG8[0..15])"},
	{"in_port=1", []any{"in_port", 1}, "learn(table=2,priority=10,send_flow_rem,fin_idle_timeout=3,fin_hard_timeout=4,limit=5,result_dst=NXM_NX_REG2[0],eth_type=0x800,NXM_NX_REG1[0..3]=0x5)"},
}

func TestParseAgainstOVS(t *testing.T) {
	ovs := needOVS(t)
	compared := 0
	defer func() { t.Logf("%d flows compared", compared) }()
	for _, version := range []uint8{of10, of11, of13, of15} {
		for _, c := range parseFlowCases {
			flow := "table=1," + c.match + ",actions=" + c.acts
			out, err := exec.Command(ovs, "-O", versionNames[version], "parse-flow", flow).CombinedOutput()
			if err != nil {
				if strings.Contains(string(out), "no usable protocol") {
					continue // not expressible in this version
				}
				t.Fatalf("ovs-ofctl parse-flow %q: %v\n%s", flow, err, out)
			}
			var want, wantErr string
			for _, l := range strings.Split(string(out), "\n") {
				if i := strings.Index(l, " actions="); i >= 0 && strings.Contains(l, "FLOW_MOD") {
					want = l[i+len(" actions="):]
				}
				// Open vSwitch's own encoding may not decode (OpenFlow
				// 1.5 has only set_field, and a vlan_vid set_field must
				// keep the tag-present bit): ours must fail the same way.
				if _, e, ok := strings.Cut(l, "***decode error: "); ok {
					wantErr = strings.TrimSuffix(e, "***")
				}
			}
			acts, err := Parse(c.acts)
			if err != nil {
				t.Errorf("Parse(%q): %v", c.acts, err)
				continue
			}
			m := matchOf(t, c.kv...)
			if err := CheckVersion(acts, m, uint32(mf.PortMax), 1, 255, version); err != nil {
				t.Errorf("%s %s: Check: %v", versionNames[version], c.acts, err)
				continue
			}
			wire := AppendInstructions(nil, acts, version)
			back, err := PullInstructions(wire, version)
			if wantErr != "" {
				compared++
				if errName(err) != wantErr {
					t.Errorf("%s %s: our encoding %x decodes with %v, Open vSwitch's with %s", versionNames[version], c.acts, wire, err, wantErr)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s %s: our encoding %x does not decode: %v", versionNames[version], c.acts, wire, err)
				continue
			}
			compared++
			if got := Format(back); got != want {
				t.Errorf("%s %s:\n got %s\nwant %s", versionNames[version], c.acts, got, want)
			}
		}
	}
}

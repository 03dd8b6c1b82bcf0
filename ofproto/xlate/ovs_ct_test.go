package xlate_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gvs/ofproto/mf"
	"gvs/ofproto/xlate"
)

// recircIDs are the recirculation ids in a trace: Open vSwitch frees a
// trace's ids and allocates new ones each time, ours are kept and shared.
var recircIDs = regexp.MustCompile(`recirc\(0x[0-9a-f]+\)|recirc_id=0x[0-9a-f]+|recirc_id=\d+|recirc_id\(0x[0-9a-f]+\)`)

func normalRecirc(s string) string {
	return recircIDs.ReplaceAllStringFunc(s, func(m string) string {
		switch {
		case strings.HasPrefix(m, "recirc("):
			return "recirc(N)"
		case strings.HasPrefix(m, "recirc_id("):
			return "recirc_id(N)"
		}
		return "recirc_id=0x1"
	})
}

// TestConntrackTraceAgainstOpenVSwitch: firewall, zone, NAT, mark and
// label pipelines in Debian's ovs-vswitchd (dummy datapath) and in
// translation: ofproto/trace through the ct actions and the
// recirculations they fork must print the same text (recirculation ids
// normalised), with our megaflows never wider.
func TestConntrackTraceAgainstOpenVSwitch(t *testing.T) {
	r := startRefSwitch(t)
	const tcp = "in_port=1,tcp,nw_src=198.18.0.1,nw_dst=198.18.0.2,tp_src=1000,tp_dst=80"
	const tcpBack = "in_port=2,tcp,nw_src=198.18.0.2,nw_dst=198.18.0.1,tp_src=80,tp_dst=1000"
	const tcp6 = "in_port=1,tcp6,ipv6_src=2001:2::1,ipv6_dst=2001:2::2,tp_src=1000,tp_dst=80"
	type trace struct {
		flow   string
		ctNext []string
	}
	cases := []struct {
		name  string
		flows []string
		trace []trace
	}{
		{"stateful firewall", []string{
			"table=0,priority=100,ip,ct_state=-trk,actions=ct(table=1,zone=5)",
			"table=0,priority=100,ipv6,ct_state=-trk,actions=ct(table=1,zone=5)",
			"table=0,priority=1,actions=drop",
			"table=1,priority=100,in_port=1,ct_state=+trk+new,ip,actions=ct(commit,zone=5),output:2",
			"table=1,priority=100,in_port=1,ct_state=+trk+new,ipv6,actions=ct(commit,zone=5),output:2",
			"table=1,priority=90,ct_state=+trk+est,ip,in_port=1,actions=output:2",
			"table=1,priority=90,ct_state=+trk+est,ip,in_port=2,actions=output:1",
			"table=1,priority=80,ct_state=+trk+rel,ip,actions=output:1",
			"table=1,priority=1,actions=drop",
		}, []trace{
			{tcp, nil},
			{tcp, []string{"trk,est"}},
			{tcpBack, []string{"trk,est,rpl"}},
			{tcpBack, nil},
			{tcp6, nil},
			{tcpBack, []string{"trk,rel"}},
			{"in_port=3,arp,arp_spa=198.18.0.1,arp_tpa=198.18.0.2,arp_op=1", nil},
		}},
		{"zone from a register, mark, label, commit before output", []string{
			"table=0,priority=10,in_port=1,ip,actions=set_field:7->reg6,mod_nw_dst:198.18.0.9,ct(zone=NXM_NX_REG6[0..15],table=1)",
			"table=1,priority=10,ct_state=+new+trk,ip,actions=ct(commit,zone=NXM_NX_REG6[0..15],exec(set_field:0x11->ct_mark,set_field:0x1/0xff->ct_label)),output:2",
			"table=1,priority=20,ct_state=+est+trk,ct_mark=0x11,ip,actions=ct_clear,output:3",
			"table=0,priority=10,in_port=2,ip,actions=ct(commit,force,zone=3,exec(set_field:0xff00/0xff00->ct_mark)),output:1",
		}, []trace{
			{tcp, nil},
			{tcp, []string{"trk,est"}},
			{tcpBack, nil},
		}},
		{"nat", []string{
			"table=0,priority=10,in_port=1,ip,actions=ct(commit,zone=1,nat(src=198.18.1.1-198.18.1.5:1000-2000,random),table=2)",
			"table=0,priority=10,in_port=2,ip,actions=ct(zone=1,nat,table=2)",
			"table=0,priority=10,in_port=3,ip,actions=ct(commit,nat(dst=198.18.2.2:8080,persistent),table=2)",
			"table=0,priority=10,in_port=4,ipv6,actions=ct(commit,nat(src=[2001:2::9]:100-200,hash),table=2)",
			"table=0,priority=10,in_port=4,ip,actions=ct(commit,nat(dst=198.18.2.2-198.18.2.4),table=2)",
			"table=2,priority=11,ct_state=+trk+snat,ip,actions=output:2",
			"table=2,priority=10,ct_state=+trk+dnat,ip,actions=output:3",
			"table=2,priority=5,ip,nw_src=198.18.1.1,actions=output:4",
			"table=2,priority=5,ipv6,actions=output:4",
			"table=2,priority=5,ip,nw_dst=198.18.2.2,actions=output:1",
			"table=2,priority=1,actions=drop",
		}, []trace{
			{tcp, nil},
			{tcp, []string{"trk,new,snat"}},
			{tcpBack, []string{"trk,est,rpl,dnat"}},
			{"in_port=3,tcp,nw_src=198.18.0.3,nw_dst=198.18.0.2,tp_src=1000,tp_dst=80", nil},
			{"in_port=4,tcp6,ipv6_src=2001:2::1,ipv6_dst=2001:2::2,tp_src=1000,tp_dst=80", nil},
			{"in_port=4,udp,nw_src=198.18.0.4,nw_dst=198.18.0.2,udp_src=1000,udp_dst=53", nil},
		}},
		{"OVN's stateful ACL actions", []string{
			"table=0,priority=100,ip,actions=set_field:0x1->reg13,set_field:0x5->reg3,ct(table=1,zone=NXM_NX_REG13[0..15],nat)",
			"table=1,priority=100,ct_state=+new+trk,ip,actions=ct(commit,zone=NXM_NX_REG13[0..15],nat(src),exec(set_field:0/0x1->ct_mark,move:NXM_NX_XXREG0[0..31]->NXM_NX_CT_LABEL[96..127])),resubmit(,2)",
			"table=1,priority=90,ct_state=+est+trk,ct_label=0x5000000000000000000000000/0xffffffff000000000000000000000000,ip,actions=resubmit(,2)",
			"table=1,priority=80,ct_state=+est+trk,ct_mark=0x1/0x1,ip,actions=drop",
			"table=2,priority=1,actions=output:2",
		}, []trace{
			{tcp, nil},
			{tcp, []string{"trk,est"}},
			{tcpBack, []string{"trk,est,rpl"}},
		}},
		{"alg, resubmit with the ct tuple, ct in clone", []string{
			"table=0,priority=10,in_port=1,tcp,actions=ct(commit,alg=ftp,table=1)",
			"table=0,priority=10,in_port=2,udp,actions=ct(commit,alg=tftp),output:1",
			"table=0,priority=10,in_port=3,ip,actions=clone(ct(commit,zone=2),output:1),output:2",
			"table=0,priority=10,in_port=4,tcp,actions=resubmit(,1)",
			"table=1,priority=10,ct_state=+trk-inv,tcp,actions=resubmit(,2,ct)",
			"table=2,priority=10,tcp,tp_dst=21,actions=output:2",
			"table=2,priority=5,actions=output:3",
		}, []trace{
			{"in_port=1,tcp,nw_src=198.18.0.1,nw_dst=198.18.0.2,tp_src=1000,tp_dst=21", nil},
			{"in_port=2,udp,nw_src=198.18.0.1,nw_dst=198.18.0.2,udp_src=1000,udp_dst=69", nil},
			{"in_port=3,tcp,nw_src=198.18.0.1,nw_dst=198.18.0.2,tp_src=1000,tp_dst=21", nil},
			// A tracked packet whose original tuple differs from its own
			// (a reply after NAT): the lookup sees the tuple.
			{"tcp,in_port=4,ct_state=est|rpl|trk,ct_nw_src=198.18.0.1,ct_nw_dst=198.18.0.2,ct_nw_proto=6,ct_tp_src=1000,ct_tp_dst=21,nw_src=198.18.0.9,nw_dst=198.18.0.8,tp_src=5,tp_dst=6", nil},
			{"tcp,in_port=4,ct_state=est|rpl|trk,ct_nw_src=198.18.0.1,ct_nw_dst=198.18.0.2,ct_nw_proto=6,ct_tp_src=1000,ct_tp_dst=22,nw_src=198.18.0.9,nw_dst=198.18.0.8,tp_src=5,tp_dst=21", nil},
		}},
	}
	recirc := xlate.NewRecircTable()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r.t = t
			r.run("ovs-ofctl", "-O", "OpenFlow15", "del-flows", "br0")
			// The bridge under test gets Open vSwitch's text of each flow in
			// the order the flows were added, as Open vSwitch got them:
			// overlapping rules of equal priority are looked up in the
			// order their subtables were made, in both switches, while
			// dump-flows lists them in a hash order that changes from run
			// to run.
			dumpFile := filepath.Join(r.dir, "dump")
			os.WriteFile(dumpFile, []byte(strings.Join(flowsInAddOrder(r, c.flows), "\n")+"\n"), 0o644)
			br := r.bridge(t, dumpFile)
			for _, tr := range c.trace {
				args := []string{"ofproto/trace", "br0", tr.flow}
				var ctNext []uint32
				for _, s := range tr.ctNext {
					args = append(args, "--ct-next", s)
					st, err := xlate.ParseCTNext(s)
					if err != nil {
						t.Fatal(err)
					}
					ctNext = append(ctNext, st)
				}
				want := r.appctl(args...)
				f, _, err := mf.ParseFlow(tr.flow, nil)
				if err != nil {
					t.Fatalf("%s: %v", tr.flow, err)
				}
				got := xlate.TraceText(br, f, xlate.TraceOptions{Recirc: recirc, CTNext: ctNext})
				compareTraces(t, tr.flow, got, want)
				var dp []string
				for _, l := range strings.Split(normalRecirc(got), "\n") {
					if strings.HasPrefix(l, "Datapath actions: ") {
						dp = append(dp, strings.TrimPrefix(l, "Datapath actions: "))
					}
				}
				t.Logf("%s %v: %s", tr.flow, tr.ctNext, strings.Join(dp, " | "))
			}
		})
	}
}

// compareTraces compares two ofproto/trace texts, which may hold several
// translations (recirculations): line for line with recirculation ids
// normalised, except the megaflows, where ours must match every bit Open
// vSwitch's does.
func compareTraces(t *testing.T, name, got, want string) {
	t.Helper()
	gl := strings.Split(normalRecirc(got), "\n")
	wl := strings.Split(normalRecirc(want), "\n")
	for i := 0; i < len(gl) || i < len(wl); i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if strings.HasPrefix(w, "Megaflow: ") && strings.HasPrefix(g, "Megaflow: ") {
			gm, wm := megaflow(t, g), megaflow(t, w)
			gw, ww := gm.Wildcards.Masks.Words(), wm.Wildcards.Masks.Words()
			for j := range gw {
				if ww[j]&^gw[j] != 0 {
					t.Errorf("%s: line %d: our megaflow is wider than Open vSwitch's:\n got %s\nwant %s", name, i+1, g, w)
					break
				}
			}
			continue
		}
		if g != w {
			t.Errorf("%s: line %d:\n got %q\nwant %q\n--- ours:\n%s--- Open vSwitch:\n%s", name, i+1, g, w, got, want)
			return
		}
	}
}

// TestConntrackTimeoutPolicyAgainstOpenVSwitch: a zone with a timeout
// policy (ovs-vsctl add-zone-tp): a committing ct in it names the policy,
// others do not.
func TestConntrackTimeoutPolicyAgainstOpenVSwitch(t *testing.T) {
	r := startRefSwitch(t)
	db := "--db=unix:" + r.dir + "/db.sock"
	r.run("ovs-vsctl", db, "--", "--id=@d", "create", "Datapath", "datapath_version=0", "--", "set", "Open_vSwitch", ".", "datapaths:dummy=@d")
	r.run("ovs-vsctl", db, "add-zone-tp", "dummy", "zone=5", "udp_first=7", "tcp_syn_sent=9")
	file := filepath.Join(r.dir, "flows")
	flows := []string{
		"table=0,priority=10,in_port=1,ip,actions=ct(commit,zone=5),ct(zone=5),ct(commit,zone=6),output:2",
	}
	os.WriteFile(file, []byte(strings.Join(flows, "\n")+"\n"), 0o644)
	r.run("ovs-ofctl", "-O", "OpenFlow15", "add-flows", "br0", file)
	dump := r.run("ovs-ofctl", "-O", "OpenFlow15", "dump-flows", "br0", "--no-stats")
	dumpFile := filepath.Join(r.dir, "dump")
	os.WriteFile(dumpFile, []byte(dump), 0o644)
	br := r.bridge(t, dumpFile)
	// The netdev datapath names a policy by its id, 1 for the first.
	br.SetConfig(xlate.Config{CTZoneTimeoutPolicy: map[uint16]uint32{5: 1}})
	const tcp = "in_port=1,tcp,nw_src=198.18.0.1,nw_dst=198.18.0.2,tp_src=1000,tp_dst=80"
	f, _, err := mf.ParseFlow(tcp, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := r.appctl("ofproto/trace", "br0", tcp)
	got := xlate.TraceText(br, f, xlate.TraceOptions{})
	compareTraces(t, tcp, got, want)
	if l := line(got, "Datapath actions: "); l != "Datapath actions: ct(commit,zone=5,timeout=1),ct(zone=5),ct(commit,zone=6),2" {
		t.Fatalf("%s", l)
	}
}

// flowsInAddOrder adds flows to the reference switch one at a time and
// returns its dump-flows text of each, in the order they were added.
func flowsInAddOrder(r *refSwitch, flows []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, fl := range flows {
		r.run("ovs-ofctl", "-O", "OpenFlow15", "add-flow", "br0", fl)
		for _, l := range strings.Split(r.run("ovs-ofctl", "-O", "OpenFlow15", "dump-flows", "br0", "--no-stats"), "\n") {
			if strings.TrimSpace(l) != "" && !seen[l] {
				seen[l] = true
				out = append(out, l)
			}
		}
	}
	return out
}

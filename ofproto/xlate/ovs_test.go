package xlate_test

import (
	"fmt"
	"gvs/internal/ovsref"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"gvs/ofproto/mf"
	"gvs/ofproto/ofpact"
	"gvs/ofproto/xlate"
	"gvs/ofproto/xlate/xlatetest"
)

// refSwitch is Debian's ovs-vswitchd with a dummy datapath and a bridge
// br0 of dummy ports p1..p4 (OpenFlow ports 1..4): the reference for
// ofproto/trace. Everything lives in a temporary directory and unix
// sockets; nothing touches the network.
type refSwitch struct {
	t   *testing.T
	dir string
	env []string
	ctl string
	dp  map[uint32]uint32 // OpenFlow port -> datapath port
}

func startRefSwitch(t *testing.T) *refSwitch {
	t.Helper()
	d := ovsref.Start(t, "gvsxl", "--enable-dummy=override")
	dir := d.Dir
	r := &refSwitch{t: t, dir: dir, env: d.Env, ctl: d.Ctl, dp: map[uint32]uint32{}}
	args := []string{"--db=unix:" + dir + "/db.sock", "--timeout=10", "--", "init",
		"--", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy", "fail-mode=secure",
		"protocols=OpenFlow10,OpenFlow13,OpenFlow15"}
	for i := 1; i <= 4; i++ {
		p := "p" + strconv.Itoa(i)
		args = append(args, "--", "add-port", "br0", p, "--", "set", "interface", p, "type=dummy", "ofport_request="+strconv.Itoa(i))
	}
	r.run("ovs-vsctl", args...)
	// "    p1 1/1: (dummy)": OpenFlow port / datapath port.
	re := regexp.MustCompile(`(?m)^\s+p(\d) (\d+)/(\d+):`)
	for _, m := range re.FindAllStringSubmatch(r.appctl("dpif/show"), -1) {
		of, _ := strconv.Atoi(m[2])
		dp, _ := strconv.Atoi(m[3])
		r.dp[uint32(of)] = uint32(dp)
	}
	if m := regexp.MustCompile(`(?m)^\s+br0 65534/(\d+):`).FindStringSubmatch(r.appctl("dpif/show")); m != nil {
		dp, _ := strconv.Atoi(m[1])
		r.dp[mf.PortLocal] = uint32(dp)
	}
	if len(r.dp) != 5 {
		t.Fatalf("dpif/show: %s", r.appctl("dpif/show"))
	}
	return r
}

func (r *refSwitch) run(name string, args ...string) string {
	r.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env, cmd.Dir = r.env, r.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(r.dir, "vswitchd.log"))
		r.t.Fatalf("%s %v: %v\n%s\nlog:\n%s", name, args, err, out, log)
	}
	return string(out)
}

func (r *refSwitch) appctl(args ...string) string {
	r.t.Helper()
	return r.run("ovs-appctl", append([]string{"-t", r.ctl}, args...)...)
}

// bridge returns a fake bridge with the same ports (and datapath port
// numbers) as the reference, its tables loaded from flows, looked up with
// the classifier.
func (r *refSwitch) bridge(t *testing.T, flowsFile string) *xlatetest.Bridge {
	br := xlatetest.NewBridge("br0")
	for of, dp := range r.dp {
		name := "p" + strconv.Itoa(int(of))
		if of == mf.PortLocal {
			name = "br0"
		}
		br.AddPort(&xlate.Port{OFPort: of, DPPort: dp, Name: name, Live: true})
	}
	loadFlows(t, br, flowsFile)
	xlatetest.UseClassifier(br)
	return br
}

func parseActions(t *testing.T, s string) []xlate.Action {
	as, err := ofpact.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	var out []xlate.Action
	for _, a := range as {
		out = append(out, a)
	}
	return out
}

// sortedActions sorts a "Datapath actions: " line's outputs (NORMAL's
// flooding order is Open vSwitch's hash order).
func sortedActions(l string) string {
	head, rest, _ := strings.Cut(l, ": ")
	parts := strings.Split(rest, ",")
	sort.Strings(parts)
	return head + ": " + strings.Join(parts, ",")
}

// megaflow parses a "Megaflow: " line.
func megaflow(t *testing.T, l string) mf.Match {
	t.Helper()
	s := strings.TrimPrefix(l, "Megaflow: ")
	m, _, err := mf.ParseMatch(s)
	if err != nil {
		t.Fatalf("megaflow %q: %v", s, err)
	}
	return m
}

// line returns the line of text starting with prefix.
func line(text, prefix string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return "(no " + prefix + " line)"
}

// TestTraceAgainstOpenVSwitch: the same flow tables in Debian's
// ovs-vswitchd (dummy datapath) and in translation; ofproto/trace of the
// same packets must give the same datapath actions and megaflow, and the
// same text.
func TestTraceAgainstOpenVSwitch(t *testing.T) {
	r := startRefSwitch(t)
	cases := []struct {
		name  string
		proto string // ovs-ofctl -O
		flows []string
		trace []string
	}{
		{"output and resubmit", "OpenFlow10", []string{
			"priority=10,in_port=1,actions=resubmit(,1),output:3",
			"table=1,priority=5,ip,nw_dst=198.18.0.2,actions=output:2",
			"table=1,priority=1,actions=output:4",
		}, []string{
			"in_port=1,tcp,nw_src=198.18.0.1,nw_dst=198.18.0.2,tp_src=1000,tp_dst=80",
			"in_port=1,udp,nw_src=198.18.0.1,nw_dst=198.18.0.9,udp_src=1000,udp_dst=80",
			"in_port=2,tcp,nw_src=198.18.0.1,nw_dst=198.18.0.2",
		}},
		{"rewrites", "OpenFlow10", []string{
			"in_port=1,ip,actions=mod_nw_src:198.18.9.9,dec_ttl,mod_tp_dst:8080,mod_dl_dst:02:00:00:00:00:99,output:2",
			"in_port=2,actions=set_field:0x5->reg0,resubmit(,2)",
			"table=2,reg0=5,actions=mod_vlan_vid:10,output:3,strip_vlan,output:4",
		}, []string{
			"in_port=1,tcp,nw_src=198.18.0.1,nw_dst=198.18.0.2,nw_ttl=64,tp_src=1000,tp_dst=80",
			"in_port=2,ip,nw_src=198.18.0.1,nw_dst=198.18.0.2",
			"in_port=2,dl_vlan=7,ip,nw_src=198.18.0.1,nw_dst=198.18.0.2",
		}},
		{"action set and metadata", "OpenFlow13", []string{
			"table=0,in_port=1,actions=write_actions(output:3),write_metadata:0x10/0xff,goto_table:1",
			"table=1,metadata=0x10,actions=write_actions(set_field:02:00:00:00:00:77->eth_src,output:4)",
		}, []string{
			"in_port=1,ip,nw_src=198.18.0.1,nw_dst=198.18.0.2",
			"in_port=1,reg3=0x7,xreg4=0x100000002,metadata=0x20,dl_vlan=9,ip,nw_src=198.18.0.1,nw_dst=198.18.0.2",
		}},
		{"controller, clone, check_pkt_larger", "OpenFlow13", []string{
			"in_port=1,actions=controller(userdata=01.02,max_len=100),output:2",
			"in_port=2,actions=clone(mod_dl_src:02:00:00:00:00:55,output:3),output:4",
			"in_port=3,actions=check_pkt_larger(200)->NXM_NX_REG0[0],resubmit(,1)",
			"table=1,reg0=1,actions=output:1",
			"table=1,reg0=0,actions=output:2",
			"in_port=4,ip,actions=dec_ttl,output:1",
		}, []string{
			"in_port=1,ip,nw_src=198.18.0.1,nw_dst=198.18.0.2",
			"in_port=2,ip,nw_src=198.18.0.1,nw_dst=198.18.0.2",
			"in_port=3,ip,nw_src=198.18.0.1,nw_dst=198.18.0.2",
			"in_port=4,ip,nw_src=198.18.0.1,nw_dst=198.18.0.2,nw_ttl=1,nw_proto=6",
		}},
		{"learn", "OpenFlow10", []string{
			"in_port=1,actions=learn(table=5,priority=9,idle_timeout=30,NXM_OF_ETH_DST[]=NXM_OF_ETH_SRC[],output:NXM_OF_IN_PORT[]),output:2",
		}, []string{
			"in_port=1,dl_src=02:00:00:00:00:0a,dl_dst=02:00:00:00:00:0b,ip,nw_src=198.18.0.1,nw_dst=198.18.0.2",
		}},
		{"groups", "OpenFlow13", []string{
			"in_port=1,actions=group:1,output:4",
			"in_port=2,actions=group:2",
			"in_port=3,actions=group:3",
		}, []string{
			"in_port=1,ip,nw_src=198.18.0.1,nw_dst=198.18.0.2",
			"in_port=2,ip,nw_src=198.18.0.1,nw_dst=198.18.0.2",
			"in_port=3,ip,nw_src=198.18.0.1,nw_dst=198.18.0.2",
		}},
		{"normal", "OpenFlow10", []string{
			"actions=NORMAL",
		}, []string{
			"in_port=1,dl_src=02:00:00:00:00:0a,dl_dst=ff:ff:ff:ff:ff:ff,ip,nw_src=198.18.0.1,nw_dst=198.18.0.2",
			"in_port=1,dl_src=02:00:00:00:00:0a,dl_dst=01:80:c2:00:00:00,ip,nw_src=198.18.0.1,nw_dst=198.18.0.2",
		}},
		{"limits and misses", "OpenFlow10", []string{
			"in_port=1,actions=output:2,resubmit(,0)",
			"in_port=2,actions=resubmit(,7),output:3",
			"in_port=3,actions=resubmit(1,1)",
			"table=1,in_port=1,actions=output:IN_PORT,output:4",
		}, []string{
			"in_port=1,ip,nw_src=198.18.0.1,nw_dst=198.18.0.2",
			"in_port=2,ip,nw_src=198.18.0.1,nw_dst=198.18.0.2",
			"in_port=3,ip,nw_src=198.18.0.1,nw_dst=198.18.0.2",
			"in_port=4,ip,nw_src=198.18.0.1,nw_dst=198.18.0.2",
		}},
		{"push_vlan and ttl", "OpenFlow13", []string{
			"in_port=1,actions=push_vlan:0x8100,set_field:4196->vlan_vid,output:2",
			"in_port=3,ip,actions=dec_ttl,output:2",
		}, []string{
			"in_port=1,ip,nw_src=198.18.0.1,nw_dst=198.18.0.2",
			"in_port=3,ip,nw_src=198.18.0.1,nw_dst=198.18.0.2,nw_ttl=9",
		}},
	}
	// Recirculation ids are allocated in the same order as Open vSwitch's.
	recirc := xlate.NewRecircTable()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r.t = t
			file := filepath.Join(r.dir, "flows")
			if err := os.WriteFile(file, []byte(strings.Join(c.flows, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			r.run("ovs-ofctl", "-O", c.proto, "del-flows", "br0")
			r.run("ovs-ofctl", "-O", "OpenFlow13", "del-groups", "br0")
			if c.name == "groups" {
				r.run("ovs-ofctl", "-O", "OpenFlow13", "add-group", "br0", "group_id=1,type=all,bucket=output:2,bucket=mod_dl_dst:02:00:00:00:00:99,output:3")
				r.run("ovs-ofctl", "-O", "OpenFlow13", "add-group", "br0", "group_id=2,type=ff,bucket=watch_port:2,output:2,bucket=watch_port:3,output:3")
				r.run("ovs-ofctl", "-O", "OpenFlow15", "add-group", "br0", "group_id=3,type=select,selection_method=dp_hash,bucket=bucket_id:0,output:1,bucket=bucket_id:1,output:2")
			}
			r.run("ovs-ofctl", "-O", c.proto, "add-flows", "br0", file)
			// Our side reads the flows as ovs-ofctl dumps them.
			dump := r.run("ovs-ofctl", "-O", c.proto, "dump-flows", "br0", "--no-stats")
			dumpFile := filepath.Join(r.dir, "dump")
			os.WriteFile(dumpFile, []byte(dump), 0o644)
			br := r.bridge(t, dumpFile)
			if c.name == "groups" {
				out := func(p uint32) []xlate.Action { return []xlate.Action{&ofpact.Output{Port: p}} }
				br.SetGroup(&xlatetest.Group{ID: 1, Type: xlate.GroupAll, B: []xlate.Bucket{
					{ID: 0, WatchPort: mf.PortNone, WatchGroup: xlate.GroupAny, Actions: out(2)},
					{ID: 1, WatchPort: mf.PortNone, WatchGroup: xlate.GroupAny, Actions: parseActions(t, "set_field:02:00:00:00:00:99->eth_dst,output:3")}}})
				br.SetGroup(&xlatetest.Group{ID: 2, Type: xlate.GroupFastFailover, B: []xlate.Bucket{
					{ID: 0, WatchPort: 2, WatchGroup: xlate.GroupAny, Actions: out(2)},
					{ID: 1, WatchPort: 3, WatchGroup: xlate.GroupAny, Actions: out(3)}}})
				br.SetGroup(&xlatetest.Group{ID: 3, Type: xlate.GroupSelect, Method: xlate.SelectDPHash, B: []xlate.Bucket{
					{ID: 0, Weight: 100, WatchPort: mf.PortNone, WatchGroup: xlate.GroupAny, Actions: out(1)},
					{ID: 1, Weight: 100, WatchPort: mf.PortNone, WatchGroup: xlate.GroupAny, Actions: out(2)}}})
			}
			for _, tf := range c.trace {
				want := r.appctl("ofproto/trace", "br0", tf)
				f, _, err := mf.ParseFlow(tf, nil)
				if err != nil {
					t.Fatalf("%s: %v", tf, err)
				}
				got := xlate.TraceText(br, f, xlate.TraceOptions{Recirc: recirc})
				for _, p := range []string{"Datapath actions: ", "Final flow: "} {
					g, w := line(got, p), line(want, p)
					if c.name == "normal" {
						g, w = sortedActions(g), sortedActions(w)
					}
					if g != w {
						t.Errorf("%s:\n got %s\nwant %s\n--- ours:\n%s--- Open vSwitch:\n%s", tf, g, w, got, want)
					}
				}
				// The megaflow: ours must match every bit Open vSwitch's
				// does (never wider). It may match more: Open vSwitch's
				// classifier tracks address prefixes, ours not yet.
				gm := megaflow(t, line(got, "Megaflow: "))
				wm := megaflow(t, line(want, "Megaflow: "))
				gw, ww := gm.Wildcards.Masks.Words(), wm.Wildcards.Masks.Words()
				for i := range gw {
					if ww[i]&^gw[i] != 0 {
						t.Errorf("%s: our megaflow is wider than Open vSwitch's:\n got %s\nwant %s", tf, line(got, "Megaflow: "), line(want, "Megaflow: "))
						break
					}
				}
				// Every other line is Open vSwitch's.
				gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
				if len(gl) != len(wl) {
					t.Errorf("%s: %d lines, Open vSwitch %d\n--- ours:\n%s--- Open vSwitch:\n%s", tf, len(gl), len(wl), got, want)
					continue
				}
				for i := range gl {
					if strings.HasPrefix(wl[i], "Megaflow: ") ||
						c.name == "normal" && strings.HasPrefix(wl[i], "Datapath actions: ") {
						continue
					}
					if gl[i] != wl[i] {
						t.Errorf("%s: line %d:\n got %q\nwant %q\n--- ours:\n%s--- Open vSwitch:\n%s", tf, i+1, gl[i], wl[i], got, want)
						break
					}
				}
			}
		})
	}
}

// TestOVNTraceAgainstOpenVSwitch: the recorded OVN two-port pipeline in
// Debian's ovs-vswitchd and in translation: the same datapath actions and
// trace for a ping and an ARP request.
func TestOVNTraceAgainstOpenVSwitch(t *testing.T) {
	r := startRefSwitch(t)
	flows := filepath.Join("..", "..", "tests", "testdata", "ovn-two-port.flows")
	r.run("ovs-ofctl", "-O", "OpenFlow15", "del-flows", "br0")
	r.run("ovs-ofctl", "-O", "OpenFlow15", "add-tlv-map", "br0", "{class=0x102,type=0x80,len=4}->tun_metadata0")
	abs, _ := filepath.Abs(flows)
	r.run("ovs-ofctl", "-O", "OpenFlow15", "add-flows", "br0", abs)
	dump := r.run("ovs-ofctl", "-O", "OpenFlow15", "dump-flows", "br0", "--no-stats")
	dumpFile := filepath.Join(r.dir, "dump")
	os.WriteFile(dumpFile, []byte(dump), 0o644)
	br := r.bridge(t, dumpFile)
	recirc := xlate.NewRecircTable()
	for _, tf := range []string{
		"in_port=1,icmp,dl_src=00:00:00:00:01:01,dl_dst=00:00:00:00:01:02,nw_src=198.18.0.1,nw_dst=198.18.0.2,nw_ttl=64,icmp_type=8",
		"in_port=2,icmp,dl_src=00:00:00:00:01:02,dl_dst=00:00:00:00:01:01,nw_src=198.18.0.2,nw_dst=198.18.0.1,nw_ttl=64,icmp_type=0",
		"in_port=1,arp,dl_src=00:00:00:00:01:01,dl_dst=ff:ff:ff:ff:ff:ff,arp_spa=198.18.0.1,arp_tpa=198.18.0.2,arp_op=1,arp_sha=00:00:00:00:01:01",
		"in_port=2,tcp,dl_src=00:00:00:00:01:02,dl_dst=00:00:00:00:01:01,nw_src=198.18.0.2,nw_dst=198.18.0.1,nw_ttl=64,tp_src=5201,tp_dst=40000",
	} {
		want := r.appctl("ofproto/trace", "br0", tf)
		f, _, err := mf.ParseFlow(tf, nil)
		if err != nil {
			t.Fatalf("%s: %v", tf, err)
		}
		got := xlate.TraceText(br, f, xlate.TraceOptions{Recirc: recirc})
		if g, w := line(got, "Datapath actions: "), line(want, "Datapath actions: "); g != w {
			t.Errorf("%s:\n got %s\nwant %s\n--- ours:\n%s--- Open vSwitch:\n%s", tf, g, w, got, want)
			continue
		}
		gm := megaflow(t, line(got, "Megaflow: "))
		wm := megaflow(t, line(want, "Megaflow: "))
		gw, ww := gm.Wildcards.Masks.Words(), wm.Wildcards.Masks.Words()
		for i := range gw {
			if ww[i]&^gw[i] != 0 {
				t.Errorf("%s: our megaflow is wider than Open vSwitch's:\n got %s\nwant %s", tf, line(got, "Megaflow: "), line(want, "Megaflow: "))
				break
			}
		}
		if g, w := line(got, "Megaflow: "), line(want, "Megaflow: "); g != w {
			t.Logf("%s: megaflows differ (ours may be narrower):\n got %s\nwant %s", tf, g, w)
		}
		gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
		for i := 0; i < len(gl) && i < len(wl); i++ {
			if strings.HasPrefix(wl[i], "Megaflow: ") {
				continue
			}
			if gl[i] != wl[i] {
				t.Errorf("%s: line %d:\n got %q\nwant %q\n%s", tf, i+1, gl[i], wl[i], strings.Join(wl[max(0, i-30):], "\n"))
				break
			}
		}
	}
}

// TestRandomPipelinesAgainstOpenVSwitch: random rule sets (as the
// megaflow property test makes them, without NORMAL, flooding and
// groups, whose output order or selection is Open vSwitch's own) in
// Debian's ovs-vswitchd and in translation: for random packets the
// datapath actions must be the same and our megaflow never wider.
func TestRandomPipelinesAgainstOpenVSwitch(t *testing.T) {
	t.Run("plain", func(t *testing.T) { testRandomPipelinesAgainstOpenVSwitch(t, false) })
	// With ct, ct_clear and resubmit(,N,ct) actions, matches on ct_state
	// and ct_mark, and packets carrying conntrack state.
	t.Run("conntrack", func(t *testing.T) { testRandomPipelinesAgainstOpenVSwitch(t, true) })
}

func testRandomPipelinesAgainstOpenVSwitch(t *testing.T, ct bool) {
	r := startRefSwitch(t)
	g := &propGen{rng: rand.New(rand.NewPCG(77, 1)), t: t, ct: ct, ctResubmit: ct}
	sets, packets := 12, 12
	if ct {
		sets = 24 // OpenFlow refuses ct in rules without an IP match: fewer rules survive
	}
	if testing.Short() {
		sets = 3
	}
	recirc := xlate.NewRecircTable()
	compared, forwarded, withCT, recircs := 0, 0, 0, 0
	for set := range sets {
		br := g.bridge()
		var lines []string
		for table := uint8(0); table < 4; table++ {
			// Distinct priorities: which of two overlapping rules of equal
			// priority matches is undefined (and the classifiers differ).
			for i, rule := range br.Rules(table) {
				rule.Prio = uint16(int(rule.Prio)*100 + 99 - i)
				acts := rule.Acts[:0:0]
				for _, a := range rule.Acts {
					switch a := a.(type) {
					case *ofpact.Group:
						continue
					case *ofpact.Output:
						if a.Port == mf.PortNormal || a.Port == mf.PortFlood {
							continue
						}
					case *ofpact.Clone:
						continue // may hold NORMAL or groups
					case *ofpact.SetL4DstPort:
						continue // needs a tcp/udp match to be accepted
					case *ofpact.SetField:
						switch a.Field.ID {
						case mf.TCPSrc, mf.UDPDst, mf.ARPOp, mf.IPv6Dst:
							continue // needs a protocol match
						}
					}
					acts = append(acts, a)
				}
				var oa []ofpact.Action
				sends := false
				for _, a := range acts {
					oa = append(oa, a)
					switch a.(type) {
					case *ofpact.Output, *ofpact.Resubmit, *ofpact.GotoTable:
						sends = true
					}
				}
				if !sends { // mostly rules that forward: drops compare little
					oa = append(oa, &ofpact.Output{Port: uint32(1 + g.pick(4))})
				}
				if rule.M.Wildcards.Masks.EtherType == 0 {
					// IP rules, so IP actions are accepted.
					rule.M.Flow.EtherType, rule.M.Wildcards.Masks.EtherType = 0x0800, 0xffff
				}
				m := rule.M.Format(int(rule.Prio))
				if m == "" {
					m = "priority=0"
				}
				if !strings.HasPrefix(m, "priority=") {
					m = "priority=32768," + m
				}
				lines = append(lines, fmt.Sprintf("table=%d,%s,actions=%s", table, strings.TrimSuffix(m, ","), ofpact.Format(oa)))
			}
		}
		r.run("ovs-ofctl", "-O", "OpenFlow13", "del-flows", "br0")
		// One at a time: Open vSwitch refuses the random rules whose
		// actions do not fit their match (OFPBAC_MATCH_INCONSISTENT);
		// both sides then take what it kept.
		for _, l := range lines {
			cmd := exec.Command("ovs-ofctl", "-O", "OpenFlow13", "add-flow", "br0", l)
			cmd.Env, cmd.Dir = r.env, r.dir
			if out, err := cmd.CombinedOutput(); err != nil && os.Getenv("GVS_DEBUG_REJECT") != "" {
				t.Logf("rejected %s: %s", l, out)
			}
		}
		dump := r.run("ovs-ofctl", "-O", "OpenFlow13", "dump-flows", "br0", "--no-stats")
		dumpFile := filepath.Join(r.dir, "dump")
		os.WriteFile(dumpFile, []byte(dump), 0o644)
		ours := r.bridge(t, dumpFile)
		for range packets {
			p := g.packet()
			tf := p.Format()
			tf = strings.Replace(tf, ",vlan_tci1=0x0000", "", 1) // the reference has vlan-limit 1
			tf = protocolFirst(tf)
			if strings.HasPrefix(tf, "udp") || strings.Contains(tf, ",udp,") || strings.Contains(tf, ",udp6,") { // flow_format's tp_src is tcp's in the parser
				tf = strings.NewReplacer(",tp_src=", ",udp_src=", ",tp_dst=", ",udp_dst=").Replace(tf)
			}
			want := r.appctl("ofproto/trace", "br0", tf)
			got := xlate.TraceText(ours, p, xlate.TraceOptions{Recirc: recirc})
			// Recirculation ids: Open vSwitch frees a trace's and
			// allocates a new one next time; ours are kept and reused.
			gl := normalRecirc(line(got, "Datapath actions: "))
			wl := normalRecirc(line(want, "Datapath actions: "))
			if gl != wl {
				t.Errorf("set %d, %s:\n got %s\nwant %s\nflows:\n%s\n--- ours:\n%s--- Open vSwitch:\n%s", set, tf, gl, wl, dump, got, want)
				continue
			}
			gm, wm := megaflow(t, line(got, "Megaflow: ")), megaflow(t, line(want, "Megaflow: "))
			gw, ww := gm.Wildcards.Masks.Words(), wm.Wildcards.Masks.Words()
			for i := range gw {
				if ww[i]&^gw[i] != 0 {
					t.Errorf("set %d, %s: our megaflow is wider than Open vSwitch's:\n got %s\nwant %s", set, tf, line(got, "Megaflow: "), line(want, "Megaflow: "))
					break
				}
			}
			// And the rest of the text, line for line.
			glines := strings.Split(normalRecirc(got), "\n")
			wlines := strings.Split(normalRecirc(want), "\n")
			for i := 0; i < len(glines) || i < len(wlines); i++ {
				var g, w string
				if i < len(glines) {
					g = glines[i]
				}
				if i < len(wlines) {
					w = wlines[i]
				}
				if strings.HasPrefix(w, "Megaflow: ") {
					continue
				}
				if g != w {
					t.Errorf("set %d, %s: line %d:\n got %q\nwant %q\n--- ours:\n%s--- Open vSwitch:\n%s", set, tf, i+1, g, w, got, want)
					break
				}
			}
			compared++
			if gl := line(got, "Datapath actions: "); gl != "Datapath actions: drop" {
				forwarded++
			}
			if strings.Contains(got, "Datapath actions: ct") || strings.Contains(got, ",ct(") || strings.Contains(got, "ct_clear") {
				withCT++
			}
			if strings.Contains(got, "recirc(") {
				recircs++
			}
		}
	}
	t.Logf("%d traces compared, %d forwarded, %d with ct or ct_clear, %d recirculating", compared, forwarded, withCT, recircs)
	if ct && withCT < compared/10 {
		t.Fatalf("only %d of %d traces had ct actions", withCT, compared)
	}
	if forwarded < compared/10 {
		t.Fatalf("only %d of %d random packets were forwarded: the comparison says little", forwarded, compared)
	}
}

// protocolFirst moves a flow's protocol keyword (tcp, udp6, arp...) to the
// front: flow_format prints the conntrack fields before it, but the
// parser wants it before the fields whose prerequisites it provides
// (ct_nw_src needs ip).
func protocolFirst(f string) string {
	parts := strings.Split(f, ",")
	for i, p := range parts {
		switch p {
		case "ip", "ipv6", "tcp", "tcp6", "udp", "udp6", "icmp", "icmp6", "arp", "sctp", "sctp6":
			if i > 0 {
				parts = append([]string{p}, append(parts[:i:i], parts[i+1:]...)...)
			}
			return strings.Join(parts, ",")
		}
	}
	return f
}

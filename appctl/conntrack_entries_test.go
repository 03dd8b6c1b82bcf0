package appctl

import (
	"encoding/binary"
	"encoding/hex"
	"net/netip"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gvs/dpif"
	"gvs/dpif/conntrack"
	"gvs/packet"
)

// ctFrame builds an Ethernet frame carrying l4 (its checksum field at
// csumOff, or -1 for none) over IPv4 or IPv6 from src to dst, with every
// checksum right.
func ctFrame(src, dst string, proto uint8, l4 []byte, csumOff int) []byte {
	s, d := netip.MustParseAddr(src), netip.MustParseAddr(dst)
	f := []byte{0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1}
	var pseudo uint16
	if s.Is4() {
		f = binary.BigEndian.AppendUint16(f, packet.EtherTypeIPv4)
		ip := []byte{0x45, 0, 0, 0, 0, 1, 0, 0, 64, proto, 0, 0}
		binary.BigEndian.PutUint16(ip[2:], uint16(20+len(l4)))
		ip = append(append(ip, s.AsSlice()...), d.AsSlice()...)
		binary.BigEndian.PutUint16(ip[10:], packet.IPv4HeaderChecksum(ip))
		f = append(f, ip...)
		pseudo = packet.PseudoHeaderSumV4(s.As4(), d.As4(), proto, uint16(len(l4)))
	} else {
		f = binary.BigEndian.AppendUint16(f, packet.EtherTypeIPv6)
		ip := []byte{0x60, 0, 0, 0, 0, 0, proto, 64}
		binary.BigEndian.PutUint16(ip[4:], uint16(len(l4)))
		f = append(append(append(f, ip...), s.AsSlice()...), d.AsSlice()...)
		pseudo = packet.PseudoHeaderSumV6(s.As16(), d.As16(), proto, uint32(len(l4)))
	}
	l4 = slices.Clone(l4)
	if csumOff >= 0 {
		if proto == protoICMP {
			pseudo = 0 // ICMPv4 has no pseudo-header
		}
		c := ^packet.Checksum(l4, pseudo)
		if c == 0 && proto == protoUDP {
			c = 0xffff
		}
		binary.BigEndian.PutUint16(l4[csumOff:], c)
	}
	return append(f, l4...)
}

func udpSegment(sport, dport uint16) []byte {
	u := binary.BigEndian.AppendUint16(nil, sport)
	u = binary.BigEndian.AppendUint16(u, dport)
	u = binary.BigEndian.AppendUint16(u, 12)
	return append(u, 0, 0, 'p', 'i', 'n', 'g')
}

func tcpSYN(sport, dport uint16) []byte {
	t := binary.BigEndian.AppendUint16(nil, sport)
	t = binary.BigEndian.AppendUint16(t, dport)
	t = binary.BigEndian.AppendUint32(t, 1000) // seq
	t = binary.BigEndian.AppendUint32(t, 0)    // ack
	return append(t, 5<<4, 0x02, 0xff, 0xff, 0, 0, 0, 0)
}

func icmpEcho(id, seq uint16) []byte {
	e := []byte{8, 0, 0, 0}
	e = binary.BigEndian.AppendUint16(e, id)
	return binary.BigEndian.AppendUint16(e, seq)
}

// TestConntrackEntriesMatchOpenVSwitch commits the same connections
// (UDP, TCP, ICMP echo, UDP over IPv6, GRE, SNAT and DNAT; zones, a
// mark, a label) in Debian's ovs-vswitchd (OpenFlow ct(commit) flows,
// frames injected with netdev-dummy/receive) and in gvs's datapath (the
// same frames executed with the equivalent datapath ct actions), then
// requires the same dump-conntrack (-m with connection ids and -s with
// seconds left normalised), ct-stats-show, ct-bkts, ct-get-nconns and
// ct-get-limits output from both, before and after flushes by partial
// match, five-tuple, zone and all.
func TestConntrackEntriesMatchOpenVSwitch(t *testing.T) {
	if _, err := exec.LookPath("ovs-ofctl"); err != nil {
		t.Skip("ovs-ofctl not installed")
	}
	e := newEnvConfig(t, dpif.Config{PMDs: 1})
	dp := e.sw.Datapath()
	if dp.Conntrack() == nil {
		t.Skip("the datapath has no tracker")
	}
	ref := startRefVswitchd(t)
	ref.run(t, "ovs-vsctl", "--db=unix:"+ref.dir+"/db.sock", "--timeout=10", "--", "set", "bridge", "br0", "fail-mode=secure",
		"--", "add-port", "br0", "p1", "--", "set", "interface", "p1", "type=dummy", "ofport_request=1")

	label := [16]byte{15: 1}
	conns := []struct {
		frame []byte
		flow  string // the Open vSwitch flow committing it
		req   conntrack.Request
	}{
		{ctFrame("198.18.0.1", "198.18.0.2", protoUDP, udpSegment(1000, 2000), 6),
			"udp,tp_dst=2000,actions=ct(commit)", conntrack.Request{Commit: true}},
		{ctFrame("198.18.0.1", "198.18.0.2", protoUDP, udpSegment(1001, 2001), 6),
			"udp,tp_dst=2001,actions=ct(commit,zone=5)", conntrack.Request{Commit: true, Zone: 5}},
		{ctFrame("198.18.0.1", "198.18.0.2", protoTCP, tcpSYN(40000, 80), 16),
			"tcp,actions=ct(commit,zone=5,exec(set_field:5->ct_mark))",
			conntrack.Request{Commit: true, Zone: 5, SetMark: true, Mark: 5, MarkMask: ^uint32(0)}},
		{ctFrame("198.18.0.3", "198.18.0.2", protoICMP, icmpEcho(7, 1), 2),
			"icmp,actions=ct(commit)", conntrack.Request{Commit: true}},
		{ctFrame("2001:2::1", "2001:2::2", protoUDP, udpSegment(5000, 53), 6),
			"udp6,actions=ct(commit,zone=3,exec(set_field:1->ct_label))",
			conntrack.Request{Commit: true, Zone: 3, SetLabel: true, Label: label, LabelMask: allOnes}},
		{ctFrame("198.18.0.1", "198.18.0.2", protoUDP, udpSegment(1002, 3000), 6),
			"udp,tp_dst=3000,actions=ct(commit,zone=7,nat(src=198.18.0.100))",
			conntrack.Request{Commit: true, Zone: 7, NAT: &conntrack.NAT{Kind: conntrack.NATSrc, AddrMin: netip.MustParseAddr("198.18.0.100")}}},
		{ctFrame("198.18.0.1", "198.18.0.2", protoUDP, udpSegment(1003, 3001), 6),
			"udp,tp_dst=3001,actions=ct(commit,zone=7,nat(dst=198.18.0.200:53))",
			conntrack.Request{Commit: true, Zone: 7, NAT: &conntrack.NAT{Kind: conntrack.NATDst, AddrMin: netip.MustParseAddr("198.18.0.200"), PortMin: 53}}},
		{ctFrame("198.18.0.1", "198.18.0.2", 47, []byte{0, 0, 0x08, 0}, -1),
			"ip,nw_proto=47,actions=ct(commit)", conntrack.Request{Commit: true}},
	}
	// Zone 5's limit is set before its connections come: Open vSwitch
	// counts a zone's connections from the moment it has a limit.
	ref.run(t, appctlBin, "-t", ref.ctl, "dpctl/ct-set-limits", "zone=5,limit=10")
	e.ok(t, "dpctl/ct-set-limits", "zone=5,limit=10")
	var flows []string
	for _, c := range conns {
		flows = append(flows, "priority=10,in_port=1,"+c.flow)
	}
	ref.run(t, "ovs-ofctl", "add-flows", "br0", "-", strings.Join(flows, "\n"))
	for _, c := range conns {
		ref.run(t, appctlBin, "-t", ref.ctl, "netdev-dummy/receive", "p1", hex.EncodeToString(c.frame))
		if err := dp.ExecuteKey(c.frame, &packet.Key{InPort: 1}, dpif.Actions{dpif.CT(c.req)}); err != nil {
			t.Fatal(err)
		}
	}

	connID, timeout := regexp.MustCompile(`\),id=\d+,`), regexp.MustCompile(`,timeout=\d+`)
	sorted := func(s string) string {
		lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
		slices.Sort(lines)
		s = connID.ReplaceAllString(strings.Join(lines, "\n"), "),id=ID,")
		return timeout.ReplaceAllString(s, ",timeout=T")
	}
	compare := func(sort bool, args ...string) {
		t.Helper()
		want := ref.run(t, appctlBin, append([]string{"-t", ref.ctl}, args...)...)
		got := e.ok(t, args...)
		if sort {
			want, got = sorted(want), sorted(got)
		}
		if got != want {
			t.Errorf("ovs-appctl %s:\ngvs:\n%s\nOpen vSwitch:\n%s", strings.Join(args, " "), got, want)
		}
	}
	all := func() {
		t.Helper()
		compare(true, "dpctl/dump-conntrack")
		compare(false, "dpctl/ct-get-nconns")
	}
	all()
	compare(true, "dpctl/dump-conntrack", "zone=5")
	compare(true, "dpctl/dump-conntrack", "-m")
	compare(true, "dpctl/dump-conntrack", "-m", "-s", "zone=5") // seconds left normalised
	// ... which must be Open vSwitch's default timeouts, give or take
	// the seconds between the two commits and dumps.
	seconds := func(out string) []int {
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		slices.Sort(lines)
		var s []int
		for _, l := range lines {
			if m := regexp.MustCompile(`,timeout=(\d+)`).FindStringSubmatch(l); m != nil {
				n, _ := strconv.Atoi(m[1])
				s = append(s, n)
			}
		}
		return s
	}
	want, got := seconds(ref.run(t, appctlBin, "-t", ref.ctl, "dpctl/dump-conntrack", "-s")), seconds(e.ok(t, "dpctl/dump-conntrack", "-s"))
	if len(got) != len(conns) || len(want) != len(conns) {
		t.Errorf("timeouts: gvs %v, Open vSwitch %v", got, want)
	}
	for i := range min(len(got), len(want)) {
		if d := got[i] - want[i]; d < -2 || d > 2 {
			t.Errorf("timeouts: gvs %v, Open vSwitch %v", got, want)
			break
		}
	}
	compare(false, "dpctl/ct-stats-show")
	compare(false, "dpctl/ct-stats-show", "verbose")
	compare(false, "dpctl/ct-stats-show", "zone=5")
	compare(false, "dpctl/ct-bkts")
	compare(false, "dpctl/ct-bkts", "gt=6")
	compare(false, "dpctl/ct-get-limits")
	compare(false, "dpctl/ct-get-limits", "zone=5,3") // 3: no limit, no count

	for _, flush := range [][]string{
		{"dpctl/flush-conntrack", "ct_nw_src=198.18.0.1,ct_nw_proto=17", "ct_tp_src=2001"},
		{"dpctl/flush-conntrack", "zone=5", "ct_nw_src=198.18.0.1,ct_nw_dst=198.18.0.2,ct_nw_proto=6,ct_tp_src=40000,ct_tp_dst=80"},
		{"dpctl/flush-conntrack", "zone=3"},
		{"dpctl/flush-conntrack"},
	} {
		ref.run(t, appctlBin, append([]string{"-t", ref.ctl}, flush...)...)
		e.ok(t, flush...)
		all()
		compare(false, "dpctl/ct-get-limits", "zone=5,3")
	}
}

var allOnes = [16]byte{255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255}

// run runs a command in the reference's environment (its OVS_RUNDIR),
// with stdin when given, and returns its output; a failure fails t.
func (r *refVswitchd) run(t *testing.T, name string, args ...string) string {
	t.Helper()
	var stdin string
	if n := len(args); n >= 2 && args[n-2] == "-" {
		stdin, args = args[n-1], args[:n-1]
	}
	cmd := exec.Command(name, args...)
	cmd.Env = append(cmd.Environ(), "OVS_RUNDIR="+r.dir, "OVS_LOGDIR="+r.dir, "OVS_DBDIR="+r.dir, "OVS_SYSCONFDIR="+r.dir)
	cmd.Dir = r.dir
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

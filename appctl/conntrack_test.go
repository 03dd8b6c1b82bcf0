package appctl

import (
	"gvs/internal/ovsref"
	"net/netip"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gvs/dpif"
	"gvs/dpif/conntrack"
	"gvs/packet"
)

// fakeCT is a tracker holding entries a test puts in, with Open vSwitch's
// userspace tracker's limits and maxconns behaviour (lib/conntrack.c): a
// zone without a limit of its own reports the default's.
type fakeCT struct {
	mu       sync.Mutex
	entries  []conntrack.Entry
	maxConns uint32
	defLimit uint32
	limits   map[uint16]uint32
	seqChk   bool
	flushes  []string
}

var (
	_ conntrack.Conntrack = (*fakeCT)(nil)
	_ TCPSeqChecker       = (*fakeCT)(nil)
)

func newFakeCT() *fakeCT {
	return &fakeCT{maxConns: 3000000, limits: map[uint16]uint32{}, seqChk: true}
}

func (f *fakeCT) Execute(*packet.Buffer, *conntrack.Request) {}

func (f *fakeCT) Dump(zone int32, fn func(*conntrack.Entry) bool) {
	f.mu.Lock()
	entries := slices.Clone(f.entries)
	f.mu.Unlock()
	for i := range entries {
		if zone == conntrack.AllZones || int32(entries[i].Zone) == zone {
			if !fn(&entries[i]) {
				return
			}
		}
	}
}

func (f *fakeCT) Flush(zone int32, orig *conntrack.Tuple) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	desc := "zone=" + strconv.Itoa(int(zone))
	if orig != nil {
		desc += " " + orig.Src.String() + ">" + orig.Dst.String()
	}
	f.flushes = append(f.flushes, desc)
	n := 0
	f.entries = slices.DeleteFunc(f.entries, func(e conntrack.Entry) bool {
		if zone != conntrack.AllZones && int32(e.Zone) != zone {
			return false
		}
		if orig != nil {
			o := e.Orig
			o.Zone = 0
			want := *orig
			want.Zone = 0
			if o != want {
				return false
			}
		}
		n++
		return true
	})
	return n
}

func (f *fakeCT) Stats() conntrack.Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return conntrack.Stats{Conns: uint32(len(f.entries))}
}

func (f *fakeCT) SetMaxConns(n uint32) { f.mu.Lock(); f.maxConns = n; f.mu.Unlock() }
func (f *fakeCT) MaxConns() uint32     { f.mu.Lock(); defer f.mu.Unlock(); return f.maxConns }

func (f *fakeCT) SetZoneLimits(ls []conntrack.ZoneLimit) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, l := range ls {
		if l.Zone == conntrack.DefaultZoneLimit {
			f.defLimit = l.Limit
		} else {
			f.limits[uint16(l.Zone)] = l.Limit
		}
	}
}

func (f *fakeCT) ZoneLimits(zones []uint16) []conntrack.ZoneLimit {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []conntrack.ZoneLimit{{Zone: conntrack.DefaultZoneLimit, Limit: f.defLimit}}
	if zones == nil {
		for z, l := range f.limits { // map order: the caller sorts
			out = append(out, conntrack.ZoneLimit{Zone: int32(z), Limit: l})
		}
		return out
	}
	for _, z := range zones {
		l, ok := f.limits[z]
		if !ok {
			l = f.defLimit
		}
		out = append(out, conntrack.ZoneLimit{Zone: int32(z), Limit: l})
	}
	return out
}

func (f *fakeCT) DelZoneLimits(zones []uint16) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, z := range zones {
		delete(f.limits, z)
	}
}

func (f *fakeCT) SetTimeoutPolicy(uint32, conntrack.TimeoutPolicy) {}
func (f *fakeCT) DelTimeoutPolicy(uint32)                          {}
func (f *fakeCT) SetZonePolicy(uint16, uint32)                     {}
func (f *fakeCT) SetTCPSeqCheck(on bool)                           { f.mu.Lock(); f.seqChk = on; f.mu.Unlock() }
func (f *fakeCT) TCPSeqCheck() bool                                { f.mu.Lock(); defer f.mu.Unlock(); return f.seqChk }

func (f *fakeCT) add(es ...conntrack.Entry) {
	f.mu.Lock()
	f.entries = append(f.entries, es...)
	f.mu.Unlock()
}

func tcpEntry(src, dst string, sport, dport, zone uint16, state string) conntrack.Entry {
	s, d := netip.MustParseAddr(src), netip.MustParseAddr(dst)
	return conntrack.Entry{
		Orig:  conntrack.Tuple{Src: s, Dst: d, SrcPort: sport, DstPort: dport, Proto: protoTCP, Zone: zone},
		Reply: conntrack.Tuple{Src: d, Dst: s, SrcPort: dport, DstPort: sport, Proto: protoTCP, Zone: zone},
		Zone:  zone, TCPState: state, Timeout: 30 * time.Second,
	}
}

func otherEntry(proto uint8, src, dst string, sport, dport, zone uint16) conntrack.Entry {
	e := tcpEntry(src, dst, sport, dport, zone, "")
	e.Orig.Proto, e.Reply.Proto = proto, proto
	if proto == protoICMP || proto == protoICMPv6 {
		e.Reply.SrcPort, e.Reply.DstPort = sport, 0<<8
	}
	return e
}

// TestConntrackCommandsOutput: dump-conntrack, ct-stats-show, ct-bkts and
// flush-conntrack over a tracker with known connections, through the
// real ovs-appctl.
func TestConntrackCommandsOutput(t *testing.T) {
	ct := newFakeCT()
	e := newEnvConfig(t, dpif.Config{PMDs: 1, Tracker: ct})
	ct.add(
		tcpEntry("198.18.0.1", "198.18.0.2", 40000, 80, 0, "ESTABLISHED"),
		tcpEntry("198.18.0.1", "198.18.0.2", 40001, 80, 5, "SYN_SENT"),
		tcpEntry("198.18.0.3", "198.18.0.2", 40002, 80, 5, "ESTABLISHED"),
		otherEntry(protoUDP, "198.18.0.1", "198.18.0.2", 53, 53, 0),
		otherEntry(protoICMP, "198.18.0.1", "198.18.0.2", 7, 8<<8, 0),
		otherEntry(protoICMPv6, "2001:2::1", "2001:2::2", 9, 128<<8, 0),
		otherEntry(47, "198.18.0.1", "198.18.0.2", 0, 0, 0),
	)
	dump := e.ok(t, "dpctl/dump-conntrack", "zone=5")
	want := "tcp,orig=(src=198.18.0.1,dst=198.18.0.2,sport=40001,dport=80),reply=(src=198.18.0.2,dst=198.18.0.1,sport=80,dport=40001),zone=5,protoinfo=(state=SYN_SENT)\n" +
		"tcp,orig=(src=198.18.0.3,dst=198.18.0.2,sport=40002,dport=80),reply=(src=198.18.0.2,dst=198.18.0.3,sport=80,dport=40002),zone=5,protoinfo=(state=ESTABLISHED)\n"
	if dump != want {
		t.Errorf("dump-conntrack zone=5:\n%s\nwant:\n%s", dump, want)
	}
	if n := strings.Count(e.ok(t, "dpctl/dump-conntrack"), "\n"); n != 7 {
		t.Errorf("dump-conntrack: %d lines", n)
	}
	if got := e.ok(t, "dpctl/dump-conntrack", "-s", "netdev@ovs-netdev", "zone=5"); !strings.Contains(got, ",zone=5,timeout=30,protoinfo=") {
		t.Errorf("dump-conntrack -s:\n%s", got)
	}

	stats := e.ok(t, "dpctl/ct-stats-show")
	want = "Connections Stats:\n    Total: 7\n  TCP: 3\n  UDP: 1\n  ICMP: 1\n  Other: 1\n"
	if stats != want {
		t.Errorf("ct-stats-show:\n%s\nwant:\n%s", stats, want)
	}
	stats = e.ok(t, "dpctl/ct-stats-show", "zone=5", "verbose")
	want = "Connections Stats:\n    Total: 2\n  TCP: 2\n    Conn per TCP states:\n\t  [SYN_SENT]=1\n\t  [ESTABLISHED]=1\n"
	if stats != want {
		t.Errorf("ct-stats-show zone=5 verbose:\n%q\nwant:\n%q", stats, want)
	}
	if got := e.ok(t, "dpctl/ct-stats-show", "-m", "zone=5"); got != want {
		t.Errorf("ct-stats-show -m zone=5:\n%q", got)
	}

	bkts := e.ok(t, "dpctl/ct-bkts")
	want = "Total Buckets: 1\nCurrent Connections: 7\n\n" +
		"+-----------+-----------------------------------------+\n" +
		"|  Buckets  |         Connections per Buckets         |\n" +
		"+-----------+-----------------------------------------+\n" +
		"   0..  7   |     7\n\n"
	if bkts != want {
		t.Errorf("ct-bkts:\n%q\nwant:\n%q", bkts, want)
	}
	if got := e.ok(t, "dpctl/ct-bkts", "gt=7"); !strings.HasSuffix(got, "   0..  7   |     .\n\n") {
		t.Errorf("ct-bkts gt=7:\n%q", got)
	}

	// A partial match flushes each connection it selects (both
	// directions' fields), in their zones.
	e.ok(t, "dpctl/flush-conntrack", "ct_nw_src=198.18.0.1,ct_nw_proto=6", "ct_tp_src=80")
	if got := e.ok(t, "dpctl/ct-get-nconns"); got != "5\n" {
		t.Errorf("after partial flush: %s conns, flushes %v", got, ct.flushes)
	}
	// A full original tuple flushes that connection in zone 0 (none
	// given) or the zone given; a missing one is an error.
	e.fails(t, "ovs-vswitchd: failed to flush conntrack (No such file or directory)\n", "dpctl/flush-conntrack",
		"ct_nw_src=198.18.0.3,ct_nw_dst=198.18.0.2,ct_nw_proto=6,ct_tp_src=40002,ct_tp_dst=80")
	e.ok(t, "dpctl/flush-conntrack", "zone=5", "ct_nw_src=198.18.0.3,ct_nw_dst=198.18.0.2,ct_nw_proto=6,ct_tp_src=40002,ct_tp_dst=80")
	// ICMP fields are compared even where not given (Open vSwitch's
	// ct_dpif_tuple_ip_cmp_partial): the reply's are needed too.
	e.ok(t, "dpctl/flush-conntrack", "ct_nw_proto=1,icmp_id=7,icmp_type=8,icmp_code=0")
	if got := e.ok(t, "dpctl/ct-get-nconns"); got != "4\n" {
		t.Errorf("after flushing with ICMP orig fields only: %s conns", got)
	}
	e.ok(t, "dpctl/flush-conntrack", "ct_nw_proto=1,icmp_id=7,icmp_type=8,icmp_code=0", "icmp_id=7,icmp_type=0,icmp_code=0")
	if got := e.ok(t, "dpctl/ct-get-nconns"); got != "3\n" {
		t.Errorf("after tuple flushes: %s conns, flushes %v", got, ct.flushes)
	}
	e.ok(t, "dpctl/flush-conntrack", "netdev@ovs-netdev", "zone=0")
	if got := e.ok(t, "dpctl/dump-conntrack"); got != "" {
		t.Errorf("after flushing zone 0:\n%s", got)
	}
}

// refVswitchd is Debian's ovs-vswitchd (dummy datapath override, so its
// netdev bridge's datapath is netdev@ovs-netdev without any device) for
// side-by-side output comparisons.
type refVswitchd struct {
	t   *testing.T
	dir string
	ctl string
}

func startRefVswitchd(t *testing.T) *refVswitchd {
	t.Helper()
	d := ovsref.Start(t, "gvsct", "--enable-dummy=override")
	d.Run(t, "ovs-vsctl", "--db=unix:"+d.Dir+"/db.sock", "--timeout=10", "--", "init", "--", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=netdev")
	r := &refVswitchd{t: t, dir: d.Dir, ctl: d.Ctl}
	return r
}

// TestConntrackCommandsMatchOpenVSwitch runs the same dpctl conntrack
// commands, in the same order, against gvs and Debian's ovs-vswitchd and
// requires the same stdout, stderr (socket path normalised) and exit
// status: an empty table's dumps and statistics, maxconns, zone limits,
// TCP sequence checking and the argument errors.
func TestConntrackCommandsMatchOpenVSwitch(t *testing.T) {
	// The datapath's own tracker; until it has one, the fake (which
	// behaves as Open vSwitch's for these commands).
	cfg := dpif.Config{PMDs: 1}
	if dp, err := dpif.New(cfg); err == nil {
		if dp.Conntrack() == nil {
			cfg.Tracker = newFakeCT()
		}
		dp.Close()
	}
	e := newEnvConfig(t, cfg)
	_, seqChk := e.sw.Datapath().Conntrack().(TCPSeqChecker)
	ref := startRefVswitchd(t)
	cmds := [][]string{
		{"dpctl/dump-conntrack"},
		{"dpctl/dump-conntrack", "-m", "-s", "zone=3"},
		{"dpctl/dump-conntrack", "netdev@ovs-netdev"},
		{"dpctl/dump-conntrack", "nosuch", "zone=3"},
		{"dpctl/ct-stats-show"},
		{"dpctl/ct-stats-show", "zone=2", "verbose"},
		{"dpctl/ct-bkts"},
		{"dpctl/ct-bkts", "gt=3"},
		{"dpctl/ct-get-maxconns"},
		{"dpctl/ct-set-maxconns", "10"},
		{"dpctl/ct-get-maxconns"},
		{"dpctl/ct-set-maxconns", "netdev@ovs-netdev", "4000000000"},
		{"dpctl/ct-get-maxconns", "netdev@ovs-netdev"},
		{"dpctl/ct-set-maxconns", "x"},
		{"dpctl/ct-set-maxconns", "foo", "10"},
		{"dpctl/ct-set-maxconns", "4294967296"},
		{"dpctl/ct-get-nconns"},
		{"dpctl/ct-get-limits"},
		{"dpctl/ct-set-limits", "default=5", "zone=1,limit=3", "zone=7,limit=9"},
		{"dpctl/ct-get-limits"},
		{"dpctl/ct-get-limits", "zone=7,3"},
		{"dpctl/ct-get-limits", "netdev@ovs-netdev", "zone=1"},
		{"dpctl/ct-set-limits", "zone=7,limit=10"},
		{"dpctl/ct-del-limits", "zone=1"},
		{"dpctl/ct-get-limits"},
		{"dpctl/ct-del-limits", "netdev@ovs-netdev", "zone=7,1"},
		{"dpctl/ct-get-limits"},
		{"dpctl/ct-del-limits", "default"},
		{"dpctl/ct-del-limits", "zone=x"},
		{"dpctl/ct-get-limits", "zone=70000"},
		{"dpctl/ct-set-limits", "zone=1"},
		{"dpctl/ct-set-limits", "zone=x,limit=1"},
		{"dpctl/ct-set-limits", "zone=1,limit=x"},
		{"dpctl/ct-set-limits", "zone=1,limit"},
		{"dpctl/ct-set-limits", "foo=1"},
		{"dpctl/ct-set-limits", "default=x"},
		{"dpctl/ct-get-tcp-seq-chk"},
		{"dpctl/ct-disable-tcp-seq-chk"},
		{"dpctl/ct-get-tcp-seq-chk"},
		{"dpctl/ct-enable-tcp-seq-chk", "netdev@ovs-netdev"},
		{"dpctl/ct-get-tcp-seq-chk"},
		{"dpctl/flush-conntrack"},
		{"dpctl/flush-conntrack", "zone=5"},
		{"dpctl/flush-conntrack", "zone=x"},
		{"dpctl/flush-conntrack", "ct_nw_src=198.18.0.1,ct_nw_dst=198.18.0.2,ct_nw_proto=6,ct_tp_src=1,ct_tp_dst=2"},
		{"dpctl/flush-conntrack", "zone=3", "ct_ipv6_src=2001:2::1,ct_ipv6_dst=2001:2::2,ct_nw_proto=17,ct_tp_src=1,ct_tp_dst=2"},
		{"dpctl/flush-conntrack", "ct_nw_src=198.18.0.1"},
		{"dpctl/flush-conntrack", "ct_nw_src=198.18.0.1", "ct_nw_dst=198.18.0.1"},
		{"dpctl/flush-conntrack", "ct_nw_src=198.18.0.x"},
		{"dpctl/flush-conntrack", "ct_nw_src=198.18.0.1,ct_ipv6_dst=::1"},
		{"dpctl/flush-conntrack", "ct_nw_src=198.18.0.1,ct_nw_src=198.18.0.2"},
		{"dpctl/flush-conntrack", "ct_tp_src=1"},
		{"dpctl/flush-conntrack", "ct_nw_proto=6,icmp_type=1"},
		{"dpctl/flush-conntrack", "ct_nw_proto=300"},
		{"dpctl/flush-conntrack", "foo=1"},
		{"dpctl/flush-conntrack", "ct_nw_src"},
		{"dpctl/flush-conntrack", "a", "b", "c"},
		{"dpctl/flush-conntrack", "zone=1", "ct_nw_proto=6", "ct_nw_proto=6", "x"},
	}
	refRun := func(args ...string) run {
		cmd := exec.Command(appctlBin, append([]string{"--timeout=10", "-t", ref.ctl}, args...)...)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		r := run{out: stdout.String(), err: strings.ReplaceAll(stderr.String(), ref.ctl, "CTL")}
		if ee, ok := err.(*exec.ExitError); ok {
			r.code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, c := range cmds {
		want := refRun(c...)
		got := e.appctl(t, c...)
		got.err = strings.ReplaceAll(got.err, e.sock, "CTL")
		if strings.HasSuffix(c[0], "tcp-seq-chk") && !seqChk {
			// A tracker without TCPSeqChecker: Open vSwitch's error
			// for a datapath that cannot.
			if got.code != 2 || !strings.Contains(got.err, "(Operation not supported)") {
				t.Errorf("ovs-appctl %s: exit %d err %q", strings.Join(c, " "), got.code, got.err)
			}
			continue
		}
		if got != want {
			t.Errorf("ovs-appctl %s:\ngvs:          exit %d out %q err %q\nOpen vSwitch: exit %d out %q err %q",
				strings.Join(c, " "), got.code, got.out, got.err, want.code, want.out, want.err)
		}
	}
}

// FuzzConntrackArguments: the argument parsers never panic, and an error
// always comes with a message.
func FuzzConntrackArguments(f *testing.F) {
	for _, s := range []string{"ct_nw_src=1.1.1.1,ct_nw_dst=2.2.2.2,ct_nw_proto=6,ct_tp_src=1,ct_tp_dst=2",
		"ct_ipv6_src=::1", "ct_nw_proto=1,icmp_id=1,icmp_type=8,icmp_code=0", "zone=1,limit=2", "x", "=,:", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var m conntrack.Match
		if err := conntrack.ParseTuple(s, &m, false); err != nil && err.Error() == "" {
			t.Fatalf("%q: error without message", s)
		}
		if _, _, msg := parseZoneLimit(s); msg == "" {
			if _, _, msg2 := parseZoneLimit(s); msg2 != "" {
				t.Fatal("not deterministic")
			}
		}
		parseLimitZones(s)
		scanU16(s, "zone=")
		scanU32(s, "")
	})
}

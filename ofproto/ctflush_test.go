package ofproto

import (
	"fmt"
	"net/netip"
	"os/exec"
	"reflect"
	"sync"
	"testing"

	"gvs/dpif/conntrack"
	"gvs/ofproto/connmgr"
)

// flushTracker is a conntrack.Conntrack that holds entries and records
// flushes; the methods a flush does not use are the nil interface's.
type flushTracker struct {
	conntrack.Conntrack
	mu      sync.Mutex // the connection manager's goroutine flushes, the test reads
	entries []conntrack.Entry
	flushes []string
}

func (f *flushTracker) take() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.flushes
	f.flushes = nil
	return out
}

func (f *flushTracker) Dump(zone int32, fn func(*conntrack.Entry) bool) {
	for i := range f.entries {
		if zone == conntrack.AllZones || int32(f.entries[i].Zone) == zone {
			if !fn(&f.entries[i]) {
				return
			}
		}
	}
}

func (f *flushTracker) Flush(zone int32, orig *conntrack.Tuple) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if orig == nil {
		f.flushes = append(f.flushes, fmt.Sprintf("zone %d", zone))
		return 0
	}
	f.flushes = append(f.flushes, fmt.Sprintf("zone %d %s:%d>%s:%d/%d", zone, orig.Src, orig.SrcPort, orig.Dst, orig.DstPort, orig.Proto))
	return 1
}

func conn(zone uint16, src, dst string, sport, dport uint16, proto uint8) conntrack.Entry {
	s, d := netip.MustParseAddr(src), netip.MustParseAddr(dst)
	return conntrack.Entry{Zone: zone,
		Orig:  conntrack.Tuple{Src: s, Dst: d, SrcPort: sport, DstPort: dport, Proto: proto, Zone: zone},
		Reply: conntrack.Tuple{Src: d, Dst: s, SrcPort: dport, DstPort: sport, Proto: proto, Zone: zone}}
}

// The real ovs-ofctl's ct-flush-zone and ct-flush reach the datapath's
// tracker through the connection manager as Open vSwitch's ct_dpif_flush
// would flush it.
func TestCTFlushFromOfctl(t *testing.T) {
	ofctl, err := exec.LookPath("ovs-ofctl")
	if err != nil {
		t.Skip("ovs-ofctl not installed")
	}
	b := NewBridge("br0", BridgeConfig{})
	defer b.Close()
	ct := &flushTracker{entries: []conntrack.Entry{
		conn(3, "198.18.0.1", "198.18.0.2", 1000, 80, 6),
		conn(3, "198.18.0.1", "198.18.0.3", 1001, 80, 6),
		conn(4, "198.18.0.1", "198.18.0.2", 1000, 53, 17),
		conn(0, "2001:2::1", "2001:2::2", 1000, 80, 6),
	}}
	b.SetConntrack(func() conntrack.Conntrack { return ct })
	m, err := connmgr.New(connmgr.Config{Name: "br0", RunDir: t.TempDir(), Bridge: NewConnBridge(b)})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	target := "unix:" + m.MgmtPath()
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"ct-flush-zone", target, "5"}, []string{"zone 5"}},
		{[]string{"ct-flush", target}, []string{"zone -1"}},
		{[]string{"ct-flush", target, "zone=7"}, []string{"zone 7"}},
		// A whole five-tuple: that connection, in zone 0 without zone=.
		{[]string{"ct-flush", target, "zone=3", "ct_nw_src=198.18.0.1,ct_nw_dst=198.18.0.2,ct_nw_proto=6,ct_tp_src=1000,ct_tp_dst=80"},
			[]string{"zone 3 198.18.0.1:1000>198.18.0.2:80/6"}},
		{[]string{"ct-flush", target, "ct_nw_src=198.18.0.1,ct_nw_dst=198.18.0.2,ct_nw_proto=6,ct_tp_src=1000,ct_tp_dst=80"},
			[]string{"zone 0 198.18.0.1:1000>198.18.0.2:80/6"}},
		// Part of a tuple: every matching connection of every zone.
		{[]string{"ct-flush", target, "ct_nw_src=198.18.0.1"}, []string{
			"zone 3 198.18.0.1:1000>198.18.0.2:80/6", "zone 3 198.18.0.1:1001>198.18.0.3:80/6", "zone 4 198.18.0.1:1000>198.18.0.2:53/17"}},
		{[]string{"ct-flush", target, "zone=3", "ct_nw_dst=198.18.0.3,ct_nw_proto=6"}, []string{"zone 3 198.18.0.1:1001>198.18.0.3:80/6"}},
		{[]string{"ct-flush", target, "ct_nw_proto=17"}, []string{"zone 4 198.18.0.1:1000>198.18.0.2:53/17"}},
		{[]string{"ct-flush", target, "ct_ipv6_src=2001:2::1"}, []string{"zone 0 2001:2::1:1000>2001:2::2:80/6"}},
		// The reply direction.
		{[]string{"ct-flush", target, "ct_nw_src=198.18.0.1", "ct_nw_src=198.18.0.3"}, []string{"zone 3 198.18.0.1:1001>198.18.0.3:80/6"}},
	} {
		out, err := exec.Command(ofctl, c.args...).CombinedOutput()
		if err != nil {
			t.Fatalf("ovs-ofctl %v: %v\n%s", c.args, err, out)
		}
		if got := ct.take(); !reflect.DeepEqual(got, c.want) {
			t.Errorf("ovs-ofctl %v: flushed %q, want %q", c.args[2:], got, c.want)
		}
	}
	// No tracker (a datapath without one): nothing to flush, no error.
	b.SetConntrack(func() conntrack.Conntrack { return nil })
	if out, err := exec.Command(ofctl, "ct-flush-zone", target, "1").CombinedOutput(); err != nil {
		t.Fatalf("without a tracker: %v\n%s", err, out)
	}
}

package afxdp

import (
	"testing"
	"time"
)

// TestJumboFrames runs the forwarder at MTU 9000: the program is loaded
// with BPF_F_XDP_HAS_FRAGS (native veth XDP refuses such a peer MTU
// otherwise) and frames span several 4096-byte chunks on receive and on
// transmit.
func TestJumboFrames(t *testing.T) {
	for _, mode := range []XDPMode{ModeGeneric, ModeNative} {
		t.Run(string(mode), func(t *testing.T) {
			tp := newFwdTopo(t)
			for _, x := range [][2]string{{tp.nsA, "v0"}, {tp.nsB, "v0"}, {"", tp.xa}, {"", tp.xb}} {
				tp.e.LinkRun(x[0], "ip", "link", "set", x[1], "mtu", "9000")
			}
			a, b := openPair(t, tp, Config{XDPMode: mode})
			if a.chunkSize != 4096 || a.Capabilities().MaxFrame != 9018 || a.Status()["xdp-mode"] != string(mode) {
				t.Fatalf("chunk %d, MaxFrame %d, status %v", a.chunkSize, a.Capabilities().MaxFrame, a.Status())
			}
			startForwarder(t, a, b)
			if _, err := ping(tp.nsA, tp.addrB, 3, 8972); err != nil {
				t.Fatalf("9000-byte ping: %v; a %+v b %+v", err, a.Stats(), b.Stats())
			}
			r, err := tp.e.IperfTCP(tp.nsB, tp.nsA, tp.addrB, 2*time.Second, stallProbe...)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("TCP at MTU 9000: %.2f Gbit/s, %d retransmits, intervals %.2f", r.Gbps, r.Retransmits, r.Intervals)
			t.Logf("a %+v cut %d; b %+v", a.Stats(), a.socks[0].counters.rxSegmented.Load(), b.Stats())
			if r.Gbps < 0.05 || r.ZeroIntervals > 0 {
				t.Errorf("TCP stalled at MTU 9000: %.3f Gbit/s, %d zero intervals", r.Gbps, r.ZeroIntervals)
			}
		})
	}
}

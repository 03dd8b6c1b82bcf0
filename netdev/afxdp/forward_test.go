package afxdp

import (
	"testing"
	"time"

	"gvs/netdev/internal/nettest"
	"gvs/packet"
)

// startForwarder bridges a and b with nettest's PMD-style loop, receiving
// into buffers that hold a jumbo frame.
func startForwarder(t testing.TB, a, b *Device) *nettest.Forwarder {
	t.Helper()
	return nettest.StartForwarderWithPool(t, a, b, packet.PoolConfig{Buffers: 512, FrameSize: 9216})
}

// openT opens name with afxdp and closes it in cleanup.
func openT(t testing.TB, name string, cfg Config) *Device {
	t.Helper()
	return nettest.OpenDevice(t, name, func(name string) (*Device, error) {
		cfg.Name = name
		return Open(cfg)
	})
}

// openPair opens both forwarder ends with afxdp.
func openPair(t testing.TB, tp *fwdTopo, cfg Config) (*Device, *Device) {
	t.Helper()
	return openT(t, tp.xa, cfg), openT(t, tp.xb, cfg)
}

// TestForwardPingAndTCP bridges two veths with a bare afxdp forwarder
// in each XDP mode and runs ping and a TCP iperf3 through it with the
// veths' default offloads: TCP only works if partial checksums are
// completed (native) and TSO super-frames are cut (generic), and a
// zero-throughput interval would be the transmit stall Open vSwitch had.
func TestForwardPingAndTCP(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"generic", Config{XDPMode: ModeGeneric}},
		{"native", Config{XDPMode: ModeNative}},
		// Open vSwitch's batch of 32 on small rings: EAGAIN and full rings
		// must cost drops at worst, never a stall.
		{"native-batch32-ring64", Config{XDPMode: ModeNative, TxBatchSize: 32, RingSize: 64}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mode := tc.cfg.XDPMode
			tp := newFwdTopo(t)
			a, b := openPair(t, tp, tc.cfg)
			if got := a.Status()["xdp-mode"]; got != string(mode) {
				t.Fatalf("xdp-mode %q, want %q", got, mode)
			}
			f := startForwarder(t, a, b)
			rtts, err := ping(tp.nsA, tp.addrB, 5, 56)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("ping RTTs %v", rtts)
			r, err := tp.e.IperfTCP(tp.nsB, tp.nsA, tp.addrB, 3*time.Second, stallProbe...)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("TCP %.2f Gbit/s, %d retransmits, intervals %.2f", r.Gbps, r.Retransmits, r.Intervals)
			t.Logf("a %+v segmented %d fixed %d", a.Stats(), a.socks[0].counters.rxSegmented.Load(), a.ChecksumsFixed())
			t.Logf("b %+v segmented %d fixed %d", b.Stats(), b.socks[0].counters.rxSegmented.Load(), b.ChecksumsFixed())
			t.Logf("kicks a %d b %d, stuck a %d b %d", a.socks[0].counters.txKicks.Load(), b.socks[0].counters.txKicks.Load(), a.socks[0].txStuck.Load(), b.socks[0].txStuck.Load())
			if r.Gbps < 0.05 || r.ZeroIntervals > 0 {
				t.Errorf("TCP stalled: %.3f Gbit/s, %d zero intervals of %d", r.Gbps, r.ZeroIntervals, len(r.Intervals))
			}
			// UDP with checksum offload: the receiver would count every
			// datagram left with a partial checksum in InCsumErrors. Losses
			// are logged, not judged: on a busy machine (or under -race)
			// the receiving socket or the rings overflow.
			u, err := tp.e.IperfUDP(tp.nsB, tp.nsA, tp.addrB, 2*time.Second, "100M", 1400)
			if err != nil {
				t.Fatal(err)
			}
			if u.SentBytes == 0 {
				t.Fatalf("iperf3 sent nothing: %+v", u)
			}
			udp := udpCounters(tp.e, tp.nsB)
			t.Logf("UDP 1400 B at 100 Mbit/s: %.2f%% lost, %.3f Gbit/s received; receiver %v", u.Loss()*100, u.Gbps, udp)
			if udp["InCsumErrors"] != 0 || udp["InDatagrams"] == 0 {
				t.Errorf("UDP: %d datagrams received, %d with checksum errors", udp["InDatagrams"], udp["InCsumErrors"])
			}
			if f.RecvErrors.Load() != 0 || f.SendErrors.Load() != 0 {
				t.Errorf("forwarder errors: recv %d send %d", f.RecvErrors.Load(), f.SendErrors.Load())
			}
			// Native XDP turns TSO off on the peer, so data arrives as
			// MTU-sized frames with partial checksums; generic XDP sees the
			// TSO super-frames, which Recv cuts (computing full checksums).
			if mode == ModeNative && a.ChecksumsFixed() == 0 {
				t.Error("no partial checksum completed: offloads off, or detection broken")
			}
			if mode == ModeGeneric && a.socks[0].counters.rxSegmented.Load() == 0 {
				t.Error("no TSO frame cut in generic mode")
			}
		})
	}
}

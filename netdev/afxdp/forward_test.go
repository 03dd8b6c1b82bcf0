package afxdp

import (
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"gvs/netdev"
	"gvs/packet"
)

// forwarder moves packets between two devices' queue 0 both ways on one
// goroutine, as a PMD would: spin while busy, sleep in poll(2) on the
// devices' PollFDs when idle.
type forwarder struct {
	stop       atomic.Bool
	wg         sync.WaitGroup
	recvErrors atomic.Uint64
	sendErrors atomic.Uint64
	moved      atomic.Uint64
}

const idleSpins = 256

func startForwarder(t testing.TB, a, b netdev.Device) *forwarder {
	t.Helper()
	pool, err := packet.NewPool(packet.PoolConfig{Buffers: 512, FrameSize: 9216})
	if err != nil {
		t.Fatal(err)
	}
	f := &forwarder{}
	f.wg.Add(1)
	go f.loop(pool, [2]netdev.Device{a, b})
	t.Cleanup(f.halt)
	return f
}

func (f *forwarder) halt() {
	f.stop.Store(true)
	f.wg.Wait()
}

func (f *forwarder) loop(pool *packet.Pool, devs [2]netdev.Device) {
	defer f.wg.Done()
	var batch packet.Batch
	fds := []unix.PollFd{{Fd: int32(devs[0].PollFD(0)), Events: unix.POLLIN}, {Fd: int32(devs[1].PollFD(0)), Events: unix.POLLIN}}
	idle := 0
	for !f.stop.Load() {
		moved := 0
		for i, src := range devs {
			n, err := src.Recv(0, &batch, pool)
			if err != nil {
				f.recvErrors.Add(1)
			}
			if n == 0 {
				continue
			}
			moved += n
			if err := devs[1-i].Send(0, &batch); err != nil {
				f.sendErrors.Add(1)
			}
		}
		if moved > 0 {
			f.moved.Add(uint64(moved))
			idle = 0
			continue
		}
		if idle++; idle > idleSpins {
			_, _ = unix.Poll(fds, 10)
			idle = 0
		}
	}
}

// openPair opens both forwarder ends with afxdp.
func openPair(t testing.TB, tp *fwdTopo, cfg Config) (*Device, *Device) {
	t.Helper()
	open := func(name string) *Device {
		c := cfg
		c.Name = name
		d, err := Open(c)
		if err != nil {
			t.Fatalf("Open(%s): %v", name, err)
		}
		t.Cleanup(func() { d.Close() })
		return d
	}
	return open(tp.xa), open(tp.xb)
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
			rtts, err := tp.e.ping(tp.nsA, tp.addrB, 5, 56)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("ping RTTs %v", rtts)
			r, err := tp.e.iperfTCP(tp.nsB, tp.nsA, tp.addrB, 3)
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
			loss, gbps, err := tp.e.iperfUDP(tp.nsB, tp.nsA, tp.addrB, "100M", 1400, 2)
			if err != nil {
				t.Fatal(err)
			}
			udp := tp.e.udpCounters(tp.nsB)
			t.Logf("UDP 1400 B at 100 Mbit/s: %.2f%% lost, %.3f Gbit/s received; receiver %v", loss*100, gbps, udp)
			if udp["InCsumErrors"] != 0 || udp["InDatagrams"] == 0 {
				t.Errorf("UDP: %d datagrams received, %d with checksum errors", udp["InDatagrams"], udp["InCsumErrors"])
			}
			if f.recvErrors.Load() != 0 || f.sendErrors.Load() != 0 {
				t.Errorf("forwarder errors: recv %d send %d", f.recvErrors.Load(), f.sendErrors.Load())
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

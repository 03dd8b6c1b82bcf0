package afxdp

import (
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"gvs/packet"
)

// BenchmarkForwarderTCP measures iperf3 TCP throughput through the bare
// afxdp forwarder (veth offloads at their defaults) and, in the same
// run, interleaved, over a direct veth pair as the reference; and ping
// round trips over both. Run with -benchtime=Nx for N rounds of 3 s each.
func BenchmarkForwarderTCP(b *testing.B) {
	for _, mode := range []XDPMode{ModeGeneric, ModeNative} {
		b.Run(string(mode), func(b *testing.B) { benchForwarderTCP(b, Config{XDPMode: mode}) })
	}
}

func benchForwarderTCP(b *testing.B, cfg Config) {
	tp := newFwdTopo(b)
	ref := newPair(tp.e)
	x, y := openPair(b, tp, cfg)
	fw := startForwarder(b, x, y)
	var cpu time.Duration
	var pkts uint64
	const secs = 3 * time.Second
	var fwd, direct []float64
	retrans, zero := 0, 0
	for b.Loop() {
		r, err := tp.e.IperfTCP(ref.nsB, ref.nsA, ref.addrB, secs, stallProbe...)
		if err != nil {
			b.Fatal(err)
		}
		cpu0, pkts0 := cpuTime(), fw.Moved.Load()
		f, err := tp.e.IperfTCP(tp.nsB, tp.nsA, tp.addrB, secs, stallProbe...)
		if err != nil {
			b.Fatal(err)
		}
		cpu += cpuTime() - cpu0
		pkts += fw.Moved.Load() - pkts0
		direct = append(direct, r.Gbps)
		fwd = append(fwd, f.Gbps)
		retrans += f.Retransmits
		zero += f.ZeroIntervals
	}
	b.ReportMetric(medianF(fwd), "Gbit/s")
	b.ReportMetric(medianF(direct), "direct-veth-Gbit/s")
	b.ReportMetric(float64(retrans)/float64(len(fwd)), "retransmits/run")
	b.ReportMetric(float64(zero), "zero-intervals")
	// CPU the forwarder's process spent (user and system, including the
	// kernel work done inside its sendto calls) per forwarded frame: a
	// cost figure that depends less on what else runs on the machine.
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(pkts), "cpu-ns/frame")
	fr, err := ping(tp.nsA, tp.addrB, 20, 56)
	if err != nil {
		b.Fatal(err)
	}
	dr, err := ping(ref.nsA, ref.addrB, 20, 56)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(medianD(fr).Microseconds()), "ping-µs")
	b.ReportMetric(float64(medianD(dr).Microseconds()), "direct-ping-µs")
}

func medianF(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func medianD(v []time.Duration) time.Duration {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// cpuTime returns the process's user plus system CPU time.
func cpuTime() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSendRecv measures the device alone: batches of 32 1500-byte
// frames sent on one end of a veth pair and received on the other, per
// frame (copy into UMEM, kick, the kernel's copy-mode transmit and XDP
// redirect, copy out, checksum check).
func BenchmarkSendRecv(b *testing.B) {
	for _, mode := range []XDPMode{ModeGeneric, ModeNative} {
		b.Run(string(mode), func(b *testing.B) {
			_, x, y := loopPair(b, Config{XDPMode: mode}, 1)
			pool := newTestPool(b)
			frame := buildFrame(frameSpec{payload: 1448})
			var batch packet.Batch
			frames, lost := 0, 0
			b.SetBytes(int64(len(frame)) * packet.BatchSize)
			b.ReportAllocs()
			for b.Loop() {
				for range packet.BatchSize {
					buf := pool.Get()
					copy(buf.Room(), frame)
					buf.SetLen(len(frame))
					batch.Append(buf)
				}
				if err := x.Send(0, &batch); err != nil {
					b.Fatal(err)
				}
				got := 0
				for tries := 0; got < packet.BatchSize && tries < 10000; tries++ {
					n, _ := y.Recv(0, &batch, pool)
					got += n
					pool.PutBatch(&batch)
				}
				frames += packet.BatchSize
				lost += packet.BatchSize - got
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(frames), "ns/frame")
			b.ReportMetric(float64(lost), "lost")
		})
	}
}

// BenchmarkSharedUMEMTCP compares the bare forwarder with private UMEMs
// (each frame copied into its transmit chunk) and with one shared UMEM
// (frames moved as descriptors), in the same run, interleaved round by
// round, on two topologies side by side. Per setup it reports the median
// iperf3 TCP throughput, the forwarder process's CPU per forwarded frame
// and CPU milliseconds per Gbit moved (CPU time over the run / Gbits
// transferred). Run with -benchtime=Nx for N rounds of 3 s per setup.
func BenchmarkSharedUMEMTCP(b *testing.B) {
	for _, mode := range []XDPMode{ModeGeneric, ModeNative} {
		b.Run(string(mode), func(b *testing.B) {
			type setup struct {
				name      string
				tp        *fwdTopo
				gbps      []float64
				cpuPerGb  []float64
				cpuFrame  []float64
				retrans   int
				zero      int
				forwarder func() uint64
			}
			var setups []*setup
			for _, shared := range []bool{false, true} {
				tp := newFwdTopo(b)
				cfg := Config{XDPMode: mode}
				name := "private"
				if shared {
					cfg.UMEM = newGroupT(b, GroupConfig{})
					name = "shared"
				}
				x, y := openPair(b, tp, cfg)
				fw := startForwarder(b, x, y)
				setups = append(setups, &setup{name: name, tp: tp, forwarder: fw.Moved.Load})
			}
			const secs = 3 * time.Second
			for b.Loop() {
				for _, s := range setups {
					cpu0, pkts0 := cpuTime(), s.forwarder()
					r, err := s.tp.e.IperfTCP(s.tp.nsB, s.tp.nsA, s.tp.addrB, secs, stallProbe...)
					if err != nil {
						b.Fatal(err)
					}
					cpu, pkts := cpuTime()-cpu0, s.forwarder()-pkts0
					s.gbps = append(s.gbps, r.Gbps)
					gbits := r.Gbps * secs.Seconds()
					s.cpuPerGb = append(s.cpuPerGb, float64(cpu.Milliseconds())/gbits)
					s.cpuFrame = append(s.cpuFrame, float64(cpu.Nanoseconds())/float64(pkts))
					s.retrans += r.Retransmits
					s.zero += r.ZeroIntervals
				}
			}
			for _, s := range setups {
				b.ReportMetric(medianF(s.gbps), s.name+"-Gbit/s")
				b.ReportMetric(medianF(s.cpuPerGb), s.name+"-cpu-ms/Gbit")
				b.ReportMetric(medianF(s.cpuFrame), s.name+"-cpu-ns/frame")
				b.ReportMetric(float64(s.zero), s.name+"-zero-intervals")
				b.Logf("%s: Gbit/s %.2f, cpu-ms/Gbit %.0f, cpu-ns/frame %.0f, retransmits %d",
					s.name, s.gbps, s.cpuPerGb, s.cpuFrame, s.retrans)
			}
		})
	}
}

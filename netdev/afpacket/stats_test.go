package afpacket

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"gvs/netdev/internal/nettest"
	"gvs/packet"
)

// flood sends n copies of a small frame out of d.
func flood(t *testing.T, d *Device, pool *packet.Pool, n int) {
	t.Helper()
	tmpl := udpFrame(t, pool, nil)
	defer pool.Put(tmpl)
	var batch packet.Batch
	for i := 0; i < n; i++ {
		batch.Append(pool.Clone(tmpl))
		if batch.Full() || i == n-1 {
			if err := d.Send(0, &batch); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestKernelDropsAccumulate overflows a small receive ring (or socket
// buffer) and checks that the kernel's drops show up in RxKernelDrops and
// survive further reads of PACKET_STATISTICS, which resets them.
func TestKernelDropsAccumulate(t *testing.T) {
	eachMode(t, func(t *testing.T, cfg Config) {
		env := nettest.New(t)
		a, b := env.IfName("a"), env.IfName("b")
		env.Veth(a, "", b, "")
		cfg.BlockSize, cfg.SocketBuffer = minBlockSize, 1 // smallest ring, smallest buffer
		cfg.MinRingSize, cfg.MaxRingSize = 1, 1           // and no growth
		in, out := openT(t, a, Config{}), openT(t, b, cfg)
		pool, err := packet.NewPool(packet.PoolConfig{Buffers: 64})
		if err != nil {
			t.Fatal(err)
		}
		flood(t, in, pool, 20000)
		time.Sleep(10 * time.Millisecond)
		first := out.Stats().RxKernelDrops
		if first == 0 {
			t.Fatalf("no kernel drops after flooding 20000 frames into a small buffer")
		}
		if again := out.Stats().RxKernelDrops; again < first {
			t.Errorf("RxKernelDrops went from %d to %d: not accumulated", first, again)
		}
		t.Logf("%d kernel drops", first)
	})
}

// TestPoolExhaustionKeepsFrames receives with a pool of two buffers:
// frames that find no buffer stay queued for the next Recv, none is lost.
func TestPoolExhaustionKeepsFrames(t *testing.T) {
	eachMode(t, func(t *testing.T, cfg Config) {
		env := nettest.New(t)
		a, b := env.IfName("a"), env.IfName("b")
		env.Veth(a, "", b, "")
		cfg.MinRingSize = 1 << 20 // room for the burst before the first Recv
		in, out := openT(t, a, Config{}), openT(t, b, cfg)
		txPool, _ := packet.NewPool(packet.PoolConfig{Buffers: 64})
		rxPool, _ := packet.NewPool(packet.PoolConfig{Buffers: 2})
		flood(t, in, txPool, 10)
		var batch packet.Batch
		got := 0
		for end := time.Now().Add(2 * time.Second); got < 10 && time.Now().Before(end); time.Sleep(time.Millisecond) {
			n, err := out.Recv(0, &batch, rxPool)
			if err != nil {
				t.Fatal(err)
			}
			if n > 2 {
				t.Fatalf("Recv returned %d with a 2-buffer pool", n)
			}
			got += n
			rxPool.PutBatch(&batch)
		}
		if got != 10 {
			t.Errorf("received %d of 10 frames", got)
		}
		if s := out.Stats(); s.RxPackets != 10 || s.RxErrors != 0 || s.RxKernelDrops != 0 {
			t.Errorf("stats %+v", s)
		}
	})
}

// TestLinkFlap: a batch sent while the link is down is counted as
// errors, not returned as one; once the link is up again sending works
// and, after a few empty Recv calls, poll(2) no longer reports the error
// the kernel left on the socket (a PMD would spin on it).
func TestLinkFlap(t *testing.T) { eachMode(t, testLinkFlap) }

func testLinkFlap(t *testing.T, cfg Config) {
	env := nettest.New(t)
	a, b := env.IfName("a"), env.IfName("b")
	env.Veth(a, "", b, "")
	in, out := openT(t, a, cfg), openT(t, b, cfg)
	pool, _ := packet.NewPool(packet.PoolConfig{Buffers: 64})
	env.Run("ip", "link", "set", a, "down")
	flood(t, in, pool, 40)
	if s := in.Stats(); s.TxErrors != 40 || s.TxPackets != 0 {
		t.Errorf("after sending 40 frames on a down link: %+v", s)
	}
	if free := pool.Stats().Free; free != 64 {
		t.Errorf("%d of 64 buffers back in the pool", free)
	}
	env.Run("ip", "link", "set", a, "up")
	var batch packet.Batch
	for range errorCheckInterval {
		in.Recv(0, &batch, pool)
		pool.PutBatch(&batch)
	}
	fds := []unix.PollFd{{Fd: int32(in.PollFD(0)), Events: unix.POLLIN}}
	if n, _ := unix.Poll(fds, 50); n != 0 {
		t.Errorf("poll after the flap: %d ready, revents %#x", n, fds[0].Revents)
	}
	flood(t, in, pool, 1)
	if b := recvOne(t, out, pool, func(*packet.Buffer) bool { return true }); b == nil {
		t.Error("nothing received after the link came back")
	} else {
		pool.Put(b)
	}
}

// TestStatsMakesNoNetlinkQuery: Stats is read for every port every few
// seconds by several samplers, so it must not ask the kernel for link
// attributes (each netlink query opens a socket and allocates): an MTU
// changed outside reaches Send's size check only through RefreshMTU
// (the adapter's link events), and Stats allocates nothing.
func TestStatsMakesNoNetlinkQuery(t *testing.T) {
	env := nettest.New(t)
	a, b := env.IfName("a"), env.IfName("b")
	env.Veth(a, "", b, "")
	d := openT(t, a, Config{})
	was := d.CachedMTU()
	env.Run("ip", "link", "set", a, "mtu", "1400")
	d.Stats()
	if got := d.CachedMTU(); got != was {
		t.Errorf("Stats refreshed the MTU from the kernel (%d -> %d): it made a netlink query", was, got)
	}
	if allocs := testing.AllocsPerRun(100, func() { d.Stats() }); allocs != 0 {
		t.Errorf("Stats allocates %.1f times per call, want 0 (no netlink query)", allocs)
	}
	d.RefreshMTU(1400)
	if d.CachedMTU() != 1400 || d.MTU() != 1400 {
		t.Errorf("after RefreshMTU(1400): cached %d, kernel %d", d.CachedMTU(), d.MTU())
	}
}

// TestStatusReadsDriverOnce: Status (read for every port on the
// statistics timer) reports the driver read at Open, without an ethtool
// socket per call.
func TestStatusReadsDriverOnce(t *testing.T) {
	env := nettest.New(t)
	a, b := env.IfName("a"), env.IfName("b")
	env.Veth(a, "", b, "")
	d := openT(t, a, Config{})
	st := d.Status()
	if st["driver_name"] != "veth" {
		t.Errorf("Status driver_name %q, want veth (status %v)", st["driver_name"], st)
	}
	st["driver_name"] = "changed by the caller"
	if again := d.Status()["driver_name"]; again != "veth" {
		t.Errorf("a caller's change to Status's map reached the device: driver_name %q", again)
	}
}

// TestStatsWithinSharesTheKernelRead: StatsWithin takes the kernel's drop
// counters from a read younger than maxAge and the software counters as
// they are now; Stats always reads the kernel.
func TestStatsWithinSharesTheKernelRead(t *testing.T) {
	eachMode(t, func(t *testing.T, cfg Config) {
		env := nettest.New(t)
		a, b := env.IfName("a"), env.IfName("b")
		env.Veth(a, "", b, "")
		cfg.BlockSize, cfg.SocketBuffer = minBlockSize, 1
		cfg.MinRingSize, cfg.MaxRingSize = 1, 1
		in, out := openT(t, a, Config{}), openT(t, b, cfg)
		pool, err := packet.NewPool(packet.PoolConfig{Buffers: 64})
		if err != nil {
			t.Fatal(err)
		}
		base := out.Stats().RxKernelDrops
		in.Stats()
		flood(t, in, pool, 20000)
		time.Sleep(10 * time.Millisecond)
		if sent := in.StatsWithin(time.Hour).TxPackets; sent == 0 {
			t.Errorf("StatsWithin's TxPackets is 0 after sending: software counters must be current")
		}
		if shared := out.StatsWithin(time.Hour).RxKernelDrops; shared != base {
			t.Errorf("StatsWithin(1h) read the kernel again: drops %d, last read %d", shared, base)
		}
		fresh := out.Stats().RxKernelDrops
		if fresh <= base {
			t.Fatalf("no kernel drops after flooding 20000 frames into a small buffer")
		}
		if got := out.StatsWithin(time.Hour).RxKernelDrops; got != fresh {
			t.Errorf("StatsWithin after Stats: drops %d, want the last read's %d", got, fresh)
		}
		if allocs := testing.AllocsPerRun(100, func() { out.StatsWithin(time.Hour) }); allocs != 0 {
			t.Errorf("StatsWithin allocates %.1f times per call, want 0", allocs)
		}
	})
}

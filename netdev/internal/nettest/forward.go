package nettest

import (
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"gvs/netdev"
	"gvs/packet"
)

// Forwarder moves packets between two devices' queue 0 in both
// directions on one goroutine, as a PMD would: spin while busy, sleep in
// poll(2) on the devices' PollFDs when idle.
type Forwarder struct {
	stop atomic.Bool
	wg   sync.WaitGroup
	// RecvErrors and SendErrors count errors the loop saw.
	RecvErrors, SendErrors atomic.Uint64
	// Moved counts the packets received (and handed to the other side).
	Moved atomic.Uint64
}

// idleSpins is how many empty rounds the loop spins before sleeping.
const idleSpins = 64

// StartForwarder starts forwarding between a and b; it stops in cleanup
// (or earlier with Stop).
func StartForwarder(t testing.TB, a, b netdev.Device) *Forwarder {
	t.Helper()
	return StartForwarderWithPool(t, a, b, packet.PoolConfig{Buffers: 256})
}

// StartForwarderWithPool is StartForwarder receiving into a pool made
// with cfg.
func StartForwarderWithPool(t testing.TB, a, b netdev.Device, cfg packet.PoolConfig) *Forwarder {
	t.Helper()
	pool, err := packet.NewPool(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f := &Forwarder{}
	f.wg.Add(1)
	go f.loop(pool, [2]netdev.Device{a, b})
	t.Cleanup(f.Stop)
	return f
}

// Stop ends the loop and waits for it.
func (f *Forwarder) Stop() {
	f.stop.Store(true)
	f.wg.Wait()
}

func (f *Forwarder) loop(pool *packet.Pool, devs [2]netdev.Device) {
	defer f.wg.Done()
	var batch packet.Batch
	fds := []unix.PollFd{
		{Fd: int32(devs[0].PollFD(0)), Events: unix.POLLIN},
		{Fd: int32(devs[1].PollFD(0)), Events: unix.POLLIN},
	}
	idle := 0
	for !f.stop.Load() {
		moved := 0
		for i, src := range devs {
			n, err := src.Recv(0, &batch, pool)
			if err != nil {
				f.RecvErrors.Add(1)
			}
			if n == 0 {
				continue
			}
			moved += n
			if err := devs[1-i].Send(0, &batch); err != nil {
				f.SendErrors.Add(1)
			}
		}
		if moved > 0 {
			f.Moved.Add(uint64(moved))
			idle = 0
			continue
		}
		if idle++; idle > idleSpins {
			_, _ = unix.Poll(fds, 20)
		}
	}
}

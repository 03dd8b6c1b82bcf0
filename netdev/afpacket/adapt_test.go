package afpacket

import (
	"testing"
	"time"

	"gvs/netdev"
	"gvs/netdev/internal/nettest"
	"gvs/packet"
)

// drain receives from d until nothing came for quiet, and returns how
// many frames it got.
func drain(t *testing.T, d *Device, pool *packet.Pool, quiet time.Duration) int {
	t.Helper()
	var batch packet.Batch
	got := 0
	for last := time.Now(); ; {
		n, err := d.Recv(0, &batch, pool)
		if err != nil {
			t.Fatal(err)
		}
		pool.PutBatch(&batch)
		if n > 0 {
			got += n
			last = time.Now()
		}
		if time.Since(last) >= quiet {
			return got
		}
	}
}

// settle receives from d until no resize is pending.
func settle(t *testing.T, d *Device, pool *packet.Pool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); d.Status()["rx_ring_size_pending"] != ""; {
		if time.Now().After(end) {
			t.Fatalf("%s: resize still pending: %v", d.Name(), d.Status())
		}
		drain(t, d, pool, 0)
		time.Sleep(time.Millisecond)
	}
}

// TestRingGrowsUnderBurstsAndShrinksWhenIdle: a new port's ring is the
// small minimum, reserved from the budget; bursts of frames larger than it
// make the kernel drop, which grows the ring (doubling) until a burst
// passes without a drop; once the port is idle for IdleShrink the ring
// shrinks back and the budget gets the memory back. (TPACKET_V2 only: a
// V3 ring packs small frames into its blocks, and its minimum holds
// thousands; TestRingResizeAtRunTime resizes one.)
func TestRingGrowsUnderBurstsAndShrinksWhenIdle(t *testing.T) {
	for _, mode := range []string{RxRingV2} {
		t.Run(mode, func(t *testing.T) {
			env := nettest.New(t)
			a, b := env.IfName("a"), env.IfName("b")
			env.Veth(a, "", b, "")
			budget := netdev.NewMemoryBudget(1 << 30)
			const idle = 300 * time.Millisecond
			in := openT(t, a, Config{RxMode: RxRecvmmsg})
			out := openT(t, b, Config{RxMode: mode, Budget: budget, IdleShrink: idle})
			minBytes := out.RxRingBytes()
			if minBytes > 512<<10 || budget.Used() != minBytes {
				t.Fatalf("new port: ring %d bytes, budget used %d; want the small minimum, reserved", minBytes, budget.Used())
			}
			txPool, _ := packet.NewPool(packet.PoolConfig{Buffers: 64})
			rxPool, _ := packet.NewPool(packet.PoolConfig{Buffers: 256})
			const burst = 150
			clean := false
			for round := 0; round < 30 && !clean; round++ {
				drops := out.Stats().RxKernelDrops
				flood(t, in, txPool, burst)
				got := drain(t, out, rxPool, 20*time.Millisecond)
				lost := out.Stats().RxKernelDrops - drops
				t.Logf("round %d: %d of %d received, %d kernel drops, ring %d bytes", round, got, burst, lost, out.RxRingBytes())
				clean = round > 0 && lost == 0 && got == burst
			}
			settle(t, out, rxPool)
			grown := out.RxRingBytes()
			if !clean || grown <= minBytes {
				t.Fatalf("no burst of %d passed without loss (ring %d bytes, min %d)", burst, grown, minBytes)
			}
			if out.PollFDGeneration(0) == 0 {
				t.Error("PollFDGeneration did not change with the socket")
			}
			if budget.Used() != grown {
				t.Errorf("budget used %d, ring %d", budget.Used(), grown)
			}
			// Idle: back to the minimum.
			deadline := time.Now().Add(idle + 3*time.Second)
			for out.RxRingBytes() != minBytes && time.Now().Before(deadline) {
				drain(t, out, rxPool, time.Millisecond)
			}
			if out.RxRingBytes() != minBytes || budget.Used() != minBytes {
				t.Fatalf("after %v idle: ring %d bytes, budget used %d, want %d", idle, out.RxRingBytes(), budget.Used(), minBytes)
			}
			out.Close()
			if budget.Used() != 0 {
				t.Errorf("after Close: budget used %d", budget.Used())
			}
		})
	}
}

// TestBudgetCapsRings: four ports asked for 8 MiB rings each
// (userspace-sock-buf-size) under a 6 MiB budget get their minimum and
// as much growth as the budget holds, no more; closing them gives it all
// back.
func TestBudgetCapsRings(t *testing.T) {
	env := nettest.New(t)
	var names []string
	for _, p := range []string{"a", "b"} {
		x, y := env.IfName(p+"1"), env.IfName(p+"2")
		env.Veth(x, "", y, "")
		names = append(names, x, y)
	}
	const limit = 6 << 20
	budget := netdev.NewMemoryBudget(limit)
	pool, _ := packet.NewPool(packet.PoolConfig{Buffers: 64})
	var devs []*Device
	for _, n := range names {
		d := openT(t, n, Config{RxMode: RxRingV2, Budget: budget})
		if _, err := d.SetSocketBuffers(8 << 20); err != nil {
			t.Fatal(err)
		}
		devs = append(devs, d)
	}
	for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end); {
		for _, d := range devs {
			drain(t, d, pool, 0)
		}
	}
	for _, d := range devs {
		settle(t, d, pool)
	}
	total, grown := int64(0), 0
	for _, d := range devs {
		total += d.RxRingBytes()
		if d.RxRingBytes() > DefaultMinRingSize {
			grown++
		}
		if st := d.Status(); st["rx_ring_slot_size"] != "2048" {
			t.Errorf("%s: slot size %s with sock-buf set", d.Name(), st["rx_ring_slot_size"])
		}
	}
	t.Logf("rings %d bytes in all, budget used %d of %d, %d grown", total, budget.Used(), budget.Limit(), grown)
	if total > limit || budget.Used() > limit || budget.Used() < total {
		t.Errorf("rings %d bytes, budget used %d: over the %d budget or not all counted", total, budget.Used(), limit)
	}
	if grown == 0 || total < limit/2 {
		t.Errorf("the budget was not used: %d bytes, %d rings grown", total, grown)
	}
	for _, d := range devs {
		d.Close()
	}
	if budget.Used() != 0 {
		t.Errorf("after Close: budget used %d", budget.Used())
	}
}

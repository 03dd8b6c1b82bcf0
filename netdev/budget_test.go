package netdev

import (
	"sync"
	"testing"
	"time"
)

func TestMemoryBudgetGrants(t *testing.T) {
	b := NewMemoryBudget(10 << 20)
	if got := b.Reserve(4 << 20); got != 4<<20 {
		t.Fatalf("Reserve(4 MiB) in an empty 10 MiB budget = %d", got)
	}
	if got := b.Reserve(8 << 20); got != 6<<20 {
		t.Fatalf("Reserve(8 MiB) with 6 MiB left = %d, want the partial grant 6 MiB", got)
	}
	if got := b.Reserve(1); got != 0 || b.Over() {
		t.Fatalf("Reserve(1) in a spent budget = %d (over %v)", got, b.Over())
	}
	b.Join(1 << 20) // a minimum is always granted, and counted
	if b.Used() != 11<<20 || !b.Over() {
		t.Fatalf("after a minimum over the limit: used %d, over %v", b.Used(), b.Over())
	}
	b.Join(0)
	if b.Share() != 5<<20 {
		t.Fatalf("share of 10 MiB among two rings: %d", b.Share())
	}
	b.Leave(0)
	if b.Share() != 10<<20 {
		t.Fatalf("share of 10 MiB for one ring: %d", b.Share())
	}
	b.Release(3 << 20)
	if got := b.Reserve(4 << 20); got != 2<<20 {
		t.Fatalf("Reserve after release = %d, want 2 MiB", got)
	}
	b.SetLimit(1 << 20)
	if !b.Over() || b.Reserve(1) != 0 {
		t.Fatalf("lowered limit: over %v", b.Over())
	}
	if b.Reserve(-5) != 0 || b.Reserve(0) != 0 {
		t.Fatal("non-positive requests granted")
	}
	var unlimited *MemoryBudget
	unlimited.Adopt()
	if unlimited.Reserve(1<<40) != 1<<40 || unlimited.Over() || unlimited.Limit() != 0 {
		t.Fatal("a nil budget is not unlimited")
	}
	unlimited.Join(1)
	unlimited.Release(1)
	unlimited.Leave(1)
	if unlimited.Share() < 1<<40 {
		t.Fatal("a nil budget's share is bounded")
	}
}

// TestMemoryBudgetConcurrent reserves and releases from many goroutines:
// the limit is never exceeded by Reserve, and everything comes back.
func TestMemoryBudgetConcurrent(t *testing.T) {
	const limit = 1 << 20
	b := NewMemoryBudget(limit)
	var wg sync.WaitGroup
	var mu sync.Mutex
	granted := int64(0)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				n := int64(4096 * (1 + (g+i)%17))
				got := b.Reserve(n)
				if got < 0 || got > n {
					t.Errorf("Reserve(%d) = %d", n, got)
				}
				if u := b.Used(); u > limit {
					t.Errorf("used %d over the limit %d", u, limit)
				}
				if i%3 == 0 {
					mu.Lock()
					granted += got
					mu.Unlock()
					continue
				}
				b.Release(got)
			}
		}()
	}
	wg.Wait()
	if b.Used() != granted {
		t.Fatalf("used %d, kept %d", b.Used(), granted)
	}
	if granted > limit {
		t.Fatalf("kept %d over the limit %d", granted, limit)
	}
}

func TestMemoryBudgetBoundsResizes(t *testing.T) {
	b := NewMemoryBudget(1 << 20)
	for range MaxConcurrentResizes {
		b.StartResize()
	}
	started := make(chan struct{})
	go func() {
		b.StartResize()
		close(started)
	}()
	select {
	case <-started:
		t.Fatalf("resize %d started with %d in flight", MaxConcurrentResizes+1, MaxConcurrentResizes)
	case <-time.After(50 * time.Millisecond):
	}
	b.EndResize()
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("a resize ended and the waiting one did not start")
	}
	var unlimited *MemoryBudget
	unlimited.StartResize()
	unlimited.EndResize()
}

func TestDefaultRxRingBudget(t *testing.T) {
	total, err := MemTotal()
	if err != nil {
		t.Fatal(err)
	}
	got := DefaultRxRingBudget()
	want := min(max(total/16, MinDefaultRxRingBudget), MaxDefaultRxRingBudget)
	if got != want || got < MinDefaultRxRingBudget || got > MaxDefaultRxRingBudget {
		t.Fatalf("default budget %d with MemTotal %d, want %d", got, total, want)
	}
	if NewMemoryBudget(0).Limit() != got {
		t.Fatal("NewMemoryBudget(0) does not take the default")
	}
}

// TestMemoryBudgetAdopt: a reservation handed to a new holder stays
// reserved and counts the holder once; Leave gives it back.
func TestMemoryBudgetAdopt(t *testing.T) {
	b := NewMemoryBudget(4 << 20)
	b.Join(1 << 20)
	if got := b.Reserve(1 << 20); got != 1<<20 { // a spare ring
		t.Fatalf("Reserve = %d", got)
	}
	b.Adopt() // a device takes the spare
	if b.Used() != 2<<20 || b.Share() != 2<<20 {
		t.Fatalf("after Adopt: used %d, share %d; want 2 MiB each", b.Used(), b.Share())
	}
	b.Leave(1 << 20)
	b.Leave(1 << 20)
	if b.Used() != 0 || b.Share() != 4<<20 {
		t.Fatalf("after both left: used %d, share %d", b.Used(), b.Share())
	}
}

package bridge

import (
	"testing"
	"time"
)

func TestOfportAllocator(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	a := newOfportAllocator()
	used := map[int]bool{1: true}
	if n := a.pick(used, now); n != 2 {
		t.Fatalf("first pick with 1 used = %d, want 2", n)
	}
	// 3 was freed a minute ago, 4 two hours ago: 3 is skipped, 4 taken.
	a.settle(map[string]int{"x": 3, "y": 4}, nil, now.Add(-2*time.Hour))
	delete(a.freedAt, 3)
	a.settle(map[string]int{"x": 3}, nil, now.Add(-time.Minute))
	if n := a.pick(map[int]bool{1: true, 2: true}, now); n != 4 {
		t.Fatalf("pick = %d, want 4 (3 is too recent, 4 old enough)", n)
	}
	// Every number in use or recent: the one freed longest ago.
	full := map[int]bool{}
	for n := 1; n <= ofportAutoMax; n++ {
		full[n] = true
	}
	delete(full, 3)
	delete(full, 9)
	a.settle(map[string]int{"z": 9}, nil, now.Add(-2*time.Minute))
	if n := a.pick(full, now); n != 9 {
		t.Fatalf("pick with only recent numbers free = %d, want 9 (freed first)", n)
	}
	// Numbers in use again are forgotten.
	a.settle(nil, map[string]int{"x": 3}, now)
	if _, ok := a.freedAt[3]; ok {
		t.Fatal("3 is in use again but still recorded as freed")
	}
	// The lower half only, wrapping round.
	a.last = ofportAutoMax
	if n := a.pick(map[int]bool{}, now); n != 1 {
		t.Fatalf("pick after %d = %d, want 1", ofportAutoMax, n)
	}
}

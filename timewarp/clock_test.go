package timewarp

import (
	"testing"
	"time"
)

func TestClock(t *testing.T) {
	real := time.Unix(1000, 0)
	c := New(func() time.Time { return real })
	if !c.Now().Equal(real) {
		t.Fatalf("uncontrolled clock %v, want %v", c.Now(), real)
	}
	c.Warp(3 * time.Second)
	real = real.Add(time.Second)
	if want := time.Unix(1004, 0); !c.Now().Equal(want) {
		t.Fatalf("warped running clock %v, want %v", c.Now(), want)
	}
	c.Stop()
	real = real.Add(time.Hour)
	if want := time.Unix(1004, 0); !c.Now().Equal(want) {
		t.Fatalf("stopped clock moved: %v, want %v", c.Now(), want)
	}
	c.Stop()
	c.Warp(500 * time.Millisecond)
	if want := time.Unix(1004, 5e8); !c.Now().Equal(want) {
		t.Fatalf("stopped warped clock %v, want %v", c.Now(), want)
	}
	if c.Warped() != 3500*time.Millisecond {
		t.Fatalf("warped %v", c.Warped())
	}
}

func TestNowAllocatesNothing(t *testing.T) {
	c := New(nil)
	if n := testing.AllocsPerRun(100, func() { _ = c.Now() }); n != 0 {
		t.Fatalf("Now allocates %v", n)
	}
	c.Stop()
	if n := testing.AllocsPerRun(100, func() { _ = c.Now() }); n != 0 {
		t.Fatalf("Now of a stopped clock allocates %v", n)
	}
}

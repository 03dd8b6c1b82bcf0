package appctl

import (
	"testing"
	"time"

	"gvs/timewarp"
)

// TestTimeWarpSteps: a large warp moves the clock step by step, running
// the timers after each; errors as Open vSwitch's timeval_warp_cb.
func TestTimeWarpSteps(t *testing.T) {
	real := time.Unix(100, 0)
	clock := timewarp.New(func() time.Time { return real })
	var seen []time.Duration
	tc := NewTimeCommands(clock, func() { seen = append(seen, clock.Now().Sub(real)) })
	tc.stepPause = 0
	if out, err := tc.stop(nil); out != "" || err != nil {
		t.Fatalf("time/stop: %q %v", out, err)
	}
	if out, err := tc.warp([]string{"2500", "1000"}); out != "warped" || err != nil {
		t.Fatalf("time/warp: %q %v", out, err)
	}
	want := []time.Duration{time.Second, 2 * time.Second, 2500 * time.Millisecond}
	if len(seen) != len(want) {
		t.Fatalf("timers ran at %v, want %v", seen, want)
	}
	for i := range want {
		if seen[i] != want[i] {
			t.Fatalf("timers ran at %v, want %v", seen, want)
		}
	}
	if _, err := tc.warp([]string{"0", "7"}); err != nil || clock.Warped() != 2507*time.Millisecond {
		t.Fatalf("time/warp 0 7: %v, warped %v", err, clock.Warped())
	}
	for _, bad := range [][]string{{"0"}, {"x"}, {"-1", "5"}, {"5", "-1"}} {
		if _, err := tc.warp(bad); err == nil || err.Error() != "invalid MSECS" {
			t.Errorf("time/warp %v: %v", bad, err)
		}
	}
}

func FuzzAtoll(f *testing.F) {
	for _, s := range []string{"12", " -3x", "+", "", "99999999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { _ = atoll(s) })
}

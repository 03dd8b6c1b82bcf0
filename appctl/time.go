package appctl

import (
	"sync"
	"time"

	"gvs/timewarp"
	"gvs/unixctl"
)

// TimeCommands are ovs-appctl time/stop and time/warp, which Open vSwitch
// registers only with --enable-dummy (timeval_dummy_register): they stop
// and move the clock that rule timeouts and MAC aging read.
type TimeCommands struct {
	clock *timewarp.Clock
	// afterWarp runs the switch's timers (flow expiry, MAC aging) after
	// each step of a warp, as Open vSwitch's main loop runs between the
	// steps of a large warp; nil: nothing.
	afterWarp func()
	// stepPause lets other goroutines run between the steps of a large
	// warp, as Open vSwitch's timewarp_work does.
	stepPause time.Duration
	warping   sync.Mutex
}

// NewTimeCommands returns the commands on clock; afterWarp (may be nil)
// runs after every step of a warp.
func NewTimeCommands(clock *timewarp.Clock, afterWarp func()) *TimeCommands {
	return &TimeCommands{clock: clock, afterWarp: afterWarp, stepPause: 10 * time.Millisecond}
}

// Register adds time/stop and time/warp to s.
func (t *TimeCommands) Register(s *unixctl.Server) {
	s.Register("time/stop", "", 0, 0, t.stop)
	s.Register("time/warp", "[large_msecs] msecs", 1, 2, t.warp)
}

func (t *TimeCommands) stop([]string) (string, error) {
	t.clock.Stop()
	return "", nil
}

// warp is "time/warp MSECS" (one step) or "time/warp LARGE_MSECS MSECS"
// (LARGE_MSECS in steps of MSECS, the last one shorter; MSECS once when
// LARGE_MSECS is 0). Numbers are read as C's atoll reads them.
func (t *TimeCommands) warp(argv []string) (string, error) {
	var total int64
	step := atoll(argv[0])
	if len(argv) > 1 {
		total, step = step, atoll(argv[1])
	}
	if step <= 0 || total < 0 {
		return "", errorf("invalid MSECS")
	}
	if !t.warping.TryLock() {
		return "", errorf("A previous warp in progress")
	}
	defer t.warping.Unlock()
	for first := true; first || total > 0; first = false {
		d := step
		if total > 0 {
			d = min(step, total)
			total -= d
		}
		t.clock.Warp(time.Duration(d) * time.Millisecond)
		if t.afterWarp != nil {
			t.afterWarp()
		}
		if total > 0 {
			time.Sleep(t.stepPause)
		}
	}
	return "warped", nil
}

// atoll is C's atoll: optional leading white space and sign, then as many
// decimal digits as there are (0 without any).
func atoll(s string) int64 {
	i := 0
	for i < len(s) && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r')) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	var n int64
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		n = n*10 + int64(s[i]-'0')
	}
	if neg {
		return -n
	}
	return n
}

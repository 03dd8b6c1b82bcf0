package dpif

import (
	"runtime"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func cpuTime(t *testing.T) time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestIdleSwitchSleepsAndWakesFast: an idle datapath costs almost no CPU
// (PMDs sleep in poll(2) on the ports' PollFDs), and a packet arriving at
// a sleeping PMD is forwarded within a fraction of a millisecond.
func TestIdleSwitchSleepsAndWakesFast(t *testing.T) {
	if testing.Short() {
		t.Skip("timing test")
	}
	fx := newFixture(t, Config{PMDs: 2}, 2)
	fx.dp.SetUpcallHandler(hubHandler(1, 2))
	time.Sleep(50 * time.Millisecond)
	c0, w0 := cpuTime(t), time.Now()
	time.Sleep(time.Second)
	idle := float64(cpuTime(t)-c0) / float64(time.Since(w0))
	t.Logf("idle datapath, 2 PMDs: %.2f%% of one CPU", idle*100)
	if idle > 0.2 {
		t.Errorf("idle datapath uses %.0f%% of a CPU", idle*100)
	}

	frame := udpFrame(mac(2), mac(1), 0, [4]byte{1, 1, 1, 1}, [4]byte{2, 2, 2, 2}, 1, 2)
	var lat []time.Duration
	for i := range 20 {
		time.Sleep(5 * time.Millisecond) // let the PMD fall asleep
		start := time.Now()
		fx.devs[1].Inject(0, frame)
		for fx.devs[2].Stats().TxPackets < uint64(i+1) {
			if time.Since(start) > time.Second {
				t.Fatal("packet not forwarded")
			}
			runtime.Gosched()
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	t.Logf("wake-up to forward latency: median %v, max %v", lat[len(lat)/2], lat[len(lat)-1])
	// Sleeping PMDs wake at the latest after IdleWakeup (100 ms): a
	// median far below that proves the PollFD wakes them. The bound is
	// loose because the machine is shared.
	if lat[len(lat)/2] > IdleWakeup/4 {
		t.Errorf("median latency %v: PMDs are not woken by their PollFDs", lat[len(lat)/2])
	}
}

package netdev_test

import (
	"testing"
	"time"

	"gvs/netdev"
	"gvs/netdev/netdevtest"
)

// sharing counts StatsWithin calls and the ages it was given.
type sharing struct {
	*netdevtest.Device
	ages []time.Duration
}

func (s *sharing) StatsWithin(maxAge time.Duration) netdev.Stats {
	s.ages = append(s.ages, maxAge)
	return netdev.Stats{RxKernelDrops: 7}
}

var _ netdev.SharedStats = (*sharing)(nil)

// TestStatsWithinPrefersSharedReads: a device that shares its kernel
// reads is asked with the caller's age; any other device gets Stats.
func TestStatsWithinPrefersSharedReads(t *testing.T) {
	plain, err := netdevtest.New(netdevtest.Config{Name: "p0"})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if got, want := netdev.StatsWithin(plain, time.Hour), plain.Stats(); got != want {
		t.Errorf("StatsWithin of a plain device = %+v, want its Stats %+v", got, want)
	}
	sh := &sharing{Device: plain}
	if got := netdev.StatsWithin(sh, 6*time.Second); got.RxKernelDrops != 7 || len(sh.ages) != 1 || sh.ages[0] != 6*time.Second {
		t.Errorf("StatsWithin of a sharing device = %+v, calls %v; want its StatsWithin(6s)", got, sh.ages)
	}
}

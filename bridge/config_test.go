package bridge

import (
	"testing"
	"time"
)

func TestParseGlobalConfig(t *testing.T) {
	for _, c := range []struct {
		oc       map[string]string
		sockBuf  int
		budget   int64
		mask     string
		sleep    time.Duration
		stats    time.Duration
		warnings int
	}{
		{oc: nil, stats: DefaultStatsInterval},
		{oc: map[string]string{"userspace-sock-buf-size": "8388608"}, sockBuf: 8388608, stats: DefaultStatsInterval},
		{oc: map[string]string{"userspace-sock-buf-size": "1"}, sockBuf: 212992, stats: DefaultStatsInterval, warnings: 1},
		{oc: map[string]string{"userspace-sock-buf-size": "0"}, stats: DefaultStatsInterval},
		{oc: map[string]string{"userspace-sock-buf-size": "8M"}, stats: DefaultStatsInterval, warnings: 1},
		{oc: map[string]string{"userspace-sock-buf-size": "-1"}, stats: DefaultStatsInterval, warnings: 1},
		{oc: map[string]string{"userspace-sock-buf-size": "99999999999"}, sockBuf: 1073741823, stats: DefaultStatsInterval, warnings: 1},
		{oc: map[string]string{"gvs-rx-ring-budget": "268435456"}, budget: 256 << 20, stats: DefaultStatsInterval},
		{oc: map[string]string{"gvs-rx-ring-budget": "0"}, stats: DefaultStatsInterval},
		{oc: map[string]string{"gvs-rx-ring-budget": "-5"}, stats: DefaultStatsInterval, warnings: 1},
		{oc: map[string]string{"gvs-rx-ring-budget": "1G"}, stats: DefaultStatsInterval, warnings: 1},
		{oc: map[string]string{"pmd-cpu-mask": "0x0C"}, mask: "c", stats: DefaultStatsInterval},
		{oc: map[string]string{"pmd-cpu-mask": "0x0"}, stats: DefaultStatsInterval, warnings: 1},
		{oc: map[string]string{"pmd-cpu-mask": "0xg"}, stats: DefaultStatsInterval, warnings: 1},
		{oc: map[string]string{"pmd-maxsleep": "250"}, sleep: 250 * time.Microsecond, stats: DefaultStatsInterval},
		{oc: map[string]string{"pmd-maxsleep": "99999"}, sleep: 10 * time.Millisecond, stats: DefaultStatsInterval},
		{oc: map[string]string{"pmd-maxsleep": "-1"}, stats: DefaultStatsInterval, warnings: 1},
		{oc: map[string]string{"stats-update-interval": "1000"}, stats: 5 * time.Second},
		{oc: map[string]string{"stats-update-interval": "12000"}, stats: 12 * time.Second},
		{oc: map[string]string{"stats-update-interval": "soon"}, stats: DefaultStatsInterval, warnings: 1},
		{oc: map[string]string{"pmd-rxq-assign": "fastest"}, stats: DefaultStatsInterval, warnings: 1},
	} {
		g := parseGlobalConfig(c.oc, minStatsInterval)
		if g.sockBuf != c.sockBuf || g.dp.RxRingBudget != c.budget || g.dp.PMDCPUMask != c.mask || g.dp.PMDMaxSleep != c.sleep ||
			g.statsInterval != c.stats || len(g.warnings) != c.warnings {
			t.Errorf("%v: got sockBuf %d budget %d mask %q sleep %v stats %v warnings %q", c.oc, g.sockBuf, g.dp.RxRingBudget, g.dp.PMDCPUMask, g.dp.PMDMaxSleep, g.statsInterval, g.warnings)
		}
	}
}

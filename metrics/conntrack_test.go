package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"gvs/dpif"
	"gvs/dpif/conntrack"
	"gvs/metrics/source/sourcetest"
	"gvs/packet"
)

// statsTracker is a tracker that reports fixed statistics.
type statsTracker struct {
	stats conntrack.Stats
	max   uint32
}

var _ conntrack.Conntrack = (*statsTracker)(nil)

func (s *statsTracker) Execute(*packet.Buffer, *conntrack.Request)       {}
func (s *statsTracker) Dump(int32, func(*conntrack.Entry) bool)          {}
func (s *statsTracker) Flush(int32, *conntrack.Tuple) int                { return 0 }
func (s *statsTracker) Stats() conntrack.Stats                           { return s.stats }
func (s *statsTracker) SetMaxConns(n uint32)                             { s.max = n }
func (s *statsTracker) MaxConns() uint32                                 { return s.max }
func (s *statsTracker) SetZoneLimits([]conntrack.ZoneLimit)              {}
func (s *statsTracker) ZoneLimits([]uint16) []conntrack.ZoneLimit        { return nil }
func (s *statsTracker) DelZoneLimits([]uint16)                           {}
func (s *statsTracker) SetTimeoutPolicy(uint32, conntrack.TimeoutPolicy) {}
func (s *statsTracker) DelTimeoutPolicy(uint32)                          {}
func (s *statsTracker) SetZonePolicy(uint16, uint32)                     {}

// TestConntrackMetrics: the tracker's statistics are exported under
// their names, counters as counters.
func TestConntrackMetrics(t *testing.T) {
	ct := &statsTracker{max: 3000000, stats: conntrack.Stats{Conns: 7, Created: 100, Expired: 93, DroppedFull: 5, Invalid: 11}}
	sw := sourcetest.NewWithConfig(t, dpif.Config{PMDs: 1, Tracker: ct})
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(NewSwitchCollector(sw))
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		"gvs_conntrack_connections":        7,
		"gvs_conntrack_max_connections":    3000000,
		"gvs_conntrack_created_total":      100,
		"gvs_conntrack_expired_total":      93,
		"gvs_conntrack_dropped_full_total": 5,
		"gvs_conntrack_invalid_total":      11,
	}
	for _, f := range fams {
		w, ok := want[f.GetName()]
		if !ok {
			continue
		}
		m := f.GetMetric()[0]
		got := m.GetGauge().GetValue()
		if c := m.GetCounter(); c != nil {
			got = c.GetValue()
		}
		if got != w {
			t.Errorf("%s = %v, want %v", f.GetName(), got, w)
		}
		if isCounter := f.GetType().String() == "COUNTER"; isCounter != (f.GetName()[len(f.GetName())-6:] == "_total") {
			t.Errorf("%s has type %s", f.GetName(), f.GetType())
		}
		delete(want, f.GetName())
	}
	if len(want) != 0 {
		t.Fatalf("missing: %v", want)
	}
}

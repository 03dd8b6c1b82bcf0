package appctl

import (
	"strconv"
	"strings"
	"testing"

	"gvs/dpif"
)

// TestPMDStatsShowsSubtableLookupsLikeOpenVSwitch: the line sits right
// after "megaflow hits", as in Open vSwitch's pmd_info_show_stats, and is
// the subtables probed over the megaflow hits (0.00 without hits);
// pmd-stats-clear's baseline applies to it.
func TestPMDStatsShowsSubtableLookupsLikeOpenVSwitch(t *testing.T) {
	for _, c := range []struct {
		hits, lookups uint64
		want          string
	}{
		{0, 0, "0.00"},
		{4, 10, "2.50"},
		{3, 3, "1.00"},
	} {
		var b strings.Builder
		writePMDStats(&b, dpif.PMDStats{CPU: -1, Packets: 10, MegaflowHits: c.hits, SubtableLookups: c.lookups})
		want := "  megaflow hits: " + strconv.FormatUint(c.hits, 10) + "\n  avg. subtable lookups per megaflow hit: " + c.want + "\n  miss with success upcall: "
		if !strings.Contains(b.String(), want) {
			t.Errorf("hits %d lookups %d:\n%s\nwant it to contain\n%s", c.hits, c.lookups, b.String(), want)
		}
	}
	d := sub(dpif.PMDStats{MegaflowHits: 10, SubtableLookups: 25}, dpif.PMDStats{MegaflowHits: 4, SubtableLookups: 13})
	if d.MegaflowHits != 6 || d.SubtableLookups != 12 {
		t.Errorf("since clear: hits %d lookups %d, want 6 and 12", d.MegaflowHits, d.SubtableLookups)
	}
}

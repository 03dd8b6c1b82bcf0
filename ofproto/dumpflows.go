//go:build pending

package ofproto

import (
	"strconv"
	"strings"
	"time"

	"gvs/ofproto/ofpact"
)

// DumpFlows is bridge/dump-flows: every flow of every table, hidden ones
// included, as Open vSwitch's ofproto_get_all_flows/flow_stats_ds print
// them.
func (b *OFBridge) DumpFlows(offloadStats bool) string {
	now := b.now()
	var s strings.Builder
	for _, r := range b.pipe.AllRules() {
		pk, by, _ := r.Stats()
		if r.TableID != 0 {
			s.WriteString("table_id=" + strconv.Itoa(int(r.TableID)) + ", ")
		}
		s.WriteString("duration=" + strconv.FormatInt(int64(now.Sub(r.Created)/time.Second), 10) + "s, ")
		s.WriteString("n_packets=" + strconv.FormatUint(pk, 10) + ", ")
		s.WriteString("n_bytes=" + strconv.FormatUint(by, 10) + ", ")
		if offloadStats {
			s.WriteString("n_offload_packets=0, n_offload_bytes=0, ")
		}
		s.WriteString(r.Match.Format(r.Priority))
		s.WriteString(",actions=" + ofpact.Format(r.Actions) + "\n")
	}
	return s.String()
}

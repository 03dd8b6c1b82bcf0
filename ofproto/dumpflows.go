package ofproto

import (
	"strconv"
	"strings"
	"time"

	"gvs/ofproto/ofpact"
	"gvs/ofproto/pipeline"
)

// DumpFlows is bridge/dump-flows: every flow of every table, hidden ones
// included, as Open vSwitch's ofproto_get_all_flows/flow_stats_ds print
// them.
func (b *Bridge) DumpFlows(offloadStats bool) string {
	now := b.now()
	var s strings.Builder
	for _, r := range b.pipe.AllRules() {
		pk, by, _ := r.Stats()
		if r.TableID != 0 {
			s.WriteString("table_id=" + strconv.Itoa(int(r.TableID)) + ", ")
		}
		s.WriteString("duration=" + strconv.FormatInt(int64(now.Sub(r.Created())/time.Second), 10) + "s, ")
		s.WriteString("n_packets=" + strconv.FormatUint(pk, 10) + ", ")
		s.WriteString("n_bytes=" + strconv.FormatUint(by, 10) + ", ")
		if offloadStats {
			s.WriteString("n_offload_packets=0, n_offload_bytes=0, ")
		}
		s.WriteString(r.Match.Format(r.Priority))
		s.WriteString(",actions=" + ofpact.Format(ofpacts(r.Actions)) + "\n")
	}
	return s.String()
}

// ofpacts converts a rule's actions to ofpact's slice type (the same
// values; translation's Action type is ofpact.Action or, while
// translation builds without ofpact, any).
func ofpacts(acts []pipeline.Action) []ofpact.Action {
	out := make([]ofpact.Action, 0, len(acts))
	for _, a := range acts {
		if x, ok := any(a).(ofpact.Action); ok {
			out = append(out, x)
		}
	}
	return out
}
